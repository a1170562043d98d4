//! The model traits retrieval is built on: embedders for dense search, rerankers for the second pass.

use anyhow::Result;
use serde::{Deserialize, Serialize};

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
    /// How the model's tokenizer sees these passages: tokens it cannot map and texts cut at its window.
    /// None for models whose tokenizer is out of reach (an HTTP endpoint) or that have none (hashing).
    fn token_profile(&self, _texts: &[&str]) -> Option<Result<TokenProfile>> {
        None
    }
}

/// What an embedder's tokenizer made of a set of passages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TokenProfile {
    pub texts: usize,
    /// Tokens of the texts, special tokens left out.
    pub tokens: usize,
    /// Of those, the ones mapped to the unknown token ([UNK], <unk>): text the model cannot see.
    pub unknown: usize,
    /// Texts longer than the window, whose end the model never sees.
    pub truncated: usize,
    /// The model's window in tokens.
    pub window: usize,
}

impl TokenProfile {
    pub fn unknown_share(&self) -> Option<f64> {
        (self.tokens > 0).then(|| self.unknown as f64 / self.tokens as f64)
    }

    pub fn truncated_share(&self) -> Option<f64> {
        (self.texts > 0).then(|| self.truncated as f64 / self.texts as f64)
    }

    pub fn add(&mut self, other: &TokenProfile) {
        self.texts += other.texts;
        self.tokens += other.tokens;
        self.unknown += other.unknown;
        self.truncated += other.truncated;
        self.window = self.window.max(other.window);
    }
}

/// One embedder's token profile over one chunking of the corpus's passages in one language: written by the
/// run (`embedders.json`), read by the report's diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbedderProfile {
    pub embedder: String,
    /// The chunking's label (strategy and sizes).
    pub chunking: String,
    /// The passages' document language.
    pub language: String,
    pub profile: TokenProfile,
}

/// A second, finer scorer of retrieved candidates (cross-encoder, LLM, rerank endpoint).
pub trait Reranker: Send + Sync {
    /// Stable identity of the model and its version.
    fn id(&self) -> String;
    /// One relevance score per passage, higher is better.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>>;
}
