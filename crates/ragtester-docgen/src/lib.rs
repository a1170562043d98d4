//! Document generation (the paper's §3.2 and its stated future work): an LLM writes Markdown from controls
//! (title, topic, tone, level of detail, length, required sections), checked and re-asked when it misses
//! them; or, offline, documents about invented facilities with planted facts whose questions and answers are
//! exact. Documents are written as Markdown files with a `docgen.json` manifest beside them, which ingestion
//! reads to mark them generated (reports separate generated from real documents) and suite generation reads
//! for the planted facts.
//!
//! Knows the chat-model trait, never a provider; knows nothing of retrieval, runs or reports.

mod planted;
#[cfg(feature = "pdf")]
pub mod render;
mod writer;

pub use planted::generate as planted_document;
pub use writer::{
    Batch, DOCUMENT_PROMPT_VERSION, DocumentPrompts, NEAR_DUPLICATE, write_in_batch,
    write_with_model,
};

use anyhow::{Context, Result, bail};
use ragtester_core::ChatModel;
use ragtester_core::generated::{GeneratedEntry, GeneratedManifest, PlantedFact};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// How much a document says beyond its facts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    Low,
    #[default]
    Medium,
    High,
}

impl Detail {
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "low" => Self::Low,
            "medium" => Self::Medium,
            "high" => Self::High,
            other => bail!("unknown level of detail `{other}` (low, medium, high)"),
        })
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
    /// Sentences of context each section gets besides its facts (offline generator).
    fn filler_sentences(self) -> usize {
        match self {
            Self::Low => 0,
            Self::Medium => 1,
            Self::High => 3,
        }
    }
}

/// The controls of one generated document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocRequest {
    pub title: Option<String>,
    pub topic: Option<String>,
    /// `en` or `zh`.
    pub language: String,
    /// Target length in words (CJK characters count as words).
    pub words: usize,
    pub detail: Detail,
    pub tone: String,
    /// Level-2 sections the document must have.
    pub sections: Vec<String>,
    /// Offline only: beside each document, an older edition that states another value of one fact and a
    /// bulletin that disagrees with it on another (`--conflicts`).
    #[serde(default)]
    pub conflicts: bool,
    pub seed: u64,
    /// Sampling temperature of the writing model: above 0 so a batch varies; the command's `--temperature`
    /// (or the config's `[generation.sampling]`) overrides it.
    pub temperature: f32,
}

impl Default for DocRequest {
    fn default() -> Self {
        Self {
            title: None,
            topic: None,
            language: "en".into(),
            words: 400,
            detail: Detail::Medium,
            tone: "neutral, technical".into(),
            sections: Vec::new(),
            conflicts: false,
            seed: 0,
            temperature: 0.7,
        }
    }
}

/// A document before it is written to disk.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedDoc {
    pub title: String,
    pub language: String,
    pub markdown: String,
    /// Planted facts (offline generator); empty for a model's document.
    pub facts: Vec<PlantedFact>,
}

/// The writer a request leaves out: the offline planted-fact generator, which needs no model.
pub const DEFAULT_WRITER: &str = "offline";

/// `offline` (or `planted`) selects the planted-fact generator; anything else is a model spec.
pub fn is_planted(llm: &str) -> bool {
    llm == DEFAULT_WRITER || llm == "planted"
}

/// Generate `count` documents for the folder `dir`: planted ones offline (numbered after, and about other
/// facilities than, those its manifest lists already), else by `model`. `progress(i)` is told each one made.
pub async fn generate(
    req: &DocRequest,
    count: usize,
    dir: &Path,
    model: Option<&dyn ChatModel>,
    prompts: &DocumentPrompts,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<GeneratedDoc>> {
    if !matches!(req.language.as_str(), "en" | "zh") {
        bail!("language must be en or zh (got `{}`)", req.language);
    }
    let existing = GeneratedManifest::read(dir)?.documents;
    // A planted document's title names its facility; skip the ones the folder has.
    let mut taken: std::collections::HashSet<String> = Default::default();
    let mut docs = Vec::with_capacity(count);
    for i in 0..count {
        let made = match model {
            None => {
                let mut planted =
                    planted::generate_with_rivals(req, existing.len() + i, &mut taken);
                for _ in 0..100 {
                    if req.title.is_some() || !existing.iter().any(|e| e.title == planted[0].title)
                    {
                        break;
                    }
                    planted = planted::generate_with_rivals(req, existing.len() + i, &mut taken);
                }
                planted
            }
            Some(m) => {
                let mut one = req.clone();
                one.seed = req.seed.wrapping_add(i as u64);
                let batch = writer::Batch { index: i, count };
                vec![
                    writer::write_in_batch(&one, batch, &docs, m, prompts)
                        .await
                        .with_context(|| format!("document {} of {count}", i + 1))?,
                ]
            }
        };
        docs.extend(made);
        progress(i + 1);
    }
    Ok(docs)
}

/// A file stem from a title: letters and digits (CJK included) joined by dashes, at most 60 characters.
pub fn file_stem(title: &str) -> String {
    let mut stem = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.chars().count() >= 60 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-').to_string();
    if stem.is_empty() {
        "document".into()
    } else {
        stem
    }
}

/// The form generated documents are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Markdown,
    /// Typeset PDF (the Markdown source is kept in the folder's hidden `.markdown/`), with seeded layout
    /// noise when asked.
    #[cfg(feature = "pdf")]
    Pdf {
        noise: bool,
    },
}

