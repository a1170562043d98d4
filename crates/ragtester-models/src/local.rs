//! In-process models from weights on disk (candle: BERT-family embedders and cross-encoders, GGUF chat
//! models), or, in a build without them, an error that says how to get them. Leaving them out
//! (`--no-default-features`) takes candle, its matrix kernels, both tokenizers and the grammar engine out of
//! the build: about a quarter of what the first `cargo run --release` compiles (docs/benchmarks.md).

use anyhow::Result;
use ragtester_core::{ChatModel, Embedder, Reranker};
use std::path::Path;
use std::sync::Arc;

/// Whether this build runs models in-process.
pub const BUILT_IN: bool = cfg!(feature = "local-models");

/// What a build without in-process models says when one is named.
pub const MISSING: &str = "this ragtester was built without in-process models (cargo's \
    --no-default-features): install it with them (`cargo install --locked --path crates/ragtester`, or the \
    Python wheel), or name an openai: or ollama: model, or an embedder served over HTTP";

#[cfg(feature = "local-models")]
mod built {
    use super::*;
    use anyhow::Context;

    pub fn gguf_chat(path: &Path, spec: Option<String>) -> Result<Arc<dyn ChatModel>> {
        Ok(Arc::new(match spec {
            Some(spec) => ragtester_gguf::LocalChat::load_as(path, spec)?,
            None => ragtester_gguf::LocalChat::load(path)?,
        }))
    }

    pub fn hf_gguf_split(spec: &str) -> (&str, Option<&str>) {
        ragtester_gguf::hf_gguf::split(spec)
    }

    pub fn hf_gguf_resolve(spec: &str, hub: Option<&Path>) -> Result<std::path::PathBuf> {
        ragtester_gguf::hf_gguf::resolve(spec, hub)
    }

    pub fn bert_embedder(
        dir: &Path,
        workers: Option<usize>,
        spec: &str,
    ) -> Result<Arc<dyn Embedder>> {
        Ok(Arc::new(
            ragtester_bert::BertEmbedder::load(dir)
                .with_context(|| format!("embedder {spec}"))?
                .with_workers(workers),
        ))
    }

    pub fn cross_encoder(dir: &Path, spec: &str) -> Result<Arc<dyn Reranker>> {
        Ok(Arc::new(
            ragtester_bert::CrossEncoder::load(dir).with_context(|| format!("reranker {spec}"))?,
        ))
    }
}

#[cfg(not(feature = "local-models"))]
mod built {
    use super::*;
    use anyhow::bail;

    pub fn gguf_chat(path: &Path, _: Option<String>) -> Result<Arc<dyn ChatModel>> {
        bail!("chat model {}: {MISSING}", path.display())
    }

    /// `ORG/NAME/FILE.gguf` → (`ORG/NAME`, the file), as the local-models build reads it, so a download
    /// is never started for a model this build cannot run.
    pub fn hf_gguf_split(spec: &str) -> (&str, Option<&str>) {
        (spec, None)
    }

    pub fn hf_gguf_resolve(spec: &str, _: Option<&Path>) -> Result<std::path::PathBuf> {
        bail!("chat model hf:{spec}: {MISSING}")
    }

    pub fn bert_embedder(_: &Path, _: Option<usize>, spec: &str) -> Result<Arc<dyn Embedder>> {
        bail!("embedder {spec}: {MISSING}")
    }

    pub fn cross_encoder(_: &Path, spec: &str) -> Result<Arc<dyn Reranker>> {
        bail!("reranker {spec}: {MISSING}")
    }
}

pub(crate) use built::*;
