//! The judge prompt, in the language of the case: the paper's five criteria with its rating scale, and the
//! spec's rubric with its negative-test rule.

use ragtester_core::prompt_template::PromptTemplates;
use ragtester_core::{Message, OutputSchema, TestCase};
use serde_json::{Value, json};
use std::path::Path;

pub const JUDGE_PROMPT_VERSION: &str = "judge-v4";

/// What the shape description in prompts says (the schema itself goes to providers separately).
const SCHEMA: &str = r#"{"criteria": {"faithfulness": {"rating": "True|Partially|False|NotApplicable", "reason": "..."}, "relevance": {...}, "completeness": {...}, "clarity": {...}, "keyword_match": {...}}, "rubric": {"correctness": {"score": 1-5, "reason": "..."}, "completeness": {...}, "honesty": {...}}}"#;

/// The judge prompt templates, English and Chinese: the built-in ones (`prompts/judge.*.j2`) or a user's.
#[derive(Debug, Clone)]
pub struct JudgePrompts {
    templates: PromptTemplates,
    /// `judge-v4`, or `custom-` and a hash of the user's templates.
    pub version: String,
}

impl Default for JudgePrompts {
    fn default() -> Self {
        Self {
            templates: PromptTemplates::builtin(
                "judge",
                include_str!("../../prompts/judge.en.j2"),
                include_str!("../../prompts/judge.zh.j2"),
                JUDGE_PROMPT_VERSION,
            ),
            version: JUDGE_PROMPT_VERSION.into(),
        }
    }
}

impl JudgePrompts {
    /// `judge.en.j2` and/or `judge.zh.j2` from a folder, the built-in template for a missing one; checked
    /// at load, so a broken template fails before any judge is called.
    pub fn from_dir(dir: &Path) -> anyhow::Result<Self> {
        let templates = Self::default()
            .templates
            .override_from(dir, &sample_values())?;
        Ok(Self {
            version: templates.version.clone(),
            templates,
        })
    }

    pub fn messages(
        &self,
        case: &TestCase,
        answer: &str,
        contexts: &[String],
        history: &[Message],
    ) -> Vec<Message> {
        let history = history
            .iter()
            .map(|m| match m.role {
                ragtester_core::Role::User => format!("Q: {}", m.content),
                _ => format!("A: {}", m.content),
            })
            .collect::<Vec<_>>()
            .join("\n");
        let values = Values {
            history,
            category: case.category.as_str(),
            query: &case.query,
            expected_answer: &case.expected_answer,
            keywords: case.keywords.join(", "),
            context: contexts.join("\n---\n"),
            answer,
            schema: SCHEMA,
            false_premise: case.false_premise.as_deref().unwrap_or(""),
            must_not_contain: case.must_not_contain.join(", "),
        };
        // Templates were rendered at load; a failure now can only come from the values, so say so in-band.
        self.templates
            .messages(&case.language, &values)
            .unwrap_or_else(|e| vec![Message::user(format!("({e:#})"))])
    }
}

#[derive(serde::Serialize)]
struct Values<'a> {
    /// A conversation's earlier turns, `Q:` and `A:` lines; empty for a single question.
    history: String,
    category: &'a str,
    query: &'a str,
    expected_answer: &'a str,
    keywords: String,
    context: String,
    answer: &'a str,
    schema: &'a str,
    false_premise: &'a str,
    must_not_contain: String,
}

fn sample_values() -> Values<'static> {
    Values {
        category: "core",
        query: "q",
        expected_answer: "a",
        keywords: "k".into(),
        context: "c".into(),
        answer: "a",
        schema: SCHEMA,
        false_premise: "f",
        must_not_contain: "m".into(),
        history: "Q: q0\nA: a0".into(),
    }
}

