//! OpenAI-compatible chat completions (`POST {base}/chat/completions`): OpenAI, vLLM, llama.cpp server,
//! LM Studio, Ollama's `/v1`. Key from `OPENAI_API_KEY` (optional for local servers), base URL from
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`).

use crate::http::{HttpClient, RetryPolicy};
use anyhow::{Result, anyhow};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, Usage};
use serde_json::{Value, json};

pub struct OpenAiChat {
    model: String,
    base_url: String,
    api_key: Option<String>,
    http: HttpClient,
}

impl OpenAiChat {
    pub fn new(
        model: String,
        base_url: String,
        api_key: Option<String>,
        policy: RetryPolicy,
    ) -> Result<Self> {
        Ok(Self {
            model,
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            http: HttpClient::new(policy)?,
        })
    }

    /// Settings from `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    pub fn from_env(model: String) -> Result<Self> {
        let (base, key) = openai_env();
        Self::new(model, base, key, RetryPolicy::from_env()?)
    }

    pub fn body(&self, request: &ChatRequest) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": request.messages,
            "temperature": request.temperature,
        });
        if let Some(m) = request.max_tokens {
            body["max_tokens"] = json!(m);
        }
        if let Some(s) = request.seed {
            body["seed"] = json!(s);
        }
        if request.json {
            body["response_format"] = json!({ "type": "json_object" });
        }
        body
    }
}

#[async_trait::async_trait]
impl ChatModel for OpenAiChat {
    fn name(&self) -> String {
        format!("openai:{}", self.model)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let url = format!("{}/chat/completions", self.base_url);
        let reply = self
            .http
            .post_json(&url, self.api_key.as_deref(), &self.body(request))
            .await?;
        let content = reply["choices"][0]["message"]["content"]
            .as_str()
            .ok_or_else(|| {
                anyhow!(
                    "{url}: reply has no choices[0].message.content: {}",
                    snippet(&reply)
                )
            })?
            .to_string();
        let usage = &reply["usage"];
        Ok(ChatResponse {
            content,
            cached: false,
            usage: Usage {
                prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
            },
        })
    }
}

/// `OPENAI_BASE_URL` (default `https://api.openai.com/v1`) and `OPENAI_API_KEY` (unset or empty: none).
pub(crate) fn openai_env() -> (String, Option<String>) {
    let base =
        std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "https://api.openai.com/v1".into());
    let key = std::env::var("OPENAI_API_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    (base, key)
}

pub(crate) fn snippet(v: &Value) -> String {
    v.to_string().chars().take(300).collect()
}
