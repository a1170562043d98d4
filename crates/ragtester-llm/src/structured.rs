//! Structured output that works on every server: what an endpoint accepts is learned once per endpoint and
//! model (its identity) and shared by every role that calls it in this process.
//!
//! The ladder: a JSON schema (OpenAI's `json_schema`, Ollama's `format` with a schema) → a JSON object with
//! the schema beside it (`{"type": "json_object", "schema": …}`, which llama.cpp's server turns into a
//! grammar) → any JSON object (`json_object`, Ollama's `format: "json"`) → plain text, the schema written
//! into the prompt. A server
//! that answers a structured-output request with an error naming it — llama.cpp's server gives HTTP 500
//! "Input should be 'text' or 'json_object'", OpenAI a 400 naming `response_format` — is asked again one
//! step down at once, without spending retries on a request that cannot succeed. The step each endpoint
//! settled on is recorded (see [`learned`]) so a run says what its judge and writers were really asked.

use ragtester_core::{ChatRequest, Message, ReplyFormat};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// How an endpoint is asked for JSON, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// The reply is constrained to the request's JSON schema.
    JsonSchema,
    /// `json_object` carrying the schema: constrained to it where the server reads it (llama.cpp).
    JsonObjectWithSchema,
    /// The reply is constrained to some JSON object; the prompt gives the shape.
    JsonObject,
    /// Nothing is constrained; the prompt gives the shape and the schema.
    PromptOnly,
}

impl StructuredOutput {
    pub fn as_str(self) -> &'static str {
        match self {
            StructuredOutput::JsonSchema => "json_schema",
            StructuredOutput::JsonObjectWithSchema => "json_object_with_schema",
            StructuredOutput::JsonObject => "json_object",
            StructuredOutput::PromptOnly => "prompt_only",
        }
    }

    /// The next step down the ladder, if any.
    pub fn weaker(self) -> Option<Self> {
        match self {
            StructuredOutput::JsonSchema => Some(StructuredOutput::JsonObjectWithSchema),
            StructuredOutput::JsonObjectWithSchema => Some(StructuredOutput::JsonObject),
            StructuredOutput::JsonObject => Some(StructuredOutput::PromptOnly),
            StructuredOutput::PromptOnly => None,
        }
    }

    /// The step a request of this format asks for on an endpoint that accepts at most `self`.
    pub fn for_format(self, format: &ReplyFormat) -> Option<Self> {
        match format {
            ReplyFormat::Text => None,
            ReplyFormat::Json => Some(self.max(StructuredOutput::JsonObject)),
            ReplyFormat::Schema(_) => Some(self),
        }
    }
}

/// What each endpoint (by model identity) was learned to accept, shared by every client one registry
/// builds: a server that refused a schema once is asked one step down by every role from then on. Each
/// registry (a command, the web server) has its own; a run directory keeps what its judging learned.
#[derive(Debug, Default)]
pub struct StructuredTable {
    learned: Mutex<HashMap<String, StructuredOutput>>,
}

impl StructuredTable {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, StructuredOutput>> {
        self.learned.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The strongest step `identity` is believed to accept (the top of the ladder until it refuses one).
    pub fn accepted(&self, identity: &str) -> StructuredOutput {
        (self.table().get(identity).copied()).unwrap_or(StructuredOutput::JsonSchema)
    }

    /// Record that `identity` refused `refused`: from now on it is asked one step down. Returns that step,
    /// or `None` at the bottom of the ladder. Concurrent callers that saw the same refusal step down once.
    pub fn step_down(&self, identity: &str, refused: StructuredOutput) -> Option<StructuredOutput> {
        let weaker = refused.weaker()?;
        let mut table = self.table();
        let entry = table
            .entry(identity.to_string())
            .or_insert(StructuredOutput::JsonSchema);
        *entry = (*entry).max(weaker);
        Some(*entry)
    }

    /// Take what an earlier run learned (a resumed run, a judge over a run directory), keeping the weaker
    /// step where both know the endpoint.
    pub fn remember(&self, learned: &BTreeMap<String, StructuredOutput>) {
        let mut table = self.table();
        for (identity, step) in learned {
            let entry = table.entry(identity.clone()).or_insert(*step);
            *entry = (*entry).max(*step);
        }
    }

