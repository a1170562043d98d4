//! The shared vocabulary of ragtester: the records every stage reads and writes (documents, test cases,
//! configurations, answers, verdicts), their JSONL form, the project configuration schema, stable ids, and the
//! traits that model providers implement (chat models, embedders).
//!
//! This crate knows no HTTP, no SQL and no HTML. It holds plain data; the text analysis stages must agree on is
//! `ragtester-text`'s.
//!
//! # Map
//!
//! The data model: `Document`, `SourceSpan`, `Chunk`, `TestCase` (a turn of a conversation carries its
//! `Turn`: conversation id, place, kind, step, the standalone question it stands for — every turn is a case,
//! so resume, caches, shards and merge work per turn), `Configuration` (id = stable hash of all its settings;
//! `HistoryMode`, the conversation axis, left out of the hash when default), `Answer` (a rewritten query; a
//! target's `TraceRecord`; the `Citation`s a target returns in a field of its own), `Verdict`; `tool.rs` (an agentic system's tool calls: those a case expects, those an answer made, the
//! figures comparing them); `simulation.rs` (a simulated user's goal, the conversation it held turn by
//! turn, how far it got); JSONL reading
//! and atomic writing, both also one record at a time (`JsonlReader`, `AtomicWriter`) for files a whole run
//! deep; `config/` (the matrix cell in `cell.rs`, the user's own services as rows in `target.rs`, the TOML
//! project file, its defaults and matrix expansion in `project.rs`, model prices in `prices.rs`); `cause.rs`
//! (a failed cell's primary cause, its evidence and the advice for it); model specs (`offline`, `hash`,
//! `openai:M`, `ollama:M`, `local:PATH`, `hf:ORG/NAME`, an `http(s)://` URL); a sampled file digest
//! (`ids::file_fingerprint`) that names a local model's weights; `oracle.rs` (the oracle's own figures and
//! audits as records); `generated.rs` (the `docgen.json` manifest of generated documents and their planted
//! facts); `prompt_template.rs` (English/Chinese minijinja prompt templates, built in or a user's, checked at
//! load and versioned — used by the judge and the document writer); `spend.rs` (what a spending cap reports:
//! its limits, what was spent, the refusal every stage recognises); `hf_cache.rs` (the local Hugging Face
//! cache layout); `llm_settings.rs` (sampling per role, provider settings per model: base URL, key variable,
//! rate limits); the `ChatModel` trait (with `identity()`: the spec plus the endpoint or file digest, what
//! caches and manifests key on) with its request (`ReplyFormat`: text, JSON or a JSON schema; sample index),
//! the `Embedder` and `Reranker` traits; and its `token_profile` (what a tokenizer makes of passages: unknown
//! tokens, truncation; `EmbedderProfile`); span-based IR metrics (`ir.rs`: hit, MRR, nDCG, recall,
//! precision). `reply_schema.rs`: a structured reply's schema sized to its token limit (free-text strings
//! bounded), for the in-process runner and every provider. `limits.rs`: every limit on untrusted input
//! (`Limits`: file and request sizes, zip entries/expansion/ratio, PDF pages/objects, decoded text, nesting,
//! JSON depth, reply size, answer size), each with a name its errors carry and `--limit NAME=VALUE` sets —
//! the binary sets the process's once, tests pass their own. `secrets.rs`: keys and tokens remembered when
//! read (API keys, `${VAR}` values, credential headers, the UI token) and `redact` applied to every error
//! recorded on a cell, log line, panic message (`panic_text`) and web response, and a `Redacting` writer for
//! logs. `spreadsheet.rs`: every CSV cell a spreadsheet would evaluate (leading `=`, `+`, `-`, `@`, tab, CR)
//! written inert with a `'`, and read back as it was. `record.rs` writes records atomically (`write_atomic`)
//! and new files without replacing anything (`write_new`, `persist_new`). `settings.rs`: the process's
//! environment read in one place (`Environment`: HTTP attempts and timeout, dense-search threshold, embedding
//! workers, cache folder, the Hugging Face hub's variables, OpenAI's and Ollama's defaults), every value
//! checked — the binary reads it once at start and hands it to the model registry as a `ProviderEnv` (with
//! the command's limits), from which every provider, HTTP client, embedder and hub download takes it; no
//! other library asks for it; variables a configuration names (`api_key_env`, `${VAR}`) are read through
//! `settings::variable` when used.

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
pub mod progress;
pub mod prompt_template;
pub mod record;
pub mod reply_schema;
pub mod secrets;
pub mod settings;
pub mod shard;
pub mod simulation;
pub mod spec;
pub mod spend;
pub mod spreadsheet;
pub mod tool;
pub mod usage;
pub mod verdict;

pub use answer::{
    Answer, Citation, Ending, Latency, RetrievedContext, SimulatedTurn, Simulation, SkippedCell,
    StageLatency, TraceRecord, Usage,
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
pub use simulation::{Goal, GoalMetrics, UserMove};
pub use spec::ModelSpec;
pub use tool::{ToolCall, ToolMetrics, ToolMistake, ToolMistakeKind};
pub use verdict::{
    ClaimMetrics, Criteria, Criterion, Rating, Rubric, RubricScore, RuleMetrics, Verdict,
    VerdictStatus,
};
