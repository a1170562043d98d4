//! The answer prompt of the pipeline under test (paper §3.4): answer only from the context, otherwise say
//! the information is not sufficient.

use ragtester_core::{Message, RetrievedContext};
use ragtester_text::{detect_language, refusal_for};

/// The answer prompt's version, recorded in every run's manifest (with a hash of its text).
pub const ANSWER_PROMPT_VERSION: &str = "answer-v1";

/// The answer prompt's identity: its version and a hash of its text in both languages, so a changed prompt
/// is a different run even when nobody bumped the version.
pub fn answer_prompt_identity() -> String {
    let sample = |q: &str| answer_messages(q, &[]);
    let text = (sample("{query}"), sample("{问题}"));
    format!(
        "{ANSWER_PROMPT_VERSION}#{}",
        ragtester_core::ids::stable_id("answer-prompt", &text)
    )
}

pub fn answer_messages(query: &str, contexts: &[RetrievedContext]) -> Vec<Message> {
    let language = detect_language(query);
    let refusal = refusal_for(language);
    let context: String = contexts
        .iter()
        .map(|c| format!("[{}] {}\n", c.rank, c.text))
        .collect();
    if language == "zh" {
        vec![
            Message::system(format!(
                "你是一个问答助手。只根据给定的上下文回答问题。如果上下文没有足够信息，只回答：{refusal}"
            )),
            Message::user(format!("上下文：\n{context}\n问题：{query}")),
        ]
    } else {
        vec![
            Message::system(format!(
                "You are a question-answering assistant. Answer only from the given context. \
                 If the context does not hold enough information, reply exactly: {refusal}"
            )),
            Message::user(format!("Context:\n{context}\nQuestion: {query}")),
        ]
    }
}
