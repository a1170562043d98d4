//! A serving pool over scripted OpenAI-compatible servers on 127.0.0.1, one of them dead: every call is
//! answered, the dead replica is taken out after its failure and tried again once its cool-down is over,
//! the live replicas share the load, and a pool with no live replica fails with every replica's reason.

use ragtester_core::{ChatModel, ChatRequest, Message, ReplyFormat};
use ragtester_http::RetryPolicy;
use ragtester_llm::OpenAiChat;
use ragtester_models::PooledChat;
use ragtester_testkit::ScriptedServer;
use std::sync::Arc;
use std::time::Duration;

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system("Answer from the context."),
            Message::user("Context:\n[1] x\nQuestion: What is x?"),
        ],
        temperature: 0.0,
        max_tokens: Some(32),
        seed: None,
        format: ReplyFormat::Text,
        sample: 0,
        hint: None,
    }
}

fn replica(base: &str) -> (String, Arc<dyn ChatModel>) {
    let policy = RetryPolicy {
        max_attempts: 1,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
        max_retry_after: Duration::from_millis(10),
        timeout: Duration::from_secs(2),
    };
    let model = OpenAiChat::new("m".into(), base.to_string(), None, policy).unwrap();
    (base.to_string(), Arc::new(model))
}

/// A base URL nothing listens on: the port was bound, then released.
fn dead_base() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

#[tokio::test]
async fn a_dead_replica_is_taken_out_and_tried_again_later() {
    let a = ScriptedServer::start_in_background();
    let b = ScriptedServer::start_in_background();
    let dead = dead_base();
    let pool = PooledChat::new(
        "openai:m".into(),
        vec![
            replica(&dead),
            replica(&a.openai_base()),
            replica(&b.openai_base()),
        ],
    )
    .unwrap()
    .with_cool_down(Duration::from_millis(600));
    for _ in 0..20 {
        let reply = pool.chat(&request()).await.expect("the pool answers");
        assert!(reply.content.starts_with("echo:"), "{}", reply.content);
    }
    let calls = pool.calls();
    assert_eq!(
        calls[0].calls, 1,
        "the dead replica is asked once, then left out: {calls:?}"
    );
    assert!(!calls[0].healthy);
    assert!(
        calls[1].calls >= 5 && calls[2].calls >= 5,
        "load is shared: {calls:?}"
    );
    assert_eq!(calls[1].calls + calls[2].calls, 20);

    // Once the cool-down is over the dead replica is tried again, fails, and is out for longer.
    tokio::time::sleep(Duration::from_millis(700)).await;
    for _ in 0..10 {
        pool.chat(&request()).await.expect("the pool answers");
    }
    assert_eq!(pool.calls()[0].calls, 2, "{:?}", pool.calls());
}

#[tokio::test]
async fn concurrent_calls_go_to_the_least_loaded_replica() {
    let slow = ScriptedServer::start_in_background();
    slow.set_latency(Duration::from_millis(300));
    let fast = ScriptedServer::start_in_background();
    let pool = Arc::new(
        PooledChat::new(
            "openai:m".into(),
            vec![replica(&slow.openai_base()), replica(&fast.openai_base())],
        )
        .unwrap(),
    );
    // Eight callers, each asking five times in a row: the slow replica holds its calls longer, so the
    // fast one, with fewer in flight, is chosen more often.
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let pool = pool.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..5 {
                pool.chat(&request()).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let calls = pool.calls();
    assert_eq!(calls[0].calls + calls[1].calls, 40);
    assert!(calls[1].calls > calls[0].calls * 2, "{calls:?}");
}

#[tokio::test]
async fn a_pool_with_no_live_replica_fails_naming_each() {
    let (one, two) = (dead_base(), dead_base());
    let pool = PooledChat::new("openai:m".into(), vec![replica(&one), replica(&two)]).unwrap();
    let err = format!("{:#}", pool.chat(&request()).await.unwrap_err());
    assert!(err.contains("every replica of `openai:m` failed"), "{err}");
    assert!(err.contains(&one) && err.contains(&two), "{err}");
    // Replicas serve one model: the pool's identity does not depend on their order.
    let flipped = PooledChat::new("openai:m".into(), vec![replica(&two), replica(&one)]).unwrap();
    assert_eq!(pool.identity(), flipped.identity());
    assert!(PooledChat::new("openai:m".into(), vec![]).is_err());
}
