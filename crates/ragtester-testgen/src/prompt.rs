//! The question-writing prompt, in English and Chinese, chosen by the language the question must be in.
//! The rules are the paper's: clear questions, different aspects of the document, never answerable by yes
//! or no, each with an expected answer and keywords.

use ragtester_core::chat::QuestionKind;
use ragtester_core::{Message, OutputSchema};

pub const PROMPT_VERSION: &str = "question-v1";

const SYSTEM_EN: &str = "You write test questions for a retrieval-augmented question-answering system. \
Rules: the question must be clear and self-contained; it must not be answerable by yes or no; it tests the \
given section only. Reply with one JSON object: {\"question\": string, \"answer\": string, \"keywords\": [string]} \
where answer quotes the supporting sentences of the section and keywords are the key terms a correct answer contains.";

const SYSTEM_ZH: &str = "你为检索增强问答系统编写测试问题。规则：问题清晰且自成一体；不能用“是”或“否”回答；只考察给定章节。\
只回复一个 JSON 对象：{\"question\": 字符串, \"answer\": 字符串, \"keywords\": [字符串]}，\
answer 引用章节中支持答案的句子，keywords 是正确答案必须包含的关键术语。";

pub fn messages(kind: QuestionKind, title: &str, section: &str, language: &str) -> Vec<Message> {
    let zh = language == "zh";
    let task = match (kind, zh) {
        (QuestionKind::Answerable, false) => "Write one question that this section answers.",
        (QuestionKind::Complex, false) => {
            "Write one question that needs several sentences of this section to answer."
        }
        (QuestionKind::Unanswerable, false) => {
            "Write one question on this document's topic that the document does NOT answer; \
            its answer must be \"The information is not sufficient to answer this question.\" and keywords empty."
        }
        (QuestionKind::Answerable, true) => "写一个本章节能够回答的问题。",
        (QuestionKind::Complex, true) => "写一个需要综合本章节多句话才能回答的问题。",
        (QuestionKind::Unanswerable, true) => {
            "写一个与文档主题相关、但文档没有回答的问题；answer 必须是“信息不足以回答此问题。”，keywords 为空。"
        }
    };
    let user = if zh {
        format!("文档：《{title}》\n任务：{task}\n问题语言：中文\n\n章节：\n{section}")
    } else {
        format!(
            "Document: \"{title}\"\nTask: {task}\nQuestion language: English\n\nSection:\n{section}"
        )
    };
    vec![
        Message::system(if zh { SYSTEM_ZH } else { SYSTEM_EN }),
        Message::user(user),
    ]
}

/// The reply's JSON schema, for providers with structured output (OpenAI's strict subset).
pub fn question_schema() -> OutputSchema {
    OutputSchema {
        name: "test_question".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {
                "question": { "type": "string" },
                "answer": { "type": "string" },
                "keywords": { "type": "array", "items": { "type": "string" } }
            },
            "required": ["question", "answer", "keywords"],
            "additionalProperties": false
        }),
    }
}
