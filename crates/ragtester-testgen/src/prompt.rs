//! The question-writing prompt, in English and Chinese, chosen by the language the question must be in.
//! The rules are the paper's: clear questions, different aspects of the document, never answerable by yes
//! or no, each with an expected answer and keywords.

use ragtester_core::chat::QuestionKind;
use ragtester_core::prompt_template::PromptTemplates;
use ragtester_core::{Message, OutputSchema, SectionClass};
use std::path::Path;

pub const PROMPT_VERSION: &str = "question-v3";

/// How the prompt describes the reply (the schema itself goes to providers separately).
pub(crate) const SHAPE: &str = r#"{"question": string, "answer": string, "keywords": [string]}"#;
/// The false-premise reply adds the claim the question presumes.
pub(crate) const PREMISE_SHAPE: &str =
    r#"{"question": string, "answer": string, "keywords": [string], "false_claim": string}"#;

/// The reply shape asked for a kind of question.
pub(crate) fn shape_for(kind: QuestionKind) -> &'static str {
    if kind == QuestionKind::FalsePremise {
        PREMISE_SHAPE
    } else {
        SHAPE
    }
}

/// The question-writing templates, English and Chinese (`prompts/question.*.j2`) or a user's.
#[derive(Debug, Clone)]
pub struct QuestionPrompts {
    templates: PromptTemplates,
}

impl Default for QuestionPrompts {
    fn default() -> Self {
        Self {
            templates: PromptTemplates::builtin(
                "question",
                include_str!("../prompts/question.en.j2"),
                include_str!("../prompts/question.zh.j2"),
                PROMPT_VERSION,
            ),
        }
    }
}

#[derive(serde::Serialize)]
struct Values<'a> {
    kind: &'a str,
    title: &'a str,
    section: &'a str,
    passages: &'a [String],
    section_class: &'a str,
    schema: &'a str,
}

fn kind_name(kind: QuestionKind) -> &'static str {
    match kind {
        QuestionKind::Answerable => "answerable",
        QuestionKind::Complex => "complex",
        QuestionKind::Unanswerable => "unanswerable",
        QuestionKind::NearMiss => "near_miss",
        QuestionKind::FalsePremise => "false_premise",
        QuestionKind::MultiPassage => "multi_passage",
    }
}

impl QuestionPrompts {
    /// `question.en.j2` / `question.zh.j2` from `dir` replace the built-in ones; checked at load.
    pub fn from_dir(dir: &Path) -> anyhow::Result<Self> {
        let sample = Values {
            kind: "multi_passage",
            title: "t",
            section: "s",
            passages: &["p".to_string(), "q".to_string()],
            section_class: "prose",
            schema: SHAPE,
        };
        Ok(Self {
            templates: Self::default().templates.override_from(dir, &sample)?,
        })
    }

    /// `question-v1`, or `custom-…` for a user's templates; recorded on every case.
    pub fn version(&self) -> &str {
        &self.templates.version
    }

    /// The prompt for one question about `section` of `class` (or, for multi-passage questions, about
    /// `passages`).
    pub fn messages(
        &self,
        kind: QuestionKind,
        title: &str,
        (section, class): (&str, SectionClass),
        passages: &[String],
        language: &str,
    ) -> Vec<Message> {
        let values = Values {
            kind: kind_name(kind),
            title,
            section,
            passages,
            section_class: class.as_str(),
            schema: shape_for(kind),
        };
        // Templates were rendered at load; a failure now can only come from the values, so say so in-band.
        self.templates
            .messages(language, &values)
            .unwrap_or_else(|e| vec![Message::user(format!("({e:#})"))])
    }
}

