//! The judge prompt, in the language of the case: the paper's five criteria with its rating scale, and the
//! spec's rubric with its negative-test rule.

use ragtester_core::{Message, OutputSchema, TestCase};
use serde_json::{Value, json};

pub const JUDGE_PROMPT_VERSION: &str = "judge-v1";

const SCHEMA: &str = r#"{"criteria": {"faithfulness": {"rating": "True|Partially|False", "reason": "..."}, "relevance": {...}, "completeness": {...}, "clarity": {...}, "keyword_match": {...}}, "rubric": {"correctness": {"score": 1-5, "reason": "..."}, "completeness": {...}, "honesty": {...}}}"#;

pub fn judge_messages(case: &TestCase, answer: &str, contexts: &[String]) -> Vec<Message> {
    let context = contexts.join("\n---\n");
    let keywords = case.keywords.join(", ");
    if case.language == "zh" {
        vec![
            Message::system(format!(
                "你是一名 RAG 系统测试裁判。按五个准则评价【系统回答】：忠实度（与标准答案和检索上下文一致，无编造；额外的正确且有依据的细节不扣分）、\
                 相关性、完整性、清晰度、关键词匹配，每项为 True、Partially 或 False 并给出理由；另按 1–5 分给出正确性、完整性、诚实度。\
                 特别规则：若标准答案是信息不足/未提及，而系统回答了未找到相关信息，给 5 分。只输出 JSON：{SCHEMA}"
            )),
            Message::user(format!(
                "【问题类型】: {}\n【用户问题】: {}\n【标准答案】: {}\n【关键词】: {keywords}\n【检索上下文】:\n{context}\n【系统回答】: {answer}",
                case.category.as_str(),
                case.query,
                case.expected_answer
            )),
        ]
    } else {
        vec![
            Message::system(format!(
                "You judge answers of a RAG system. Rate the system answer on five criteria: faithfulness (consistent with \
                 the expected answer and the retrieved context, nothing invented; extra correct, grounded detail is not \
                 penalised), relevance, completeness, clarity, keyword match — each True, Partially or False with a reason. \
                 Also score correctness, completeness and honesty from 1 to 5. Special rule: if the expected answer says the \
                 information is absent and the system says it found no relevant information, score 5. Reply with JSON only: {SCHEMA}"
            )),
            Message::user(format!(
                "Category: {}\nQuestion: {}\nExpected answer: {}\nKeywords: {keywords}\nRetrieved context:\n{context}\nSystem answer: {answer}",
                case.category.as_str(),
                case.query,
                case.expected_answer
            )),
        ]
    }
}

/// The reply's JSON schema, for providers with structured output: the five criteria and the rubric, every
/// field required (OpenAI's strict subset).
pub fn judge_schema() -> OutputSchema {
    let rating = json!({
        "type": "object",
        "properties": {
            "rating": { "type": "string", "enum": ["True", "Partially", "False"] },
            "reason": { "type": "string" }
        },
        "required": ["rating", "reason"],
        "additionalProperties": false
    });
    let score = json!({
        "type": "object",
        "properties": {
            "score": { "type": "integer", "enum": [1, 2, 3, 4, 5] },
            "reason": { "type": "string" }
        },
        "required": ["score", "reason"],
        "additionalProperties": false
    });
    let object = |names: &[&str], item: &Value| {
        json!({
            "type": "object",
            "properties": names.iter().map(|n| (n.to_string(), item.clone())).collect::<serde_json::Map<_, _>>(),
            "required": names,
            "additionalProperties": false
        })
    };
    OutputSchema {
        name: "judge_verdict".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "criteria": object(&["faithfulness", "relevance", "completeness", "clarity", "keyword_match"], &rating),
                "rubric": object(&["correctness", "completeness", "honesty"], &score)
            },
            "required": ["criteria", "rubric"],
            "additionalProperties": false
        }),
    }
}

/// The follow-up after an unreadable reply: what was wrong, and the shape again.
pub fn reask_message(problem: &str, zh: bool) -> Message {
    if zh {
        Message::user(format!(
            "无法读取你的回复（{problem}）。只输出一个 JSON 对象：{SCHEMA}"
        ))
    } else {
        Message::user(format!(
            "Your reply could not be read ({problem}). Reply with one JSON object only: {SCHEMA}"
        ))
    }
}