impl OutputFormat {
    fn extension(self) -> &'static str {
        match self {
            Self::Markdown => "md",
            #[cfg(feature = "pdf")]
            Self::Pdf { .. } => "pdf",
        }
    }
}

/// The bytes of one document in `format` (`index` seeds its layout noise).
fn encode(doc: &GeneratedDoc, format: OutputFormat, index: u64) -> Result<Vec<u8>> {
    #[cfg(not(feature = "pdf"))]
    let _ = index; // Only PDF rendering has layout noise to seed.
    match format {
        OutputFormat::Markdown => Ok(doc.markdown.as_bytes().to_vec()),
        #[cfg(feature = "pdf")]
        OutputFormat::Pdf { noise } => {
            let noise = if noise {
                render::Noise::seeded(index, &doc.language)
            } else {
                render::Noise::default()
            };
            render::render_pdf(&doc.markdown, &doc.title, &doc.language, &noise)
                .with_context(|| format!("rendering `{}`", doc.title))
        }
    }
}

/// Write the documents into `dir` as `STEM.md` or `STEM.pdf` (never overwriting another file: a number is
/// added) and record them in `dir/docgen.json`. Every document is encoded before any is written, so a
/// rendering failure leaves the folder as it was. Returns the paths written.
/// Write `bytes` as `STEM.EXT` in `dir`, or `STEM-2.EXT`, `STEM-3.EXT`… when the name is taken: nothing
/// there is replaced, and no symbolic link is written through (the name is claimed atomically).
fn write_under_free_name(
    dir: &Path,
    stem: &str,
    ext: &str,
    bytes: &[u8],
) -> Result<(String, PathBuf)> {
    for n in 1.. {
        let name = if n == 1 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-{n}.{ext}")
        };
        let path = dir.join(&name);
        match ragtester_core::record::write_new(&path, bytes) {
            Ok(()) => return Ok((name, path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(
                    anyhow::Error::from(e).context(format!("cannot write {}", path.display()))
                );
            }
        }
    }
    unreachable!("an unbounded range ends only by returning")
}

pub fn write_documents(
    dir: &Path,
    docs: &[GeneratedDoc],
    generator: &str,
    format: OutputFormat,
) -> Result<Vec<PathBuf>> {
    let encoded: Vec<Vec<u8>> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| encode(d, format, i as u64))
        .collect::<Result<_>>()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut entries = Vec::new();
    let mut paths = Vec::new();
    let ext = format.extension();
    for (doc, bytes) in docs.iter().zip(&encoded) {
        let stem = file_stem(&doc.title);
        let (name, path) = write_under_free_name(dir, &stem, ext, bytes)?;
        if format != OutputFormat::Markdown {
            // The source stays beside the PDF, hidden from folder ingestion.
            let source = dir.join(".markdown").join(format!("{name}.md"));
            std::fs::create_dir_all(dir.join(".markdown"))?;
            ragtester_core::record::write_atomic(&source, doc.markdown.as_bytes())?;
        }
        entries.push(GeneratedEntry {
            file: name,
            title: doc.title.clone(),
            language: doc.language.clone(),
            generator: generator.to_string(),
            facts: doc.facts.clone(),
        });
        paths.push(path);
    }
    GeneratedManifest::merge_into(dir, entries)?;
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe_file_names() {
        assert_eq!(
            file_stem("Norval Pumping Station: handbook"),
            "norval-pumping-station-handbook"
        );
        assert_eq!(file_stem("青岚泵站运行手册"), "青岚泵站运行手册");
        assert_eq!(file_stem("../../etc"), "etc");
        assert_eq!(file_stem("!!!"), "document");
    }

    #[tokio::test]
    async fn planted_documents_are_written_with_their_manifest_and_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let req = DocRequest {
            title: Some("Same title".into()),
            ..Default::default()
        };
        let docs = generate(
            &req,
            2,
            dir.path(),
            None,
            &DocumentPrompts::default(),
            &|_| {},
        )
        .await
        .unwrap();
        let paths = write_documents(dir.path(), &docs, "planted", OutputFormat::Markdown).unwrap();
        assert_eq!(
            paths
                .iter()
                .map(|p| p.file_name().unwrap().to_str().unwrap())
                .collect::<Vec<_>>(),
            ["same-title.md", "same-title-2.md"]
        );
        write_documents(dir.path(), &docs[..1], "planted", OutputFormat::Markdown).unwrap();
        let manifest = GeneratedManifest::read(dir.path()).unwrap();
        assert_eq!(manifest.documents.len(), 3);
        let entry = GeneratedManifest::entry_for(&paths[1]).unwrap().unwrap();
        assert_eq!(entry.facts.len(), 10);
        assert_eq!(entry.generator, "planted");
        let err = generate(
            &DocRequest {
                language: "fr".into(),
                ..Default::default()
            },
            1,
            dir.path(),
            None,
            &DocumentPrompts::default(),
            &|_| {},
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("fr"));
    }
}
