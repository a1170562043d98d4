//! Claim-level metrics (after RAGChecker, Ru et al. 2024): the answer and the expected answer are split into
//! claims by a model, and each claim list is checked for entailment against the other text, the retrieved
//! passages together, the passages that hold no source span, and each passage alone. The offline model
//! answers the same two tasks lexically, so every run has the figures, labelled with how they were made.
//!
//! An unreadable reply is asked again once, then recorded as the metrics' error: never a share, never NaN.

use crate::parse::json_values;
use crate::prompt::claims_prompts;
use anyhow::{Result, anyhow};
use ragtester_core::{
    Answer, ChatModel, ChatRequest, ClaimMetrics, Message, OutputSchema, ReplyFormat, Role,
    TaskHint, TestCase,
};
use ragtester_text::is_refusal;
use serde_json::{Value, json};

/// Claim metrics of one answer, or None where they do not apply: an errored cell, a negative case (its
/// expected answer is a refusal), a refusal, an empty answer.
pub async fn claim_metrics(
    model: &dyn ChatModel,
    case: &TestCase,
    answer: &Answer,
) -> Option<ClaimMetrics> {
    if answer.error.is_some()
        || case.expects_refusal()
        || answer.answer.trim().is_empty()
        || is_refusal(&answer.answer)
    {
        return None;
    }
    let method = if model.is_heuristic() {
        "lexical".to_string()
    } else {
        model.name()
    };
    Some(match measure(model, case, answer).await {
        Ok(mut m) => {
            m.method = method;
            m
        }
        Err(e) => ClaimMetrics {
            method,
            error: Some(ragtester_core::secrets::error_text(&e)),
            ..Default::default()
        },
    })
}

async fn measure(model: &dyn ChatModel, case: &TestCase, answer: &Answer) -> Result<ClaimMetrics> {
    let lang = case.language.as_str();
    let expected = split(model, &case.expected_answer, lang).await?;
    let said = split(model, &answer.answer, lang).await?;
    let passages: Vec<&str> = answer.contexts.iter().map(|c| c.text.as_str()).collect();
    let noise: Vec<&str> = answer
        .contexts
        .iter()
        .filter(|c| {
            !case
                .source_spans
                .iter()
                .any(|s| s.overlaps(&c.document_id, c.start, c.end))
        })
        .map(|c| c.text.as_str())
        .collect();
    let stated = entailed(model, &expected, &answer.answer, lang).await?;
    let correct = entailed(model, &said, &case.expected_answer, lang).await?;
    let supported = entailed(model, &said, &passages.join("\n\n"), lang).await?;
    let held = entailed(model, &expected, &passages.join("\n\n"), lang).await?;
    let from_noise = if noise.is_empty() {
        vec![false; said.len()]
    } else {
        entailed(model, &said, &noise.join("\n\n"), lang).await?
    };
    let mut relevant = 0;
    for passage in &passages {
        if entailed(model, &expected, passage, lang)
            .await?
            .contains(&true)
        {
            relevant += 1;
        }
    }
    let share = |n: usize, of: usize| (of > 0).then(|| n as f64 / of as f64);
    let count = |flags: &[bool]| flags.iter().filter(|f| **f).count();
    let wrong = |i: usize| !correct[i];
    Ok(ClaimMetrics {
        method: String::new(),
        answer_claims: said.len(),
        expected_claims: expected.len(),
        claim_recall: share(count(&stated), expected.len()),
        claim_precision: share(count(&correct), said.len()),
        faithfulness: share(count(&supported), said.len()),
        hallucination: share(
            (0..said.len())
                .filter(|&i| wrong(i) && !supported[i])
                .count(),
            said.len(),
        ),
        noise_sensitivity: share(
            (0..said.len())
                .filter(|&i| wrong(i) && from_noise[i])
                .count(),
            said.len(),
        ),
        context_utilization: share(
            (0..expected.len())
                .filter(|&i| held[i] && stated[i])
                .count(),
            count(&held),
        ),
        context_precision: share(relevant, passages.len()),
        context_claim_recall: share(count(&held), expected.len()),
        error: None,
    })
}

