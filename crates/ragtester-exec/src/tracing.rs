//! A target's own trace of a call, received while the run calls it: the trace context a call carries, and
//! what the trace's spans say put onto the answer — the documents the service retrieved (placed in the
//! corpus, so retrieval metrics, claim metrics and failure attribution work as for the built-in
//! pipeline), the query it retrieved with, the tools it called, its tokens, and its retrieval and
//! generation times.

use ragtester_core::document::locate_context;
use ragtester_core::{Answer, Document, StageLatency, TraceRecord};
use ragtester_trace::{TraceContext, TraceReceiver};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The quiet time that ends a trace once its first span arrived.
const QUIET: Duration = Duration::from_millis(150);
/// Calls after which a target that has sent no trace at all is no longer waited for in full.
const CALLS_BEFORE_GIVING_UP: usize = 5;

pub struct Tracing {
    pub receiver: TraceReceiver,
    /// How long a call's trace is waited for after the call returned.
    pub wait: Duration,
    called: AtomicUsize,
    traced: AtomicUsize,
}

impl Tracing {
    pub fn new(receiver: TraceReceiver, wait: Duration) -> Self {
        Self {
            receiver,
            wait,
            called: AtomicUsize::new(0),
            traced: AtomicUsize::new(0),
        }
    }

    /// A new trace for one call, awaited from now on.
    pub fn begin(&self) -> anyhow::Result<TraceContext> {
        let context = TraceContext::new()?;
        self.receiver.expect(context.trace_id);
        Ok(context)
    }

    /// The call's spans once its trace is complete, read onto the answer. `call_ms` is the call's own
    /// time, split into retrieval and the rest when the trace times its retrieval.
    pub async fn finish(
        &self,
        context: TraceContext,
        answer: &mut Answer,
        documents: &[Document],
        query: &str,
    ) {
        let called = self.called.fetch_add(1, Ordering::Relaxed) + 1;
        // A target that has never sent a span after several calls is still listened for, briefly.
        let wait = if self.traced.load(Ordering::Relaxed) == 0 && called > CALLS_BEFORE_GIVING_UP {
            QUIET
        } else {
            self.wait
        };
        let spans = self
            .receiver
            .collect((context.trace_id, context.span_id), wait, QUIET)
            .await;
        let mut record = TraceRecord {
            trace_id: context.trace_id_hex(),
            spans: spans.len(),
            convention: None,
            model: None,
            stages: Vec::new(),
            note: None,
        };
        if spans.is_empty() {
            record.note = Some(format!(
                "the target sent no trace within {} ms of its reply",
                wait.as_millis()
            ));
            answer.trace = Some(record);
            return;
        }
        self.traced.fetch_add(1, Ordering::Relaxed);
        let facts = ragtester_trace::facts(&spans);
        record.convention = facts.convention.map(str::to_string);
        record.model = facts.model.clone();
        record.stages = facts
            .stages
            .iter()
            .map(|s| StageLatency {
                stage: s.stage.to_string(),
                name: s.name.clone(),
                ms: s.ms,
            })
            .collect();
        if facts.convention.is_none() {
            record.note = Some(
                "no span follows the OpenInference or GenAI conventions: nothing to read from them"
                    .into(),
            );
        }
        // The documents the service's generator saw, unless its reply returned them itself.
        if answer.contexts.is_empty() && !facts.documents.is_empty() {
            let without_text = facts
                .documents
                .iter()
                .filter(|d| d.content.is_none())
                .count();
            answer.contexts = facts
                .documents
                .iter()
                .filter_map(|d| Some((d, d.content.as_deref()?)))
                .enumerate()
                .map(|(i, (d, text))| {
                    let mut context = locate_context(documents, i + 1, text);
                    context.score = d.score.unwrap_or(0.0);
                    context
                })
                .collect();
            if without_text > 0 {
                record.note = Some(format!(
                    "{without_text} traced documents carry no content and cannot be placed in the corpus"
                ));
            }
        }
        read_tool_calls(answer, &facts);
        if let Some(q) = facts.retrieval_query.filter(|q| q.trim() != query.trim()) {
            answer.rewritten_query = Some(q);
        }
        if let Some(n) = facts.prompt_tokens {
            answer.usage.prompt_tokens = n;
        }
        if let Some(n) = facts.completion_tokens {
            answer.usage.completion_tokens = n;
        }
        // The call's time is the system's; the trace says how much of it was retrieval.
        if let Some(retrieval) = facts.retrieval_ms {
            let call = answer.latency.generation_ms;
            answer.latency.retrieval_ms = retrieval.min(call);
            answer.latency.generation_ms = call - answer.latency.retrieval_ms;
        }
        answer.trace = Some(record);
    }
}

/// The tools the trace says the service called, unless its reply said so itself. A trace that follows a
/// convention and holds no tool span made no call; a tool span that cannot be read is the cell's error.
fn read_tool_calls(answer: &mut Answer, facts: &ragtester_trace::TraceFacts) {
    if !facts.tool_errors.is_empty() {
        answer.error = Some(format!(
            "the target's trace holds tool calls that cannot be read: {}",
            facts.tool_errors.join("; ")
        ));
        return;
    }
    if answer.tool_calls.is_none() && facts.convention.is_some() {
        answer.tool_calls = Some(facts.tool_calls.clone());
    }
}
