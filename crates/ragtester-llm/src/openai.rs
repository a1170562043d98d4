//! OpenAI-compatible chat completions (`POST {base}/chat/completions`): OpenAI, vLLM, llama.cpp server,
//! LM Studio, Ollama's `/v1`. Key from `OPENAI_API_KEY` (optional for local servers), base URL from
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), either overridden per model in the config.
//!
//! Structured output: a schema goes out as `response_format: json_schema`. A server that rejects that
//! (HTTP 400 naming `response_format` or `json_schema`) is asked again with `json_object`, and this model
//! stops sending schemas to it; the prompt describes the shape either way.

use crate::endpoint::Endpoint;
use crate::http::{ClientLimits, HttpClient, RetryPolicy, StatusError};
use anyhow::{Result, anyhow};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, ModelSettings, ReplyFormat, Usage};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};

pub struct OpenAiChat {
    model: String,
    base_url: String,
    api_key: Option<String>,
    http: HttpClient,
    /// The server refused a `json_schema` response format once: send `json_object` from then on.
    schema_refused: AtomicBool,
}

impl OpenAiChat {
    pub fn new(
        model: String,
        base_url: String,
        api_key: Option<String>,
        policy: RetryPolicy,
    ) -> Result<Self> {
        Self::at(
            model,
            Endpoint {
                base_url,
                api_key,
                limits: ClientLimits::default(),
            },
            policy,
        )
    }

    pub fn at(model: String, endpoint: Endpoint, policy: RetryPolicy) -> Result<Self> {
        Ok(Self {
            model,
            base_url: endpoint.base_url.trim_end_matches('/').to_string(),
            api_key: endpoint.api_key,
            http: HttpClient::with_limits(policy, endpoint.limits)?,
            schema_refused: AtomicBool::new(false),
        })
    }

    /// Settings from the config's entry for this model over `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    pub fn configured(model: String, settings: &ModelSettings) -> Result<Self> {
        Self::at(model, Endpoint::openai(settings)?, RetryPolicy::from_env()?)
    }

    pub fn from_env(model: String) -> Result<Self> {
        Self::configured(model, &ModelSettings::default())
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
        match &request.format {
            ReplyFormat::Text => {}
            ReplyFormat::Schema(schema) if !self.schema_refused.load(Ordering::Relaxed) => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": { "name": schema.name, "schema": schema.schema, "strict": true },
                });
            }
            ReplyFormat::Json | ReplyFormat::Schema(_) => {
                body["response_format"] = json!({ "type": "json_object" });
            }
        }
        body
    }

    async fn post(&self, url: &str, request: &ChatRequest) -> Result<Value> {
        let tokens = if self.http.counts_tokens() {
            estimated_tokens(request)
        } else {
            0
        };
        self.http
            .post_json_weighted(url, self.api_key.as_deref(), &self.body(request), tokens)
            .await
    }
}

/// Prompt tokens plus the reply cap: what a tokens-per-minute limit counts against a request.
pub(crate) fn estimated_tokens(request: &ChatRequest) -> u32 {
    let prompt: usize = request
        .messages
        .iter()
        .map(|m| ragtester_core::tokens::count_tokens(&m.content) + 4)
        .sum();
    u32::try_from(prompt)
        .unwrap_or(u32::MAX)
        .saturating_add(request.max_tokens.unwrap_or(0))
}

/// A 400 that says the server does not take the structured-output request.
fn refuses_schema(error: &anyhow::Error) -> bool {
    error.downcast_ref::<StatusError>().is_some_and(|e| {
        e.status == 400 && (e.body.contains("response_format") || e.body.contains("json_schema"))
    })
}

#[async_trait::async_trait]
impl ChatModel for OpenAiChat {
    fn name(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn identity(&self) -> String {
        format!("openai:{}@{}", self.model, self.base_url)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let url = format!("{}/chat/completions", self.base_url);
        let reply = match self.post(&url, request).await {
            Err(e)
                if matches!(request.format, ReplyFormat::Schema(_))
                    && !self.schema_refused.load(Ordering::Relaxed)
                    && refuses_schema(&e) =>
            {
                tracing::warn!(model = %self.model, "the server refuses JSON-schema output: asking for a JSON object instead");
                self.schema_refused.store(true, Ordering::Relaxed);
                self.post(&url, request).await?
            }
            other => other?,
        };
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
            cached_at: None,
            usage: Usage {
                prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
            },
        })
    }
}

pub(crate) fn snippet(v: &Value) -> String {
    v.to_string().chars().take(300).collect()
}
