//! A structured reply cut at the token limit (`finish_reason: "length"`) is asked once more with twice the
//! room, and says so; the schema a server decodes under carries string bounds that make it fit the limit.

use ragtester_core::{ChatModel, ChatRequest, Message, OutputSchema, ReplyFormat, Role};
use ragtester_http::RetryPolicy;
use ragtester_llm::OpenAiChat;
use ragtester_testkit::{Reply, ScriptedServer};
use serde_json::json;
use std::time::Duration;

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message {
            role: Role::User,
            content: "Judge this.".into(),
        }],
        temperature: 0.0,
        max_tokens: Some(200),
        seed: None,
        format: ReplyFormat::Schema(OutputSchema {
            name: "verdict".into(),
            schema: json!({
                "type": "object",
                "properties": {
                    "verdict": { "type": "string", "enum": ["pass", "fail"] },
                    "reason": { "type": "string" }
                },
                "required": ["verdict", "reason"],
                "additionalProperties": false
            }),
        }),
        sample: 0,
        hint: None,
    }
}

fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(1),
        timeout: Duration::from_secs(10),
    }
}

#[tokio::test]
async fn a_reply_cut_at_the_limit_is_asked_again_with_room_and_noted() {
    let server = ScriptedServer::start().await;
    let cut = json!({
        "choices": [{"message": {"content": "{\"verdict\": \"pass\", \"reason\": \"the answer"}, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 200}
    });
    server.push(Reply::status(200, &cut.to_string()));
    server.push(Reply::Content(
        r#"{"verdict": "pass", "reason": "matches"}"#.into(),
    ));
    let policy = fast_policy();
    let model = OpenAiChat::new("m".into(), server.openai_base(), None, policy).unwrap();
    let reply = model.chat(&request()).await.unwrap();
    assert_eq!(reply.content, r#"{"verdict": "pass", "reason": "matches"}"#);
    assert!(
        reply.usage.completion_tokens >= 200,
        "the cut reply's tokens are counted: {:?}",
        reply.usage
    );
    assert_eq!(
        reply.notes,
        vec!["the reply stopped at the 200-token limit; asked again with 400"]
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].body["max_tokens"], 200);
    assert_eq!(seen[1].body["max_tokens"], 400);
    // The schema went out with the reason bounded to what the limit leaves, the enum untouched.
    let schema = &seen[0].body["response_format"]["json_schema"]["schema"];
    let bound = schema["properties"]["reason"]["maxLength"]
        .as_u64()
        .unwrap();
    assert!((16..200).contains(&bound), "{schema}");
    assert!(schema["properties"]["verdict"].get("maxLength").is_none());
}

#[tokio::test]
async fn ollama_replies_cut_at_the_limit_are_asked_again_too() {
    let server = ScriptedServer::start().await;
    let cut = json!({
        "message": {"role": "assistant", "content": "{\"verdict\": \"pass\", \"reason\": \"the"},
        "done": true, "done_reason": "length", "prompt_eval_count": 50, "eval_count": 200
    });
    server.push(Reply::status(200, &cut.to_string()));
    let whole = json!({
        "message": {"role": "assistant", "content": "{\"verdict\": \"pass\", \"reason\": \"ok\"}"},
        "done": true, "done_reason": "stop", "prompt_eval_count": 50, "eval_count": 12
    });
    server.push(Reply::status(200, &whole.to_string()));
    let policy = fast_policy();
    let model =
        ragtester_llm::OllamaChat::new("m:1b".into(), &server.addr.to_string(), policy).unwrap();
    let reply = model.chat(&request()).await.unwrap();
    assert_eq!(reply.content, r#"{"verdict": "pass", "reason": "ok"}"#);
    assert_eq!(reply.notes.len(), 1, "{:?}", reply.notes);
    assert_eq!(reply.usage.completion_tokens, 212, "both replies' tokens");
    let seen = server.seen();
    assert_eq!(seen[0].body["options"]["num_predict"], 200);
    assert_eq!(seen[1].body["options"]["num_predict"], 400);
    assert!(seen[0].body["format"]["properties"]["reason"]["maxLength"].is_u64());
}
