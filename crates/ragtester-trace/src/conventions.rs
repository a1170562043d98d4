//! What a call's spans say, read by two semantic conventions:
//!
//! - OpenInference (Arize; LlamaIndex, LangChain and Haystack instrumentations): `openinference.span.kind`
//!   (`RETRIEVER`, `RERANKER`, `LLM`, `EMBEDDING`, `CHAIN`), documents flattened as
//!   `retrieval.documents.N.document.{id,score,content}` (a reranker's as `reranker.output_documents.N…`),
//!   the retriever's query in `input.value`, `llm.model_name`, `llm.token_count.{prompt,completion}`;
//! - OpenTelemetry GenAI: `gen_ai.operation.name` (`retrieval`; `chat`, `text_completion`,
//!   `generate_content`; `embeddings`), `gen_ai.retrieval.documents` (a JSON string or an array of
//!   `{id, score, content}`), `gen_ai.retrieval.query.text`, `gen_ai.{response,request}.model`,
//!   `gen_ai.usage.{input,output}_tokens`.
//!
//! Tool spans (OpenInference `TOOL`, GenAI `execute_tool`) are read by `tool_spans.rs`.
//!
//! The documents a generator saw are the last reranker's output when there is one, else the last
//! retriever's. Step times are the spans' own; a step nested in another of its kind is counted once.

pub use crate::attributes::TracedDocument;
use crate::attributes::{Attributes, flattened_documents, gen_ai_documents};
use opentelemetry_proto::tonic::trace::v1::Span;
use std::collections::HashMap;

/// One step of the call and its time.
#[derive(Debug, Clone, PartialEq)]
pub struct StageTime {
    /// `retrieval`, `rerank`, `embedding`, `generation`.
    pub stage: &'static str,
    pub name: String,
    pub ms: f64,
}

/// What a call's spans say about its retrieval and generation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceFacts {
    pub spans: usize,
    /// `openinference`, `gen_ai`, or None when no span follows either convention.
    pub convention: Option<&'static str>,
    /// The documents the generator was given, in rank order.
    pub documents: Vec<TracedDocument>,
    /// The query the retriever was given (a rewritten question, when the service rewrites).
    pub retrieval_query: Option<String>,
    pub model: Option<String>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub stages: Vec<StageTime>,
    /// Time in retrieval steps (retrieval, reranking, query embedding), nested steps counted once.
    pub retrieval_ms: Option<f64>,
    pub generation_ms: Option<f64>,
    /// The tools the service called, in the order they started (`tool_spans.rs`).
    pub tool_calls: Vec<ragtester_core::ToolCall>,
    /// Tool spans that could not be read (arguments that are not a JSON object), each named.
    pub tool_errors: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Retriever,
    Reranker,
    Embedding,
    Llm,
}

impl Kind {
    fn stage(self) -> &'static str {
        match self {
            Kind::Retriever => "retrieval",
            Kind::Reranker => "rerank",
            Kind::Embedding => "embedding",
            Kind::Llm => "generation",
        }
    }

    fn is_retrieval(self) -> bool {
        self != Kind::Llm
    }
}

fn kind_of(a: &Attributes<'_>) -> Option<(Kind, &'static str)> {
    if let Some(kind) = a.text("openinference.span.kind") {
        let kind = match kind.to_ascii_uppercase().as_str() {
            "RETRIEVER" => Kind::Retriever,
            "RERANKER" => Kind::Reranker,
            "EMBEDDING" => Kind::Embedding,
            "LLM" => Kind::Llm,
            _ => return None,
        };
        return Some((kind, "openinference"));
    }
    let kind = match a.text("gen_ai.operation.name")?.as_str() {
        "retrieval" | "retrieve" => Kind::Retriever,
        "embeddings" => Kind::Embedding,
        "chat" | "text_completion" | "generate_content" => Kind::Llm,
        _ => return None,
    };
    Some((kind, "gen_ai"))
}

fn duration_ms(span: &Span) -> f64 {
    span.end_time_unix_nano
        .saturating_sub(span.start_time_unix_nano) as f64
        / 1e6
}

