//! The HTTP client every provider shares: JSON POST with a per-request timeout and retries with exponential
//! back-off and jitter that honour `Retry-After`. What is retried: connection failures, timeouts, 408, 429,
//! 5xx, and bodies that are not the JSON they claim to be (proxies truncate). What is not: other 4xx, which
//! a retry cannot fix. Requests in flight per client adapt: halved on 429, grown back on success.

mod limit;
mod retry;

pub use limit::AdaptiveLimit;
pub use retry::{RetryPolicy, parse_retry_after};

use anyhow::{Result, anyhow};
use serde_json::Value;
use std::time::Duration;

pub struct HttpClient {
    client: reqwest::Client,
    policy: RetryPolicy,
    limit: AdaptiveLimit,
}

/// Requests one provider may have in flight before any 429 says otherwise.
pub const MAX_IN_FLIGHT: usize = 64;

enum Attempt {
    Done(Value),
    Retry {
        error: String,
        after: Option<Duration>,
    },
    Fatal(String),
}

impl HttpClient {
    /// How many requests this client currently lets into flight.
    pub fn in_flight_limit(&self) -> usize {
        self.limit.limit()
    }

    pub fn new(policy: RetryPolicy) -> Result<Self> {
        let client = reqwest::Client::builder()
            .timeout(policy.timeout)
            .connect_timeout(policy.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| anyhow!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            client,
            policy,
            limit: AdaptiveLimit::new(MAX_IN_FLIGHT),
        })
    }

    /// POST `body` as JSON and return the JSON reply, retrying as the policy allows.
    pub async fn post_json(&self, url: &str, bearer: Option<&str>, body: &Value) -> Result<Value> {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = bearer {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
        self.send_json(reqwest::Method::POST, url, &headers, Some(body.to_string()))
            .await
    }

    /// Send a request with a ready body and return the JSON reply, retrying as the policy allows.
    pub async fn send_json(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<String>,
    ) -> Result<Value> {
        let mut last = String::new();
        for attempt in 1..=self.policy.max_attempts {
            let outcome = {
                // Held only while the request is out: back-off waits do not occupy a place in flight.
                let _slot = self.limit.acquire().await;
                self.attempt(method.clone(), url, headers, body.clone())
                    .await
            };
            match outcome {
                Attempt::Done(v) => {
                    self.limit.on_success();
                    return Ok(v);
                }
                Attempt::Fatal(e) => return Err(anyhow!("{url}: {e}")),
                Attempt::Retry { error, after } => {
                    if error.starts_with("HTTP 429") {
                        self.limit.on_rate_limited();
                        tracing::debug!(%url, limit = self.limit.limit(), "rate limited: fewer requests in flight");
                    }
                    last = error;
                    if attempt < self.policy.max_attempts {
                        let delay = self.policy.delay(attempt, after);
                        tracing::debug!(%url, attempt, ?delay, error = %last, "retrying");
                        tokio::time::sleep(delay).await;
                    }
                }
            }
        }
        Err(anyhow!(
            "{url}: gave up after {} attempts: {last}",
            self.policy.max_attempts
        ))
    }

    async fn attempt(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<String>,
    ) -> Attempt {
        let mut request = self.client.request(method, url);
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Attempt::Retry {
                    error: "request timed out".into(),
                    after: None,
                };
            }
            Err(e) => {
                return Attempt::Retry {
                    error: format!("request failed: {e}"),
                    after: None,
                };
            }
        };
        let status = response.status();
        let after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let text = match response.text().await {
            Ok(t) => t,
            Err(e) if e.is_timeout() => {
                return Attempt::Retry {
                    error: "reading the reply timed out".into(),
                    after: None,
                };
            }
            Err(e) => {
                return Attempt::Retry {
                    error: format!("reading the reply failed: {e}"),
                    after: None,
                };
            }
        };
        let snippet: String = text.chars().take(300).collect();
        if status.as_u16() == 429 || status.as_u16() == 408 || status.is_server_error() {
            return Attempt::Retry {
                error: format!("HTTP {status}: {snippet}"),
                after,
            };
        }
        if !status.is_success() {
            return Attempt::Fatal(format!("HTTP {status}: {snippet}"));
        }
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => Attempt::Done(v),
            Err(e) => Attempt::Retry {
                error: format!("malformed reply (content type `{content_type}`, {e}): {snippet}"),
                after: None,
            },
        }
    }
}
