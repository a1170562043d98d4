//! The tools an agent called, from its spans: OpenInference `TOOL` spans (`tool.name`, the arguments in
//! `input.value`, the result in `output.value`) and OpenTelemetry GenAI `execute_tool` spans
//! (`gen_ai.tool.name`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). A call's passages are
//! the documents of the retriever spans under it, else its result when that is a list of passages; calls
//! come in the order they started.

use crate::attributes::{Attributes, flattened_documents, gen_ai_documents};
use opentelemetry_proto::tonic::trace::v1::Span;
use ragtester_core::ToolCall;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Whether a span is a tool's, and by which convention.
fn tool_convention(a: &Attributes<'_>) -> Option<&'static str> {
    if a.text("openinference.span.kind")
        .is_some_and(|k| k.eq_ignore_ascii_case("TOOL"))
    {
        return Some("openinference");
    }
    (a.text("gen_ai.operation.name").as_deref() == Some("execute_tool")).then_some("gen_ai")
}

/// The convention of the first tool span (for a trace whose only spans are tools').
pub(crate) fn convention(spans: &[Span]) -> &'static str {
    spans
        .iter()
        .find_map(|s| tool_convention(&Attributes::of(&s.attributes)))
        .unwrap_or("gen_ai")
}

/// The calls the spans record, in start order, and the tool spans that could not be read.
pub(crate) fn tool_calls(spans: &[Span]) -> (Vec<ToolCall>, Vec<String>) {
    let mut tools: Vec<&Span> = spans
        .iter()
        .filter(|s| tool_convention(&Attributes::of(&s.attributes)).is_some())
        .collect();
    tools.sort_by_key(|s| s.start_time_unix_nano);
    let parents: HashMap<&[u8], &[u8]> = spans
        .iter()
        .map(|s| (s.span_id.as_slice(), s.parent_span_id.as_slice()))
        .collect();
    let (mut calls, mut errors) = (Vec::new(), Vec::new());
    for span in tools {
        match read_call(span) {
            Ok(mut call) => {
                call.passages = retrieved_under(span, spans, &parents);
                if call.passages.is_empty() {
                    call.passages = call
                        .output
                        .as_deref()
                        .map(ragtester_core::tool::passages_in)
                        .unwrap_or_default();
                }
                calls.push(call);
            }
            Err(e) => errors.push(e),
        }
    }
    (calls, errors)
}

fn read_call(span: &Span) -> Result<ToolCall, String> {
    let a = Attributes::of(&span.attributes);
    let name = a
        .text("tool.name")
        .or_else(|| a.text("gen_ai.tool.name"))
        .or_else(|| span.name.strip_prefix("execute_tool ").map(str::to_string))
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| format!("tool span `{}` names no tool", span.name))?;
    let args = match a.text("gen_ai.tool.call.arguments") {
        Some(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err(format!(
                    "tool span `{}`: gen_ai.tool.call.arguments is not a JSON object: {}",
                    span.name,
                    text.chars().take(200).collect::<String>()
                ));
            }
        },
        // OpenInference puts the call's input in input.value: a JSON object of arguments, or the text
        // the tool was given.
        None => match a.text("input.value") {
            Some(text) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => map,
                _ => Map::from_iter([("input".to_string(), Value::String(text))]),
            },
            None => Map::new(),
        },
    };
    let mut call = ToolCall::named(name.trim());
    call.args = args;
    call.output = a
        .text("output.value")
        .or_else(|| a.text("gen_ai.tool.call.result"));
    Ok(call)
}

