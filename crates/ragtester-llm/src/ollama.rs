//! Ollama's native chat API (`POST {OLLAMA_HOST}/api/chat`, not streamed). `OLLAMA_HOST` may omit the scheme,
//! as Ollama itself allows; the default is `http://127.0.0.1:11434`.

use crate::http::{HttpClient, RetryPolicy};
use crate::openai::snippet;
use anyhow::{Result, anyhow};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, Usage};
use serde_json::{Value, json};

pub struct OllamaChat {
    model: String,
    host: String,
    http: HttpClient,
}

/// `OLLAMA_HOST`, Ollama's own default when unset.
pub(crate) fn ollama_host_env() -> String {
    std::env::var("OLLAMA_HOST").unwrap_or_else(|_| "127.0.0.1:11434".into())
}

pub fn normalise_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    }
}

impl OllamaChat {
    pub fn new(model: String, host: &str, policy: RetryPolicy) -> Result<Self> {
        Ok(Self {
            model,
            host: normalise_host(host),
            http: HttpClient::new(policy)?,
        })
    }

    pub fn from_env(model: String) -> Result<Self> {
        Self::new(model, &ollama_host_env(), RetryPolicy::from_env()?)
    }

    pub fn body(&self, request: &ChatRequest) -> Value {
        let mut options = json!({ "temperature": request.temperature });
        if let Some(m) = request.max_tokens {
            options["num_predict"] = json!(m);
        }
        if let Some(s) = request.seed {
            options["seed"] = json!(s);
        }
        let mut body = json!({
            "model": self.model,
            "messages": request.messages,
            "stream": false,
            "options": options,
        });
        if request.json {
            body["format"] = json!("json");
        }
        body
    }
}

#[async_trait::async_trait]
impl ChatModel for OllamaChat {
    fn name(&self) -> String {
        format!("ollama:{}", self.model)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let url = format!("{}/api/chat", self.host);
        let reply = self.http.post_json(&url, None, &self.body(request)).await?;
        let content = reply["message"]["content"]
            .as_str()
            .ok_or_else(|| anyhow!("{url}: reply has no message.content: {}", snippet(&reply)))?
            .to_string();
        Ok(ChatResponse {
            content,
            cached: false,
            usage: Usage {
                prompt_tokens: reply["prompt_eval_count"].as_u64().unwrap_or(0),
                completion_tokens: reply["eval_count"].as_u64().unwrap_or(0),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hosts_gain_a_scheme() {
        assert_eq!(
            super::normalise_host("127.0.0.1:11434"),
            "http://127.0.0.1:11434"
        );
        assert_eq!(
            super::normalise_host("https://x.example/"),
            "https://x.example"
        );
    }
}
