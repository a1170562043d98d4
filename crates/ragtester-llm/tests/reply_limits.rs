//! Replies over a limit — nested past `json_depth`, larger than `reply_mb` — fail at once with the limit
//! named, never retried (the same request would bring the same reply) and never parsed.

use ragtester_core::Limits;
use ragtester_http::{HttpClient, RetryPolicy};
use ragtester_testkit::{Reply, ScriptedServer};
use serde_json::json;
use std::time::Duration;

fn client(settings: &[&str]) -> HttpClient {
    let policy = RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(20),
        max_retry_after: Duration::from_secs(1),
        timeout: Duration::from_secs(10),
    };
    let settings: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
    HttpClient::new(policy)
        .unwrap()
        .reading_under(Limits::default().with_overrides(&settings).unwrap())
}

#[tokio::test]
async fn a_reply_nested_past_json_depth_fails_once_with_the_limit_named() {
    let server = ScriptedServer::start().await;
    let deep = "[".repeat(200_000) + &"]".repeat(200_000);
    server.push(Reply::status(200, &deep));
    let error = client(&[])
        .post_json(&server.rag_url(), None, &json!({"question": "q"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("limit json_depth = 64 exceeded"), "{error}");
    assert!(error.contains("200000 levels"), "{error}");
    assert_eq!(server.seen().len(), 1, "not retried");
}

#[tokio::test]
async fn a_reply_larger_than_reply_mb_fails_once_with_the_limit_named() {
    let server = ScriptedServer::start().await;
    let big = json!({"result": {"answer": "x".repeat(3 * 1024 * 1024)}}).to_string();
    server.push(Reply::status(200, &big));
    let error = client(&["reply_mb=1"])
        .post_json(&server.rag_url(), None, &json!({"question": "q"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("limit reply_mb = 1 exceeded"), "{error}");
    assert_eq!(server.seen().len(), 1, "not retried");
    // Under the default limit the same reply is read whole.
    server.push(Reply::status(200, &big));
    let reply = client(&[])
        .post_json(&server.rag_url(), None, &json!({"question": "q"}))
        .await
        .unwrap();
    assert_eq!(
        reply["result"]["answer"].as_str().unwrap().len(),
        3 * 1024 * 1024
    );
}
