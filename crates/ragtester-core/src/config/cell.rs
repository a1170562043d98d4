//! One cell of the configuration matrix: retriever, chunking, top-k, models — and its stable id.

use super::target::{TargetKind, TargetSettings};
use crate::ids::stable_id;
use crate::record::default_schema_version;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Retrieval modes of the spec's configuration matrix (§4.1, groups A–D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetrieverKind {
    Bm25,
    Dense,
    Hybrid,
    HybridRerank,
    /// The user's own RAG service: retrieval happens inside it.
    External,
    /// Reference point: the case's own source passages, in document order (perfect retrieval).
    Oracle,
    /// Reference point: no passages at all (closed book: what the model answers from memory). Spelt
    /// `none` on the command line; either spelling is read in both places.
    #[serde(alias = "none")]
    ClosedBook,
    /// Reference point: the case's whole documents in the prompt (long context instead of retrieval), cut
    /// to the model's window where it is known.
    FullDoc,
}

impl RetrieverKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RetrieverKind::Bm25 => "bm25",
            RetrieverKind::Dense => "dense",
            RetrieverKind::Hybrid => "hybrid",
            RetrieverKind::HybridRerank => "hybrid-rerank",
            RetrieverKind::External => "external",
            RetrieverKind::Oracle => "oracle",
            RetrieverKind::ClosedBook => "none",
            RetrieverKind::FullDoc => "full-doc",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "bm25" => RetrieverKind::Bm25,
            "dense" => RetrieverKind::Dense,
            "hybrid" => RetrieverKind::Hybrid,
            "hybrid-rerank" => RetrieverKind::HybridRerank,
            "oracle" => RetrieverKind::Oracle,
            "none" | "closed-book" => RetrieverKind::ClosedBook,
            "full-doc" => RetrieverKind::FullDoc,
            other => {
                return Err(crate::usage::UsageError(format!(
                    "unknown retriever `{other}`: expected bm25, dense, hybrid, hybrid-rerank, or a \
                     reference point: oracle (the case's own passages), none (closed book; also \
                     closed-book) or full-doc (the case's whole documents)"
                ))
                .into());
            }
        })
    }

    /// A reference point rather than a retriever: what the answers would be with perfect retrieval, with
    /// none, or with the whole documents. Its `top_k` means nothing.
    pub fn is_reference(self) -> bool {
        matches!(
            self,
            RetrieverKind::Oracle | RetrieverKind::ClosedBook | RetrieverKind::FullDoc
        )
    }

    pub fn uses_dense(self) -> bool {
        matches!(
            self,
            RetrieverKind::Dense | RetrieverKind::Hybrid | RetrieverKind::HybridRerank
        )
    }
}

/// How hybrid retrieval fuses the keyword and dense lists.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Fusion {
    /// Weighted sum of min–max normalised scores (the spec's 0.7 dense / 0.3 keyword).
    Weighted { dense: f64, keyword: f64 },
    /// Reciprocal-rank fusion with constant k.
    Rrf { k: f64 },
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion::Weighted {
            dense: 0.7,
            keyword: 0.3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkingSettings {
    /// Maximum tokens per chunk (cl100k tokens).
    #[serde(default = "default_chunk_tokens")]
    pub max_tokens: usize,
    /// Tokens shared by consecutive chunks.
    #[serde(default)]
    pub overlap_tokens: usize,
    /// How boundaries are chosen. Omitted from records when it is the default, so configuration ids of
    /// earlier runs stay valid.
    #[serde(default, skip_serializing_if = "ChunkStrategy::is_default")]
    pub strategy: ChunkStrategy,
}

/// Chunk boundary strategies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkStrategy {
    /// The largest paragraphs, then sentences (。！？ included), then words that fit the budget.
    #[default]
    Paragraph,
    /// Fixed windows of the token budget with overlap, cut only between words (jieba words for Chinese)
    /// and never inside a number.
    Fixed,
    /// Sections first: a chunk never crosses a heading; inside a section, as `paragraph`.
    Headings,
}

impl ChunkStrategy {
    pub fn is_default(&self) -> bool {
        *self == Self::Paragraph
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "paragraph" => Self::Paragraph,
            "fixed" => Self::Fixed,
            "headings" => Self::Headings,
            other => {
                return Err(crate::usage::UsageError(format!(
                    "unknown chunker `{other}` (known: paragraph, fixed, headings)"
                ))
                .into());
            }
        })
    }
}

fn default_chunk_tokens() -> usize {
    64
}