/// The documents of retriever spans under `tool`, in the order those spans ended.
fn retrieved_under(tool: &Span, spans: &[Span], parents: &HashMap<&[u8], &[u8]>) -> Vec<String> {
    let under = |span: &Span| {
        let mut at = span.parent_span_id.as_slice();
        for _ in 0..64 {
            if at.is_empty() {
                return false;
            }
            if at == tool.span_id.as_slice() {
                return true;
            }
            at = parents.get(at).copied().unwrap_or_default();
        }
        false
    };
    let mut retrievers: Vec<&Span> = spans.iter().filter(|s| under(s)).collect();
    retrievers.sort_by_key(|s| s.end_time_unix_nano);
    retrievers
        .into_iter()
        .flat_map(|s| {
            let a = Attributes::of(&s.attributes);
            let mut docs = flattened_documents(&a, "retrieval.documents");
            if docs.is_empty() {
                docs = gen_ai_documents(&a);
            }
            docs.into_iter().filter_map(|d| d.content)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value as V};

    fn span(id: u8, parent: u8, name: &str, start: u64, attrs: &[(&str, &str)]) -> Span {
        Span {
            trace_id: vec![1; 16],
            span_id: vec![id; 8],
            parent_span_id: if parent == 0 {
                Vec::new()
            } else {
                vec![parent; 8]
            },
            name: name.into(),
            start_time_unix_nano: start,
            end_time_unix_nano: start + 10,
            attributes: attrs
                .iter()
                .map(|(k, v)| KeyValue {
                    key: (*k).into(),
                    value: Some(AnyValue {
                        value: Some(V::StringValue((*v).into())),
                    }),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn openinference_and_gen_ai_tool_spans_in_start_order_with_passages() {
        let spans = vec![
            span(1, 0, "agent", 0, &[("openinference.span.kind", "AGENT")]),
            span(
                3,
                1,
                "execute_tool get_weather",
                50,
                &[
                    ("gen_ai.operation.name", "execute_tool"),
                    ("gen_ai.tool.name", "get_weather"),
                    ("gen_ai.tool.call.arguments", r#"{"city": "Oslo"}"#),
                    ("gen_ai.tool.call.result", "sunny"),
                ],
            ),
            span(
                2,
                1,
                "search",
                10,
                &[
                    ("openinference.span.kind", "TOOL"),
                    ("tool.name", "search"),
                    ("input.value", r#"{"query": "battery warranty"}"#),
                ],
            ),
            span(
                4,
                2,
                "retrieve",
                12,
                &[
                    ("openinference.span.kind", "RETRIEVER"),
                    (
                        "retrieval.documents.0.document.content",
                        "The warranty lasts two years.",
                    ),
                ],
            ),
        ];
        let (calls, errors) = tool_calls(&spans);
        assert!(errors.is_empty());
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "search");
        assert_eq!(calls[0].args["query"], "battery warranty");
        assert_eq!(calls[0].passages, vec!["The warranty lasts two years."]);
        assert_eq!(calls[1].name, "get_weather");
        assert_eq!(calls[1].args["city"], "Oslo");
        assert_eq!(calls[1].output.as_deref(), Some("sunny"));
        assert_eq!(crate::facts(&spans).tool_calls, calls);
    }

    #[test]
    fn a_result_list_is_passages_plain_input_is_an_argument_and_bad_arguments_are_named() {
        let spans = vec![
            span(
                1,
                0,
                "kb",
                0,
                &[
                    ("openinference.span.kind", "TOOL"),
                    ("tool.name", "kb_lookup"),
                    ("input.value", "warranty"),
                    (
                        "output.value",
                        r#"[{"text": "Two years."}, "Screens: one year."]"#,
                    ),
                ],
            ),
            span(
                2,
                0,
                "execute_tool search",
                5,
                &[
                    ("gen_ai.operation.name", "execute_tool"),
                    ("gen_ai.tool.call.arguments", "{query"),
                ],
            ),
        ];
        let (calls, errors) = tool_calls(&spans);
        assert_eq!(calls[0].args["input"], "warranty");
        assert_eq!(calls[0].passages, vec!["Two years.", "Screens: one year."]);
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("execute_tool search") && errors[0].contains("not a JSON object")
        );
    }
}