/// Ask, and ask once more with the problem named if the reply cannot be read.
async fn ask<T>(
    model: &dyn ChatModel,
    mut request: ChatRequest,
    zh: bool,
    read: impl Fn(&str) -> Result<T, String>,
) -> Result<T> {
    let mut problems = Vec::new();
    for _ in 0..=crate::MAX_REASKS {
        let reply = model.chat(&request).await?;
        match read(&reply.content) {
            Ok(v) => return Ok(v),
            Err(problem) => {
                problems.push(format!("{problem}; raw reply: {}", reply.content));
                request.messages.push(Message {
                    role: Role::Assistant,
                    content: reply.content,
                });
                request
                    .messages
                    .push(crate::prompt::reask_message(&problem, zh));
            }
        }
    }
    Err(anyhow!("unreadable claim reply: {}", problems.join(" | ")))
}

async fn split(model: &dyn ChatModel, text: &str, language: &str) -> Result<Vec<String>> {
    let (system, user) = claims_prompts::split(text, language);
    let hint = TaskHint::Claims {
        text: text.to_string(),
        language: language.to_string(),
    };
    let mut request = ChatRequest::new(vec![Message::system(system), Message::user(user)], hint);
    request.format = ReplyFormat::Schema(schema(
        "claims",
        json!({"claims": {"type": "array", "items": {"type": "string"}}}),
    ));
    ask(model, request, language == "zh", |reply| {
        let claims = field(reply, "claims")?
            .iter()
            .map(|c| c.as_str().map(str::trim).map(str::to_string))
            .collect::<Option<Vec<String>>>()
            .ok_or("`claims` must be a list of strings")?;
        Ok(claims.into_iter().filter(|c| !c.is_empty()).collect())
    })
    .await
}

/// Which claims `reference` supports (contradicted and neutral are both "not supported").
async fn entailed(
    model: &dyn ChatModel,
    claims: &[String],
    reference: &str,
    language: &str,
) -> Result<Vec<bool>> {
    if claims.is_empty() {
        return Ok(Vec::new());
    }
    let (system, user) = claims_prompts::entail(claims, reference, language);
    let hint = TaskHint::Entailment {
        claims: claims.to_vec(),
        reference: reference.to_string(),
        language: language.to_string(),
    };
    let mut request = ChatRequest::new(vec![Message::system(system), Message::user(user)], hint);
    request.format = ReplyFormat::Schema(schema(
        "entailment",
        json!({"verdicts": {"type": "array", "items": {"type": "string", "enum": ["entailed", "contradicted", "neutral"]}}}),
    ));
    ask(model, request, language == "zh", |reply| {
        let verdicts = field(reply, "verdicts")?;
        if verdicts.len() != claims.len() {
            return Err(format!(
                "{} verdicts for {} claims",
                verdicts.len(),
                claims.len()
            ));
        }
        verdicts
            .iter()
            .map(|v| match v.as_str().map(str::to_lowercase).as_deref() {
                Some("entailed") => Ok(true),
                Some("contradicted" | "neutral") => Ok(false),
                _ => Err(format!(
                    "verdict {v} is not entailed, contradicted or neutral"
                )),
            })
            .collect()
    })
    .await
}

fn field(reply: &str, name: &str) -> Result<Vec<Value>, String> {
    json_values(reply)
        .into_iter()
        .find_map(|v| v.get(name).and_then(Value::as_array).cloned())
        .ok_or_else(|| format!("reply holds no JSON object with a `{name}` list"))
}

fn schema(name: &str, properties: Value) -> OutputSchema {
    let required: Vec<&String> = properties
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    OutputSchema {
        name: name.to_string(),
        schema: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        }),
    }
}
