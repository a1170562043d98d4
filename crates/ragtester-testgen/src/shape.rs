//! The dataset shapes `import` and `export` speak: RAGAS's, DeepEval's, and plain rows with OpenAI chat
//! messages, each with its field names.

use anyhow::Result;
use serde_json::{Map, Value};

/// Which tool's dataset fields a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Ragas,
    DeepEval,
    /// Plain JSON lines as a team's own logs hold them (`query`, `answer`, `contexts`, `reference`), a
    /// conversation's turns as OpenAI chat `messages`.
    Messages,
}

impl Shape {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "ragas" => Ok(Self::Ragas),
            "deepeval" => Ok(Self::DeepEval),
            "messages" => Ok(Self::Messages),
            other => Err(ragtester_core::usage::UsageError(format!(
                "unknown dataset format `{other}`: expected ragas, deepeval or messages"
            ))
            .into()),
        }
    }

    /// The library the shape is for, as people name it.
    pub fn library(self) -> &'static str {
        match self {
            Self::Ragas => "RAGAS",
            Self::DeepEval => "DeepEval",
            Self::Messages => "the messages format",
        }
    }

    /// (query, reference, reference contexts, response, retrieved contexts) field names.
    pub(crate) fn fields(self) -> [&'static str; 5] {
        match self {
            Self::Ragas => [
                "user_input",
                "reference",
                "reference_contexts",
                "response",
                "retrieved_contexts",
            ],
            Self::DeepEval => [
                "input",
                "expected_output",
                "context",
                "actual_output",
                "retrieval_context",
            ],
            Self::Messages => [
                "query",
                "reference",
                "reference_contexts",
                "answer",
                "contexts",
            ],
        }
    }
}

/// Every top-level field of an imported row that some reader reads — a suite's question, reference and
/// contexts, an answered record's answer, passages, latency, tokens and error, a logged conversation's
/// messages or turns, tool calls, ragtester's own metadata — in each tool's spelling.
pub const READ_FIELDS: &[&str] = &[
    // RAGAS
    "user_input",
    "reference",
    "reference_contexts",
    "response",
    "retrieved_contexts",
    "reference_tool_calls",
    // DeepEval
    "input",
    "expected_output",
    "context",
    "actual_output",
    "retrieval_context",
    "tools_called",
    "expected_tools",
    "turns",
    "scenario",
    "expected_outcome",
    "user_description",
    "additional_metadata",
    "input_token_count",
    "output_token_count",
    // plain rows and chat logs
    "id",
    "query",
    "question",
    "answer",
    "output",
    "contexts",
    "retrieved",
    "ground_truth",
    "expected_answer",
    "messages",
    "tool_calls",
    "conversation_id",
    "conversation",
    "session_id",
    "thread_id",
    "turn",
    "turn_index",
    "metadata",
    "latency_ms",
    "latency_s",
    "usage",
    "prompt_tokens",
    "completion_tokens",
    "input_tokens",
    "output_tokens",
    "error",
    crate::row_meta::META_KEY,
];

/// Name in a warning, once per file and field, each field of `rows` that no reader reads and that holds
/// something (a null, empty string or empty list loses nothing): another tool's field is never dropped in
/// silence. Returns (row number from 1, field) of each first sighting, for the caller's tests.
pub fn warn_unread_fields<'a>(
    file: &std::path::Path,
    rows: impl IntoIterator<Item = &'a Map<String, Value>>,
) -> Vec<(usize, String)> {
    let file = file.display().to_string();
    let mut named: Vec<(usize, String)> = Vec::new();
    for (i, row) in rows.into_iter().enumerate() {
        for (field, value) in row {
            let empty = match value {
                Value::Null => true,
                Value::String(s) => s.trim().is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            if empty
                || READ_FIELDS.contains(&field.as_str())
                || named.iter().any(|(_, f)| f == field)
            {
                continue;
            }
            ragtester_core::record::warn_unknown_field(&file, i + 1, field);
            named.push((i + 1, field.clone()));
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_no_reader_reads_is_named_once_unless_it_is_empty() {
        let rows: Vec<Map<String, Value>> = [
            serde_json::json!({"user_input": "When?", "reference": "At 4.5 bar.", "comments": null,
                               "rubrics": {"score1": "wrong"}}),
            serde_json::json!({"user_input": "Who?", "rubrics": {"score1": "x"}, "persona_name": "Ana",
                               "name": ""}),
        ]
        .into_iter()
        .map(|v| v.as_object().unwrap().clone())
        .collect();
        let named = warn_unread_fields(std::path::Path::new("set.jsonl"), &rows);
        assert_eq!(
            named,
            vec![(1, "rubrics".to_string()), (2, "persona_name".to_string())]
        );
    }
}
