//! The shared vocabulary of ragtester: the records every stage reads and writes (documents, test cases,
//! configurations, answers, verdicts), their JSONL form, the project configuration schema, stable ids, and the
//! traits that model providers implement (chat models, embedders).
//!
//! This crate knows no HTTP, no SQL and no HTML. It holds plain data; the text analysis stages must agree on is
//! `ragtester-text`'s.

pub mod answer;
pub mod case;
pub mod cause;
pub mod chat;
pub mod config;
pub mod document;
pub mod embed;
pub mod generated;
pub mod hf_cache;
pub mod ids;
pub mod ir;
pub mod limits;
pub mod llm_settings;
pub mod oracle;
pub mod prompt_template;
pub mod record;
pub mod reply_schema;
pub mod secrets;
pub mod settings;
pub mod spec;
pub mod spend;
pub mod spreadsheet;
pub mod verdict;

pub use answer::{
    Answer, Citation, Latency, RetrievedContext, SkippedCell, StageLatency, TraceRecord, Usage,
};
pub use case::{
    Category, ConversationKind, Generator, SectionClass, SourceConflict, Strategy, TestCase, Turn,
    TurnStep,
};
pub use cause::{Attribution, FailureCause};
pub use chat::{
    ChatModel, ChatRequest, ChatResponse, Message, OutputSchema, ReplyFormat, ResponseCache, Role,
    TaskHint,
};
pub use config::{
    ChunkStrategy, ChunkingSettings, Configuration, Fusion, HistoryMode, RerankSettings,
    RetrieverKind,
};
pub use document::{Chunk, Document, DocumentFormat, Page, SourceSpan};
pub use embed::{EmbedKind, Embedder, EmbedderProfile, Reranker, TokenProfile};
pub use limits::Limits;
pub use llm_settings::{ModelSettings, ModelTable, Sampling};
pub use record::{SCHEMA_VERSION, read_jsonl, write_jsonl_atomic};
pub use spec::ModelSpec;
pub use verdict::{
    ClaimMetrics, Criteria, Criterion, Rating, Rubric, RubricScore, RuleMetrics, Verdict,
    VerdictStatus,
};
