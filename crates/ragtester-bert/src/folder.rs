//! Where a BERT-family model's files are and what its sentence-transformers configuration says: pooling,
//! maximum sequence length and the query/passage prompts each family expects.
//!
//! A folder is either a plain model directory (`local:DIR`) or a repository in the Hugging Face cache layout
//! (`hf:ORG/NAME` → `$HF_HUB_CACHE/models--ORG--NAME/snapshots/<rev>`), so models that other tools already
//! downloaded are used in place.

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// How token vectors become one sentence vector (sentence-transformers' `1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// Average over real tokens (MiniLM, e5, most sentence-transformers models).
    Mean,
    /// The first token's vector (bge).
    Cls,
    /// Element-wise maximum over real tokens.
    Max,
}

/// Text put before queries and passages (e5's `query: ` / `passage: `, bge's retrieval instruction).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prompts {
    pub query: String,
    pub passage: String,
}

/// A resolved model folder and what it declares.
#[derive(Debug, Clone)]
pub struct ModelFolder {
    pub dir: PathBuf,
    /// A readable name: the folder's, or `ORG/NAME` for a Hugging Face cache entry.
    pub name: String,
    pub pooling: Pooling,
    pub prompts: Prompts,
    /// sentence-transformers' `max_seq_length` when declared.
    pub max_seq_length: Option<usize>,
}

const BGE_EN_INSTRUCTION: &str = "Represent this sentence for searching relevant passages: ";
const BGE_ZH_INSTRUCTION: &str = "为这个句子生成表示以用于检索相关文章：";

impl ModelFolder {
    /// Open a model folder. `dir` may also be a Hugging Face cache repository folder (`models--ORG--NAME`).
    pub fn open(dir: &Path) -> Result<Self> {
        if !dir.exists() {
            bail!("model folder {} does not exist", dir.display());
        }
        let dir = match ragtester_core::hf_cache::snapshot_of(dir)? {
            Some(snapshot) => snapshot,
            None => dir.to_path_buf(),
        };
        let name = display_name(&dir);
        let pooling = read_pooling(&dir)?;
        let prompts = read_prompts(&dir)?.unwrap_or_else(|| family_prompts(&name));
        let max_seq_length =
            read_json::<SentenceBertConfig>(&dir.join("sentence_bert_config.json"))?
                .and_then(|c| c.max_seq_length);
        Ok(Self {
            dir,
            name,
            pooling,
            prompts,
            max_seq_length,
        })
    }

    /// A file the model needs; the error names the folder and the file.
    pub fn require(&self, file: &str) -> Result<PathBuf> {
        let path = self.dir.join(file);
        if !path.is_file() {
            bail!(
                "model folder {} lacks {file}: a BERT-family model needs config.json, tokenizer.json and \
                 model.safetensors (or pytorch_model.bin)",
                self.dir.display()
            );
        }
        Ok(path)
    }

    /// The weights file: safetensors preferred, PyTorch pickles accepted.
    pub fn weights(&self) -> Result<PathBuf> {
        let safetensors = self.dir.join("model.safetensors");
        if safetensors.is_file() {
            return Ok(safetensors);
        }
        let pth = self.dir.join("pytorch_model.bin");
        if pth.is_file() {
            return Ok(pth);
        }
        self.require("model.safetensors")
    }
}

fn display_name(dir: &Path) -> String {
    // …/models--ORG--NAME/snapshots/REV → ORG/NAME
    let parts: Vec<String> = dir
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(i) = parts.iter().rposition(|p| p == "snapshots")
        && i > 0
        && let Some(repo) = parts[i - 1].strip_prefix("models--")
    {
        return repo.replacen("--", "/", 1);
    }
    let last = parts.last().cloned().unwrap_or_default();
    // Wheels and exports often keep the weights in a generic `model` folder: name it by its parent too.
    if matches!(last.as_str(), "model" | "models" | "weights") && parts.len() > 1 {
        return format!("{}/{last}", parts[parts.len() - 2]);
    }
    last
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    /// Newer sentence-transformers write the mode as one string.
    pooling_mode: Option<String>,
}

