//! Tool calls in other tools' records, both ways. DeepEval keeps them on a golden or test case
//! (`expected_tools`, `tools_called`: `{name, input_parameters, output}`) and on a conversational turn
//! (`tools_called`); RAGAS only on a multi-turn sample: the AI message's `tool_calls` (`{name, args}`),
//! each answered by a tool message, and the sample's `reference_tool_calls`. A search's passages travel as
//! its output, a JSON list, where a record has no field for them.

use ragtester_core::ToolCall;
use serde_json::{Map, Value, json};

/// The keys expected calls come under: RAGAS's, DeepEval's.
const EXPECTED: &[&str] = &["reference_tool_calls", "expected_tools"];
/// The key DeepEval keeps a test case's or turn's calls under.
const CALLED: &[&str] = &["tools_called", "toolsCalled"];

/// What a call returned, as text: its output, or its passages as a JSON list.
fn output_of(call: &ToolCall) -> Option<String> {
    call.output.clone().or_else(|| {
        (!call.passages.is_empty()).then(|| Value::from(call.passages.clone()).to_string())
    })
}

/// Calls in DeepEval's `ToolCall` shape.
pub fn deepeval_calls(calls: &[ToolCall]) -> Value {
    calls
        .iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("name".into(), json!(c.name));
            m.insert("input_parameters".into(), Value::Object(c.args.clone()));
            if let Some(output) = output_of(c) {
                m.insert("output".into(), json!(output));
            }
            Value::Object(m)
        })
        .collect()
}

/// Calls in RAGAS's `ToolCall` shape (`reference_tool_calls`, an AI message's `tool_calls`).
pub fn ragas_calls(calls: &[ToolCall]) -> Value {
    calls
        .iter()
        .map(|c| json!({"name": c.name, "args": c.args}))
        .collect()
}

/// The messages of a RAGAS multi-turn sample that make `calls` before the answer: one AI message
/// calling them, then one tool message for each with what it returned.
pub fn ragas_call_messages(calls: &[ToolCall]) -> Vec<Value> {
    if calls.is_empty() {
        return Vec::new();
    }
    let mut out = vec![json!({"type": "ai", "content": "", "tool_calls": ragas_calls(calls)})];
    out.extend(
        calls
            .iter()
            .map(|c| json!({"type": "tool", "content": output_of(c).unwrap_or_default()})),
    );
    out
}

/// A row's expected calls (RAGAS `reference_tool_calls`, DeepEval `expected_tools`); a field of the
/// wrong shape is the row's error.
pub fn expected_of(row: &Map<String, Value>) -> Result<Vec<ToolCall>, String> {
    calls_at(row, EXPECTED).map(Option::unwrap_or_default)
}

/// A row's calls made (DeepEval's `tools_called`); None when the row has no such field.
pub fn called_of(row: &Map<String, Value>) -> Result<Option<Vec<ToolCall>>, String> {
    calls_at(row, CALLED)
}

fn calls_at(row: &Map<String, Value>, keys: &[&str]) -> Result<Option<Vec<ToolCall>>, String> {
    let Some((key, value)) = keys.iter().find_map(|k| Some((*k, row.get(*k)?))) else {
        return Ok(None);
    };
    // CSV cells hold the list as JSON text.
    let parsed;
    let value = match value {
        Value::String(text) if !text.trim().is_empty() => {
            parsed = serde_json::from_str::<Value>(text)
                .map_err(|e| format!("`{key}` is not a JSON list of tool calls: {e}"))?;
            &parsed
        }
        Value::String(_) => &Value::Null,
        other => other,
    };
    ToolCall::list_from_json(value)
        .map(Some)
        .map_err(|e| format!("`{key}`: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search() -> ToolCall {
        let mut call = ToolCall::named("search").with_arg("query", "battery warranty");
        call.passages = vec!["The warranty lasts two years.".into()];
        call
    }

    #[test]
    fn calls_come_back_from_each_library_s_fields_unchanged() {
        let calls = vec![
            search(),
            ToolCall::named("get_weather").with_arg("city", "Oslo"),
        ];
        let mut row = Map::new();
        row.insert("expected_tools".into(), deepeval_calls(&calls));
        row.insert("tools_called".into(), deepeval_calls(&calls));
        assert_eq!(expected_of(&row).unwrap(), calls);
        assert_eq!(called_of(&row).unwrap().unwrap(), calls);
        let mut row = Map::new();
        row.insert("reference_tool_calls".into(), ragas_calls(&calls));
        let back = expected_of(&row).unwrap();
        assert_eq!(back[1], calls[1]);
        assert_eq!(
            back[0].passages,
            Vec::<String>::new(),
            "RAGAS's calls hold no result"
        );
        let messages = ragas_call_messages(&calls);
        assert_eq!(messages.len(), 3);
        assert_eq!(
            messages[1]["content"],
            r#"["The warranty lasts two years."]"#
        );
    }

    #[test]
    fn a_field_of_the_wrong_shape_is_named() {
        let mut row = Map::new();
        row.insert("tools_called".into(), json!("[{\"input_parameters\": {}}]"));
        let e = called_of(&row).unwrap_err();
        assert!(e.contains("`tools_called`") && e.contains("no name"), "{e}");
        row.insert("tools_called".into(), json!("not json"));
        assert!(called_of(&row).unwrap_err().contains("not a JSON list"));
        assert_eq!(called_of(&Map::new()).unwrap(), None);
    }
}
