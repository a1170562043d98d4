//! A span's attributes read by key, and the retrieved documents they carry in either convention (shared by
//! the conventions' reading of a call and the tool spans').

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};
use serde_json::Value as Json;
use std::collections::HashMap;

/// One retrieved document as a span reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TracedDocument {
    pub id: Option<String>,
    pub score: Option<f64>,
    pub content: Option<String>,
}

/// A span's attributes by key.
pub(crate) struct Attributes<'a>(pub(crate) HashMap<&'a str, &'a AnyValue>);

impl<'a> Attributes<'a> {
    pub(crate) fn of(attributes: &'a [KeyValue]) -> Self {
        Self(
            attributes
                .iter()
                .filter_map(|kv| Some((kv.key.as_str(), kv.value.as_ref()?)))
                .collect(),
        )
    }

    pub(crate) fn value(&self, key: &str) -> Option<&'a Value> {
        self.0.get(key).and_then(|v| v.value.as_ref())
    }

    pub(crate) fn text(&self, key: &str) -> Option<String> {
        self.value(key).and_then(text)
    }

    pub(crate) fn number(&self, key: &str) -> Option<f64> {
        self.value(key).and_then(number)
    }
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::StringValue(s) => Some(s.clone()),
        Value::IntValue(i) => Some(i.to_string()),
        Value::DoubleValue(d) => Some(d.to_string()),
        Value::BoolValue(b) => Some(b.to_string()),
        _ => None,
    }
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::IntValue(i) => Some(*i as f64),
        Value::DoubleValue(d) => Some(*d),
        Value::StringValue(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// OpenInference's flattened documents under `prefix` (`retrieval.documents`), in index order.
pub(crate) fn flattened_documents(a: &Attributes<'_>, prefix: &str) -> Vec<TracedDocument> {
    let mut by_index: HashMap<usize, TracedDocument> = HashMap::new();
    for (key, value) in &a.0 {
        let Some(rest) = key.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else {
            continue;
        };
        let Some((index, field)) = rest.split_once('.') else {
            continue;
        };
        let Ok(index) = index.parse::<usize>() else {
            continue;
        };
        let Some(value) = value.value.as_ref() else {
            continue;
        };
        let doc = by_index.entry(index).or_default();
        match field {
            "document.id" => doc.id = text(value),
            "document.score" => doc.score = number(value),
            "document.content" => doc.content = text(value),
            _ => {}
        }
    }
    let mut docs: Vec<(usize, TracedDocument)> = by_index.into_iter().collect();
    docs.sort_by_key(|(i, _)| *i);
    docs.into_iter().map(|(_, d)| d).collect()
}

/// GenAI's `gen_ai.retrieval.documents`: a JSON string, or an array of key-value lists.
pub(crate) fn gen_ai_documents(a: &Attributes<'_>) -> Vec<TracedDocument> {
    let from_json = |v: &Json| TracedDocument {
        id: v.get("id").and_then(|i| match i {
            Json::String(s) => Some(s.clone()),
            Json::Number(n) => Some(n.to_string()),
            _ => None,
        }),
        score: v.get("score").and_then(Json::as_f64),
        content: v
            .get("content")
            .or_else(|| v.get("text"))
            .and_then(Json::as_str)
            .map(str::to_string),
    };
    match a.value("gen_ai.retrieval.documents") {
        Some(Value::StringValue(s)) => serde_json::from_str::<Vec<Json>>(s)
            .map(|docs| docs.iter().map(from_json).collect())
            .unwrap_or_default(),
        Some(Value::ArrayValue(array)) => array
            .values
            .iter()
            .filter_map(|v| match v.value.as_ref()? {
                Value::KvlistValue(kv) => {
                    let fields = Attributes::of(&kv.values);
                    Some(TracedDocument {
                        id: fields.text("id"),
                        score: fields.number("score"),
                        content: fields.text("content").or_else(|| fields.text("text")),
                    })
                }
                Value::StringValue(s) => {
                    serde_json::from_str::<Json>(s).ok().map(|j| from_json(&j))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}
