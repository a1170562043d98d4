//! The response cache in front of a chat model: a reply is keyed by the model's identity (spec, the endpoint
//! serving it, a local file's digest) and every parameter and message that determines it, so a rerun or
//! another configuration asking the same thing pays nothing, and a change to any of them — another server
//! behind the same model name included — misses. Deterministic heuristics are not cached: they cost nothing
//! to recompute.
//!
//! A cache can also be write-only (`replay: false`): the system under test is asked afresh every run unless
//! the user opts into replaying its answers, but its replies are still stored for a later opt-in.

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
        "chat-response-v2",
        &(
            model,
            &request.messages,
            request.temperature.to_bits(),
            request.max_tokens,
            request.seed,
            &request.format,
            // At temperature 0 every sample is the same reply: one entry serves them all.
            if request.temperature > 0.0 {
                request.sample
            } else {
                0
            },
        ),
    )
}

#[async_trait::async_trait]
impl ChatModel for CachedChat {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }

    fn cacheable(&self) -> bool {
        self.inner.cacheable()
    }

    fn context_window(&self) -> Option<usize> {
        self.inner.context_window()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        if !self.inner.cacheable() {
            return self.inner.chat(request).await;
        }
        // Keyed on where the model is served and what it is, not only its name: another server or another
        // file behind the same name must not be answered from this one's replies.
        let key = cache_key(&self.inner.identity(), request);
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

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{Message, ReplyFormat};

    fn request(temperature: f32, sample: u32) -> ChatRequest {
        ChatRequest {
            messages: vec![Message::user("q")],
            temperature,
            max_tokens: None,
            seed: None,
            format: ReplyFormat::Text,
            sample,
            hint: None,
        }
    }

    #[test]
    fn samples_have_their_own_entries_only_when_sampling() {
        assert_eq!(
            cache_key("m", &request(0.0, 0)),
            cache_key("m", &request(0.0, 3)),
            "greedy decoding gives every sample the same reply"
        );
        assert_ne!(
            cache_key("m", &request(0.7, 0)),
            cache_key("m", &request(0.7, 1))
        );
        assert_eq!(
            cache_key("m", &request(0.7, 1)),
            cache_key("m", &request(0.7, 1))
        );
        let mut json = request(0.0, 0);
        json.format = ReplyFormat::Json;
        assert_ne!(cache_key("m", &json), cache_key("m", &request(0.0, 0)));
    }
}
