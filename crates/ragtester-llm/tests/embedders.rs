//! HTTP embedders and rerankers against a real scripted server on 127.0.0.1: request shapes, batching,
//! ordering, retries on 429 / 500, and malformed replies that must fail rather than poison an index.

use ragtester_core::{EmbedKind, Embedder, Reranker};
use ragtester_http::RetryPolicy;
use ragtester_llm::{HttpEmbedder, HttpReranker, LlmReranker, OpenAiChat};
use ragtester_testkit::{Reply, ScriptedServer, toy_vector};
use std::sync::Arc;
use std::time::Duration;

fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(30),
        max_retry_after: Duration::from_secs(2),
        timeout: Duration::from_millis(800),
    }
}

fn normalised(text: &str) -> Vec<f32> {
    let v = toy_vector(text);
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    v.iter().map(|x| (x / norm) as f32).collect()
}

fn close(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-6)
}

#[test]
fn openai_embeddings_are_batched_ordered_and_normalised() {
    let server = ScriptedServer::start_in_background();
    let e = HttpEmbedder::openai(
        "text-embedding-3-small".into(),
        &server.openai_base(),
        Some("sk-test".into()),
        fast_policy(),
    )
    .unwrap();
    assert_eq!(e.dimension(), 8);
    assert!(
        e.id()
            .starts_with("openai:text-embedding-3-small@http://127.0.0.1:")
    );
    let texts: Vec<String> = (0..70).map(|i| format!("passage number {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = e.embed(&refs, EmbedKind::Passage).unwrap();
    assert_eq!(vectors.len(), 70);
    for (t, v) in texts.iter().zip(&vectors) {
        assert!(close(v, &normalised(t)), "{t}");
    }
    let seen = server.seen();
    // The probe, then 64 + 6.
    assert_eq!(seen.len(), 3);
    let mut sizes: Vec<usize> = seen[1..]
        .iter()
        .map(|s| s.body["input"].as_array().unwrap().len())
        .collect();
    sizes.sort();
    assert_eq!(sizes, vec![6, 64]);
    assert!(seen.iter().all(|s| s.path == "/v1/embeddings"));
    assert_eq!(seen[1].body["model"], "text-embedding-3-small");
    assert_eq!(seen[1].headers["authorization"], "Bearer sk-test");
}

#[test]
fn ollama_embed_speaks_api_embed() {
    let server = ScriptedServer::start_in_background();
    let e = HttpEmbedder::ollama("bge-m3".into(), &server.ollama_host(), fast_policy()).unwrap();
    let v = e.embed(&["保修期", "valve"], EmbedKind::Query).unwrap();
    assert!(close(&v[0], &normalised("保修期")));
    assert!(close(&v[1], &normalised("valve")));
    let seen = server.seen();
    assert_eq!(seen.last().unwrap().path, "/api/embed");
    assert_eq!(seen.last().unwrap().body["model"], "bge-m3");
}

#[test]
fn rate_limits_and_server_errors_are_retried_then_reported() {
    let server = ScriptedServer::start_in_background();
    let e = HttpEmbedder::openai("m".into(), &server.openai_base(), None, fast_policy()).unwrap();
    server.push(Reply::too_many("0"));
    server.push(Reply::status(500, r#"{"error":"busy"}"#));
    let v = e.embed(&["retried"], EmbedKind::Passage).unwrap();
    assert!(close(&v[0], &normalised("retried")));
    for _ in 0..3 {
        server.push(Reply::status(503, r#"{"error":"down"}"#));
    }
    let err = format!("{:#}", e.embed(&["x"], EmbedKind::Passage).unwrap_err());
    assert!(err.contains("gave up after 3 attempts"), "{err}");
    // 401 is not retried.
    server.push(Reply::status(401, r#"{"error":"bad key"}"#));
    let before = server.seen().len();
    assert!(e.embed(&["x"], EmbedKind::Passage).is_err());
    assert_eq!(server.seen().len(), before + 1);
}

#[test]
fn malformed_replies_fail_instead_of_poisoning_the_index() {
    let server = ScriptedServer::start_in_background();
    let e = HttpEmbedder::openai("m".into(), &server.openai_base(), None, fast_policy()).unwrap();
    for (body, expect) in [
        // One vector for two inputs.
        (
            r#"{"data": [{"index": 0, "embedding": [1, 2, 3, 4, 5, 6, 7, 8]}]}"#,
            "1 vectors for 2 inputs",
        ),
        // The wrong dimension.
        (
            r#"{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1, 2]}]}"#,
            "dimension 2",
        ),
        // Not numbers.
        (
            r#"{"data": [{"index": 0, "embedding": ["a"]}, {"index": 1, "embedding": [1]}]}"#,
            "non-number",
        ),
        (r#"{"object": "list"}"#, "no data array"),
    ] {
        server.push(Reply::Content(body.into()));
        let err = format!(
            "{:#}",
            e.embed(&["a", "b"], EmbedKind::Passage).unwrap_err()
        );
        assert!(err.contains(expect), "{expect}: {err}");
    }
    // An unreachable server fails at construction, naming the URL.
    let err = HttpEmbedder::openai(
        "m".into(),
        "http://127.0.0.1:9/v1",
        None,
        RetryPolicy {
            max_attempts: 1,
            ..fast_policy()
        },
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("127.0.0.1:9"), "{err}");
}

#[test]
fn rerank_endpoint_scores_in_input_order() {
    let server = ScriptedServer::start_in_background();
    let r = HttpReranker::new(&format!("http://{}/rerank", server.addr), fast_policy()).unwrap();
    let scores = r
        .score(
            "relief valve pressure",
            &["motor", "relief valve", "relief valve pressure"],
        )
        .unwrap();
    assert_eq!(scores, vec![0.0, 2.0, 3.0]);
    let seen = server.seen();
    assert_eq!(seen[0].body["texts"][2], "relief valve pressure");
    assert_eq!(seen[0].body["query"], "relief valve pressure");
    server.push(Reply::Content(r#"[{"index": 0, "score": 1.0}]"#.into()));
    let err = format!("{:#}", r.score("q", &["a", "b"]).unwrap_err());
    assert!(err.contains("passage 1 was not scored"), "{err}");
    assert!(r.score("q", &[]).unwrap().is_empty());
}

#[test]
fn llm_reranker_grades_each_passage_through_the_chat_api() {
    let server = ScriptedServer::start_in_background();
    let chat = OpenAiChat::new("grader".into(), server.openai_base(), None, fast_policy()).unwrap();
    let r = LlmReranker::new(Arc::new(chat)).unwrap();
    server.push(Reply::Content("8".into()));
    server.push(Reply::Content("8".into()));
    let scores = r.score("q", &["a", "b"]).unwrap();
    assert_eq!(scores, vec![0.8, 0.8]);
    let seen = server.seen();
    assert!(
        seen[0].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Passage:")
    );
    server.push(Reply::Content("I cannot say".into()));
    server.push(Reply::Content("I cannot say".into()));
    let err = format!("{:#}", r.score("q", &["a", "b"]).unwrap_err());
    assert!(err.contains("no grade"), "{err}");
}
