//! Retrieval for the built-in RAG pipeline under test: a BM25 index (tantivy, jieba + English stemming), an
//! exact dense index over any [`Embedder`], hybrid fusion (weighted after min–max normalisation, or RRF), and
//! reranking.
//!
//! This crate sees chunks and queries only. It knows nothing of test cases, answers or judges; the execution
//! stage asks it for ranked chunks and records them.

mod analyzer;
mod ann;
pub mod beir;
mod bm25;
mod dense;
mod hash_embedder;
mod hybrid;
mod rerank;

pub use bm25::Bm25Index;
pub use dense::{AnnSettings, DenseIndex};
pub use hash_embedder::HashEmbedder;
pub use hybrid::{HybridRetriever, fuse};
pub use rerank::{LexicalReranker, RerankedRetriever, Reranker};

use anyhow::Result;

/// A scored chunk: `chunk` indexes the chunk list the retriever was built over.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub chunk: usize,
    pub score: f64,
}

/// Which chunks a query may see: those of some documents (the paper's per-document scope), or, when none
/// are named, every document except the hidden ones (documents a case injects for itself alone).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub documents: &'a [String],
    /// Seen only when named in `documents`.
    pub hidden: &'a [String],
}

impl<'a> Scope<'a> {
    pub const ALL: Scope<'static> = Scope {
        documents: &[],
        hidden: &[],
    };

    /// Only these documents (all of them when the list is empty).
    pub fn only(documents: &'a [String]) -> Self {
        Self {
            documents,
            hidden: &[],
        }
    }

    pub fn admits(&self, document_id: &str) -> bool {
        if self.documents.is_empty() {
            !self.hidden.iter().any(|d| d == document_id)
        } else {
            self.documents.iter().any(|d| d == document_id)
        }
    }

    /// Whether every document is admitted.
    pub fn is_all(&self) -> bool {
        self.documents.is_empty() && self.hidden.is_empty()
    }
}

pub trait Retriever: Send + Sync {
    /// The `k` best chunks for `query` within `scope`, best first. An empty query returns nothing.
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>>;
}
