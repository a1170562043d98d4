//! Per-role generation settings: a wrapper that fills in max tokens, temperature and seed on every request a
//! role sends, so the stages need not carry them. Wrap it outside the response cache, so cache keys see the
//! settings actually sent.

use anyhow::Result;
use ragtester_core::{ChatModel, ChatRequest, ChatResponse};
use std::sync::Arc;

/// Settings for one LLM role; `None` leaves the request (or the provider's default) alone.
pub type RoleSettings = ragtester_core::Sampling;

pub struct Tuned {
    pub inner: Arc<dyn ChatModel>,
    pub settings: RoleSettings,
}

impl Tuned {
    /// The model itself when there is nothing to apply.
    pub fn wrap(inner: Arc<dyn ChatModel>, settings: RoleSettings) -> Arc<dyn ChatModel> {
        if settings.is_default() {
            inner
        } else {
            Arc::new(Self { inner, settings })
        }
    }

    fn apply(&self, request: &ChatRequest) -> ChatRequest {
        let mut request = request.clone();
        if let Some(limit) = self.settings.max_tokens {
            request.max_tokens = Some(request.max_tokens.map_or(limit, |m| m.min(limit)));
        }
        if let Some(t) = self.settings.temperature {
            request.temperature = t;
        }
        if let Some(seed) = self.settings.seed {
            request.seed = Some(seed);
        }
        request
    }
}

#[async_trait::async_trait]
impl ChatModel for Tuned {
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
        self.inner.chat(&self.apply(request)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{Message, Usage};
    use std::sync::Mutex;

    struct Recorder(Mutex<Vec<ChatRequest>>);

    #[async_trait::async_trait]
    impl ChatModel for Recorder {
        fn name(&self) -> String {
            "rec".into()
        }
        async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
            self.0.lock().unwrap().push(request.clone());
            Ok(ChatResponse {
                content: String::new(),
                usage: Usage::default(),
                cached: false,
                cached_at: None,
                notes: Vec::new(),
            })
        }
    }

    #[tokio::test]
    async fn settings_fill_and_cap_requests() {
        let rec = Arc::new(Recorder(Mutex::new(Vec::new())));
        let tuned = Tuned::wrap(
            rec.clone(),
            RoleSettings {
                max_tokens: Some(64),
                temperature: Some(0.7),
                seed: Some(3),
            },
        );
        let mut req = ChatRequest {
            messages: vec![Message::user("q")],
            temperature: 0.0,
            max_tokens: None,
            seed: None,
            format: ragtester_core::ReplyFormat::Text,
            sample: 0,
            hint: None,
        };
        tuned.chat(&req).await.unwrap();
        req.max_tokens = Some(16);
        tuned.chat(&req).await.unwrap();
        req.max_tokens = Some(500);
        tuned.chat(&req).await.unwrap();
        let seen = rec.0.lock().unwrap();
        let limits: Vec<Option<u32>> = seen.iter().map(|r| r.max_tokens).collect();
        assert_eq!(limits, [Some(64), Some(16), Some(64)]);
        assert!(
            seen.iter()
                .all(|r| r.temperature == 0.7 && r.seed == Some(3))
        );
    }
}
