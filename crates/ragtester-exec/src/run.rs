//! The run loop: every (case, configuration) cell, bounded concurrency, each answer committed on completion.

use crate::pipeline::Pipeline;
use crate::prompt::answer_messages;
use anyhow::Result;
use futures::StreamExt;
use ragtester_core::{Answer, ChatRequest, Latency, RetrievedContext, TaskHint, TestCase, Usage};
use ragtester_retrieve::Scope;
use ragtester_store::RunStore;
use std::sync::Arc;
use std::time::Instant;

/// Called after each finished cell with (done, total, errors so far).
pub type Progress = dyn Fn(usize, usize, usize) + Send + Sync;

/// Run all cells not yet in the store; returns every answer of the run (earlier ones included), in
/// configuration order, then case order.
pub async fn execute(
    pipelines: &[Pipeline],
    cases: &[TestCase],
    store: &RunStore,
    concurrency: usize,
    progress: &Progress,
) -> Result<Vec<Answer>> {
    let done = store.answered()?;
    let pending: Vec<(usize, usize)> = (0..pipelines.len())
        .flat_map(|p| (0..cases.len()).map(move |c| (p, c)))
        .filter(|&(p, c)| !done.contains(&(cases[c].id.clone(), pipelines[p].config.id.clone())))
        .collect();
    let total = pending.len();
    let store = Arc::new(store);
    let mut finished = 0usize;
    let mut errors = 0usize;
    let mut stream = futures::stream::iter(pending)
        .map(|(p, c)| answer_cell(&pipelines[p], &cases[c]))
        .buffer_unordered(concurrency.max(1));
    while let Some(answer) = stream.next().await {
        store.put_answer(&answer)?;
        finished += 1;
        errors += usize::from(answer.error.is_some());
        progress(finished, total, errors);
    }
    let mut answers = store.answers()?;
    let config_pos: std::collections::HashMap<&str, usize> = pipelines
        .iter()
        .enumerate()
        .map(|(i, p)| (p.config.id.as_str(), i))
        .collect();
    let case_pos: std::collections::HashMap<&str, usize> = cases
        .iter()
        .enumerate()
        .map(|(i, c)| (c.id.as_str(), i))
        .collect();
    answers.retain(|a| {
        config_pos.contains_key(a.config_id.as_str()) && case_pos.contains_key(a.case_id.as_str())
    });
    answers.sort_by_key(|a| {
        (
            config_pos[a.config_id.as_str()],
            case_pos[a.case_id.as_str()],
        )
    });
    Ok(answers)
}

async fn answer_cell(pipeline: &Pipeline, case: &TestCase) -> Answer {
    let started = Instant::now();
    let mut answer = Answer {
        schema_version: ragtester_core::SCHEMA_VERSION,
        case_id: case.id.clone(),
        config_id: pipeline.config.id.clone(),
        contexts: Vec::new(),
        answer: String::new(),
        latency: Latency::default(),
        usage: Usage::default(),
        error: None,
    };
    let scope = Scope {
        documents: &case.restrict_to,
    };
    let hits = match pipeline
        .retriever
        .retrieve(&case.query, pipeline.config.top_k, scope)
    {
        Ok(h) => h,
        Err(e) => {
            answer.error = Some(format!("retrieval failed: {e:#}"));
            answer.latency.total_ms = ms(started);
            return answer;
        }
    };
    answer.latency.retrieval_ms = ms(started);
    answer.contexts = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let chunk = &pipeline.chunks[h.chunk];
            RetrievedContext {
                rank: i + 1,
                score: h.score,
                chunk_id: chunk.id.clone(),
                document_id: chunk.document_id.clone(),
                start: chunk.start,
                end: chunk.end,
                text: chunk.text.clone(),
            }
        })
        .collect();
    let request = ChatRequest::new(
        answer_messages(&case.query, &answer.contexts),
        TaskHint::Answer {
            query: case.query.clone(),
            contexts: answer.contexts.clone(),
        },
    );
    let generation_started = Instant::now();
    match pipeline.model.chat(&request).await {
        Ok(response) => {
            answer.answer = response.content;
            answer.usage = response.usage;
        }
        Err(e) => {
            answer.error = Some(format!(
                "generation failed ({}): {e:#}",
                pipeline.model.name()
            ))
        }
    }
    answer.latency.generation_ms = ms(generation_started);
    answer.latency.total_ms = ms(started);
    answer
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}
