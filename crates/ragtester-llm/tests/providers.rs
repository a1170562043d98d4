//! The HTTP providers against a real scripted server on 127.0.0.1.

use ragtester_core::{ChatModel, ChatRequest, Message, OutputSchema, ReplyFormat};
use ragtester_http::{ClientLimits, RateLimits, RetryPolicy};
use ragtester_llm::endpoint::Endpoint;
use ragtester_llm::structured::StructuredOutput;
use ragtester_llm::{OllamaChat, OpenAiChat};
use ragtester_testkit::{Reply, ScriptedServer};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(20),
        max_delay: Duration::from_millis(50),
        max_retry_after: Duration::from_secs(5),
        timeout: Duration::from_millis(800),
    }
}

fn request(json: bool) -> ChatRequest {
    request_as(if json {
        ReplyFormat::Json
    } else {
        ReplyFormat::Text
    })
}

fn schema() -> OutputSchema {
    OutputSchema {
        name: "answer".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": { "answer": { "type": "string" } },
            "required": ["answer"],
            "additionalProperties": false
        }),
    }
}

/// The schema as it goes out under the requests' 64-token limit: its free-text string bounded to fit.
fn sent_schema() -> serde_json::Value {
    let schema = ragtester_core::reply_schema::bounded_for(&schema().schema, Some(64));
    let bound = schema["properties"]["answer"]["maxLength"]
        .as_u64()
        .unwrap();
    assert!((16..64).contains(&bound), "{schema}");
    schema
}

fn request_as(format: ReplyFormat) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system("Answer from the context."),
            Message::user("Context:\n[1] x\nQuestion: What is x?"),
        ],
        temperature: 0.2,
        max_tokens: Some(64),
        seed: Some(7),
        format,
        sample: 0,
        hint: None,
    }
}

fn openai(server: &ScriptedServer) -> OpenAiChat {
    OpenAiChat::new(
        "test-model".into(),
        server.openai_base(),
        Some("sk-test".into()),
        fast_policy(),
    )
    .unwrap()
}

