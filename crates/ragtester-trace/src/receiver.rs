//! An OTLP/HTTP trace receiver: `POST /v1/traces` with an `ExportTraceServiceRequest` as protobuf
//! (`application/x-protobuf`, what the SDKs' HTTP exporters send) or JSON (`application/json`). Spans are
//! kept only for the traces a run said it waits for, and handed over once their trace has gone quiet.
//!
//! It listens on a loopback address only: a run's traces are the local service's, and nothing else may
//! post into a run.

use anyhow::{Context, Result};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Router, extract::DefaultBodyLimit, extract::State, routing::post};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Spans by trace id, for the traces awaited; what arrives for any other trace is counted, not kept.
#[derive(Default)]
struct Inbox {
    awaited: HashMap<[u8; 16], Vec<Span>>,
    ignored: u64,
}

struct Shared {
    inbox: Mutex<Inbox>,
    arrived: Notify,
}

pub struct TraceReceiver {
    address: SocketAddr,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for TraceReceiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl TraceReceiver {
    /// Listen on 127.0.0.1:`port` (0: any free port; 4318 is OTLP/HTTP's own, where an SDK's exporter
    /// sends by default). Runs on the current Tokio runtime.
    pub fn start(port: u16, body_limit_bytes: usize) -> Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))
            .with_context(|| format!("cannot listen for traces on 127.0.0.1:{port}"))?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        let shared = Arc::new(Shared {
            inbox: Mutex::new(Inbox::default()),
            arrived: Notify::new(),
        });
        let app = Router::new()
            .route("/v1/traces", post(export))
            .layer(DefaultBodyLimit::max(body_limit_bytes))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self {
            address,
            shared,
            server,
        })
    }

    /// The base URL an exporter is given (`OTEL_EXPORTER_OTLP_ENDPOINT`); traces go to `/v1/traces` under it.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Keep the spans of this trace as they arrive (call before the request that makes them).
    pub fn expect(&self, trace_id: [u8; 16]) {
        let mut inbox = self
            .shared
            .inbox
            .lock()
            .expect("the inbox lock is never poisoned");
        inbox.awaited.entry(trace_id).or_default();
    }

    /// Spans of traces nobody waited for, so far (another service exporting to the same port).
    pub fn ignored(&self) -> u64 {
        self.shared.inbox.lock().expect("never poisoned").ignored
    }

    /// The spans of `trace_id`, once the trace is complete — the span the service made as the direct child
    /// of `parent` (the caller's span, which ends after everything the call did) has arrived, or, for a
    /// service that does not continue the caller's span, the trace has gone `quiet` after its first span —
    /// or when `wait` has passed, whichever comes first; the trace is then forgotten. Empty when the
    /// target sent nothing within `wait`.
    pub async fn collect(
        &self,
        (trace_id, parent): ([u8; 16], [u8; 8]),
        wait: Duration,
        quiet: Duration,
    ) -> Vec<Span> {
        use tokio::time::{Instant, timeout_at};
        let deadline = Instant::now() + wait;
        let (mut count, mut changed) = (0, Instant::now());
        loop {
            // Interest is registered before the count is read, so an arrival in between still wakes us.
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            let now_count = self.count(&trace_id);
            if now_count != count {
                (count, changed) = (now_count, Instant::now());
            }
            if count > 0 && self.has_child_of(&trace_id, &parent) {
                break;
            }
            let until = if count == 0 {
                deadline
            } else {
                (changed + quiet).min(deadline)
            };
            if Instant::now() >= until {
                break;
            }
            // Woken by any trace's spans, or at the time to look again.
            let _ = timeout_at(until, arrived).await;
        }
        let mut inbox = self.shared.inbox.lock().expect("never poisoned");
        inbox.awaited.remove(&trace_id).unwrap_or_default()
    }

    fn has_child_of(&self, trace_id: &[u8; 16], parent: &[u8; 8]) -> bool {
        let inbox = self.shared.inbox.lock().expect("never poisoned");
        inbox
            .awaited
            .get(trace_id)
            .is_some_and(|spans| spans.iter().any(|s| s.parent_span_id == parent))
    }

    fn count(&self, trace_id: &[u8; 16]) -> usize {
        let inbox = self.shared.inbox.lock().expect("never poisoned");
        inbox.awaited.get(trace_id).map_or(0, Vec::len)
    }
}

