//! Answered conversations as teams keep them, one judged turn a row, in the three shapes tools write:
//!
//! - OpenAI-style chat logs: `messages` (`role`: system, user, assistant, tool; `content` a string or a list
//!   of text parts), the last user message the question; the answer in `answer` or as a final assistant
//!   message;
//! - RAGAS multi-turn samples: `user_input` as a list of messages (`type`: human, ai, tool), the last AI
//!   message the answer (its `metadata.retrieved_contexts` the passages, where the row has none);
//! - DeepEval conversational test cases: `turns` (`role`: user, assistant; `content`;
//!   `retrieval_context` on an assistant turn), the last assistant turn the answer; the reference in
//!   `expected_output` (the row's, or the last turn's `metadata`) or the case's `expected_outcome`.
//!
//! The turns before the judged question are its history, kept with its case: the judge reads them and a
//! run asks the question after them.

use ragtester_core::{Message, Role};
use serde_json::{Map, Value};

/// One judged turn of a logged conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedTurn {
    /// The earlier turns, oldest first (system and tool messages left out).
    pub history: Vec<Message>,
    pub query: String,
    /// The final answer, when the conversation ends with one.
    pub answer: Option<String>,
    /// The passages the final answer was given, when the conversation's last answer carries them.
    pub contexts: Option<Value>,
    /// The reference the conversation's own fields give (DeepEval's), when the row has none.
    pub reference: Option<String>,
    /// The tools called on the way to the final answer: RAGAS's AI messages' `tool_calls` (with their
    /// tool messages' results) and OpenAI's, DeepEval's last turn's `tools_called`. None when the
    /// messages record no call.
    pub tool_calls: Option<Vec<ragtester_core::ToolCall>>,
}

/// A message of any of the three shapes: its role, its text, and the object it came from.
struct Said<'a> {
    role: Role,
    content: String,
    object: &'a Map<String, Value>,
    /// The tools an assistant message called (or, for a message that only calls tools, will call
    /// before the next one answers).
    tool_calls: Vec<ragtester_core::ToolCall>,
    /// How many of `tool_calls` the tool messages after it have answered.
    answered: usize,
}

/// A tool message's result on the next unanswered call of `m`: a search's list of passages as its
/// passages, anything else as its output.
fn record_result(m: &mut Said<'_>, result: String) {
    let Some(call) = m.tool_calls.get_mut(m.answered) else {
        return;
    };
    m.answered += 1;
    if call.is_search() {
        call.passages = ragtester_core::tool::passages_in(&result);
    }
    if call.passages.is_empty() && !result.is_empty() {
        call.output = Some(result);
    }
}

/// The calls an assistant message records: RAGAS's and OpenAI's `tool_calls`, DeepEval's `tools_called`.
fn calls_of(object: &Map<String, Value>) -> Result<Vec<ragtester_core::ToolCall>, String> {
    match ["tool_calls", "tools_called"]
        .iter()
        .find_map(|k| object.get(*k))
    {
        None => Ok(Vec::new()),
        Some(list) => ragtester_core::ToolCall::list_from_json(list).map_err(|e| format!("{e:#}")),
    }
}

/// Text of a message's `content`: a string, or OpenAI's list of parts (their `text` joined).
fn content_of(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
                .trim()
                .to_string(),
        ),
        _ => None,
    }
}

/// The row's messages in whichever shape it has them; None when it has none (a single-turn row).
fn messages(row: &Map<String, Value>) -> Option<Result<Vec<Said<'_>>, String>> {
    let (field, list, role_key) = [
        ("messages", "role"),
        ("user_input", "type"),
        ("turns", "role"),
    ]
    .iter()
    .find_map(|(field, role)| Some((*field, row.get(*field)?.as_array()?, *role)))?;
    let mut out = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let place = || format!("`{field}` item {}", i + 1);
        let Some(object) = item.as_object() else {
            return Some(Err(format!("{} is not an object", place())));
        };
        let role = match object.get(role_key).and_then(Value::as_str) {
            Some("user" | "human") => Role::User,
            Some("assistant" | "ai") => Role::Assistant,
            Some("tool" | "function") => {
                // Tool results answer the calls of the message before them, in order.
                let result = content_of(object.get("content")).unwrap_or_default();
                if let Some(m) = out.last_mut() {
                    record_result(m, result);
                }
                continue;
            }
            Some("system" | "developer") => continue,
            Some(other) => return Some(Err(format!("{} has the role `{other}`", place()))),
            None => return Some(Err(format!("{} has no `{role_key}`", place()))),
        };
        let tool_calls = match calls_of(object) {
            Ok(calls) => calls,
            Err(e) => return Some(Err(format!("{}: {e}", place()))),
        };
        // A message that only calls tools may have no text.
        let content = match content_of(object.get("content")) {
            Some(content) => content,
            None if !tool_calls.is_empty() => String::new(),
            None => return Some(Err(format!("{} has no text `content`", place()))),
        };
        out.push(Said {
            role,
            content,
            object,
            tool_calls,
            answered: 0,
        });
    }
    Some(Ok(fold_call_steps(out)))
}

