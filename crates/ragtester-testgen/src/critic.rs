//! The quality gate: a critic model checks each generated question against the text before it becomes a
//! case. A positive question must be answered by its source passages and support its expected answer; a
//! negative one must not be answered by what the corpus returns for it; a false-premise question must be
//! contradicted by its source. The critic's prompt is a template (English and Chinese, overridable), its
//! reply a small JSON object, re-asked once when unreadable.

use ragtester_core::chat::CriticCheck;
use ragtester_core::prompt_template::PromptTemplates;
use ragtester_core::spend::BudgetExhausted;
use ragtester_core::{ChatModel, ChatRequest, Message, OutputSchema, ReplyFormat, Role, TaskHint};
use serde::Deserialize;
use std::path::Path;

pub const CRITIC_PROMPT_VERSION: &str = "critic-v1";

const SHAPE: &str = r#"{"verdict": "yes" | "no", "reason": string}"#;

/// Passages of the corpus for a query: what the critic reads to decide whether a negative question is
/// answered somewhere. The binary backs it with a keyword index over every document.
pub trait Corpus: Send + Sync {
    /// Up to `k` passages for `query`, from `documents` only (every document when empty).
    fn passages(&self, query: &str, k: usize, documents: &[String]) -> anyhow::Result<Vec<String>>;
}

/// Passages the critic reads for a negative question.
pub const EVIDENCE_PASSAGES: usize = 5;

/// The critic templates, English and Chinese (`prompts/critic.*.j2`) or a user's.
#[derive(Debug, Clone)]
pub struct CriticPrompts {
    templates: PromptTemplates,
}

impl Default for CriticPrompts {
    fn default() -> Self {
        Self {
            templates: PromptTemplates::builtin(
                "critic",
                include_str!("../prompts/critic.en.j2"),
                include_str!("../prompts/critic.zh.j2"),
                CRITIC_PROMPT_VERSION,
            ),
        }
    }
}

#[derive(serde::Serialize)]
struct Values<'a> {
    check: &'a str,
    question: &'a str,
    expected_answer: &'a str,
    premise: &'a str,
    evidence: &'a [String],
    schema: &'a str,
}

fn check_name(check: CriticCheck) -> &'static str {
    match check {
        CriticCheck::Supported => "supported",
        CriticCheck::Answered => "answered",
        CriticCheck::Contradicted => "contradicted",
    }
}

impl CriticPrompts {
    /// `critic.en.j2` / `critic.zh.j2` from `dir` replace the built-in ones; checked at load.
    pub fn from_dir(dir: &Path) -> anyhow::Result<Self> {
        let sample = Values {
            check: "contradicted",
            question: "q",
            expected_answer: "a",
            premise: "p",
            evidence: &["e".to_string()],
            schema: SHAPE,
        };
        Ok(Self {
            templates: Self::default().templates.override_from(dir, &sample)?,
        })
    }

    pub fn version(&self) -> &str {
        &self.templates.version
    }

    fn messages(&self, task: &Task<'_>) -> Vec<Message> {
        let values = Values {
            check: check_name(task.check),
            question: task.question,
            expected_answer: task.expected_answer,
            premise: task.premise.unwrap_or_default(),
            evidence: &task.evidence,
            schema: SHAPE,
        };
        self.templates
            .messages(task.language, &values)
            .unwrap_or_else(|e| vec![Message::user(format!("({e:#})"))])
    }
}

fn critic_schema() -> OutputSchema {
    OutputSchema {
        name: "question_check".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {
                "verdict": { "type": "string", "enum": ["yes", "no"] },
                "reason": { "type": "string" }
            },
            "required": ["verdict", "reason"],
            "additionalProperties": false
        }),
    }
}

/// One check of one question.
pub(crate) struct Task<'a> {
    pub check: CriticCheck,
    pub question: &'a str,
    pub expected_answer: &'a str,
    pub premise: Option<&'a str>,
    pub evidence: Vec<String>,
    pub language: &'a str,
}

/// The critic, the corpus it searches for negatives, and its prompts.
pub struct QualityGate<'a> {
    pub critic: &'a dyn ChatModel,
    pub corpus: &'a dyn Corpus,
    pub prompts: CriticPrompts,
}

#[derive(Debug, Deserialize)]
struct Reply {
    verdict: String,
    #[serde(default)]
    reason: String,
}

/// Why a question did not pass the gate.
pub(crate) enum Rejection {
    /// The critic turned it down, for this reason.
    Critic(String),
    /// No verdict could be had (a provider error, an unreadable reply).
    Failed(String),
    /// The spending cap refused the call: generation stops.
    Budget(String),
}