#[tokio::test]
async fn openai_request_shape_and_reply() {
    let server = ScriptedServer::start().await;
    let reply = openai(&server).chat(&request(true)).await.unwrap();
    assert_eq!(reply.content, "echo: Question: What is x?");
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (11, 7)
    );
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(seen.headers["authorization"], "Bearer sk-test");
    assert!(
        seen.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    assert_eq!(seen.body["model"], "test-model");
    assert_eq!(seen.body["messages"][0]["role"], "system");
    assert_eq!(
        seen.body["messages"][1]["content"],
        "Context:\n[1] x\nQuestion: What is x?"
    );
    assert_eq!(seen.body["max_tokens"], 64);
    assert_eq!(seen.body["seed"], 7);
    assert_eq!(seen.body["response_format"]["type"], "json_object");
    assert!((seen.body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
}

#[tokio::test]
async fn rate_limits_honour_retry_after() {
    let server = ScriptedServer::start().await;
    server.push(Reply::too_many("1"));
    server.push(Reply::too_many("0"));
    let started = Instant::now();
    let reply = openai(&server).chat(&request(false)).await.unwrap();
    assert!(reply.content.starts_with("echo:"));
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited {:?}",
        started.elapsed()
    );
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn server_errors_and_malformed_bodies_are_retried() {
    let server = ScriptedServer::start().await;
    server.push(Reply::status(500, r#"{"error":"boom"}"#));
    server.push(Reply::Raw {
        status: 200,
        content_type: "application/json".into(),
        body: r#"{"choices": [{"mess"#.into(),
        retry_after: None,
    });
    let reply = openai(&server).chat(&request(false)).await.unwrap();
    assert!(reply.content.starts_with("echo:"));
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn persistent_failure_is_an_error_naming_the_cause() {
    let server = ScriptedServer::start().await;
    for _ in 0..3 {
        server.push(Reply::status(503, r#"{"error":"overloaded"}"#));
    }
    let err = format!(
        "{:#}",
        openai(&server).chat(&request(false)).await.unwrap_err()
    );
    assert!(
        err.contains("gave up after 3 attempts") && err.contains("503"),
        "{err}"
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = ScriptedServer::start().await;
    server.push(Reply::status(
        401,
        r#"{"error":{"message":"invalid api key"}}"#,
    ));
    let err = format!(
        "{:#}",
        openai(&server).chat(&request(false)).await.unwrap_err()
    );
    assert!(
        err.contains("401") && err.contains("invalid api key"),
        "{err}"
    );
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn wrong_content_type_and_missing_fields_are_reported() {
    let server = ScriptedServer::start().await;
    for _ in 0..3 {
        server.push(Reply::Raw {
            status: 200,
            content_type: "text/html".into(),
            body: "<html>proxy login</html>".into(),
            retry_after: None,
        });
    }
    let err = format!(
        "{:#}",
        openai(&server).chat(&request(false)).await.unwrap_err()
    );
    assert!(
        err.contains("malformed reply") && err.contains("text/html"),
        "{err}"
    );
    server.push(Reply::status(200, r#"{"choices": []}"#));
    let err = format!(
        "{:#}",
        openai(&server).chat(&request(false)).await.unwrap_err()
    );
    assert!(err.contains("no choices[0].message.content"), "{err}");
}

#[tokio::test]
async fn stalled_connections_time_out_and_are_retried() {
    let server = ScriptedServer::start().await;
    server.push(Reply::Stall(Duration::from_secs(3)));
    let started = Instant::now();
    let reply = openai(&server).chat(&request(false)).await.unwrap();
    assert!(reply.content.starts_with("echo:"));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn ollama_native_request_and_reply() {
    let server = ScriptedServer::start().await;
    let model =
        OllamaChat::new("qwen3:8b".into(), &server.addr.to_string(), fast_policy()).unwrap();
    let reply = model.chat(&request(true)).await.unwrap();
    assert_eq!(reply.content, "echo: Question: What is x?");
    assert_eq!(
        (reply.usage.prompt_tokens, reply.usage.completion_tokens),
        (13, 5)
    );
    let seen = &server.seen()[0];
    assert_eq!(seen.path, "/api/chat");
    assert_eq!(seen.body["stream"], false);
    assert_eq!(seen.body["format"], "json");
    assert_eq!(seen.body["options"]["num_predict"], 64);
    assert_eq!(seen.body["options"]["seed"], 7);
    assert!(seen.headers.get("authorization").is_none());
}

#[tokio::test]
async fn a_429_storm_halves_requests_in_flight_then_success_grows_them() {
    let server = ScriptedServer::start().await;
    for _ in 0..3 {
        server.push(Reply::too_many("0"));
    }
    let policy = RetryPolicy {
        max_attempts: 5,
        ..fast_policy()
    };
    let client = ragtester_http::HttpClient::new(policy).unwrap();
    let url = format!("{}/chat/completions", server.openai_base());
    let body =
        serde_json::json!({"model": "m", "messages": [{"role": "user", "content": "Question: q"}]});
    client.post_json(&url, None, &body).await.unwrap();
    let max = ragtester_http::MAX_IN_FLIGHT;
    // Three 429s: max → max/8; the success that ends the storm is the first of a new window.
    assert_eq!(client.in_flight_limit(), max / 8);
    for _ in 0..max / 8 {
        client.post_json(&url, None, &body).await.unwrap();
    }
    assert_eq!(client.in_flight_limit(), max / 8 + 1);
}

#[tokio::test]
async fn schemas_go_out_as_structured_output() {
    let server = ScriptedServer::start().await;
    openai(&server)
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    let format = &server.seen()[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "answer");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(format["json_schema"]["schema"], sent_schema());

    let ollama =
        OllamaChat::new("qwen3:8b".into(), &server.addr.to_string(), fast_policy()).unwrap();
    ollama
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(server.seen()[1].body["format"], sent_schema());
}

fn formats_sent(server: &ScriptedServer) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|r| match &r.body["response_format"]["type"] {
            Value::String(kind) => kind.clone(),
            _ => "none".to_string(),
        })
        .collect()
}

#[tokio::test]
async fn a_server_refusing_schemas_gets_json_objects_from_then_on() {
    let server = ScriptedServer::start().await;
    server.push(Reply::status(
        400,
        r#"{"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."}}"#,
    ));
    let table = std::sync::Arc::new(ragtester_llm::structured::StructuredTable::default());
    let model = openai(&server).sharing(table.clone());
    let reply = model
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert!(reply.content.starts_with("echo:"));
    model
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(
        formats_sent(&server),
        ["json_schema", "json_object", "json_object"]
    );
    // What was learned is shared by every client of the registry's table, and reported.
    let identity = model.identity();
    assert_eq!(
        table.learned()[&identity],
        StructuredOutput::JsonObjectWithSchema
    );
    openai(&server)
        .sharing(table.clone())
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(formats_sent(&server).last().unwrap(), "json_object");
    // Another registry's client (another command, a test of its own) has learned nothing: it starts at the
    // top of the ladder (the server, scripted to refuse once, now takes the schema).
    openai(&server)
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(formats_sent(&server).last().unwrap(), "json_schema");
    // Any other 400 is the caller's error, reported once and not retried.
    let server = ScriptedServer::start().await;
    server.push(Reply::status(
        400,
        r#"{"error":{"message":"messages must not be empty"}}"#,
    ));
    let err = format!(
        "{:#}",
        openai(&server)
            .chat(&request_as(ReplyFormat::Schema(schema())))
            .await
            .unwrap_err()
    );
    assert!(
        err.contains("HTTP 400") && err.contains("messages must not be empty"),
        "{err}"
    );
    assert_eq!(server.seen().len(), 1);
}

/// llama.cpp's server (llama-cpp-python 0.3) answers a JSON-schema request with HTTP 500 and a
/// validation error: a server error, but one no retry can fix.
#[tokio::test]
async fn a_server_error_naming_the_format_steps_down_at_once_without_retries() {
    let server = ScriptedServer::start().await;
    server.push(Reply::status(
        500,
        r#"{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "Input should be 'text' or 'json_object'", 'input': 'json_schema', 'ctx': {'expected': "'text' or 'json_object'"}}]","type":"internal_server_error"}}"#,
    ));
    let model = openai(&server);
    model
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(formats_sent(&server), ["json_schema", "json_object"]);
    // llama.cpp reads a schema beside json_object and constrains the reply to it.
    assert_eq!(
        server.seen()[1].body["response_format"]["schema"],
        sent_schema()
    );

    // A server that takes neither gets the schema in the prompt and no response_format at all.
    let server = ScriptedServer::start().await;
    server.push(Reply::status(500, "Input should be 'text'"));
    server.push(Reply::status(
        400,
        r#"{"error":"response_format.schema: unknown field"}"#,
    ));
    server.push(Reply::status(
        400,
        r#"{"error":"response_format is not supported"}"#,
    ));
    let model = openai(&server);
    model
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(
        formats_sent(&server),
        ["json_schema", "json_object", "json_object", "none"]
    );
    let seen = server.seen();
    assert_eq!(seen[1].body["response_format"]["schema"], sent_schema());
    assert!(seen[2].body["response_format"].get("schema").is_none());
    let last = &seen[3].body["messages"];
    let prompt = last.as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(prompt.contains("matching this JSON Schema"), "{prompt}");
    assert!(prompt.contains("\"answer\""), "{prompt}");

    // A validation error about another field of the body is final too, whatever its status: the same
    // request would be refused again.
    let server = ScriptedServer::start().await;
    server.push(Reply::status(
        500,
        r#"{"error":{"message":"1 validation error:\n  {'type': 'missing', 'loc': ('body', 'messages'), 'msg': 'Field required'}"}}"#,
    ));
    let err = format!(
        "{:#}",
        openai(&server)
            .chat(&request_as(ReplyFormat::Text))
            .await
            .unwrap_err()
    );
    assert!(
        err.contains("HTTP 500") && err.contains("Field required"),
        "{err}"
    );
    assert_eq!(server.seen().len(), 1);

    // A plain 500 that says nothing of the format is still retried, at the same step.
    let server = ScriptedServer::start().await;
    server.push(Reply::status(500, r#"{"error":"CUDA out of memory"}"#));
    openai(&server)
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(formats_sent(&server), ["json_schema", "json_schema"]);
}

#[tokio::test]
async fn ollama_steps_from_a_schema_to_json_to_the_prompt() {
    let server = ScriptedServer::start().await;
    server.push(Reply::status(
        400,
        r#"{"error":"invalid format: expected \"json\""}"#,
    ));
    let ollama =
        OllamaChat::new("llama3:8b".into(), &server.addr.to_string(), fast_policy()).unwrap();
    ollama
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    ollama
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    let formats: Vec<Value> = server
        .seen()
        .iter()
        .map(|r| r.body["format"].clone())
        .collect();
    assert_eq!(formats, [sent_schema(), json!("json"), json!("json")]);

    // A server that takes no format at all is asked with the schema in the prompt after one refusal of
    // "json": Ollama has no rung between a schema and "json" to spend a request on.
    let server = ScriptedServer::start().await;
    server.push(Reply::status(400, r#"{"error":"invalid format"}"#));
    server.push(Reply::status(400, r#"{"error":"invalid format"}"#));
    let ollama = OllamaChat::new("old:1b".into(), &server.addr.to_string(), fast_policy()).unwrap();
    ollama
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    let formats: Vec<Value> = server
        .seen()
        .iter()
        .map(|r| r.body["format"].clone())
        .collect();
    assert_eq!(formats, [sent_schema(), json!("json"), Value::Null]);
}

#[tokio::test]
async fn ollamas_openai_endpoint_takes_schemas() {
    // Ollama's OpenAI-compatible endpoint lives under /v1 of its host: `openai:` with that base URL.
    let server = ScriptedServer::start().await;
    let model = OpenAiChat::new(
        "qwen3:8b".into(),
        format!("{}/v1", server.ollama_host()),
        None,
        fast_policy(),
    )
    .unwrap();
    model
        .chat(&request_as(ReplyFormat::Schema(schema())))
        .await
        .unwrap();
    assert_eq!(server.seen()[0].path, "/v1/chat/completions");
    assert_eq!(formats_sent(&server), ["json_schema"]);
}

#[tokio::test]
async fn a_tokens_per_minute_limit_holds_requests_back() {
    let server = ScriptedServer::start().await;
    // 6,000 tokens a minute = 100 a second. Each request weighs its prompt plus a 3,000-token reply cap:
    // the first fits the minute's burst, the second must wait for about 0.6 s of refill.
    let model = OpenAiChat::at(
        "test-model".into(),
        Endpoint {
            base_url: server.openai_base(),
            api_key: None,
            limits: ClientLimits {
                rate: RateLimits {
                    requests_per_minute: None,
                    tokens_per_minute: Some(6000),
                },
                ..Default::default()
            },
        },
        fast_policy(),
    )
    .unwrap();
    let mut req = request(false);
    req.max_tokens = Some(3000);
    let started = Instant::now();
    model.chat(&req).await.unwrap();
    let first = started.elapsed();
    model.chat(&req).await.unwrap();
    assert!(first < Duration::from_millis(400), "{first:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.seen().len(), 2);
}