/// `POST /v1/traces`: the request decoded by its content type, its spans filed by trace; the reply in
/// the same encoding, as the OTLP/HTTP specification asks.
async fn export(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let request = if json {
        serde_json::from_slice::<ExportTraceServiceRequest>(&body).map_err(|e| e.to_string())
    } else {
        ExportTraceServiceRequest::decode(body).map_err(|e| e.to_string())
    };
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("not an OTLP trace export: {e}"),
            )
                .into_response();
        }
    };
    {
        let mut inbox = shared.inbox.lock().expect("never poisoned");
        for span in request
            .resource_spans
            .into_iter()
            .flat_map(|r| r.scope_spans)
            .flat_map(|s| s.spans)
        {
            let Ok(id) = <[u8; 16]>::try_from(span.trace_id.as_slice()) else {
                inbox.ignored += 1;
                continue;
            };
            match inbox.awaited.get_mut(&id) {
                Some(spans) => spans.push(span),
                None => inbox.ignored += 1,
            }
        }
    }
    shared.arrived.notify_waiters();
    let reply = ExportTraceServiceResponse {
        partial_success: None,
    };
    if json {
        (
            [(header::CONTENT_TYPE, "application/json")],
            serde_json::to_vec(&reply).unwrap_or_else(|_| b"{}".to_vec()),
        )
            .into_response()
    } else {
        (
            [(header::CONTENT_TYPE, "application/x-protobuf")],
            reply.encode_to_vec(),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};

    fn request(trace: [u8; 16], names: &[&str]) -> ExportTraceServiceRequest {
        ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: names
                        .iter()
                        .enumerate()
                        .map(|(i, name)| Span {
                            trace_id: trace.to_vec(),
                            span_id: vec![i as u8 + 1; 8],
                            name: name.to_string(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }

    #[tokio::test]
    async fn protobuf_and_json_exports_are_filed_by_trace_and_strangers_ignored() {
        let receiver = TraceReceiver::start(0, 1 << 20).unwrap();
        let http = ragtester_http::client_builder().build().unwrap();
        let url = format!("{}/v1/traces", receiver.endpoint());
        let (mine, other) = ([7u8; 16], [9u8; 16]);
        receiver.expect(mine);
        let reply = http
            .post(&url)
            .header("content-type", "application/x-protobuf")
            .body(request(mine, &["retrieve", "generate"]).encode_to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        assert_eq!(reply.headers()["content-type"], "application/x-protobuf");
        // OTLP/JSON as the specification writes it: hex ids, camelCase, 64-bit integers as strings.
        let json = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
            {"traceId": hex::encode(mine), "spanId": "0102030405060708", "name": "rerank",
             "startTimeUnixNano": "1000000", "endTimeUnixNano": "3000000", "kind": 1,
             "attributes": [{"key": "llm.token_count.prompt", "value": {"intValue": "12"}}]},
            {"traceId": hex::encode(other), "spanId": "0102030405060709", "name": "stranger"}
        ]}]}]});
        let reply = http
            .post(&url)
            .header("content-type", "application/json")
            .body(json.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200, "{}", reply.text().await.unwrap());
        let spans = receiver
            .collect(
                (mine, [0; 8]),
                Duration::from_secs(2),
                Duration::from_millis(50),
            )
            .await;
        let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["retrieve", "generate", "rerank"]);
        assert_eq!(spans[2].end_time_unix_nano, 3_000_000);
        assert_eq!(receiver.ignored(), 1);
        let garbage = http
            .post(&url)
            .header("content-type", "application/json")
            .body("{not json")
            .send()
            .await
            .unwrap();
        assert_eq!(garbage.status(), 400);
    }

    #[tokio::test]
    async fn a_trace_that_never_comes_is_empty_after_the_wait() {
        let receiver = TraceReceiver::start(0, 1 << 20).unwrap();
        receiver.expect([3; 16]);
        let started = std::time::Instant::now();
        let spans = receiver
            .collect(
                ([3; 16], [1; 8]),
                Duration::from_millis(200),
                Duration::from_millis(50),
            )
            .await;
        assert!(spans.is_empty());
        assert!(started.elapsed() >= Duration::from_millis(200));
    }
}

#[cfg(test)]
mod completion_tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans};

    /// The service's span under the caller's ends the call: the trace is handed over at once, not after
    /// a quiet period.
    #[tokio::test]
    async fn the_caller_s_child_span_completes_the_trace() {
        let receiver = TraceReceiver::start(0, 1 << 20).unwrap();
        let (trace, parent) = ([5u8; 16], [8u8; 8]);
        receiver.expect(trace);
        let root = Span {
            trace_id: trace.to_vec(),
            span_id: vec![1; 8],
            parent_span_id: parent.to_vec(),
            name: "rag".into(),
            ..Default::default()
        };
        let body = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![ScopeSpans {
                    spans: vec![root],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        let http = ragtester_http::client_builder().build().unwrap();
        http.post(format!("{}/v1/traces", receiver.endpoint()))
            .header("content-type", "application/x-protobuf")
            .body(body.encode_to_vec())
            .send()
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let spans = receiver
            .collect(
                (trace, parent),
                Duration::from_secs(5),
                Duration::from_secs(3),
            )
            .await;
        assert_eq!(spans.len(), 1);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
    }
}
