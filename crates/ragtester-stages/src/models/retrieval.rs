//! Embedders and rerankers by spec. In-process models (hash, BERT folders, cross-encoders) come from the
//! retrieval crate, endpoint models from the provider crate; which is which is decided here alone.

use anyhow::{Context, Result, bail};
use ragtester_core::{ChatModel, Embedder, ModelSettings, ModelSpec, Reranker};
use ragtester_llm::{HttpEmbedder, HttpReranker, LlmReranker};
use std::path::Path;
use std::sync::Arc;

/// `hash`, `local:DIR`, `hf:ORG/NAME`, `openai:MODEL` (`/embeddings`) or `ollama:MODEL` (`/api/embed`).
/// With a cache folder, vectors are kept by text hash so nothing is embedded twice. `settings` are the
/// config's provider settings for this spec (base URL, key variable, limits).
pub(super) fn build_embedder(
    spec: &str,
    cache: Option<&Path>,
    settings: &ModelSettings,
) -> Result<Arc<dyn Embedder>> {
    if !settings.base_urls.is_empty() {
        bail!(
            "embedder {spec}: base_urls (a serving pool) applies to chat models; give an embedding endpoint one base_url"
        );
    }
    let model: Arc<dyn Embedder> = match ModelSpec::parse(spec)? {
        // Hashing is cheaper than a cache lookup.
        ModelSpec::Hash => return ragtester_retrieve::embedder_for(spec),
        ModelSpec::OpenAi(model) => Arc::new(
            HttpEmbedder::openai_configured(model, settings)
                .with_context(|| format!("embedder {spec}"))?,
        ),
        ModelSpec::Ollama(model) => Arc::new(
            HttpEmbedder::ollama_configured(model, settings)
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
/// (`http(s)://…`), or any chat model (`openai:`, `ollama:`, `local:FILE.gguf`) grading passages, built
/// by `chat`.
pub(super) fn build_reranker(
    spec: &str,
    chat: &dyn Fn(&str) -> Result<Arc<dyn ChatModel>>,
) -> Result<Arc<dyn Reranker>> {
    Ok(match ModelSpec::parse(spec)? {
        ModelSpec::Url(url) => Arc::new(HttpReranker::from_env(&url)?),
        ModelSpec::OpenAi(_) | ModelSpec::Ollama(_) => Arc::new(LlmReranker::new(chat(spec)?)?),
        ModelSpec::Local(path) if path.ends_with(".gguf") => {
            Arc::new(LlmReranker::new(chat(spec)?)?)
        }
        _ => ragtester_retrieve::reranker_for(spec)?,
    })
}
