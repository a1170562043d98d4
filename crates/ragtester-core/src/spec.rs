//! Model specs as users write them: `offline`, `openai:MODEL`, `ollama:MODEL`, `local:PATH`, `hf:ORG/NAME`,
//! `hash`.

use std::fmt;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// The deterministic heuristics: no model, no network.
    Offline,
    /// The lexical hashing embedder (dense fallback when no model folder is given).
    Hash,
    OpenAi(String),
    Ollama(String),
    /// A local model folder or file.
    Local(String),
    /// A model in the Hugging Face cache layout, by repository id (`BAAI/bge-small-zh-v1.5`).
    Hf(String),
    /// An endpoint given by its URL (a rerank service).
    Url(String),
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SpecError {
    #[error("empty model spec")]
    Empty,
    #[error(
        "unknown model spec `{0}`: expected offline, hash, openai:MODEL, ollama:MODEL, local:PATH, hf:ORG/NAME or an http(s) URL"
    )]
    Unknown(String),
    #[error("model spec `{0}` names no model after the colon")]
    MissingName(String),
}

impl ModelSpec {
    pub fn parse(s: &str) -> Result<Self, SpecError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(SpecError::Empty);
        }
        match s {
            "offline" => return Ok(ModelSpec::Offline),
            "hash" => return Ok(ModelSpec::Hash),
            _ => {}
        }
        if s.starts_with("http://") || s.starts_with("https://") {
            return Ok(ModelSpec::Url(s.to_string()));
        }
        let Some((provider, name)) = s.split_once(':') else {
            return Err(SpecError::Unknown(s.to_string()));
        };
        if name.trim().is_empty() {
            return Err(SpecError::MissingName(s.to_string()));
        }
        let name = name.to_string();
        match provider {
            "openai" => Ok(ModelSpec::OpenAi(name)),
            "ollama" => Ok(ModelSpec::Ollama(name)),
            "local" => Ok(ModelSpec::Local(name)),
            "hf" => Ok(ModelSpec::Hf(name)),
            _ => Err(SpecError::Unknown(s.to_string())),
        }
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Offline => write!(f, "offline"),
            ModelSpec::Hash => write!(f, "hash"),
            ModelSpec::OpenAi(m) => write!(f, "openai:{m}"),
            ModelSpec::Ollama(m) => write!(f, "ollama:{m}"),
            ModelSpec::Local(p) => write!(f, "local:{p}"),
            ModelSpec::Hf(r) => write!(f, "hf:{r}"),
            ModelSpec::Url(u) => write!(f, "{u}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_known_and_rejects_unknown() {
        assert_eq!(ModelSpec::parse("offline"), Ok(ModelSpec::Offline));
        assert_eq!(
            ModelSpec::parse("openai:gpt-4o-mini"),
            Ok(ModelSpec::OpenAi("gpt-4o-mini".into()))
        );
        assert_eq!(
            ModelSpec::parse("local:/m/x.gguf").unwrap().to_string(),
            "local:/m/x.gguf"
        );
        assert!(matches!(
            ModelSpec::parse("gpt4"),
            Err(SpecError::Unknown(_))
        ));
        assert!(matches!(
            ModelSpec::parse("foo:bar"),
            Err(SpecError::Unknown(_))
        ));
        assert!(matches!(
            ModelSpec::parse("ollama:"),
            Err(SpecError::MissingName(_))
        ));
        assert_eq!(ModelSpec::parse(" "), Err(SpecError::Empty));
        assert_eq!(
            ModelSpec::parse("hf:BAAI/bge-small-zh-v1.5"),
            Ok(ModelSpec::Hf("BAAI/bge-small-zh-v1.5".into()))
        );
    }
}
