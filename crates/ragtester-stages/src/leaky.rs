//! `generate --drop-leaky MODEL`: a positive question the model answers correctly with no passage at all
//! (closed book, the run's `--retriever none`) tests what the model remembers, not the documents. Each such
//! case is left out of the suite and listed in its report, per model.
//!
//! Only single questions are checked: a conversation's turn cannot leave without breaking its
//! conversation, and a poisoned-document case tests an injection, which no memory answers. The answer is
//! asked with the run's own answer prompt and judged by the offline judge under the paper's fail rule; a
//! call that fails (after the provider's retries) keeps its case and is listed as unchecked.

use crate::context::StageContext;
use anyhow::{Context, Result};
use futures::StreamExt;
use ragtester_core::{
    Answer, Category, ChatModel, ChatRequest, SCHEMA_VERSION, TaskHint, TestCase,
};
use serde::Serialize;
use std::collections::HashSet;

/// What one model's closed-book check found.
#[derive(Debug, Clone, Serialize)]
pub struct LeakCheck {
    pub model: String,
    /// Positive single questions it was asked.
    pub checked: usize,
    /// The cases it passed closed book, left out of the suite.
    pub leaky: Vec<LeakedCase>,
    /// Cases whose check failed (kept in the suite), with why.
    pub unchecked: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LeakedCase {
    pub case_id: String,
    pub query: String,
    /// What the model answered without a passage.
    pub answer: String,
}

/// Whether a case can be answered from memory at all: a positive single question about the documents.
fn checkable(case: &TestCase) -> bool {
    !case.expects_refusal() && case.turn.is_none() && case.category != Category::Safety
}

/// Check the cases against each model in turn and leave out those any of them passes closed book.
pub async fn drop_leaky(
    cases: &mut Vec<TestCase>,
    models: &[String],
    concurrency: usize,
    cx: &StageContext<'_>,
) -> Result<Vec<LeakCheck>> {
    let mut checks = Vec::new();
    if models.is_empty() {
        return Ok(checks);
    }
    let judge = ragtester_judge::judge_for("offline", || cx.models().get("offline"))
        .context("the leak check's judge")?;
    for spec in models {
        let model = (cx.models())
            .for_role(spec, ragtester_core::Sampling::default(), cx.budget())
            .with_context(|| format!("--drop-leaky model `{spec}`"))?;
        let check = check(cases, spec, model.as_ref(), judge.as_ref(), concurrency).await;
        cx.events().info(format!(
            "leak check with {spec}: {} of {} positive single questions answered closed book, left out{}",
            check.leaky.len(),
            check.checked,
            if check.unchecked.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} could not be checked (kept): {}",
                    check.unchecked.len(),
                    check.unchecked[0]
                )
            }
        ));
        let gone: HashSet<&str> = check.leaky.iter().map(|l| l.case_id.as_str()).collect();
        cases.retain(|c| !gone.contains(c.id.as_str()));
        checks.push(check);
    }
    Ok(checks)
}

async fn check(
    cases: &[TestCase],
    spec: &str,
    model: &dyn ChatModel,
    judge: &dyn ragtester_judge::Judge,
    concurrency: usize,
) -> LeakCheck {
    let asked: Vec<&TestCase> = cases.iter().filter(|c| checkable(c)).collect();
    let outcomes: Vec<Result<Option<LeakedCase>, String>> = futures::stream::iter(&asked)
        .map(|case| closed_book(case, model, judge))
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut check = LeakCheck {
        model: spec.to_string(),
        checked: asked.len(),
        leaky: Vec::new(),
        unchecked: Vec::new(),
    };
    for outcome in outcomes {
        match outcome {
            Ok(Some(leaked)) => check.leaky.push(leaked),
            Ok(None) => {}
            Err(why) => check.unchecked.push(why),
        }
    }
    check
}

/// The case asked with no passage and judged: Some when it passes, None when it fails, Err when either
/// call gave no result.
async fn closed_book(
    case: &TestCase,
    model: &dyn ChatModel,
    judge: &dyn ragtester_judge::Judge,
) -> Result<Option<LeakedCase>, String> {
    let request = ChatRequest::new(
        ragtester_exec::answer_messages(&case.query, &[], &[]),
        TaskHint::Answer {
            query: case.query.clone(),
            contexts: Vec::new(),
            history: Vec::new(),
        },
    );
    let reply = model.chat(&request).await.map_err(|e| {
        format!(
            "case {}: {}",
            case.id,
            ragtester_core::secrets::error_text(&e)
        )
    })?;
    let answer = Answer {
        schema_version: SCHEMA_VERSION,
        case_id: case.id.clone(),
        config_id: "closed-book".into(),
        contexts: Vec::new(),
        answer: reply.content,
        latency: Default::default(),
        usage: reply.usage,
        cached: reply.cached,
        cached_at: reply.cached_at,
        error: None,
        trace: None,
        rewritten_query: None,
        truncated_from: None,
        context_cut_from: None,
        tool_calls: None,
        simulation: None,
        citations: Vec::new(),
    };
    let verdict = ragtester_judge::judge_one(Some(case), &answer, judge).await;
    match verdict.passed {
        Some(true) => Ok(Some(LeakedCase {
            case_id: case.id.clone(),
            query: case.query.clone(),
            answer: answer.answer,
        })),
        Some(false) => Ok(None),
        None => Err(format!(
            "case {}: the judge gave no verdict ({})",
            case.id,
            verdict.error.unwrap_or_default()
        )),
    }
}
