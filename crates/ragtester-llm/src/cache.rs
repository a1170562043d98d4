//! The response cache in front of a chat model: a reply is keyed by the model and every parameter and
//! message that determines it, so a rerun or another configuration asking the same thing pays nothing, and a
//! change to any of them misses. Deterministic heuristics are not cached: they cost nothing to recompute.

use anyhow::Result;
use ragtester_core::ids::stable_id;
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, ResponseCache};
use std::sync::Arc;

pub struct CachedChat {
    pub inner: Arc<dyn ChatModel>,
    pub cache: Arc<dyn ResponseCache>,
    /// Ask the model again and overwrite what the cache holds.
    pub refresh: bool,
}

/// The cache key of a request to a model.
pub fn cache_key(model: &str, request: &ChatRequest) -> String {
    stable_id(
        "chat-response-v1",
        &(
            model,
            &request.messages,
            request.temperature.to_bits(),
            request.max_tokens,
            request.seed,
            request.json,
        ),
    )
}

#[async_trait::async_trait]
impl ChatModel for CachedChat {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn is_heuristic(&self) -> bool {
        self.inner.is_heuristic()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        if self.inner.is_heuristic() {
            return self.inner.chat(request).await;
        }
        let key = cache_key(&self.inner.name(), request);
        if !self.refresh
            && let Some(mut hit) = self.cache.get(&key)?
        {
            hit.cached = true;
            return Ok(hit);
        }
        let response = self.inner.chat(request).await?;
        self.cache.put(&key, &response)?;
        Ok(response)
    }
}