impl QualityGate<'_> {
    /// Ok when the question passes; why not otherwise.
    pub(crate) async fn check(&self, task: Task<'_>) -> Result<(), Rejection> {
        let hint = TaskHint::Critic {
            check: task.check,
            question: task.question.to_string(),
            expected_answer: task.expected_answer.to_string(),
            evidence: task.evidence.clone(),
            premise: task.premise.map(str::to_string),
            language: task.language.to_string(),
        };
        let mut request = ChatRequest::new(self.prompts.messages(&task), hint);
        request.format = ReplyFormat::Schema(critic_schema());
        let zh = task.language == "zh";
        let mut reply = None;
        for attempt in 0..2 {
            let response = self.critic.chat(&request).await.map_err(|e| {
                if BudgetExhausted::caused(&e) {
                    Rejection::Budget(e.to_string())
                } else {
                    Rejection::Failed(format!("critic error: {e:#}"))
                }
            })?;
            match parse(&response.content) {
                Ok(r) => {
                    reply = Some(r);
                    break;
                }
                Err(problem) if attempt == 0 => {
                    request.messages.push(Message {
                        role: Role::Assistant,
                        content: response.content,
                    });
                    request.messages.push(Message::user(if zh {
                        format!("无法读取你的回复（{problem}）。只输出一个 JSON 对象：{SHAPE}")
                    } else {
                        format!("Your reply could not be read ({problem}). Reply with one JSON object only: {SHAPE}")
                    }));
                }
                Err(problem) => {
                    return Err(Rejection::Failed(format!(
                        "critic reply unreadable after one re-ask: {problem}"
                    )));
                }
            }
        }
        let (yes, reason) = reply.expect("the loop returns or sets a reply");
        let wanted = task.check != CriticCheck::Answered;
        if yes == wanted {
            return Ok(());
        }
        Err(Rejection::Critic(match task.check {
            CriticCheck::Supported => format!("critic: the source does not support it ({reason})"),
            CriticCheck::Answered => format!("critic: the corpus answers it ({reason})"),
            CriticCheck::Contradicted => {
                format!("critic: the source does not contradict the premise ({reason})")
            }
        }))
    }
}

/// The verdict and reason of a critic reply: the first JSON object, `"yes"`/`"no"` (or 是/否, true/false).
fn parse(content: &str) -> Result<(bool, String), String> {
    let json = match (content.find('{'), content.rfind('}')) {
        (Some(s), Some(e)) if e > s => &content[s..=e],
        _ => return Err("the reply holds no JSON object".into()),
    };
    let reply: Reply = serde_json::from_str(json).map_err(|e| format!("unreadable reply ({e})"))?;
    let yes = match reply.verdict.trim().to_lowercase().as_str() {
        "yes" | "true" | "是" => true,
        "no" | "false" | "否" => false,
        other => return Err(format!("verdict must be yes or no, not \"{other}\"")),
    };
    Ok((yes, reply.reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_leniently_and_refused_clearly() {
        assert_eq!(
            parse("```json\n{\"verdict\": \"Yes\", \"reason\": \"s1\"}\n```").unwrap(),
            (true, "s1".to_string())
        );
        assert!(!parse(r#"{"verdict": "否"}"#).unwrap().0);
        assert!(
            parse(r#"{"verdict": "maybe"}"#)
                .unwrap_err()
                .contains("yes or no")
        );
        assert!(parse("no json").is_err());
    }

    #[test]
    fn prompts_carry_the_check_the_question_and_every_passage() {
        let p = CriticPrompts::default();
        let m = p.messages(&Task {
            check: CriticCheck::Contradicted,
            question: "Why does the valve open at 9 bar?",
            expected_answer: "",
            premise: Some("The valve opens at 9 bar"),
            evidence: vec!["The valve opens at 4.5 bar.".into(), "Second.".into()],
            language: "en",
        });
        assert!(m[0].content.contains(SHAPE));
        assert!(m[1].content.contains("contradict the claim"));
        assert!(
            m[1].content
                .contains("Presumed claim: The valve opens at 9 bar")
        );
        assert!(m[1].content.contains("Passage 2:\nSecond."));
        let zh = p.messages(&Task {
            check: CriticCheck::Answered,
            question: "问题？",
            expected_answer: "",
            premise: None,
            evidence: vec!["材料。".into()],
            language: "zh",
        });
        assert!(
            zh[1].content.contains("是否有任何一段") && zh[1].content.contains("材料 1：\n材料。")
        );
        assert_eq!(p.version(), CRITIC_PROMPT_VERSION);
    }
}
