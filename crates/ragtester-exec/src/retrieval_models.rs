//! Retrieval models by spec. In-process models (hash, BERT folders, cross-encoders) come from the retrieval
//! crate, endpoint models from the provider crate; embedders sit behind the persistent vector cache.

use crate::ModelFactory;
use anyhow::{Context, Result};
use ragtester_core::{Embedder, ModelSettings, ModelSpec, Reranker};
use ragtester_llm::{HttpEmbedder, HttpReranker, LlmReranker};
use std::path::Path;
use std::sync::Arc;

/// `hash`, `local:DIR`, `hf:ORG/NAME`, `openai:MODEL` (`/embeddings`) or `ollama:MODEL` (`/api/embed`).
/// With a cache folder, vectors are kept by text hash so nothing is embedded twice. `settings` are the
/// config's provider settings for this spec (base URL, key variable, limits).
pub fn embedder_for(
    spec: &str,
    cache: Option<&Path>,
    settings: &ModelSettings,
) -> Result<Arc<dyn Embedder>> {
    let parsed = ModelSpec::parse(spec)?;
    let model: Arc<dyn Embedder> = match &parsed {
        // Hashing is cheaper than a cache lookup.
        ModelSpec::Hash => return ragtester_retrieve::embedder_for(spec),
        ModelSpec::OpenAi(model) => Arc::new(
            HttpEmbedder::openai_configured(model.clone(), settings)
                .with_context(|| format!("embedder {spec}"))?,
        ),
        ModelSpec::Ollama(model) => Arc::new(
            HttpEmbedder::ollama_configured(model.clone(), settings)
                .with_context(|| format!("embedder {spec}"))?,
        ),
        _ => ragtester_retrieve::embedder_for(spec)?,
    };
    match cache {
        Some(dir) => Ok(Arc::new(ragtester_retrieve::CachedEmbedder::open(
            model, dir,
        )?)),
        None => Ok(model),
    }
}

/// `offline` (lexical coverage), a cross-encoder folder (`local:DIR`, `hf:ORG/NAME`), a rerank endpoint
/// (`http(s)://…`), or any chat model (`openai:`, `ollama:`, `local:FILE.gguf`) grading passages.
pub fn reranker_for(spec: &str, chat: ModelFactory<'_>) -> Result<Arc<dyn Reranker>> {
    let parsed = ModelSpec::parse(spec)?;
    Ok(match &parsed {
        ModelSpec::Url(url) => Arc::new(HttpReranker::from_env(url)?),
        ModelSpec::OpenAi(_) | ModelSpec::Ollama(_) => Arc::new(LlmReranker::new(chat(spec)?)?),
        ModelSpec::Local(path) if path.ends_with(".gguf") => {
            Arc::new(LlmReranker::new(chat(spec)?)?)
        }
        _ => ragtester_retrieve::reranker_for(spec)?,
    })
}
