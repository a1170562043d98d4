//! OpenAI-compatible chat completions (`POST {base}/chat/completions`): OpenAI, vLLM, llama.cpp server,
//! LM Studio, Ollama's `/v1`. Key from `OPENAI_API_KEY` (optional for local servers), base URL from
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), either overridden per model in the config.
//!
//! Structured output: a schema goes out as `response_format: json_schema`, stepping down to `json_object`
//! with the schema beside it, plain `json_object`, and a schema in the prompt while the server refuses (see
//! [`crate::structured`]); the prompt describes the shape either way.

use crate::endpoint::{Endpoint, ProviderEnv};
use crate::structured::{self, StructuredOutput, StructuredTable};
use anyhow::{Context, Result, anyhow};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, ModelSettings, ReplyFormat, Usage};
use ragtester_http::{ClientLimits, HttpClient, RetryPolicy};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct OpenAiChat {
    model: String,
    base_url: String,
    api_key: Option<String>,
    http: HttpClient,
    /// What each endpoint was learned to accept as structured output, shared with the registry's other
    /// clients.
    structured: Arc<StructuredTable>,
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
        let http = HttpClient::with_limits(policy, endpoint.limits)?;
        Ok(Self::over(model, endpoint, http))
    }

    fn over(model: String, endpoint: Endpoint, http: HttpClient) -> Self {
        Self {
            model,
            base_url: endpoint.base_url.trim_end_matches('/').to_string(),
            api_key: endpoint.api_key,
            http,
            structured: Default::default(),
        }
    }

    /// The same client keeping what it learns of structured output in `table`.
    pub fn sharing(mut self, table: Arc<StructuredTable>) -> Self {
        self.structured = table;
        self
    }

    /// Settings from the config's entry for this model over `OPENAI_BASE_URL` and `OPENAI_API_KEY`.
    pub fn configured(model: String, settings: &ModelSettings, env: &ProviderEnv) -> Result<Self> {
        let endpoint = Endpoint::openai(settings, &env.environment)?;
        let http = HttpClient::configured(&env.http, endpoint.limits)?;
        Ok(Self::over(model, endpoint, http).sharing(env.structured.clone()))
    }

    /// The request body, asking for structured output the way this endpoint is believed to accept.
    pub fn body(&self, request: &ChatRequest) -> Value {
        let step = (self.structured.accepted(&self.identity())).for_format(&request.format);
        self.body_at(request, step)
    }

    fn body_at(&self, request: &ChatRequest, step: Option<StructuredOutput>) -> Value {
        let messages = structured::messages_at(request, step);
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "temperature": request.temperature,
        });
        if let Some(m) = request.max_tokens {
            body["max_tokens"] = json!(m);
        }
        if let Some(s) = request.seed {
            body["seed"] = json!(s);
        }
        match (step, &request.format) {
            (Some(StructuredOutput::JsonSchema), ReplyFormat::Schema(schema)) => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": { "name": schema.name, "schema": ragtester_core::reply_schema::bounded_for(&schema.schema, request.max_tokens), "strict": true },
                });
            }
            (Some(StructuredOutput::JsonObjectWithSchema), ReplyFormat::Schema(schema)) => {
                body["response_format"] = json!({ "type": "json_object", "schema": ragtester_core::reply_schema::bounded_for(&schema.schema, request.max_tokens) });
            }
            (Some(StructuredOutput::PromptOnly) | None, _) => {}
            (Some(_), _) => {
                body["response_format"] = json!({ "type": "json_object" });
            }
        }
        body
    }

    /// Post the request, stepping down the structured-output ladder while the server refuses a step.
    async fn post(&self, url: &str, request: &ChatRequest) -> Result<Value> {
        let tokens = if self.http.counts_tokens() {
            estimated_tokens(request)
        } else {
            0
        };
        let identity = self.identity();
        structured::send_down_the_ladder(
            &self.structured,
            &identity,
            &request.format,
            structured::names_structured_output,
            &[],
            |step, is_final| {
                let body = self.body_at(request, step);
                async move {
                    self.http
                        .post_json_unless(url, self.api_key.as_deref(), &body, tokens, is_final)
                        .await
                }
            },
        )
        .await
    }
}

/// The models an OpenAI-compatible server at `base` lists (`GET {base}/models`, OpenAI's `data[].id`),
/// asked once within `timeout`: what `ragtester init` offers. An unreachable server is an error the caller
/// may take as "none".
pub async fn served_models(
    base: &str,
    timeout: std::time::Duration,
    limits: &ragtester_core::Limits,
) -> Result<Vec<String>> {
    let url = format!("{}/models", base.trim_end_matches('/'));
    let list = ragtester_http::get_json(&url, timeout, limits).await?;
    Ok(list["data"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .filter_map(|m| m["id"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default())
}

/// Prompt tokens plus the reply cap: what a tokens-per-minute limit counts against a request.
pub(crate) fn estimated_tokens(request: &ChatRequest) -> u32 {
    let prompt: usize = request
        .messages
        .iter()
        .map(|m| ragtester_text::tokens::count_tokens(&m.content) + 4)
        .sum();
    u32::try_from(prompt)
        .unwrap_or(u32::MAX)
        .saturating_add(request.max_tokens.unwrap_or(0))
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
        let reply = self.post(&url, request).await?;
        let (reply, note) =
            structured::with_room_after_length(request, reply, stopped_at_length, |roomier| {
                let url = url.as_str();
                async move { self.post(url, &roomier).await }
            })
            .await?;
        let mut response = response_of(&reply).with_context(|| url.clone())?;
        if let Some(retried) = note {
            retried.record(&mut response, response_of);
        }
        Ok(response)
    }
}

/// Whether the server says the reply ended at the token limit (`finish_reason: "length"`).
pub fn stopped_at_length(reply: &Value) -> bool {
    reply["choices"][0]["finish_reason"].as_str() == Some("length")
}

/// The answer and token counts out of a chat completion (`choices[0].message.content`, `usage`).
pub fn response_of(reply: &Value) -> Result<ChatResponse> {
    let content = reply["choices"][0]["message"]["content"]
        .as_str()
        .ok_or_else(|| {
            anyhow!(
                "reply has no choices[0].message.content: {}",
                snippet(reply)
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
        notes: Vec::new(),
    })
}

pub(crate) fn snippet(v: &Value) -> String {
    v.to_string().chars().take(300).collect()
}
