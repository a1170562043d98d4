//! A reply body from a model provider or a target service: read as JSON under the limits, then as an
//! OpenAI chat completion, an Ollama chat reply and a target's reply by JSON pointers. Errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_core::Limits;
use ragtester_core::config::TargetSettings;
use ragtester_http::read_reply;
use std::sync::OnceLock;

fn target() -> &'static TargetSettings {
    static TARGET: OnceLock<TargetSettings> = OnceLock::new();
    TARGET.get_or_init(|| {
        serde_json::from_value(serde_json::json!({
            "name": "fuzz",
            "type": "http",
            "url": "http://127.0.0.1:1/rag",
            "answer_pointer": "/result/answer",
            "contexts_pointer": "/result/contexts",
            "context_text_pointer": "/text",
        }))
        .expect("valid target settings")
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(reply) = read_reply(&text, &Limits::default()) {
        let _ = ragtester_llm::openai::response_of(&reply);
        let _ = ragtester_llm::ollama::response_of(&reply);
        let _ = ragtester_llm::rag_target::extract(target(), &reply);
    }
});
