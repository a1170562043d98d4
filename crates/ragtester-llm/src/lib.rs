//! Chat models for the three LLM roles: question generator, system under test, judge.
//!
//! Each provider implements [`ChatModel`]: OpenAI-compatible servers (`openai:MODEL`), Ollama's native API
//! (`ollama:MODEL`), quantized GGUF models run in-process (`local:PATH.gguf`), and the offline model. The offline model is a set of deterministic heuristics (a template
//! question writer, an extractive reader that refuses below a threshold, a lexical judge) that answers from
//! the request's typed task hint; reports label its results as heuristics. This crate is the only one that
//! will know wire protocols; it knows nothing of test strategies, matrices or reports.

mod blocking_bridge;
pub mod budget;
pub mod cache;
mod embedders;
pub mod endpoint;
mod gguf_tokenizer;
mod hf_gguf;
pub mod http;
mod json_constraint;
mod llama;
pub mod local;
pub mod offline;
pub mod ollama;
pub mod openai;
mod prefix_cache;
pub mod rag_target;
mod rerankers;
pub mod role_tuning;
pub mod structured;

use anyhow::{Result, bail};
use ragtester_core::{ChatModel, ModelSettings, ModelSpec};
use std::sync::Arc;

pub use blocking_bridge::Bridge;
pub use budget::{Budget, BudgetExhausted, BudgetLimits, Budgeted, Spent};
pub use cache::{CachedChat, cache_key};
pub use embedders::HttpEmbedder;
pub use local::LocalChat;
pub use offline::OfflineModel;
pub use ollama::OllamaChat;
pub use openai::OpenAiChat;
pub use rag_target::{RagTarget, TargetReply, target_for};
pub use rerankers::{HttpReranker, LlmReranker};
pub use role_tuning::{RoleSettings, Tuned};

/// The chat model a spec names, with the environment's provider settings.
pub fn chat_model_for(spec: &str) -> Result<Arc<dyn ChatModel>> {
    chat_model_with(spec, &ModelSettings::default())
}

/// The chat model a spec names, with the config's provider settings for it (base URL, key variable,
/// rate limits). Settings that only a server can use are refused for in-process models.
pub fn chat_model_with(spec: &str, settings: &ModelSettings) -> Result<Arc<dyn ChatModel>> {
    let parsed = ModelSpec::parse(spec)?;
    if matches!(
        parsed,
        ModelSpec::Offline | ModelSpec::Local(_) | ModelSpec::Hf(_)
    ) && (settings.base_url.is_some() || settings.api_key_env.is_some())
    {
        bail!(
            "`{spec}` runs in-process: base_url and api_key_env apply to openai: and ollama: models"
        );
    }
    match parsed {
        ModelSpec::Offline => Ok(Arc::new(OfflineModel)),
        ModelSpec::Hash => bail!(
            "`hash` is an embedder, not a chat model: use `offline` for the heuristic LLM roles"
        ),
        ModelSpec::OpenAi(model) => Ok(Arc::new(OpenAiChat::configured(model, settings)?)),
        ModelSpec::Ollama(model) => Ok(Arc::new(OllamaChat::configured(model, settings)?)),
        ModelSpec::Local(path) => Ok(Arc::new(LocalChat::load(std::path::Path::new(&path))?)),
        ModelSpec::Url(url) => bail!(
            "`{url}` is an endpoint URL: chat models are openai:MODEL (with OPENAI_BASE_URL) or ollama:MODEL"
        ),
        ModelSpec::Hf(repo) => Ok(Arc::new(LocalChat::load_as(
            &hf_gguf::resolve(&repo)?,
            format!("hf:{repo}"),
        )?)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_resolve_or_explain() {
        assert_eq!(chat_model_for("offline").unwrap().name(), "offline");
        let err = chat_model_for("gpt4").err().unwrap().to_string();
        assert!(err.contains("unknown model spec `gpt4`"), "{err}");
        assert!(chat_model_for("hash").is_err());
    }
}
