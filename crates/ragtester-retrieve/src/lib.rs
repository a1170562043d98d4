//! Retrieval for the built-in RAG pipeline under test: a BM25 index (tantivy, jieba + English stemming), an
//! exact dense index over any [`Embedder`], hybrid fusion (weighted after min–max normalisation, or RRF), and
//! reranking.
//!
//! This crate sees chunks and queries only. It knows nothing of test cases, answers or judges; the execution
//! stage asks it for ranked chunks and records them.

mod analyzer;
mod bm25;
mod dense;
mod hash_embedder;
mod hybrid;
mod rerank;

pub use bm25::Bm25Index;
pub use dense::DenseIndex;
pub use hash_embedder::HashEmbedder;
pub use hybrid::{HybridRetriever, fuse};
pub use rerank::{LexicalReranker, RerankedRetriever, Reranker};

use anyhow::Result;
use ragtester_core::Embedder;

/// A scored chunk: `chunk` indexes the chunk list the retriever was built over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub chunk: usize,
    pub score: f64,
}

/// Which chunks a query may see: all of them, or those of some documents (the paper's per-document scope).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub documents: &'a [String],
}

impl Scope<'_> {
    pub const ALL: Scope<'static> = Scope { documents: &[] };

    pub fn admits(&self, document_id: &str) -> bool {
        self.documents.is_empty() || self.documents.iter().any(|d| d == document_id)
    }
}

pub trait Retriever: Send + Sync {
    /// The `k` best chunks for `query` within `scope`, best first. An empty query returns nothing.
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>>;
}

/// Build the embedder a spec names. `hash` is the lexical fallback; real models arrive through other crates.
pub fn embedder_for(spec: &str) -> Result<std::sync::Arc<dyn Embedder>> {
    match ragtester_core::ModelSpec::parse(spec)? {
        ragtester_core::ModelSpec::Hash => Ok(std::sync::Arc::new(HashEmbedder::default())),
        other => anyhow::bail!(
            "embedder `{other}` is not available in this build: the built-in embedder is `hash` \
             (a lexical hashing fallback)"
        ),
    }
}
