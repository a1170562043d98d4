//! Records the judge's integration tests build: retrieved passages and answers.
#![allow(dead_code)] // each test file uses its own subset

use ragtester_core::{Answer, Latency, RetrievedContext, Usage};

/// A passage of `doc` starting at char `start`, at `rank`.
pub fn ctx(rank: usize, doc: &str, start: usize, text: &str) -> RetrievedContext {
    RetrievedContext {
        rank,
        score: 1.0 / rank as f64,
        chunk_id: format!("{doc}-{start}"),
        document_id: doc.into(),
        start,
        end: start + text.chars().count(),
        text: text.into(),
    }
}

/// The answer to case `c1` under configuration `k`.
pub fn answer(text: &str, contexts: Vec<RetrievedContext>) -> Answer {
    Answer {
        schema_version: 1,
        case_id: "c1".into(),
        config_id: "k".into(),
        contexts,
        answer: text.into(),
        latency: Latency::default(),
        usage: Usage::default(),
        cached: false,
        cached_at: None,
        truncated_from: None,
        error: None,
    }
}