    /// Every endpoint whose structured output was learned to be below the top of the ladder, by identity.
    pub fn learned(&self) -> BTreeMap<String, StructuredOutput> {
        self.table().iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

/// Whether an error body speaks of the structured-output request: then asking again the same way cannot
/// succeed, and asking one step down may.
pub fn names_structured_output(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    ["response_format", "json_schema", "json_object", "schema"]
        .iter()
        .any(|needle| lower.contains(needle))
        // llama-cpp-python's validation error names only the values it accepts.
        || (lower.contains("input should be") && lower.contains("'text'"))
}

/// Send a request down the ladder: at the step `identity` is believed to accept, then one step lower each
/// time the server refuses with an error `names_refusal` recognises (returned by the HTTP client at once,
/// never retried); steps in `same_as_next` are ones this provider cannot tell from the step below and are
/// passed over. `send` posts the body for a step, with the body test that makes an error final.
pub async fn send_down_the_ladder<F, Fut>(
    table: &StructuredTable,
    identity: &str,
    format: &ReplyFormat,
    names_refusal: fn(&str) -> bool,
    same_as_next: &[StructuredOutput],
    mut send: F,
) -> anyhow::Result<serde_json::Value>
where
    F: FnMut(Option<StructuredOutput>, fn(&str) -> bool) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<serde_json::Value>>,
{
    let mut step = table.accepted(identity).for_format(format);
    loop {
        let is_final: fn(&str) -> bool = if step.is_some() {
            names_refusal
        } else {
            |_: &str| false
        };
        let error = match send(step, is_final).await {
            Ok(reply) => return Ok(reply),
            Err(e) => e,
        };
        let refused = match step {
            Some(s) if s != StructuredOutput::PromptOnly => s,
            _ => return Err(error),
        };
        let names_it = error
            .downcast_ref::<ragtester_http::StatusError>()
            .is_some_and(|e| names_refusal(&e.body));
        if !names_it {
            return Err(error);
        }
        let mut next = table.step_down(identity, refused);
        while let Some(step) = next.filter(|s| same_as_next.contains(s)) {
            next = table.step_down(identity, step);
        }
        match next {
            Some(weaker) => {
                tracing::warn!(
                    model = %identity,
                    refused = refused.as_str(),
                    now = weaker.as_str(),
                    "the server refuses this structured-output request: asking one step down"
                );
                step = Some(weaker);
            }
            None => return Err(error),
        }
    }
}

/// The messages to send at `step`: the request's own, or — at the bottom of the ladder, where nothing is
/// constrained — with the schema (or the bare demand for a JSON object) appended to the last message, so an
/// unconstrained model sees exactly what to write.
pub fn messages_at(request: &ChatRequest, step: Option<StructuredOutput>) -> Vec<Message> {
    let mut messages = request.messages.clone();
    if step != Some(StructuredOutput::PromptOnly) {
        return messages;
    }
    let demand = match &request.format {
        ReplyFormat::Text => return messages,
        ReplyFormat::Json => "Reply with one JSON object only, no other text.".to_string(),
        ReplyFormat::Schema(schema) => format!(
            "Reply with one JSON object only, no other text, matching this JSON Schema: {}",
            schema.schema
        ),
    };
    if let Some(last) = messages.last_mut() {
        last.content = format!("{}\n\n{demand}", last.content);
    }
    messages
}

/// A structured reply that stopped at the token limit is no verdict: when `stopped` says the first reply
/// did, ask `again` once with twice the room, and note it on the response. Free text and requests without a
/// limit keep their first reply. The cut reply's tokens stay in the usage: they were spent.
pub(crate) async fn with_room_after_length<F, Fut>(
    request: &ChatRequest,
    first: serde_json::Value,
    stopped: fn(&serde_json::Value) -> bool,
    again: F,
) -> anyhow::Result<(serde_json::Value, Option<Retried>)>
where
    F: FnOnce(ChatRequest) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<serde_json::Value>>,
{
    let Some(limit) = request.max_tokens else {
        return Ok((first, None));
    };
    if !request.format.is_json() || !stopped(&first) {
        return Ok((first, None));
    }
    let room = limit.saturating_mul(2);
    let mut roomier = request.clone();
    roomier.max_tokens = Some(room);
    let reply = again(roomier).await?;
    Ok((
        reply,
        Some(Retried {
            note: format!("the reply stopped at the {limit}-token limit; asked again with {room}"),
            first,
        }),
    ))
}

/// A reply asked again with more room: the note for the record, and the first reply, whose tokens were
/// spent too.
pub(crate) struct Retried {
    pub note: String,
    pub first: serde_json::Value,
}

impl Retried {
    /// Note the retry on the response and count the cut reply's tokens in its usage.
    pub(crate) fn record(
        self,
        response: &mut ragtester_core::ChatResponse,
        response_of: fn(&serde_json::Value) -> anyhow::Result<ragtester_core::ChatResponse>,
    ) {
        if let Ok(first) = response_of(&self.first) {
            response.usage.add(first.usage);
        }
        response.notes.push(self.note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_down_once_and_never_back_up() {
        let id = "test:ladder@http://127.0.0.1:1";
        let table = StructuredTable::default();
        assert_eq!(table.accepted(id), StructuredOutput::JsonSchema);
        assert_eq!(
            table.step_down(id, StructuredOutput::JsonSchema),
            Some(StructuredOutput::JsonObjectWithSchema)
        );
        // A second caller that saw the same refusal does not step twice.
        assert_eq!(
            table.step_down(id, StructuredOutput::JsonSchema),
            Some(StructuredOutput::JsonObjectWithSchema)
        );
        table.remember(&[(id.to_string(), StructuredOutput::JsonSchema)].into());
        assert_eq!(table.accepted(id), StructuredOutput::JsonObjectWithSchema);
        assert_eq!(
            table.step_down(id, StructuredOutput::JsonObjectWithSchema),
            Some(StructuredOutput::JsonObject)
        );
        assert_eq!(
            table.step_down(id, StructuredOutput::JsonObject),
            Some(StructuredOutput::PromptOnly)
        );
        assert_eq!(table.step_down(id, StructuredOutput::PromptOnly), None);
        assert_eq!(table.learned()[id], StructuredOutput::PromptOnly);
    }

    #[test]
    fn json_requests_never_ask_for_a_schema() {
        let top = StructuredOutput::JsonSchema;
        assert_eq!(
            top.for_format(&ReplyFormat::Json),
            Some(StructuredOutput::JsonObject)
        );
        assert_eq!(top.for_format(&ReplyFormat::Text), None);
    }

    #[test]
    fn refusals_of_the_format_are_told_from_other_errors() {
        assert!(names_structured_output(
            r#"{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "Input should be 'text' or 'json_object'"}]"}}"#
        ));
        assert!(names_structured_output(
            "Input should be 'text' or 'json_object'"
        ));
        assert!(names_structured_output(
            "invalid format: expected \"json\" or a JSON schema"
        ));
        assert!(!names_structured_output("model not found"));
        assert!(!names_structured_output("CUDA out of memory"));
    }
}