impl Default for ChunkingSettings {
    fn default() -> Self {
        Self {
            max_tokens: default_chunk_tokens(),
            overlap_tokens: 0,
            strategy: ChunkStrategy::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RerankSettings {
    pub model: String,
    /// How many fused candidates the reranker sees before the top-k is cut.
    pub candidates: usize,
}

/// How the built-in pipeline uses a conversation's earlier turns (the conversation axis of the matrix).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HistoryMode {
    /// Each turn alone, as if it opened the conversation.
    None,
    /// Earlier turns (questions and the system's answers) go into the answer prompt as chat messages;
    /// retrieval sees the turn's own query.
    #[default]
    Prompt,
    /// A model rewrites the turn into a question complete on its own from the history before retrieval
    /// (recorded as the answer's `rewritten_query`); the prompt carries the history too.
    Rewrite,
}

impl HistoryMode {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    pub fn as_str(self) -> &'static str {
        match self {
            HistoryMode::None => "none",
            HistoryMode::Prompt => "prompt",
            HistoryMode::Rewrite => "rewrite",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "none" => Self::None,
            "prompt" => Self::Prompt,
            "rewrite" => Self::Rewrite,
            other => {
                return Err(crate::usage::UsageError(format!(
                    "unknown history mode `{other}` (known: none, prompt, rewrite)"
                ))
                .into());
            }
        })
    }
}

/// Every setting of one matrix cell. Its id is a stable hash of all of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    pub id: String,
    pub llm: String,
    pub embedder: String,
    pub retriever: RetrieverKind,
    pub top_k: usize,
    pub chunking: ChunkingSettings,
    pub fusion: Fusion,
    pub rerank: Option<RerankSettings>,
    /// Set when the system under test is an external RAG service rather than the built-in pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetSettings>,
    /// How a conversation's earlier turns reach the built-in pipeline. Omitted from records and ids when it
    /// is the default, so configuration ids of earlier runs stay valid.
    #[serde(default, skip_serializing_if = "HistoryMode::is_default")]
    pub history: HistoryMode,
    /// Which answering of a repeated run this is (`run --repeat N`). Each repeat is a configuration of its
    /// own, so every repeat's cells are asked afresh, stored, resumed, sharded and budgeted as any cell;
    /// reports fold the repeats of one configuration together by [`Configuration::base_id`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Repeat>,
    /// An agent: the reader decides whether to call a `search` tool over the retriever, and with what
    /// query, before it answers; its calls are recorded as the answer's tool calls. Omitted from records
    /// and ids when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent: bool,
}

/// The place of a configuration among the repeats of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Repeat {
    /// 1-based.
    pub index: u32,
    pub of: u32,
}

/// The settings a configuration id is computed from (everything but the id and schema version).
#[derive(Serialize)]
struct ConfigKey<'a> {
    llm: &'a str,
    embedder: &'a str,
    retriever: RetrieverKind,
    top_k: usize,
    chunking: &'a ChunkingSettings,
    fusion: &'a Fusion,
    rerank: &'a Option<RerankSettings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: &'a Option<TargetSettings>,
    #[serde(skip_serializing_if = "HistoryMode::is_default")]
    history: HistoryMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeat: Option<Repeat>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    agent: bool,
}

impl Configuration {
    pub fn new(
        llm: String,
        embedder: String,
        retriever: RetrieverKind,
        top_k: usize,
        chunking: ChunkingSettings,
        fusion: Fusion,
    ) -> Self {
        // Only the reranking mode carries rerank settings, so the other modes' ids do not depend on them.
        let rerank = (retriever == RetrieverKind::HybridRerank).then(|| RerankSettings {
            model: "offline".into(),
            candidates: (top_k * 4).max(20),
        });
        let fusion = if retriever.uses_dense() && retriever != RetrieverKind::Dense {
            fusion
        } else {
            Fusion::default()
        };
        let mut config = Self {
            schema_version: crate::SCHEMA_VERSION,
            id: String::new(),
            llm,
            embedder,
            retriever,
            top_k,
            chunking,
            fusion,
            rerank,
            target: None,
            history: HistoryMode::default(),
            repeat: None,
            agent: false,
        };
        config.id = config.compute_id();
        config
    }

    /// The same cell as an agent that calls retrieval as its `search` tool; the id follows.
    pub fn with_agent(mut self) -> Self {
        if self.target.is_none() && !self.retriever.is_reference() {
            self.agent = true;
            self.id = self.compute_id();
        }
        self
    }

    /// The `index`-th of `of` repeats of this configuration; the id follows.
    pub fn with_repeat(mut self, index: u32, of: u32) -> Self {
        self.repeat = Some(Repeat { index, of });
        self.id = self.compute_id();
        self
    }