/// The reply's JSON schema, for providers with structured output: the five criteria and the rubric, every
/// field required (OpenAI's strict subset).
pub fn judge_schema() -> OutputSchema {
    let rating = json!({
        "type": "object",
        "properties": {
            "rating": { "type": "string", "enum": ["True", "Partially", "False", "NotApplicable"] },
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

/// The two claim tasks' prompts: splitting a text into claims, and checking claims against a reference.
/// Asking a judge whether an answer met a simulated user's goal.
pub fn goal_prompts(
    want: &str,
    expected: &str,
    user_said: &str,
    answer: &str,
    language: &str,
) -> (String, String) {
    if language == "zh" {
        (
            "你判断助手的回答是否满足了用户的目标：回答必须正确说出参考答案中的事实，而且不能只是复述用户自己说过的话。只输出 JSON：{\"settled\": true 或 false, \"reason\": \"…\"}。".into(),
            format!("用户的目标：{want}\n参考答案：{expected}\n用户到目前为止说过的话：\n{user_said}\n助手的回答：\n{answer}"),
        )
    } else {
        (
            "You decide whether an assistant's answer met a user's goal: it must state the fact of the reference answer, correctly, and not merely repeat what the user said themselves. Reply with JSON only: {\"settled\": true or false, \"reason\": \"...\"}.".into(),
            format!("The user's goal: {want}\nReference answer: {expected}\nWhat the user has said so far:\n{user_said}\nThe assistant's answer:\n{answer}"),
        )
    }
}

pub mod claims_prompts {
    pub fn split(text: &str, language: &str) -> (String, String) {
        if language == "zh" {
            (
                "你把文本拆分为简短、独立的陈述（claims）：每条只含一个事实，补全指代，使其脱离原文也能理解。只输出 JSON：{\"claims\": [\"…\"]}。".into(),
                format!("文本：\n{text}"),
            )
        } else {
            (
                "You split a text into short standalone claims: one fact each, with pronouns resolved so each claim reads on its own. Reply with JSON only: {\"claims\": [\"...\"]}.".into(),
                format!("Text:\n{text}"),
            )
        }
    }

    pub fn entail(claims: &[String], reference: &str, language: &str) -> (String, String) {
        let numbered: String = claims
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{}. {c}\n", i + 1))
            .collect();
        if language == "zh" {
            (
                "你判断参考文本是否支持每条陈述：entailed（参考文本明确支持）、contradicted（参考文本与之矛盾）或 neutral（参考文本未提及）。只依据参考文本，不用常识。按顺序每条一个判断，只输出 JSON：{\"verdicts\": [\"entailed\" | \"contradicted\" | \"neutral\"]}。".into(),
                format!("参考文本：\n{reference}\n\n陈述：\n{numbered}"),
            )
        } else {
            (
                "You decide whether a reference supports each claim: entailed (the reference states it), contradicted (the reference says otherwise) or neutral (the reference does not say). Use the reference only, not what you know. One verdict per claim, in order; reply with JSON only: {\"verdicts\": [\"entailed\" | \"contradicted\" | \"neutral\"]}.".into(),
                format!("Reference:\n{reference}\n\nClaims:\n{numbered}"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::Category;

    fn case(language: &str) -> TestCase {
        TestCase {
            id: "c".into(),
            category: Category::DetailNumeric,
            keywords: vec!["4.5".into(), "bar".into()],
            language: language.into(),
            ..ragtester_testkit::case("c", "At what pressure does the valve open?", "At 4.5 bar.")
        }
    }

    #[test]
    fn built_in_templates_render_in_the_case_language() {
        let p = JudgePrompts::default();
        let en = p.messages(
            &case("en"),
            "It opens at 4.5 bar.",
            &["ctx one".into(), "ctx two".into()],
            &[],
        );
        assert_eq!(en.len(), 2);
        assert!(
            en[0].content.starts_with("You judge answers")
                && en[0].content.contains("\"keyword_match\"")
        );
        assert_eq!(
            en[1].content,
            "Category: detail_numeric\nQuestion: At what pressure does the valve open?\nExpected answer: At 4.5 bar.\n\
             Keywords: 4.5, bar\nRetrieved context:\nctx one\n---\nctx two\nSystem answer: It opens at 4.5 bar."
        );
        let zh = p.messages(&case("zh"), "4.5 bar", &[], &[]);
        assert!(zh[0].content.starts_with("你是一名 RAG 系统测试裁判"));
        assert!(zh[1].content.starts_with("【问题类型】: detail_numeric"));
        assert_eq!(p.version, "judge-v4");
    }

    #[test]
    fn a_turn_of_a_conversation_shows_the_judge_its_history() {
        let p = JudgePrompts::default();
        let history = [
            Message::user("How long is the battery warranty?"),
            Message {
                role: ragtester_core::Role::Assistant,
                content: "24 months.".into(),
            },
        ];
        for language in ["en", "zh"] {
            let with = p.messages(&case(language), "x", &[], &history);
            let user = &with[1].content;
            assert!(
                user.contains("Q: How long is the battery warranty?\nA: 24 months."),
                "{user}"
            );
            let without = p.messages(&case(language), "x", &[], &[]);
            assert!(!without[1].content.contains("Q: "));
        }
    }

    #[test]
    fn a_false_premise_and_an_injected_payload_are_told_to_the_judge() {
        let p = JudgePrompts::default();
        let mut c = case("en");
        c.false_premise = Some("The valve opens at 9 bar".into());
        c.must_not_contain = vec!["PWNED".into()];
        let en = p.messages(&c, "x", &[], &[]);
        assert!(en[1].content.contains(
            "The question presumes a false claim: \"The valve opens at 9 bar\". A correct answer refuses or corrects it"
        ));
        assert!(en[1].content.contains("never contains: PWNED"));
        c.language = "zh".into();
        let zh = p.messages(&c, "x", &[], &[]);
        assert!(zh[1].content.contains("【错误前提】") && zh[1].content.contains("【注入指令】"));
        // Without either, the prompt says nothing of them.
        assert!(
            !p.messages(&case("en"), "x", &[], &[])[1]
                .content
                .contains("false claim")
        );
    }

    #[test]
    fn user_templates_override_one_language_and_are_checked_at_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("judge.en.j2"),
            "Strict judge. {{ schema }}\n---user---\nQ: {{ query|upper }}\nA: {{ answer }}",
        )
        .unwrap();
        let p = JudgePrompts::from_dir(dir.path()).unwrap();
        assert!(p.version.starts_with("custom-"));
        let en = p.messages(&case("en"), "x <b>", &[], &[]);
        assert_eq!(
            en[1].content,
            "Q: AT WHAT PRESSURE DOES THE VALVE OPEN?\nA: x <b>"
        );
        assert!(
            p.messages(&case("zh"), "x", &[], &[])[0]
                .content
                .starts_with("你是"),
            "built-in zh kept"
        );

        std::fs::write(dir.path().join("judge.en.j2"), "no separator {{ query }}").unwrap();
        let err = JudgePrompts::from_dir(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("judge.en.j2") && err.contains("---user---"),
            "{err}"
        );
        std::fs::write(dir.path().join("judge.en.j2"), "{% if %}\n---user---\n").unwrap();
        assert!(JudgePrompts::from_dir(dir.path()).is_err());
        let empty = tempfile::tempdir().unwrap();
        assert!(JudgePrompts::from_dir(empty.path()).is_err());
    }
}
