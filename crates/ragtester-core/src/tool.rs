//! Tool calls of an agentic RAG system: those a case expects (`TestCase::expected_tools`, DeepEval's
//! `expected_tools` shape: a name and the arguments that matter) and those a system made
//! (`Answer::tool_calls`, read from its reply, its traces or an imported record), and the figures that
//! compare them (`ToolMetrics`, on a verdict's rule metrics).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One call of a tool: its name and arguments; for an observed call, what it returned where the record
/// says, and for a search, the passages it returned, best first.
///
/// Read through [`ToolCall::from_json`] wherever a record holds one (a suite line's `expected_tools`, an
/// answer's `tool_calls`), so another tool's spelling — DeepEval's `input_parameters`, RAGAS's `args`,
/// OpenAI's `function.arguments` — keeps its arguments instead of losing them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub name: String,
    /// The arguments (an expected call names only those that matter: any others the system passes are
    /// not held against it).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub args: Map<String, Value>,
    /// What the tool returned, as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// For a search call: the passages it returned, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passages: Vec<String>,
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_json(&value).map_err(serde::de::Error::custom)
    }
}

impl ToolCall {
    pub fn named(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            args: Map::new(),
            output: None,
            passages: Vec::new(),
        }
    }

    pub fn with_arg(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.args.insert(key.to_string(), value.into());
        self
    }

    /// Whether the tool is a search of the documents (its name holds the word search, retrieve,
    /// retrieval or lookup: `search`, `search_docs`, `retrieveDocuments`, `kb-lookup`), or it returned
    /// passages. A search is scored as retrieval too, and leaving it out is its own cause of failure.
    pub fn is_search(&self) -> bool {
        !self.passages.is_empty() || is_search_name(&self.name)
    }

    /// A call as tools write one: OpenAI's `{"type": "function", "function": {"name", "arguments"}}`
    /// (arguments a JSON string or an object), RAGAS's `{"name", "args"}`, DeepEval's `{"name",
    /// "input_parameters", "output"}`, or `{"name", "arguments" | "input" | "parameters"}`. An item with
    /// no name, or arguments that are not a JSON object, is an error naming what is wrong.
    pub fn from_json(item: &Value) -> anyhow::Result<Self> {
        let call = item
            .get("function")
            .filter(|f| f.is_object())
            .unwrap_or(item);
        let name = match call.get("name") {
            Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_string(),
            _ => anyhow::bail!("a tool call has no name: {}", clip(item)),
        };
        let args = [
            "arguments",
            "args",
            "input_parameters",
            "inputParameters",
            "input",
            "parameters",
        ]
        .iter()
        .find_map(|key| call.get(*key).filter(|v| !v.is_null()));
        let args = match args {
            None => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(Value::String(text)) if text.trim().is_empty() => Map::new(),
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => map,
                _ => anyhow::bail!(
                    "tool call `{name}`: its arguments are not a JSON object: {}",
                    clip(&Value::String(text.clone()))
                ),
            },
            Some(other) => anyhow::bail!(
                "tool call `{name}`: its arguments are not a JSON object: {}",
                clip(other)
            ),
        };
        let mut output = item
            .get("output")
            .or_else(|| item.get("result"))
            .filter(|v| !v.is_null())
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        let mut passages = match item.get("passages") {
            Some(Value::Array(list)) => list
                .iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        // A search's passages travel as its output where a tool's record has no field for them.
        if passages.is_empty() && is_search_name(&name) {
            passages = output.as_deref().map(passages_in).unwrap_or_default();
            if !passages.is_empty() {
                output = None;
            }
        }
        Ok(Self {
            name,
            args,
            output,
            passages,
        })
    }

    /// A list of calls (see [`ToolCall::from_json`]); null reads as no calls. Errors name the item.
    pub fn list_from_json(value: &Value) -> anyhow::Result<Vec<Self>> {
        match value {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    Self::from_json(item).map_err(|e| anyhow::anyhow!("tool call {}: {e}", i + 1))
                })
                .collect(),
            other => anyhow::bail!("tool calls are not a list: {}", clip(other)),
        }
    }

    /// The call as its name and arguments alone, for telling a repeated call from a new one.
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, Value::Object(self.args.clone()))
    }
}

/// A tool's result that is a JSON list of passages: strings, or objects with `content`, `text` or
/// `page_content`; empty for any other result.
pub fn passages_in(output: &str) -> Vec<String> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(output) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => ["content", "text", "page_content"]
                .iter()
                .find_map(|k| o.get(*k)?.as_str().map(str::to_string)),
            _ => None,
        })
        .collect()
}