/// The reply's JSON schema, for providers with structured output (OpenAI's strict subset).
pub fn question_schema(kind: QuestionKind) -> OutputSchema {
    let mut properties = serde_json::json!({
        "question": { "type": "string" },
        "answer": { "type": "string" },
        "keywords": { "type": "array", "items": { "type": "string" } }
    });
    let mut required = vec!["question", "answer", "keywords"];
    if kind == QuestionKind::FalsePremise {
        properties["false_claim"] = serde_json::json!({ "type": "string" });
        required.push("false_claim");
    }
    OutputSchema {
        name: "test_question".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_carry_the_section_the_rules_and_the_task() {
        let p = QuestionPrompts::default();
        let en = p.messages(
            QuestionKind::Complex,
            "Pump manual",
            ("The valve opens at 4.5 bar.", SectionClass::Prose),
            &[],
            "en",
        );
        assert!(en[0].content.contains("not be answerable by yes or no"));
        assert!(en[0].content.contains("never a fill-in-the-blank"));
        assert!(!en[1].content.contains("This section is code"));
        assert!(en[0].content.contains(SHAPE));
        assert!(en[1].content.contains("Document: \"Pump manual\""));
        assert!(en[1].content.contains("needs several sentences"));
        assert!(
            en[1]
                .content
                .ends_with("Section:\nThe valve opens at 4.5 bar.\n")
                || en[1].content.ends_with("4.5 bar.")
        );
        let zh = p.messages(
            QuestionKind::Unanswerable,
            "手册",
            ("阀门在4.5巴时打开。", SectionClass::Prose),
            &[],
            "zh",
        );
        assert!(zh[0].content.contains("不能用“是”或“否”回答"));
        assert!(
            zh[1].content.contains("信息不足以回答此问题")
                && zh[1].content.contains("阀门在4.5巴时打开")
        );
        assert_eq!(p.version(), PROMPT_VERSION);
        let multi = p.messages(
            QuestionKind::MultiPassage,
            "Pump manual",
            ("", SectionClass::Prose),
            &[
                "The valve opens at 4.5 bar.".into(),
                "The seal is Viton.".into(),
            ],
            "en",
        );
        assert!(multi[1].content.contains("every one of the passages"));
        assert!(
            multi[1]
                .content
                .contains("Passage 1:\nThe valve opens at 4.5 bar.")
                && multi[1].content.contains("Passage 2:\nThe seal is Viton.")
        );
        let premise = p.messages(
            QuestionKind::FalsePremise,
            "手册",
            ("阀门在4.5巴时打开。", SectionClass::Prose),
            &[],
            "zh",
        );
        assert!(
            premise[0].content.contains("false_claim") && premise[1].content.contains("相矛盾")
        );
        // A section that is not prose says what it is, so the writer asks what a reader of it would.
        let code = p.messages(
            QuestionKind::Answerable,
            "R FAQ",
            ("> x <- c(1, 2)", SectionClass::Code),
            &[],
            "en",
        );
        assert!(code[1].content.contains("This section is code"));
        let table = p.messages(
            QuestionKind::Answerable,
            "手册",
            ("型号 A 120 B 340", SectionClass::TableOfNumbers),
            &[],
            "zh",
        );
        assert!(table[1].content.contains("本章节是数值表格"));
        assert_eq!(
            question_schema(QuestionKind::FalsePremise).schema["required"][3],
            "false_claim"
        );
    }

    #[test]
    fn a_users_template_replaces_one_language_and_is_versioned() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("question.en.j2"),
            "Ask about {{ title }}. {{ schema }}\n---user---\n[{{ kind }}] {{ section }}",
        )
        .unwrap();
        let p = QuestionPrompts::from_dir(dir.path()).unwrap();
        assert!(p.version().starts_with("custom-"));
        let en = p.messages(
            QuestionKind::Answerable,
            "T",
            ("S", SectionClass::Prose),
            &[],
            "en",
        );
        assert_eq!(en[1].content, "[answerable] S");
        assert!(
            p.messages(
                QuestionKind::Answerable,
                "T",
                ("S", SectionClass::Prose),
                &[],
                "zh"
            )[0]
            .content
            .starts_with("你为")
        );
        std::fs::write(dir.path().join("question.zh.j2"), "{{ oops(").unwrap();
        assert!(QuestionPrompts::from_dir(dir.path()).is_err());
    }
}
