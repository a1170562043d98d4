//! Records the judge's integration tests build: retrieved passages and answers.
#![allow(dead_code)] // each test file uses its own subset

use ragtester_core::{
    Answer, ChatModel, ChatRequest, ChatResponse, Latency, RetrievedContext, TaskHint, Usage,
};
use ragtester_offline::OfflineModel;

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
        context_cut_from: None,
        tool_calls: None,
        simulation: None,
        citations: Vec::new(),
        error: None,
        rewritten_query: None,
        trace: None,
    }
}

/// The offline model asked through the judge's prompts and its JSON replies read back, as any model is (it
/// is not marked heuristic, so nothing is worked out directly).
pub struct AskedOffline;

#[async_trait::async_trait]
impl ChatModel for AskedOffline {
    fn name(&self) -> String {
        OfflineModel.name()
    }
    async fn chat(&self, request: &ChatRequest) -> anyhow::Result<ChatResponse> {
        OfflineModel.chat(request).await
    }
}

/// A model named `name` that replies to each task with what `reply` makes of it.
pub struct Scripted {
    pub name: &'static str,
    pub reply: fn(&TaskHint) -> String,
}

#[async_trait::async_trait]
impl ChatModel for Scripted {
    fn name(&self) -> String {
        self.name.into()
    }
    async fn chat(&self, request: &ChatRequest) -> anyhow::Result<ChatResponse> {
        Ok(ChatResponse {
            content: (self.reply)(request.hint.as_ref().unwrap()),
            ..Default::default()
        })
    }
}