/// What a generation span says: the model, and its prompt and reply tokens added to the trace's.
fn read_llm(out: &mut TraceFacts, a: &Attributes) {
    let model = a
        .text("llm.model_name")
        .or_else(|| a.text("gen_ai.response.model"))
        .or_else(|| a.text("gen_ai.request.model"));
    if model.is_some() {
        out.model = model;
    }
    let add = |total: &mut Option<u64>, n: Option<f64>| {
        if let Some(n) = n {
            *total = Some(total.unwrap_or(0) + n.max(0.0) as u64);
        }
    };
    add(
        &mut out.prompt_tokens,
        a.number("llm.token_count.prompt")
            .or_else(|| a.number("gen_ai.usage.input_tokens")),
    );
    add(
        &mut out.completion_tokens,
        a.number("llm.token_count.completion")
            .or_else(|| a.number("gen_ai.usage.output_tokens")),
    );
}

/// What `spans` (one trace) say.
pub fn facts(spans: &[Span]) -> TraceFacts {
    let mut out = TraceFacts {
        spans: spans.len(),
        ..Default::default()
    };
    let mut ordered: Vec<&Span> = spans.iter().collect();
    ordered.sort_by_key(|s| s.end_time_unix_nano);
    let kinds: HashMap<&[u8], Kind> = ordered
        .iter()
        .filter_map(|s| {
            Some((
                s.span_id.as_slice(),
                kind_of(&Attributes::of(&s.attributes))?.0,
            ))
        })
        .collect();
    let parents: HashMap<&[u8], &[u8]> = ordered
        .iter()
        .map(|s| (s.span_id.as_slice(), s.parent_span_id.as_slice()))
        .collect();
    // Whether a span of the same family (retrieval steps, or generation) encloses this one.
    let nested = |span: &Span, kind: Kind| {
        let mut at = span.parent_span_id.as_slice();
        let mut hops = 0;
        while !at.is_empty() && hops < 64 {
            if let Some(k) = kinds.get(at)
                && k.is_retrieval() == kind.is_retrieval()
            {
                return true;
            }
            at = parents.get(at).copied().unwrap_or_default();
            hops += 1;
        }
        false
    };
    let (mut retrieved, mut reranked) = (None, None);
    for span in ordered {
        let a = Attributes::of(&span.attributes);
        let Some((kind, convention)) = kind_of(&a) else {
            continue;
        };
        out.convention.get_or_insert(convention);
        let ms = duration_ms(span);
        out.stages.push(StageTime {
            stage: kind.stage(),
            name: span.name.clone(),
            ms,
        });
        if !nested(span, kind) {
            let total = if kind.is_retrieval() {
                &mut out.retrieval_ms
            } else {
                &mut out.generation_ms
            };
            *total = Some(total.unwrap_or(0.0) + ms);
        }
        match kind {
            Kind::Retriever => {
                let docs = match convention {
                    "openinference" => flattened_documents(&a, "retrieval.documents"),
                    _ => gen_ai_documents(&a),
                };
                if !docs.is_empty() {
                    retrieved = Some(docs);
                }
                let query = a
                    .text("input.value")
                    .or_else(|| a.text("gen_ai.retrieval.query.text"));
                if query.is_some() {
                    out.retrieval_query = query;
                }
            }
            Kind::Reranker => {
                let docs = flattened_documents(&a, "reranker.output_documents");
                if !docs.is_empty() {
                    reranked = Some(docs);
                }
            }
            Kind::Llm => read_llm(&mut out, &a),
            Kind::Embedding => {}
        }
    }
    out.documents = reranked.or(retrieved).unwrap_or_default();
    (out.tool_calls, out.tool_errors) = crate::tool_spans::tool_calls(spans);
    if !out.tool_calls.is_empty() || !out.tool_errors.is_empty() {
        out.convention
            .get_or_insert(crate::tool_spans::convention(spans));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value::Value};

    fn kv(key: &str, value: Value) -> KeyValue {
        KeyValue {
            key: key.into(),
            value: Some(AnyValue { value: Some(value) }),
            ..Default::default()
        }
    }

    fn span(id: u8, parent: u8, name: &str, ms: (u64, u64), attributes: Vec<KeyValue>) -> Span {
        Span {
            trace_id: vec![1; 16],
            span_id: vec![id; 8],
            parent_span_id: if parent == 0 {
                Vec::new()
            } else {
                vec![parent; 8]
            },
            name: name.into(),
            start_time_unix_nano: ms.0 * 1_000_000,
            end_time_unix_nano: ms.1 * 1_000_000,
            attributes,
            ..Default::default()
        }
    }

    fn s(text: &str) -> Value {
        Value::StringValue(text.into())
    }

    #[test]
    fn openinference_spans_give_documents_query_model_tokens_and_times() {
        let spans = vec![
            span(
                1,
                0,
                "query",
                (0, 100),
                vec![kv("openinference.span.kind", s("CHAIN"))],
            ),
            span(
                2,
                1,
                "retrieve",
                (5, 25),
                vec![
                    kv("openinference.span.kind", s("RETRIEVER")),
                    kv("input.value", s("battery warranty length")),
                    kv(
                        "retrieval.documents.1.document.content",
                        s("Second passage."),
                    ),
                    kv(
                        "retrieval.documents.0.document.content",
                        s("First passage."),
                    ),
                    kv("retrieval.documents.0.document.id", s("d1#0")),
                    kv(
                        "retrieval.documents.0.document.score",
                        Value::DoubleValue(0.9),
                    ),
                ],
            ),
            span(
                3,
                2,
                "embed",
                (6, 10),
                vec![kv("openinference.span.kind", s("EMBEDDING"))],
            ),
            span(
                4,
                1,
                "generate",
                (30, 90),
                vec![
                    kv("openinference.span.kind", s("LLM")),
                    kv("llm.model_name", s("gpt-x")),
                    kv("llm.token_count.prompt", Value::IntValue(120)),
                    kv("llm.token_count.completion", Value::IntValue(14)),
                ],
            ),
        ];
        let f = facts(&spans);
        assert_eq!(f.convention, Some("openinference"));
        assert_eq!(f.documents.len(), 2);
        assert_eq!(f.documents[0].content.as_deref(), Some("First passage."));
        assert_eq!(f.documents[0].id.as_deref(), Some("d1#0"));
        assert_eq!(f.documents[0].score, Some(0.9));
        assert_eq!(
            f.retrieval_query.as_deref(),
            Some("battery warranty length")
        );
        assert_eq!(f.model.as_deref(), Some("gpt-x"));
        assert_eq!(
            (f.prompt_tokens, f.completion_tokens),
            (Some(120), Some(14))
        );
        // The embedding inside the retrieval is not counted twice.
        assert_eq!(f.retrieval_ms, Some(20.0));
        assert_eq!(f.generation_ms, Some(60.0));
        assert_eq!(f.stages.len(), 3);
    }

    #[test]
    fn gen_ai_spans_and_a_reranker_s_output_are_read() {
        let docs = r#"[{"id": "a", "score": 0.5, "content": "Alpha."}, {"id": "b", "score": 0.4}]"#;
        let spans = vec![
            span(
                1,
                0,
                "retrieval",
                (0, 10),
                vec![
                    kv("gen_ai.operation.name", s("retrieval")),
                    kv("gen_ai.retrieval.documents", s(docs)),
                    kv("gen_ai.retrieval.query.text", s("alpha?")),
                ],
            ),
            span(
                2,
                0,
                "chat",
                (10, 40),
                vec![
                    kv("gen_ai.operation.name", s("chat")),
                    kv("gen_ai.request.model", s("m")),
                    kv("gen_ai.usage.input_tokens", Value::IntValue(50)),
                    kv("gen_ai.usage.output_tokens", Value::IntValue(5)),
                ],
            ),
        ];
        let f = facts(&spans);
        assert_eq!(f.convention, Some("gen_ai"));
        assert_eq!(f.documents[0].content.as_deref(), Some("Alpha."));
        assert_eq!(f.documents[1].id.as_deref(), Some("b"));
        assert_eq!(f.retrieval_query.as_deref(), Some("alpha?"));
        assert_eq!((f.prompt_tokens, f.completion_tokens), (Some(50), Some(5)));
        let reranked = span(
            3,
            0,
            "rerank",
            (11, 12),
            vec![
                kv("openinference.span.kind", s("RERANKER")),
                kv("reranker.output_documents.0.document.content", s("Beta.")),
            ],
        );
        let f = facts(&[spans[0].clone(), reranked]);
        assert_eq!(f.documents.len(), 1);
        assert_eq!(f.documents[0].content.as_deref(), Some("Beta."));
        assert_eq!(facts(&[]).convention, None);
    }
}