    /// The id of the configuration this one repeats (its own id when it is no repeat).
    pub fn base_id(&self) -> String {
        match self.repeat {
            None => self.id.clone(),
            Some(_) => Configuration {
                repeat: None,
                ..self.clone()
            }
            .compute_id(),
        }
    }

    /// The label of the configuration this one repeats.
    pub fn base_label(&self) -> String {
        let label = self.label();
        match self.repeat {
            None => label,
            Some(r) => label
                .strip_suffix(&format!(" · repeat {}/{}", r.index, r.of))
                .unwrap_or(&label)
                .to_string(),
        }
    }

    /// The same cell with another use of a conversation's history; the id follows. Targets keep their
    /// own history (they are sent the messages), so theirs stays the default.
    pub fn with_history(mut self, history: HistoryMode) -> Self {
        if self.target.is_none() {
            self.history = history;
            self.id = self.compute_id();
        }
        self
    }

    /// The same cell reranked by another model (`offline`, `local:DIR` cross-encoder, `http:URL`, or a chat
    /// model spec for LLM reranking); the id follows.
    pub fn with_reranker(mut self, model: &str) -> Self {
        if let Some(r) = &mut self.rerank {
            r.model = model.to_string();
            self.id = self.compute_id();
        }
        self
    }

    /// The configuration that sends every case to an external RAG service.
    pub fn for_target(target: TargetSettings) -> Self {
        let mut config = Self {
            schema_version: crate::SCHEMA_VERSION,
            id: String::new(),
            llm: format!("target:{}", target.name),
            embedder: "none".into(),
            retriever: RetrieverKind::External,
            top_k: 0,
            chunking: ChunkingSettings::default(),
            fusion: Fusion::default(),
            rerank: None,
            target: Some(target),
            history: HistoryMode::default(),
            repeat: None,
            agent: false,
        };
        config.id = config.compute_id();
        config
    }

    pub fn compute_id(&self) -> String {
        stable_id(
            "configuration",
            &ConfigKey {
                llm: &self.llm,
                embedder: &self.embedder,
                retriever: self.retriever,
                top_k: self.top_k,
                chunking: &self.chunking,
                fusion: &self.fusion,
                rerank: &self.rerank,
                target: &self.target,
                history: self.history,
                repeat: self.repeat,
                agent: self.agent,
            },
        )
    }

    /// A short human label: `hybrid k=5 · offline · hash`.
    pub fn label(&self) -> String {
        match self.repeat {
            Some(r) => format!("{} · repeat {}/{}", self.settings_label(), r.index, r.of),
            None => self.settings_label(),
        }
    }

    fn settings_label(&self) -> String {
        if let Some(t) = &self.target {
            return format!(
                "target {} ({})",
                t.name,
                match t.kind {
                    TargetKind::Http => "http",
                    TargetKind::Command => "command",
                    TargetKind::Imported => "imported",
                    TargetKind::Function => "function",
                }
            );
        }
        let embedder = if self.retriever.uses_dense() {
            format!(" · {}", self.embedder)
        } else {
            String::new()
        };
        // Chunking shows only when it differs from the default, so the common labels stay short.
        let chunking = if self.chunking == ChunkingSettings::default() {
            String::new()
        } else {
            let c = &self.chunking;
            let strategy = match c.strategy {
                ChunkStrategy::Paragraph => "",
                ChunkStrategy::Fixed => " fixed",
                ChunkStrategy::Headings => " headings",
            };
            let overlap = if c.overlap_tokens > 0 {
                format!("/{}", c.overlap_tokens)
            } else {
                String::new()
            };
            format!(" · chunk {}{overlap}{strategy}", c.max_tokens)
        };
        let reranker = match &self.rerank {
            Some(r) if r.model != "offline" => format!(" · rerank {}", r.model),
            _ => String::new(),
        };
        let history = if self.history.is_default() {
            String::new()
        } else {
            format!(" · history {}", self.history.as_str())
        };
        let agent = if self.agent { "agent · " } else { "" };
        let retrieval = match self.retriever {
            RetrieverKind::Oracle => "oracle passages".to_string(),
            RetrieverKind::ClosedBook => "closed book".to_string(),
            RetrieverKind::FullDoc => "whole documents".to_string(),
            r => format!("{} k={}", r.as_str(), self.top_k),
        };
        format!(
            "{agent}{retrieval} · {}{}{}{}{}",
            self.llm, embedder, reranker, chunking, history
        )
    }
}
