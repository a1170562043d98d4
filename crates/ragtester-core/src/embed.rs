//! The model traits retrieval is built on: embedders for dense search, rerankers for the second pass.

use anyhow::Result;

/// Some model families embed queries and passages differently (e5's `query:` / `passage:` prefixes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedKind {
    Query,
    Passage,
}

pub trait Embedder: Send + Sync {
    /// Stable identity of the model and its version: part of every index cache key.
    fn id(&self) -> String;
    fn dimension(&self) -> usize;
    /// One L2-normalised vector per text.
    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Vec<f32>>>;
}

/// A second, finer scorer of retrieved candidates (cross-encoder, LLM, rerank endpoint).
pub trait Reranker: Send + Sync {
    /// Stable identity of the model and its version.
    fn id(&self) -> String;
    /// One relevance score per passage, higher is better.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>>;
}
