//! A turn of a conversation, answered, as each tool keeps it (what `logged.rs` reads back): a RAGAS
//! multi-turn sample (`user_input` as human and AI messages, the last AI message carrying the passages in
//! its metadata), a DeepEval conversational golden (`turns`, the last assistant turn with its
//! `retrieval_context`; `expected_outcome` the reference; a `scenario`, without which DeepEval's dataset
//! reads the row as a single-turn golden), or OpenAI chat `messages` beside `answer`,
//! `contexts` and `reference`. A simulated user's conversation is written as it went, its last message
//! the judged turn. An agent's tool calls go where each library keeps them (`tool_rows.rs`). Its history is the log's, for an imported turn, or the configuration's own
//! answers to the conversation's earlier turns.

use crate::row_meta::{META_KEY, RowMeta};
use crate::shape::Shape;
use ragtester_core::{Answer, Message, Role, TestCase};
use serde_json::{Map, Value, json};

/// The turns before `case` as its configuration answered them (or as its log recorded them).
fn history(case: &TestCase, cases: &[TestCase], answers: &[Answer]) -> Vec<Message> {
    let Some(turn) = &case.turn else {
        return Vec::new();
    };
    if !turn.history.is_empty() {
        return turn.history.clone();
    }
    let mut earlier: Vec<&TestCase> = cases
        .iter()
        .filter(|c| {
            c.turn
                .as_ref()
                .is_some_and(|t| t.conversation == turn.conversation && t.index < turn.index)
        })
        .collect();
    earlier.sort_by_key(|c| c.turn.as_ref().map_or(0, |t| t.index));
    let mut out = Vec::new();
    for c in earlier {
        out.push(Message::user(c.query.clone()));
        if let Some(a) = answers
            .iter()
            .find(|a| a.case_id == c.id && a.error.is_none())
        {
            out.push(Message {
                role: Role::Assistant,
                content: a.answer.clone(),
            });
        }
    }
    out
}

/// A simulated user's conversation as a logged one: every turn before the last as history, and the last
/// message the user sent.
fn simulated(answer: &Answer) -> Option<(Vec<Message>, String)> {
    let turns = &answer.simulation.as_ref()?.turns;
    let (last, before) = turns.split_last()?;
    let mut earlier = Vec::new();
    for turn in before {
        earlier.push(Message::user(turn.user.clone()));
        if turn.error.is_none() {
            earlier.push(Message {
                role: Role::Assistant,
                content: turn.answer.clone(),
            });
        }
    }
    Some((earlier, last.user.clone()))
}

/// What a DeepEval conversational golden's scenario says of a turn: what the user asks, after how much.
fn scenario(case: &TestCase, earlier_messages: usize) -> String {
    if let Some(goal) = &case.goal {
        return if case.language == "zh" {
            format!("{}想知道：{}", goal.persona, goal.want)
        } else {
            format!("{} wants to know: {}", goal.persona, goal.want)
        };
    }
    let turns = earlier_messages.div_ceil(2);
    if case.language == "zh" {
        format!(
            "用户就文档提问；此前已有 {turns} 轮对话，这一轮问：{}",
            case.query
        )
    } else {
        format!(
            "A user asks about the documents; after {turns} earlier turn(s), they ask: {}",
            case.query
        )
    }
}

/// One answered turn as a row of `shape`; `base` holds the case's reference fields in that shape.
pub fn conversation_row(
    shape: Shape,
    case: &TestCase,
    answer: &Answer,
    cases: &[TestCase],
    answers: &[Answer],
    base: &Map<String, Value>,
) -> Map<String, Value> {
    let (earlier, asked) = match simulated(answer) {
        Some(said) => said,
        None => (history(case, cases, answers), case.query.clone()),
    };
    let retrieved: Vec<&str> = answer.contexts.iter().map(|c| c.text.as_str()).collect();
    let meta = json!(RowMeta::of(case, answer));
    let role = |r: Role, human: &'static str, ai: &'static str| match r {
        Role::User => human,
        _ => ai,
    };
    let mut m = Map::new();
    if let Some(id) = &case.row_id {
        m.insert("id".into(), json!(id));
    }
    match shape {
        Shape::Ragas => {
            let mut said: Vec<Value> = earlier
                .iter()
                .map(|msg| json!({"type": role(msg.role, "human", "ai"), "content": msg.content}))
                .collect();
            said.push(json!({"type": "human", "content": asked}));
            let calls = answer.tool_calls.as_deref().unwrap_or_default();
            said.extend(crate::tool_rows::ragas_call_messages(calls));
            said.push(json!({"type": "ai", "content": answer.answer,
                "metadata": {"retrieved_contexts": retrieved}}));
            m.insert("user_input".into(), Value::Array(said));
            m.insert("reference".into(), json!(case.expected_answer));
            // A sample's messages are the whole exchange: RAGAS reads the absence of calls as none made,
            // so the expected ones go with them only where the system's calls were observed.
            if !case.expected_tools.is_empty() && answer.tool_calls.is_some() {
                m.insert(
                    "reference_tool_calls".into(),
                    crate::tool_rows::ragas_calls(&case.expected_tools),
                );
            }
            m.insert(META_KEY.into(), meta);
        }
        Shape::DeepEval => {
            let mut turns: Vec<Value> = earlier
                .iter()
                .map(|msg| {
                    json!({"role": role(msg.role, "user", "assistant"), "content": msg.content})
                })
                .collect();
            turns.push(json!({"role": "user", "content": asked}));
            let mut last = json!({"role": "assistant", "content": answer.answer,
                "retrieval_context": retrieved});
            if let Some(calls) = &answer.tool_calls {
                last["tools_called"] = crate::tool_rows::deepeval_calls(calls);
            }
            turns.push(last);
            m.insert("turns".into(), Value::Array(turns));
            // DeepEval's dataset reads a row as a conversational golden only when it has a scenario.
            m.insert("scenario".into(), json!(scenario(case, earlier.len())));
            if let Some(goal) = &case.goal {
                m.insert("user_description".into(), json!(goal.persona));
            }
            m.insert("expected_outcome".into(), json!(case.expected_answer));
            if let Some(context) = base.get("context") {
                m.insert("context".into(), context.clone());
            }
            // Where DeepEval's dataset keeps a golden's metadata.
            m.insert("additional_metadata".into(), json!({ META_KEY: meta }));
        }
        Shape::Messages => {
            let mut messages: Vec<Value> = earlier
                .iter()
                .map(|msg| json!({"role": role(msg.role, "user", "assistant"), "content": msg.content}))
                .collect();
            messages.push(json!({"role": "user", "content": asked}));
            m.insert("messages".into(), Value::Array(messages));
            m.insert("answer".into(), json!(answer.answer));
            m.insert("contexts".into(), json!(retrieved));
            m.insert("reference".into(), json!(case.expected_answer));
            m.insert(META_KEY.into(), meta);
        }
    }
    if let Some(turn) = &case.turn {
        m.insert("conversation_id".into(), json!(turn.conversation));
        m.insert("turn".into(), json!(turn.index));
    }
    m
}
