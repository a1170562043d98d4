//! Traces from the system under test. A black-box target is otherwise judged on its final answer alone;
//! most RAG services already emit OpenTelemetry spans for their retrieval and generation steps, so
//! ragtester receives them and reads those steps back:
//!
//! - `receiver.rs`: an OTLP/HTTP receiver (`POST /v1/traces`, protobuf and JSON) on a loopback port,
//!   keeping the spans of the traces a run is waiting for;
//! - `context.rs`: the W3C trace context (`traceparent`) each call carries, so a trace is tied to its cell;
//! - `conventions.rs`: what spans following the OpenInference or GenAI semantic conventions say — the
//!   retrieved documents (ids, scores, content), the query the retriever was given, the model, token
//!   counts and each step's time;
//! - `tool_spans.rs`: the tools an agent called (OpenInference `TOOL` spans, GenAI `execute_tool`
//!   spans): name, arguments, result, and for a search the documents its retriever spans returned.
//!
//! Invariants: knows OTLP and the two conventions; nothing of cases, answers, judging or a target's wire
//! protocol (the executor puts what this crate reads onto the answer).

mod attributes;
mod context;
mod conventions;
mod receiver;
mod tool_spans;

pub use context::TraceContext;
pub use conventions::{StageTime, TraceFacts, TracedDocument, facts};
pub use opentelemetry_proto::tonic::trace::v1::Span;
pub use receiver::TraceReceiver;