#[derive(Deserialize)]
struct StConfig {
    #[serde(default)]
    prompts: std::collections::HashMap<String, String>,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .with_context(|| format!("{} is not valid JSON of the expected shape", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

fn read_pooling(dir: &Path) -> Result<Pooling> {
    let Some(config) = read_json::<PoolingConfig>(&dir.join("1_Pooling/config.json"))? else {
        // No sentence-transformers metadata: bge models pool by [CLS], the rest by mean.
        return Ok(if display_name(dir).to_lowercase().contains("bge") {
            Pooling::Cls
        } else {
            Pooling::Mean
        });
    };
    if let Some(mode) = config.pooling_mode.as_deref() {
        return match mode {
            "cls" => Ok(Pooling::Cls),
            "mean" => Ok(Pooling::Mean),
            "max" => Ok(Pooling::Max),
            other => bail!(
                "pooling mode `{other}` in {} is not supported",
                dir.display()
            ),
        };
    }
    match (
        config.pooling_mode_cls_token,
        config.pooling_mode_mean_tokens,
        config.pooling_mode_max_tokens,
    ) {
        (true, false, false) => Ok(Pooling::Cls),
        (false, true, false) => Ok(Pooling::Mean),
        (false, false, true) => Ok(Pooling::Max),
        _ => bail!(
            "{} asks for a pooling combination other than exactly one of cls, mean or max",
            dir.join("1_Pooling/config.json").display()
        ),
    }
}

fn read_prompts(dir: &Path) -> Result<Option<Prompts>> {
    let Some(config) = read_json::<StConfig>(&dir.join("config_sentence_transformers.json"))?
    else {
        return Ok(None);
    };
    if config.prompts.is_empty() {
        return Ok(None);
    }
    let get = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| config.prompts.get(*k).cloned())
            .unwrap_or_default()
    };
    Ok(Some(Prompts {
        query: get(&["query"]),
        passage: get(&["passage", "document", "corpus"]),
    }))
}

/// Prompts by model family when the folder declares none: e5 was trained with `query: ` / `passage: `; bge
/// (v1.5) with an instruction before short queries only, in Chinese for its Chinese models.
fn family_prompts(name: &str) -> Prompts {
    let name = name.to_lowercase();
    if name.contains("e5") {
        Prompts {
            query: "query: ".into(),
            passage: "passage: ".into(),
        }
    } else if name.contains("bge") && !name.contains("m3") {
        let zh = name.contains("-zh") || name.contains("_zh");
        Prompts {
            query: if zh {
                BGE_ZH_INSTRUCTION
            } else {
                BGE_EN_INSTRUCTION
            }
            .into(),
            passage: String::new(),
        }
    } else {
        Prompts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn family_prompts_by_name() {
        assert_eq!(family_prompts("intfloat/e5-small-v2").query, "query: ");
        assert_eq!(
            family_prompts("intfloat/multilingual-e5-base").passage,
            "passage: "
        );
        assert_eq!(
            family_prompts("BAAI/bge-small-zh-v1.5").query,
            BGE_ZH_INSTRUCTION
        );
        assert_eq!(
            family_prompts("BAAI/bge-base-en-v1.5").query,
            BGE_EN_INSTRUCTION
        );
        assert_eq!(family_prompts("BAAI/bge-m3"), Prompts::default());
        assert_eq!(family_prompts("all-MiniLM-L6-v2"), Prompts::default());
    }

    #[test]
    fn cache_layout_resolves_to_the_main_snapshot() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("models--BAAI--bge-small-en-v1.5");
        let snap = repo.join("snapshots/abc123");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::create_dir_all(repo.join("refs")).unwrap();
        std::fs::write(repo.join("refs/main"), "abc123\n").unwrap();
        std::fs::write(snap.join("config.json"), "{}").unwrap();
        let folder = ModelFolder::open(&repo).unwrap();
        assert_eq!(folder.dir, snap);
        assert_eq!(folder.name, "BAAI/bge-small-en-v1.5");
        // No 1_Pooling metadata: bge pools by [CLS] and gets its instruction.
        assert_eq!(folder.pooling, Pooling::Cls);
        assert_eq!(folder.prompts.query, BGE_EN_INSTRUCTION);
        let err = folder.require("tokenizer.json").unwrap_err().to_string();
        assert!(err.contains("lacks tokenizer.json"), "{err}");
    }

    #[test]
    fn declared_pooling_and_prompts_win() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("1_Pooling")).unwrap();
        std::fs::write(
            dir.path().join("1_Pooling/config.json"),
            r#"{"pooling_mode_cls_token": false, "pooling_mode_mean_tokens": false, "pooling_mode_max_tokens": true}"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("config_sentence_transformers.json"),
            r#"{"prompts": {"query": "Q: ", "document": "D: "}}"#,
        )
        .unwrap();
        let folder = ModelFolder::open(dir.path()).unwrap();
        assert_eq!(folder.pooling, Pooling::Max);
        assert_eq!(
            folder.prompts,
            Prompts {
                query: "Q: ".into(),
                passage: "D: ".into()
            }
        );
        assert!(
            ModelFolder::open(&dir.path().join("absent"))
                .unwrap_err()
                .to_string()
                .contains("does not exist")
        );
    }
}
