//! The answer prompt of the pipeline under test (paper §3.4): answer only from the context, otherwise say
//! the information is not sufficient.

use ragtester_core::{Message, RetrievedContext, Role};
use ragtester_text::{detect_language, refusal_for};

/// The answer prompt's version, recorded in every run's manifest (with a hash of its text).
pub const ANSWER_PROMPT_VERSION: &str = "answer-v1";

/// The answer prompt's identity: its version and a hash of its text in both languages, so a changed prompt
/// is a different run even when nobody bumped the version.
pub fn answer_prompt_identity() -> String {
    let sample = |q: &str| answer_messages(q, &[], &[]);
    let rewrite = |q: &str| rewrite_messages(&[Message::user(q)], q);
    let text = (
        sample("{query}"),
        sample("{问题}"),
        rewrite("{query}"),
        rewrite("{问题}"),
    );
    format!(
        "{ANSWER_PROMPT_VERSION}#{}",
        ragtester_core::ids::stable_id("answer-prompt", &text)
    )
}

/// The answer prompt: the instruction, then a conversation's earlier turns (none for a single question),
/// then the context and the question.
pub fn answer_messages(
    query: &str,
    contexts: &[RetrievedContext],
    history: &[Message],
) -> Vec<Message> {
    let mut messages = answer_alone(query, contexts);
    let last = messages.pop().expect("the prompt ends with the question");
    messages.extend(history.iter().cloned());
    messages.push(last);
    messages
}

/// The rewriting prompt of the `rewrite` history mode: the conversation so far and its last question, to
/// be asked again so that it stands alone.
pub fn rewrite_messages(history: &[Message], query: &str) -> Vec<Message> {
    let transcript: String = history
        .iter()
        .map(|m| {
            let who = match (m.role, detect_language(query)) {
                (Role::User, "zh") => "用户",
                (_, "zh") => "助手",
                (Role::User, _) => "User",
                _ => "Assistant",
            };
            format!("{who}: {}\n", m.content)
        })
        .collect();
    if detect_language(query) == "zh" {
        vec![
            Message::system(
                "把对话中用户的最后一个问题改写成脱离对话也能看懂的问题：写出其中代词和省略所指的内容，\
                 不要回答问题。只输出改写后的问题。",
            ),
            Message::user(format!("对话：\n{transcript}\n最后一个问题：{query}")),
        ]
    } else {
        vec![
            Message::system(
                "Rewrite the user's last question so that it can be understood without the conversation: \
                 name whatever its pronouns and omissions refer to. Do not answer it. Reply with the \
                 rewritten question only.",
            ),
            Message::user(format!(
                "Conversation:\n{transcript}\nLast question: {query}"
            )),
        ]
    }
}

fn answer_alone(query: &str, contexts: &[RetrievedContext]) -> Vec<Message> {
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
