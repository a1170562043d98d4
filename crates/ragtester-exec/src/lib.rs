//! Stage 3: execution. Builds the built-in RAG pipeline of every matrix cell (chunks → indexes → retriever →
//! answer prompt → chat model), sharing indexes between cells that share chunking and embedder, runs every
//! (case, configuration) cell with bounded concurrency, and commits each answer to its [`AnswerSink`] as it
//! finishes, so a killed run resumes where it stopped. It knows no store: the caller's sink keeps answers.
//!
//! A failure in one cell (retrieval or model) becomes that cell's recorded error; it never stops the run or
//! disappears. This crate knows nothing of judging or reporting.

mod pipeline;
mod prompt;
mod run;
mod shard;
mod sink;
mod tracing;

pub use pipeline::{ModelSource, Pipeline, System, build_pipelines};
pub use prompt::{
    ANSWER_PROMPT_VERSION, answer_messages, answer_prompt_identity, rewrite_messages,
};
pub use run::{Counts, Progress, execute, skip_reason, skipped_cells};
pub use shard::{Shard, cell_slot, shard_unit};
pub use sink::{AnswerSink, InMemory};
pub use tracing::Tracing;
