//! What the system under test returned for one (case, configuration) cell.

use crate::record::default_schema_version;
use crate::simulation::UserMove;
use serde::{Deserialize, Serialize};

/// One retrieved passage, as the generator saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetrievedContext {
    /// 1-based rank after fusion and reranking.
    pub rank: usize,
    pub score: f64,
    pub chunk_id: String,
    pub document_id: String,
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Where a cell's time went. `total_ms` is the system's: retrieval plus generation (for an external target,
/// its call). Time the cell spent waiting for one of our engine's slots (a retrieval slot, a call slot) is
/// `queue_ms`, never part of the system's latency.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    pub retrieval_ms: f64,
    pub generation_ms: f64,
    pub total_ms: f64,
    #[serde(default)]
    pub queue_ms: f64,
}

impl Latency {
    /// Whether every time is a finite number of milliseconds, none negative: what a record from another
    /// tool must show before its times enter percentiles.
    pub fn is_valid(&self) -> bool {
        [
            self.retrieval_ms,
            self.generation_ms,
            self.total_ms,
            self.queue_ms,
        ]
        .iter()
        .all(|ms| ms.is_finite() && *ms >= 0.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    /// Prompt and reply tokens together; counts from another tool's records may be anything, so the sum
    /// stops at `u64::MAX` rather than wrapping.
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    /// Both counts added to this one's, saturating.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    pub case_id: String,
    pub config_id: String,
    pub contexts: Vec<RetrievedContext>,
    /// The generated answer; empty when `error` is set.
    pub answer: String,
    pub latency: Latency,
    pub usage: Usage,
    /// The generation came from the response cache (its latency is the cache's, not the model's).
    #[serde(default)]
    pub cached: bool,
    /// For a replayed answer: when the model first produced it (seconds since the Unix epoch), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at: Option<u64>,
    /// Why this cell has no answer (provider failure, retrieval failure). Judged as `exec_error`.
    pub error: Option<String>,
    /// What the target's own trace said about this call (a target whose `traces` are received).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRecord>,
    /// For a conversation's turn under query rewriting: the query the system rewrote from the history and
    /// retrieved with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten_query: Option<String>,
    /// The answer was longer than the `answer_kb` limit: its length in bytes before it was cut there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_from: Option<u64>,
    /// For a whole-documents cell (`full-doc`) whose documents exceeded the model's window: the tokens they
    /// held before they were cut to fit it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_cut_from: Option<u64>,
    /// The citations the system returned in a field of its own (a target's `citations_pointer`), beside
    /// any `[1]` markers in the answer's text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub citations: Vec<Citation>,
    /// The tools the system called, in order, as its reply (a target's `tool_calls_pointer`), its traces
    /// (tool spans) or an imported record report them. None when nothing says: the calls were not
    /// observed, which is not the same as none made (`Some(vec![])`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<crate::tool::ToolCall>>,
    /// For a simulated user's case: the conversation turn by turn (the answer, contexts and times above
    /// are its last turn's; the usage its every turn's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<Simulation>,
}

/// One citation a system returned beside its answer: the passages it cites (1-based ranks of the answer's
/// contexts) and, where the system says so, the part of the answer that cites them; without it the
/// citation stands for the whole answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub ranks: Vec<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Answer {
    /// A cell's answer before the system is asked: nothing said, retrieved, timed or spent yet.
    pub fn blank(case_id: &str, config_id: &str) -> Self {
        Self {
            schema_version: crate::SCHEMA_VERSION,
            case_id: case_id.to_string(),
            config_id: config_id.to_string(),
            contexts: Vec::new(),
            answer: String::new(),
            latency: Latency::default(),
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            error: None,
            trace: None,
            rewritten_query: None,
            truncated_from: None,
            context_cut_from: None,
            citations: Vec::new(),
            tool_calls: None,
            simulation: None,
        }
    }

    /// Cut the answer to `max_bytes` (at a char boundary), noting its full length; a no-op when it fits.
    pub fn truncate_to(&mut self, max_bytes: u64) {
        let max = usize::try_from(max_bytes).unwrap_or(usize::MAX);
        let full = self.answer.len() as u64;
        if let Some(cut) = crate::limits::truncate_to(&self.answer, max) {
            let cut = cut.len();
            self.answer.truncate(cut);
            self.truncated_from = Some(full);
        }
    }
}

/// One exchange: what the user sent (and why), what the system answered with what it retrieved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulatedTurn {
    pub user: String,
    #[serde(rename = "move")]
    pub user_move: UserMove,
    pub answer: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contexts: Vec<RetrievedContext>,
    pub latency: Latency,
    /// Why the system gave no answer to this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<crate::tool::ToolCall>>,
}

/// How a simulated conversation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The user was satisfied.
    Satisfied,
    /// The user gave up.
    GaveUp,
    /// The user's turn budget ran out first.
    TurnBudget,
    /// The conversation could not go on (the answer's `error` says why).
    Error,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Satisfied => "satisfied",
            Ending::GaveUp => "gave_up",
            Ending::TurnBudget => "turn_budget",
            Ending::Error => "error",
        }
    }
}

/// A simulated conversation as it went. While `ended` is None it is under way: a killed run resumes it
/// after its last recorded turn, and never asks a turn twice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    /// The user model's spec.
    pub user_model: String,
    pub turns: Vec<SimulatedTurn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<Ending>,
    /// What the user model's own calls used (not the system's).
    #[serde(default)]
    pub user_usage: Usage,
    /// Calls the user model was asked, and the milliseconds they took.
    #[serde(default)]
    pub user_calls: u32,
    #[serde(default)]
    pub user_ms: f64,
}

/// A call's trace as the target reported it over OpenTelemetry: which trace, how many spans, by which
/// convention, the model and each step's time; or a note saying why there is nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// The W3C trace id the call carried (32 hex digits).
    pub trace_id: String,
    pub spans: usize,
    /// `openinference` or `gen_ai`; None when no span followed either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convention: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Each retrieval, reranking, embedding and generation step, in the order they ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageLatency>,
    /// Why the trace says less than it could (none arrived; documents without their text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageLatency {
    /// `retrieval`, `rerank`, `embedding`, `generation`.
    pub stage: String,
    /// The span's name.
    pub name: String,
    pub ms: f64,
}

/// A (case, configuration) cell the run did not ask, and why: the case cannot be put fairly to that system.
/// Not an answer and not an error: a skipped cell counts in no rate, and the report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedCell {
    pub case_id: String,
    pub config_id: String,
    pub reason: String,
}
