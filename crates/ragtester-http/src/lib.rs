//! The HTTP client every provider shares: JSON POST with a per-request timeout and retries with exponential
//! back-off and jitter that honour `Retry-After`. What is retried: connection failures, timeouts, 408, 429,
//! 5xx, and bodies that are not the JSON they claim to be (proxies truncate). What is not: other 4xx, which
//! a retry cannot fix. Requests in flight per client adapt: halved on 429, grown back on success; optional
//! requests- and tokens-per-minute limits hold requests back before they are sent.

mod blocking_bridge;
mod limit;
mod rate;
mod retry;

pub use blocking_bridge::Bridge;
pub use limit::AdaptiveLimit;
pub use rate::{RateLimits, Throttle};
pub use retry::{RetryPolicy, parse_retry_after};

use anyhow::{Result, anyhow};
use ragtester_core::Limits;
use ragtester_core::limits::exceeded;
use ragtester_core::secrets::redact;
use serde_json::Value;
use std::time::Duration;

/// A reqwest client builder with TLS ready: rustls over ring, installed as the process's provider the
/// first time (reqwest is built without a provider of its own; building a client without one panics).
pub fn client_builder() -> reqwest::ClientBuilder {
    static PROVIDER: std::sync::Once = std::sync::Once::new();
    PROVIDER.call_once(|| {
        // Err only when another provider was installed first, which then serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

pub struct HttpClient {
    client: reqwest::Client,
    policy: RetryPolicy,
    limit: AdaptiveLimit,
    throttle: Throttle,
    /// Reply size and JSON nesting a server may send (`reply_mb`, `json_depth`).
    input: Limits,
}

/// How hard one client may press its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientLimits {
    /// Requests in flight before any 429 says otherwise.
    pub max_in_flight: usize,
    pub rate: RateLimits,
}

impl Default for ClientLimits {
    fn default() -> Self {
        Self {
            max_in_flight: MAX_IN_FLIGHT,
            rate: RateLimits::default(),
        }
    }
}

/// Requests one provider may have in flight before any 429 says otherwise.
pub const MAX_IN_FLIGHT: usize = 64;

/// What every client of one command (or web job) is built with, read once by its front end: the retry
/// policy the environment sets and the limits replies are read under.
#[derive(Debug, Clone, Default)]
pub struct HttpSettings {
    pub policy: RetryPolicy,
    /// Reply size and JSON nesting a server may send (`reply_mb`, `json_depth`).
    pub replies: Limits,
}

impl HttpSettings {
    /// The environment's attempts and timeout over the default policy; replies under `replies`.
    pub fn new(environment: &ragtester_core::settings::Environment, replies: Limits) -> Self {
        Self {
            policy: RetryPolicy::from_environment(environment),
            replies,
        }
    }
}

enum Attempt {
    Done(Value),
    Retry {
        error: String,
        after: Option<Duration>,
    },
    Fatal(StatusError),
    /// A reply over a limit: asking again would bring the same.
    OverLimit(String),
}

/// A reply a retry cannot fix (a 4xx other than 408 and 429), kept typed so a provider can react to it
/// (fall back from structured output a server does not support).
#[derive(Debug, Clone)]
pub struct StatusError {
    pub url: String,
    pub status: u16,
    /// The start of the reply body.
    pub body: String,
}

impl std::fmt::Display for StatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reason = reqwest::StatusCode::from_u16(self.status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("");
        write!(
            f,
            "{}: HTTP {} {reason}: {}",
            self.url, self.status, self.body
        )
    }
}

impl std::error::Error for StatusError {}

/// A validation error about the request's own body — FastAPI/pydantic servers (llama-cpp-python) send
/// these, sometimes as HTTP 500: the same body will be refused again, so it is not retried.
fn rejects_the_request_body(body: &str) -> bool {
    body.contains("validation error") && (body.contains("('body',") || body.contains("[\"body\","))
}

impl HttpClient {
    /// How many requests this client currently lets into flight.
    pub fn in_flight_limit(&self) -> usize {
        self.limit.limit()
    }

    pub fn new(policy: RetryPolicy) -> Result<Self> {
        Self::with_limits(policy, ClientLimits::default())
    }

    /// A client under one command's settings, pressing its server no harder than `limits`.
    pub fn configured(settings: &HttpSettings, limits: ClientLimits) -> Result<Self> {
        Ok(Self::with_limits(settings.policy.clone(), limits)?.reading_under(settings.replies))
    }

    /// A client reading replies under the default limits.
    pub fn with_limits(policy: RetryPolicy, limits: ClientLimits) -> Result<Self> {
        let client = client_builder()
            .timeout(policy.timeout)
            .connect_timeout(policy.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| anyhow!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            client,
            policy,
            limit: AdaptiveLimit::new(limits.max_in_flight),
            throttle: Throttle::new(limits.rate),
            input: Limits::default(),
        })
    }

    /// The same client reading replies under `input` instead of the default limits.
    pub fn reading_under(mut self, input: Limits) -> Self {
        self.input = input;
        self
    }

    /// Whether a tokens-per-minute limit applies (callers then estimate each request's tokens).
    pub fn counts_tokens(&self) -> bool {
        self.throttle.counts_tokens()
    }

    /// POST `body` as JSON and return the JSON reply, retrying as the policy allows.
    pub async fn post_json(&self, url: &str, bearer: Option<&str>, body: &Value) -> Result<Value> {
        self.post_json_weighted(url, bearer, body, 0).await
    }

    /// [`Self::post_json`] for a request expected to use `tokens` tokens of a tokens-per-minute limit.
    pub async fn post_json_weighted(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: &Value,
        tokens: u32,
    ) -> Result<Value> {
        self.post_json_unless(url, bearer, body, tokens, |_| false)
            .await
    }

    /// [`Self::post_json_weighted`] where an error status whose body `is_final` holds is returned at once
    /// as a [`StatusError`], whatever its status: a server error that names the request's own fields (a
    /// validation error) will not change on a retry.
    pub async fn post_json_unless(
        &self,
        url: &str,
        bearer: Option<&str>,
        body: &Value,
        tokens: u32,
        is_final: fn(&str) -> bool,
    ) -> Result<Value> {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = bearer {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
        self.send_weighted(
            reqwest::Method::POST,
            url,
            &headers,
            Some(body.to_string()),
            tokens,
            is_final,
        )
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
        self.send_weighted(method, url, headers, body, 0, |_| false)
            .await
    }

    async fn send_weighted(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<String>,
        tokens: u32,
        is_final: fn(&str) -> bool,
    ) -> Result<Value> {
        let mut last = String::new();
        for attempt in 1..=self.policy.max_attempts {
            // Every attempt is a request the provider counts; wait for the rate before taking a place.
            self.throttle.admit(tokens).await;
            let (outcome, epoch) = {
                // Held only while the request is out: back-off waits do not occupy a place in flight.
                let slot = self.limit.acquire().await;
                let outcome = self
                    .attempt(method.clone(), url, headers, body.clone(), is_final)
                    .await;
                (outcome, slot.epoch())
            };
            match outcome {
                Attempt::Done(v) => {
                    self.limit.on_success();
                    return Ok(v);
                }
                Attempt::Fatal(e) => return Err(e.into()),
                Attempt::OverLimit(why) => return Err(anyhow!("{}: {why}", redact(url))),
                Attempt::Retry { error, after } => {
                    if error.starts_with("HTTP 429") {
                        self.limit.on_rate_limited(epoch);
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
        // A key may sit in the URL's query, and a server may echo the key it was sent.
        Err(anyhow!(
            "{}: gave up after {} attempts: {}",
            redact(url),
            self.policy.max_attempts,
            redact(&last)
        ))
    }

    async fn attempt(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(String, String)],
        body: Option<String>,
        is_final: fn(&str) -> bool,
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
            Err(e) => return transport_error(&e, "request"),
        };
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let after = header(reqwest::header::RETRY_AFTER).and_then(|v| parse_retry_after(&v));
        let content_type = header(reqwest::header::CONTENT_TYPE).unwrap_or_default();
        let status = response.status();
        let text = match read_capped(response, self.input.reply_bytes()).await {
            Ok(Some(t)) => t,
            Ok(None) => {
                return Attempt::OverLimit(exceeded(
                    "reply_mb",
                    self.input.reply_mb,
                    "the reply body is larger",
                ));
            }
            Err(e) => return transport_error(&e, "reading the reply"),
        };
        let reply = Arrived {
            status,
            after,
            content_type,
            text,
        };
        self.classify(url, reply, is_final)
    }

    /// What a reply that arrived means: done, asked again (408, 429, 5xx, a malformed body), over a
    /// limit, or final (a client error the server will repeat).
    fn classify(&self, url: &str, reply: Arrived, is_final: fn(&str) -> bool) -> Attempt {
        let Arrived {
            status,
            after,
            content_type,
            text,
        } = reply;
        let snippet: String = text.chars().take(300).collect();
        let fatal = || {
            Attempt::Fatal(StatusError {
                url: redact(url).into_owned(),
                status: status.as_u16(),
                body: redact(&snippet).into_owned(),
            })
        };
        if !status.is_success()
            && !matches!(status.as_u16(), 408 | 429)
            && (is_final(&text) || rejects_the_request_body(&text))
        {
            return fatal();
        }
        if status.as_u16() == 429 || status.as_u16() == 408 || status.is_server_error() {
            return Attempt::Retry {
                error: format!("HTTP {status}: {snippet}"),
                after,
            };
        }
        if !status.is_success() {
            return fatal();
        }
        match read_reply(&text, &self.input) {
            Ok(v) => Attempt::Done(v),
            Err(ReplyError::OverLimit(why)) => Attempt::OverLimit(why),
            Err(ReplyError::Malformed(e)) => Attempt::Retry {
                error: format!("malformed reply (content type `{content_type}`, {e}): {snippet}"),
                after: None,
            },
        }
    }
}

/// A reply as it arrived: status, `Retry-After`, content type and body.
struct Arrived {
    status: reqwest::StatusCode,
    after: Option<std::time::Duration>,
    content_type: String,
    text: String,
}

/// A request that failed before a reply arrived is asked again: "request timed out", "reading the reply
/// failed: …".
fn transport_error(e: &reqwest::Error, doing: &str) -> Attempt {
    let error = if e.is_timeout() {
        format!("{doing} timed out")
    } else {
        format!("{doing} failed: {e}")
    };
    Attempt::Retry { error, after: None }
}

/// One GET of a JSON document, asked once (no retry) within `timeout`, read under `limits`: for probes
/// such as "which models does this server have", where no answer is an answer.
pub async fn get_json(url: &str, timeout: std::time::Duration, limits: &Limits) -> Result<Value> {
    let client = client_builder().timeout(timeout).build()?;
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| anyhow!("GET {} failed: {e}", redact(url)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(anyhow!("GET {} answered {status}", redact(url)));
    }
    let max = limits.reply_mb * 1024 * 1024;
    let text = read_capped(response, max)
        .await?
        .ok_or_else(|| anyhow!("GET {}: the reply is over reply_mb", redact(url)))?;
    read_reply(&text, limits).map_err(|e| match e {
        ReplyError::OverLimit(why) => anyhow!("GET {}: {why}", redact(url)),
        ReplyError::Malformed(e) => anyhow!("GET {}: not JSON: {e}", redact(url)),
    })
}

/// The body as text, read chunk by chunk; `None` once it passes `max` bytes (nothing more is read).
async fn read_capped(mut response: reqwest::Response, max: u64) -> reqwest::Result<Option<String>> {
    if response.content_length().is_some_and(|n| n > max) {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if (body.len() + chunk.len()) as u64 > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(String::from_utf8_lossy(&body).into_owned()))
}

/// Why a reply body could not be read as JSON.
#[derive(Debug)]
pub enum ReplyError {
    /// Nested past `json_depth`: the same request would bring it again.
    OverLimit(String),
    /// Not JSON (a proxy cut it short, say): worth asking again.
    Malformed(serde_json::Error),
}

/// A reply body as JSON, its nesting checked against `limits` before the parser recurses into it. Every
/// provider's and target's HTTP reply is read here (the fuzz target `provider_reply` calls it).
pub fn read_reply(text: &str, limits: &Limits) -> std::result::Result<Value, ReplyError> {
    limits
        .check_json_depth(text, "the reply")
        .map_err(|e| ReplyError::OverLimit(e.to_string()))?;
    serde_json::from_str(text).map_err(ReplyError::Malformed)
}
