//! Stage 3: execution. Builds the built-in RAG pipeline of every matrix cell (chunks → indexes → retriever →
//! answer prompt → chat model), sharing indexes between cells that share chunking and embedder, runs every
//! (case, configuration) cell with bounded concurrency, and commits each answer to its [`AnswerSink`] as it
//! finishes, so a killed run resumes where it stopped. It knows no store: the caller's sink keeps answers.
//!
//! A failure in one cell (retrieval or model) becomes that cell's recorded error; it never stops the run or
//! disappears. This crate knows nothing of judging or reporting.
//!
//! # Map
//!
//! Builds one pipeline per configuration (chunks → BM25 / dense / hybrid / rerank → answer prompt → chat
//! model, every model asked of a `ModelSource` — the stages' registry as the run sees it; or an external
//! target, whose returned contexts are located in the corpus for retrieval metrics), sharing chunks and
//! indexes between configurations that share chunking and embedder (dense indexes in process, or in Chroma
//! when the `ModelSource` names a vector store); runs every (case, configuration) cell with the model calls
//! in flight bounded by `--concurrency` and as many cells again retrieving ahead; records retrieved contexts,
//! answer, latencies (the system's retrieval and generation; the wait for a call slot apart, as `queue_ms`)
//! and tokens; leaves unasked, with the reason, the cells a system cannot be fairly given (`skip_reason`: a
//! document-scoped negative for an external service); commits each answer to the caller's `AnswerSink`
//! (`sink.rs`: a trait exec owns; the stages' run store implements it, `InMemory` serves tests; the sink also
//! says how long an answer it keeps whole, the front end's `answer_kb`) as it finishes and skips cells
//! already answered. A conversation's pending turns against one configuration run as one unit, in order, each
//! answer sent back to be committed before the next turn is asked; the history (questions and the system's
//! own answers) reaches the built-in pipeline as the configuration's `HistoryMode` says — none, chat messages
//! in the answer prompt, or a rewrite by the system's model before retrieval (`prompt.rs`) — and a target as
//! a `TargetRequest` (messages, session). A resumed unit reads its answered turns' history from the sink.
//! The run loop is `drive.rs` (units of cells, bounded concurrency, commits); one cell's answering is
//! `run.rs`. `tracing.rs`: for a target whose traces are received, each call's trace context, and what its spans say
//! (documents placed in the corpus as contexts, the retriever's query, tokens, retrieval time) put onto the
//! answer with a `TraceRecord` (and the tools its spans say it called). `agent.rs`: an agent
//! configuration's step before it answers — its model decides whether to call `search(query)` over the
//! retriever and with what query; the call, with the passages it returned, is the answer's tool call.
//! `simulate.rs`: a simulated user's case against a configuration — the user model (a `Simulator` the
//! caller builds) sends the goal's opening message and chooses every next one from the system's answer, each
//! turn committed to the sink as a record under way (a killed run resumes after its last turn), ended by the
//! user, the turn budget or the time bound; a user model that fails, replies in no known shape or repeats a
//! message is the case's named error. Documents a case injects (poisoned copies, indexed with the corpus by the
//! stages' `run.rs`) are hidden from every other case; an external target cannot be given them, so those
//! cells are recorded as errors saying so. Retrieval runs on blocking threads, so a query embedding or a
//! cross-encoder never stalls the async workers. `--shard K/N` runs the cells of core's `Shard` K of N (a
//! cell's stable id decides, the same on every machine; a turn is sharded by its conversation).

mod agent;
mod drive;
mod pipeline;
mod prompt;
mod run;
mod simulate;
mod sink;
mod tracing;

pub use drive::{Counts, Progress, execute};
pub use pipeline::{ModelSource, Pipeline, System, build_pipelines};
pub use prompt::{
    ANSWER_PROMPT_VERSION, answer_messages, answer_prompt_identity, rewrite_messages,
};
pub use ragtester_core::shard::{Shard, cell_slot, shard_unit};
pub use run::{skip_reason, skipped_cells};
pub use simulate::Simulator;
pub use sink::{AnswerSink, InMemory};
pub use tracing::Tracing;
