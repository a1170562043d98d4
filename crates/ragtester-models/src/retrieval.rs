//! Embedders and rerankers by spec: in-process models (hash and lexical from the retrieval crate, BERT
//! folders and cross-encoders from the BERT crate, fetched from the hub when named `hf:`) and endpoint
//! models from the provider crate; which is which is decided here alone.

use anyhow::{Context, Result, bail};
use ragtester_core::settings::Environment;
use ragtester_core::{ChatModel, Embedder, ModelSettings, ModelSpec, Reranker};
use ragtester_llm::{HttpEmbedder, HttpReranker, LlmReranker, ProviderEnv};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `hash`, `local:DIR`, `hf:ORG/NAME`, `openai:MODEL` (`/embeddings`) or `ollama:MODEL` (`/api/embed`).
/// With a cache folder, vectors are kept by text hash so nothing is embedded twice. `settings` are the
/// config's provider settings for this spec (base URL, key variable, limits).
pub(super) fn build_embedder(
    spec: &str,
    cache: Option<&Path>,
    settings: &ModelSettings,
    env: &ProviderEnv,
) -> Result<Arc<dyn Embedder>> {
    if !settings.base_urls.is_empty() {
        bail!(
            "embedder {spec}: base_urls (a serving pool) applies to chat models; give an embedding endpoint one base_url"
        );
    }
    let model: Arc<dyn Embedder> = match ModelSpec::parse(spec)? {
        // Hashing is cheaper than a cache lookup.
        ModelSpec::Hash => return embedder_for(spec, &env.environment),
        ModelSpec::OpenAi(model) => Arc::new(
            HttpEmbedder::openai_configured(model, settings, env)
                .with_context(|| format!("embedder {spec}"))?,
        ),
        ModelSpec::Ollama(model) => Arc::new(
            HttpEmbedder::ollama_configured(model, settings, env)
                .with_context(|| format!("embedder {spec}"))?,
        ),
        _ => embedder_for(spec, &env.environment)?,
    };
    match cache {
        Some(dir) => Ok(Arc::new(crate::CachedEmbedder::open(model, dir)?)),
        None => Ok(model),
    }
}

/// `offline` (lexical coverage), a cross-encoder folder (`local:DIR`, `hf:ORG/NAME`), a rerank endpoint
/// (`http(s)://…`), or any chat model (`openai:`, `ollama:`, `local:FILE.gguf`) grading passages, built
/// by `chat`.
pub(super) fn build_reranker(
    spec: &str,
    chat: &dyn Fn(&str) -> Result<Arc<dyn ChatModel>>,
    env: &ProviderEnv,
) -> Result<Arc<dyn Reranker>> {
    Ok(match ModelSpec::parse(spec)? {
        ModelSpec::Url(url) => Arc::new(HttpReranker::configured(&url, &env.http)?),
        ModelSpec::OpenAi(_) | ModelSpec::Ollama(_) => Arc::new(LlmReranker::new(chat(spec)?)?),
        ModelSpec::Local(path) if path.ends_with(".gguf") => {
            Arc::new(LlmReranker::new(chat(spec)?)?)
        }
        _ => reranker_for(spec, &env.environment)?,
    })
}

/// The folder a `local:DIR` or `hf:ORG/NAME` spec points at; None for other specs.
/// An `hf:` model is downloaded into the environment's hub cache first when the cache does not hold it.
pub fn model_folder_of(spec: &ModelSpec, env: &Environment) -> Result<Option<PathBuf>> {
    Ok(match spec {
        ModelSpec::Local(dir) => Some(PathBuf::from(dir)),
        ModelSpec::Hf(repo) => Some(crate::hub::locate(
            repo,
            &crate::hub::HubSettings::from_environment(env),
        )?),
        _ => None,
    })
}

/// Build an in-process embedder: `hash` (the lexical fallback), `local:DIR` or `hf:ORG/NAME` (a BERT-family
/// model through candle). HTTP embedders are built by [`build_embedder`].
/// BERT embedders run `RAGTESTER_EMBED_WORKERS` batches at once as the environment says.
pub fn embedder_for(spec: &str, env: &Environment) -> Result<Arc<dyn Embedder>> {
    let parsed = ModelSpec::parse(spec)?;
    if parsed == ModelSpec::Hash {
        return Ok(Arc::new(ragtester_retrieve::HashEmbedder::default()));
    }
    match model_folder_of(&parsed, env)? {
        Some(dir) => crate::local::bert_embedder(&dir, env.embed_workers, spec),
        None => bail!(
            "embedder `{parsed}` is not an in-process model: use hash, local:DIR or hf:ORG/NAME here"
        ),
    }
}

/// Build an in-process reranker: `offline` (lexical coverage) or a cross-encoder folder (`local:DIR`,
/// `hf:ORG/NAME`).
pub fn reranker_for(spec: &str, env: &Environment) -> Result<Arc<dyn Reranker>> {
    let parsed = ModelSpec::parse(spec)?;
    if parsed == ModelSpec::Offline {
        return Ok(Arc::new(ragtester_retrieve::LexicalReranker));
    }
    match model_folder_of(&parsed, env)? {
        Some(dir) => crate::local::cross_encoder(&dir, spec),
        None => bail!(
            "reranker `{parsed}` is not an in-process model: use offline, local:DIR or hf:ORG/NAME here"
        ),
    }
}