fn clip(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// Whether a tool's name names a search: one of its words (split at `_`, `-`, `.`, spaces and lower-to-
/// upper case changes) is search, retrieve, retrieval or lookup.
pub fn is_search_name(name: &str) -> bool {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    words.push(word);
    words
        .iter()
        .any(|w| matches!(w.as_str(), "search" | "retrieve" | "retrieval" | "lookup"))
}

/// What went wrong in a system's tool calls, in the order the rules look for it: the primary one becomes
/// the failed case's cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolMistakeKind {
    /// A tool the case does not expect was called, one it expects was not, or they came out of order.
    WrongTool,
    /// An expected search of the documents was never made.
    MissingSearch,
    /// The right tool with an argument that does not hold what the case expects.
    WrongArgument,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolMistake {
    pub kind: ToolMistakeKind,
    pub detail: String,
}

/// How a system's tool calls compare with what its case expects. Shares whose denominator is empty are
/// None, never NaN.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolMetrics {
    pub expected: usize,
    pub called: usize,
    /// Calls the case expects, out of those made (matched by name).
    pub precision: Option<f64>,
    /// Expected calls made.
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    /// Over expected calls made that name arguments: the share of those arguments the call held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_match: Option<f64>,
    /// For a case whose tools must come in order: whether they did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_order: Option<bool>,
    /// Calls that repeat an earlier call with the same arguments.
    #[serde(default)]
    pub redundant: usize,
    /// Whether the system's own searches returned a passage of the case's source, and at which rank of
    /// all they returned (1-based); None when it made no search that returned passages, or the case has
    /// no source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_hit: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_rank: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake: Option<ToolMistake>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_tools_are_told_by_the_words_of_their_names() {
        for name in [
            "search",
            "search_docs",
            "retrieveDocuments",
            "kb-lookup",
            "vector.retrieval",
        ] {
            assert!(is_search_name(name), "{name}");
        }
        for name in ["get_weather", "researcher", "calculator", "lookups_total"] {
            assert!(!is_search_name(name), "{name}");
        }
        let mut call = ToolCall::named("fetch_page");
        assert!(!call.is_search());
        call.passages.push("A passage.".into());
        assert!(call.is_search(), "a call that returned passages searched");
    }

    #[test]
    fn a_call_reads_and_writes_deep_eval_s_minimum() {
        let call: ToolCall = serde_json::from_str(r#"{"name": "search"}"#).unwrap();
        assert_eq!(call, ToolCall::named("search"));
        let call = ToolCall::named("search").with_arg("query", "warranty");
        let json = serde_json::to_string(&call).unwrap();
        assert_eq!(json, r#"{"name":"search","args":{"query":"warranty"}}"#);
        assert_eq!(call.signature(), r#"search({"query":"warranty"})"#);
    }

    #[test]
    fn calls_are_read_in_each_tool_s_shape_and_bad_ones_are_named() {
        let shapes = serde_json::json!([
            {"id": "call_1", "type": "function",
             "function": {"name": "search", "arguments": "{\"query\": \"warranty\"}"}},
            {"name": "search", "args": {"query": "warranty"}},
            {"name": "search", "input_parameters": {"query": "warranty"}, "output": "2 years"},
        ]);
        let calls = ToolCall::list_from_json(&shapes).unwrap();
        assert!(
            calls
                .iter()
                .all(|c| c.args.get("query").unwrap() == "warranty")
        );
        assert_eq!(calls[2].output.as_deref(), Some("2 years"));
        assert!(ToolCall::list_from_json(&Value::Null).unwrap().is_empty());
        let bad = |v: Value| ToolCall::list_from_json(&v).unwrap_err().to_string();
        assert!(
            bad(serde_json::json!([{"args": {}}])).contains("tool call 1: a tool call has no name")
        );
        let e = bad(serde_json::json!([{"name": "s"}, {"name": "search", "arguments": "{query"}]));
        assert!(
            e.contains("tool call 2") && e.contains("not a JSON object"),
            "{e}"
        );
        assert!(bad(serde_json::json!({"name": "search"})).contains("not a list"));
    }

    #[test]
    fn a_suite_line_in_another_tool_s_spelling_keeps_its_arguments() {
        let line = r#"{"name": "search", "input_parameters": {"query": "pressure relief valve"}}"#;
        let call: ToolCall = serde_json::from_str(line).unwrap();
        assert_eq!(call.args.get("query").unwrap(), "pressure relief valve");
        let openai = r#"{"type": "function", "function": {"name": "search", "arguments": "{\"query\": \"valve\"}"}}"#;
        let call: ToolCall = serde_json::from_str(openai).unwrap();
        assert_eq!(call.args.get("query").unwrap(), "valve");
        // Our own spelling reads back unchanged, passages and output with it.
        let ours = ToolCall {
            passages: vec!["The valve opens at 4.5 bar.".into()],
            output: None,
            ..ToolCall::named("search").with_arg("query", "valve")
        };
        let back: ToolCall = serde_json::from_str(&serde_json::to_string(&ours).unwrap()).unwrap();
        assert_eq!(back, ours);
        let e = serde_json::from_str::<ToolCall>(r#"{"args": {}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no name"), "{e}");
    }
}