/// Messages that only call tools, folded into the assistant message that answers after them: its calls
/// are theirs and its own, in order.
fn fold_call_steps(said: Vec<Said<'_>>) -> Vec<Said<'_>> {
    let mut out: Vec<Said> = Vec::new();
    let mut pending = Vec::new();
    let count = said.len();
    for (i, mut m) in said.into_iter().enumerate() {
        let calls_only =
            m.role == Role::Assistant && m.content.is_empty() && !m.tool_calls.is_empty();
        if calls_only && i + 1 < count {
            pending.append(&mut m.tool_calls);
            continue;
        }
        if m.role == Role::Assistant && !pending.is_empty() {
            pending.append(&mut m.tool_calls);
            m.tool_calls = std::mem::take(&mut pending);
        }
        out.push(m);
    }
    out
}

/// The passages an assistant message carries: DeepEval's `retrieval_context`, or RAGAS's metadata.
fn contexts_of(message: &Map<String, Value>) -> Option<Value> {
    message
        .get("retrieval_context")
        .cloned()
        .or_else(|| message.get("metadata")?.get("retrieved_contexts").cloned())
}

/// The turn a row's conversation asks to judge; None for a row without a conversation.
pub fn logged_turn(row: &Map<String, Value>) -> Option<Result<LoggedTurn, String>> {
    Some(split(row, messages(row)?))
}

fn split(
    row: &Map<String, Value>,
    said: Result<Vec<Said<'_>>, String>,
) -> Result<LoggedTurn, String> {
    let mut said = said?;
    let final_answer = match said.last() {
        Some(last) if last.role == Role::Assistant => said.pop(),
        Some(_) => None,
        None => return Err("the conversation has no messages".into()),
    };
    let question = said
        .pop()
        .filter(|q| q.role == Role::User && !q.content.is_empty())
        .ok_or("the conversation's last answer follows no question")?;
    let reference = ["expected_output", "expected_outcome"]
        .iter()
        .find_map(|k| row.get(*k).and_then(Value::as_str))
        .or_else(|| {
            final_answer
                .as_ref()?
                .object
                .get("metadata")?
                .get("expected_output")?
                .as_str()
        })
        .map(|s| s.trim().to_string());
    Ok(LoggedTurn {
        history: said
            .into_iter()
            .map(|m| Message {
                role: m.role,
                content: m.content,
            })
            .collect(),
        query: question.content,
        contexts: final_answer.as_ref().and_then(|a| contexts_of(a.object)),
        tool_calls: final_answer
            .as_ref()
            .filter(|a| !a.tool_calls.is_empty())
            .map(|a| a.tool_calls.clone()),
        answer: final_answer.map(|a| a.content),
        reference,
    })
}

/// Where a row stands in a conversation kept as one row a turn: its conversation id and turn number.
pub fn place_in_conversation(
    row: &Map<String, Value>,
) -> Result<Option<(String, Option<usize>)>, String> {
    let id = ["conversation_id", "conversation", "thread_id", "session_id"]
        .iter()
        .find_map(|k| match row.get(*k)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    let Some(id) = id else {
        return Ok(None);
    };
    let turn = match ["turn", "turn_index"].iter().find_map(|k| row.get(*k)) {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|n| *n >= 1)
                .ok_or("`turn` is not a whole number from 1")? as usize,
        ),
    };
    Ok(Some((id, turn)))
}

/// The row's own id: `id` (a string or a number); None when it has none.
pub fn row_id(row: &Map<String, Value>) -> Option<String> {
    match row.get("id")? {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn row(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn the_three_shapes_give_one_turn() {
        let openai = row(json!({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Which valve is on the left?"},
            {"role": "assistant", "content": "The relief valve."},
            {"role": "user", "content": [{"type": "text", "text": "When does it open?"}]}],
            "answer": "At 4.5 bar."}));
        let ragas = row(json!({"user_input": [
            {"type": "human", "content": "Which valve is on the left?"},
            {"type": "ai", "content": "The relief valve."},
            {"type": "human", "content": "When does it open?"},
            {"type": "ai", "content": "At 4.5 bar.", "metadata": {"retrieved_contexts": ["It opens at 4.5 bar."]}}],
            "reference": "At 4.5 bar."}));
        let deepeval = row(json!({"turns": [
            {"role": "user", "content": "Which valve is on the left?"},
            {"role": "assistant", "content": "The relief valve."},
            {"role": "user", "content": "When does it open?"},
            {"role": "assistant", "content": "At 4.5 bar.", "retrieval_context": ["It opens at 4.5 bar."]}],
            "expected_outcome": "At 4.5 bar."}));
        // The chat log's answer is its row's `answer`; the others end with it.
        for (r, answer) in [
            (openai, None),
            (ragas, Some("At 4.5 bar.")),
            (deepeval, Some("At 4.5 bar.")),
        ] {
            let t = logged_turn(&r).unwrap().unwrap();
            assert_eq!(t.query, "When does it open?");
            assert_eq!(t.answer.as_deref(), answer);
            assert_eq!(t.history.len(), 2);
            assert_eq!(t.history[1].content, "The relief valve.");
        }
        assert!(logged_turn(&row(json!({"query": "q", "answer": "a"}))).is_none());
    }

    #[test]
    fn a_broken_conversation_says_what_is_wrong() {
        let wrong = |v: Value| logged_turn(&row(v)).unwrap().unwrap_err();
        assert!(wrong(json!({"messages": []})).contains("no messages"));
        assert!(
            wrong(json!({"messages": [{"role": "assistant", "content": "Hi."}]}))
                .contains("follows no question")
        );
        assert!(wrong(json!({"turns": [{"role": "bot", "content": "x"}]})).contains("`bot`"));
        assert!(wrong(json!({"messages": [{"content": "x"}]})).contains("no `role`"));
        assert_eq!(
            place_in_conversation(&row(json!({"conversation_id": "c7", "turn": 2}))),
            Ok(Some(("c7".into(), Some(2))))
        );
        assert!(place_in_conversation(&row(json!({"conversation_id": "c7", "turn": 0}))).is_err());
    }
}
