//! Ollama's native chat API (`POST {OLLAMA_HOST}/api/chat`, not streamed). `OLLAMA_HOST` may omit the scheme,
//! as Ollama itself allows; the default is `http://127.0.0.1:11434`.

use crate::endpoint::{Endpoint, ProviderEnv, normalise_host};
use crate::openai::{estimated_tokens, snippet};
use crate::structured::{self, StructuredOutput, StructuredTable};
use anyhow::{Context, Result, anyhow};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, ModelSettings, ReplyFormat, Usage};
use ragtester_http::{ClientLimits, HttpClient, RetryPolicy};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct OllamaChat {
    model: String,
    host: String,
    http: HttpClient,
    /// What each endpoint was learned to accept as structured output, shared with the registry's other
    /// clients.
    structured: Arc<StructuredTable>,
}

impl OllamaChat {
    pub fn new(model: String, host: &str, policy: RetryPolicy) -> Result<Self> {
        Self::at(
            model,
            Endpoint {
                base_url: normalise_host(host),
                api_key: None,
                limits: ClientLimits::default(),
            },
            policy,
        )
    }

    pub fn at(model: String, endpoint: Endpoint, policy: RetryPolicy) -> Result<Self> {
        let http = HttpClient::with_limits(policy, endpoint.limits)?;
        Ok(Self {
            model,
            host: endpoint.base_url,
            http,
            structured: Default::default(),
        })
    }

    /// The same client keeping what it learns of structured output in `table`.
    pub fn sharing(mut self, table: Arc<StructuredTable>) -> Self {
        self.structured = table;
        self
    }

    /// Settings from the config's entry for this model over `OLLAMA_HOST`.
    pub fn configured(model: String, settings: &ModelSettings, env: &ProviderEnv) -> Result<Self> {
        let endpoint = Endpoint::ollama(settings, &env.environment)?;
        Ok(Self {
            model,
            http: HttpClient::configured(&env.http, endpoint.limits)?,
            host: endpoint.base_url,
            structured: env.structured.clone(),
        })
    }

    /// The request body, asking for structured output the way this server is believed to accept.
    pub fn body(&self, request: &ChatRequest) -> Value {
        let step = (self.structured.accepted(&self.identity())).for_format(&request.format);
        self.body_at(request, step)
    }

    fn body_at(&self, request: &ChatRequest, step: Option<StructuredOutput>) -> Value {
        let messages = structured::messages_at(request, step);
        let mut options = json!({ "temperature": request.temperature });
        if let Some(m) = request.max_tokens {
            options["num_predict"] = json!(m);
        }
        if let Some(s) = request.seed {
            options["seed"] = json!(s);
        }
        let mut body = json!({
            "model": self.model,
            "messages": messages,
            "stream": false,
            "options": options,
        });
        // Ollama takes a JSON schema in `format` (0.5 and later) or the plain "json" (earlier ones).
        match (step, &request.format) {
            (Some(StructuredOutput::JsonSchema), ReplyFormat::Schema(schema)) => {
                body["format"] =
                    ragtester_core::reply_schema::bounded_for(&schema.schema, request.max_tokens);
            }
            (Some(StructuredOutput::PromptOnly) | None, _) => {}
            (Some(_), _) => body["format"] = json!("json"),
        }
        body
    }
}

/// An Ollama error that names the structured output (`format`, a schema) of the request.
fn names_format(body: &str) -> bool {
    structured::names_structured_output(body) || body.to_ascii_lowercase().contains("format")
}

#[async_trait::async_trait]
impl ChatModel for OllamaChat {
    fn name(&self) -> String {
        format!("ollama:{}", self.model)
    }

    fn identity(&self) -> String {
        format!("ollama:{}@{}", self.model, self.host)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let url = format!("{}/api/chat", self.host);
        let tokens = if self.http.counts_tokens() {
            estimated_tokens(request)
        } else {
            0
        };
        let identity = self.identity();
        let reply = structured::send_down_the_ladder(
            &self.structured,
            &identity,
            &request.format,
            names_format,
            // Ollama's `format` takes a schema or "json": nothing between.
            &[StructuredOutput::JsonObjectWithSchema],
            |step, is_final| {
                let body = self.body_at(request, step);
                let url = url.as_str();
                async move {
                    self.http
                        .post_json_unless(url, None, &body, tokens, is_final)
                        .await
                }
            },
        )
        .await?;
        let (reply, note) =
            structured::with_room_after_length(request, reply, stopped_at_length, |roomier| {
                let url = url.clone();
                async move {
                    let body = self.body_at(
                        &roomier,
                        (self.structured.accepted(&identity)).for_format(&roomier.format),
                    );
                    self.http.post_json(&url, None, &body).await
                }
            })
            .await?;
        let mut response = response_of(&reply).with_context(|| url.clone())?;
        if let Some(retried) = note {
            retried.record(&mut response, response_of);
        }
        Ok(response)
    }
}

/// Whether Ollama says the reply ended at the token limit (`done_reason: "length"`).
pub fn stopped_at_length(reply: &serde_json::Value) -> bool {
    reply["done_reason"].as_str() == Some("length")
}

/// The answer and token counts out of an `/api/chat` reply (`message.content`, the eval counts).
pub fn response_of(reply: &serde_json::Value) -> Result<ChatResponse> {
    let content = reply["message"]["content"]
        .as_str()
        .ok_or_else(|| anyhow!("reply has no message.content: {}", snippet(reply)))?
        .to_string();
    Ok(ChatResponse {
        content,
        cached: false,
        cached_at: None,
        usage: Usage {
            prompt_tokens: reply["prompt_eval_count"].as_u64().unwrap_or(0),
            completion_tokens: reply["eval_count"].as_u64().unwrap_or(0),
        },
        notes: Vec::new(),
    })
}
/// The models an Ollama server at `host` has pulled (`GET /api/tags`), asked once within `timeout`: what
/// `ragtester init` offers. An unreachable server is an error the caller may take as "none".
pub async fn installed_models(
    host: &str,
    timeout: std::time::Duration,
    limits: &ragtester_core::Limits,
) -> Result<Vec<String>> {
    let url = format!("{}/api/tags", normalise_host(host));
    let tags = ragtester_http::get_json(&url, timeout, limits).await?;
    Ok(tags["models"]
        .as_array()
        .map(|models| {
            models
                .iter()
                .filter_map(|m| m["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default())
}
