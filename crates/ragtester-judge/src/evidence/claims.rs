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
use ragtester_offline::{ClaimJudgements, judge_claims};
use ragtester_text::is_refusal;
use serde_json::{Value, json};

/// Claim metrics of one answer, or None where they do not apply: an errored cell, a negative case (its
/// expected answer is a refusal), a refusal, an empty answer.
pub async fn claim_metrics(
    checker: &dyn crate::Judge,
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
    let method = checker.claims_method();
    let measured = checker.claims(case, answer).await;
    Some(match measured {
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

/// The passages of an answer in rank order, and those among them that hold no source span.
fn passages<'a>(case: &TestCase, answer: &'a Answer) -> (Vec<&'a str>, Vec<&'a str>) {
    let passages = answer.contexts.iter().map(|c| c.text.as_str()).collect();
    let noise = answer
        .contexts
        .iter()
        .filter(|c| is_noise(case, c))
        .map(|c| c.text.as_str())
        .collect();
    (passages, noise)
}

/// A model's claim metrics: it splits both texts into claims and checks each list for entailment.
pub(crate) async fn measure(
    model: &dyn ChatModel,
    case: &TestCase,
    answer: &Answer,
) -> Result<ClaimMetrics> {
    let lang = case.language.as_str();
    let expected = split(model, &case.expected_answer, lang).await?;
    let said = split(model, &answer.answer, lang).await?;
    let (passages, noise) = passages(case, answer);
    let mut judged = ClaimJudgements {
        expected_claims: expected.len(),
        answer_claims: said.len(),
        stated: entailed(model, &expected, &answer.answer, lang).await?,
        correct: entailed(model, &said, &case.expected_answer, lang).await?,
        supported: entailed(model, &said, &passages.join("\n\n"), lang).await?,
        held: entailed(model, &expected, &passages.join("\n\n"), lang).await?,
        from_noise: if noise.is_empty() {
            vec![false; said.len()]
        } else {
            entailed(model, &said, &noise.join("\n\n"), lang).await?
        },
        relevant: 0,
    };
    for passage in &passages {
        if entailed(model, &expected, passage, lang)
            .await?
            .contains(&true)
        {
            judged.relevant += 1;
        }
    }
    Ok(metrics(&judged, passages.len()))
}

/// The lexical checker's metrics, computed directly (`ragtester_offline::judge_claims`): the offline
/// model's answers to the claim tasks, without a prompt per question.
pub(crate) fn lexical(case: &TestCase, answer: &Answer) -> ClaimMetrics {
    let passages: Vec<&str> = answer.contexts.iter().map(|c| c.text.as_str()).collect();
    let noise: Vec<bool> = answer.contexts.iter().map(|c| is_noise(case, c)).collect();
    let judged = judge_claims(&case.expected_answer, &answer.answer, &passages, &noise);
    metrics(&judged, passages.len())
}

/// A passage that overlaps none of the case's source spans.
fn is_noise(case: &TestCase, c: &ragtester_core::RetrievedContext) -> bool {
    !case
        .source_spans
        .iter()
        .any(|s| s.overlaps(&c.document_id, c.start, c.end))
}

/// The metrics from what the checker said of each claim.
fn metrics(j: &ClaimJudgements, passages: usize) -> ClaimMetrics {
    let share = |n: usize, of: usize| (of > 0).then(|| n as f64 / of as f64);
    let count = |flags: &[bool]| flags.iter().filter(|f| **f).count();
    let (said, expected) = (j.answer_claims, j.expected_claims);
    let wrong = |i: usize| !j.correct[i];
    ClaimMetrics {
        method: String::new(),
        answer_claims: said,
        expected_claims: expected,
        claim_recall: share(count(&j.stated), expected),
        claim_precision: share(count(&j.correct), said),
        faithfulness: share(count(&j.supported), said),
        hallucination: share(
            (0..said).filter(|&i| wrong(i) && !j.supported[i]).count(),
            said,
        ),
        noise_sensitivity: share(
            (0..said).filter(|&i| wrong(i) && j.from_noise[i]).count(),
            said,
        ),
        context_utilization: share(
            (0..expected).filter(|&i| j.held[i] && j.stated[i]).count(),
            count(&j.held),
        ),
        context_precision: share(j.relevant, passages),
        context_claim_recall: share(count(&j.held), expected),
        error: None,
    }
}

/// Ask, and ask once more with the problem named if the reply cannot be read.
/// A model's reply read by `read`, asked once more with what was wrong where it is unreadable; `what`
/// names the task in the error.
pub(crate) async fn ask<T>(
    model: &dyn ChatModel,
    mut request: ChatRequest,
    zh: bool,
    what: &str,
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
    Err(anyhow!("unreadable {what} reply: {}", problems.join(" | ")))
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
    ask(model, request, language == "zh", "claim", |reply| {
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
    ask(model, request, language == "zh", "claim", |reply| {
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

pub(crate) fn schema(name: &str, properties: Value) -> OutputSchema {
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
