//! A model writes the document: prompt from the controls (templates `prompts/document.{en,zh}.j2`, or the
//! user's), reply checked for what the controls asked — a document at all, its required sections, a length
//! near the target — and re-asked with what was missing; a reply still wrong after that fails the document
//! with the reasons, never passes as a document.
//!
//! The document is asked for as JSON (a title and sections, each body in Markdown) under a schema, so a
//! server or local model that constrains its output to the schema always writes the document's shape, even
//! a model too small to follow Markdown conventions; the Markdown is assembled here. A reply that is
//! Markdown after all (a server that ignores the schema and the prompt) is taken as it is.

use crate::{DocRequest, GeneratedDoc};
use anyhow::{Result, bail};
use ragtester_core::prompt_template::PromptTemplates;
use ragtester_core::{ChatModel, ChatRequest, Message, OutputSchema, ReplyFormat, Role};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::Path;

pub const DOCUMENT_PROMPT_VERSION: &str = "document-v3";

/// Re-asks after the first reply, each naming what was wrong.
const REASKS: usize = 2;

#[derive(Debug, Clone)]
pub struct DocumentPrompts {
    templates: PromptTemplates,
}

impl Default for DocumentPrompts {
    fn default() -> Self {
        Self {
            templates: PromptTemplates::builtin(
                "document",
                include_str!("../prompts/document.en.j2"),
                include_str!("../prompts/document.zh.j2"),
                DOCUMENT_PROMPT_VERSION,
            ),
        }
    }
}

impl DocumentPrompts {
    /// `document.en.j2` / `document.zh.j2` from `dir` replace the built-in ones; checked at load.
    pub fn from_dir(dir: &Path) -> Result<Self> {
        let defaults = DocRequest::default();
        let sample = Values::of(&defaults);
        Ok(Self {
            templates: Self::default().templates.override_from(dir, &sample)?,
        })
    }
    pub fn version(&self) -> &str {
        &self.templates.version
    }
}

#[derive(Serialize)]
struct Values<'a> {
    title: Option<&'a str>,
    topic: Option<&'a str>,
    tone: &'a str,
    detail: &'a str,
    words: usize,
    sections: &'a [String],
    language: &'a str,
    index: usize,
    count: usize,
    seed: u64,
    suggested_topic: &'static str,
}

impl<'a> Values<'a> {
    fn of(req: &'a DocRequest) -> Self {
        Self::in_batch(req, Batch::default())
    }

    fn in_batch(req: &'a DocRequest, batch: Batch) -> Self {
        Self {
            title: req.title.as_deref(),
            topic: req.topic.as_deref(),
            tone: &req.tone,
            detail: req.detail.as_str(),
            words: req.words,
            sections: &req.sections,
            language: &req.language,
            index: batch.index + 1,
            count: batch.count.max(1),
            seed: req.seed,
            suggested_topic: suggested_topic(&req.language, req.seed, batch.index),
        }
    }
}

/// A document's place in a batch: index from 0, and how many the batch writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Batch {
    pub index: usize,
    pub count: usize,
}

/// Practical subjects a batch without a topic draws from, so its documents are about different things.
const TOPICS_EN: &[&str] = &[
    "a municipal water treatment plant",
    "a regional hospital pharmacy",
    "a ferry terminal",
    "a university library's lending rules",
    "a wind farm's maintenance programme",
    "a bakery's food-safety plan",
    "a data centre's incident procedure",
    "a city bike-sharing scheme",
    "a dental clinic's patient guide",
    "a cold-storage warehouse",
    "a small airline's baggage policy",
    "a school's laboratory safety rules",
    "a solar inverter's installation manual",
    "a museum's conservation department",
    "a railway signalling depot",
    "a veterinary practice",
    "a community swimming pool",
    "a print shop's colour workflow",
    "an electric-vehicle charging network",
    "a mountain hut's booking rules",
    "a brewery's quality control",
    "a hotel's housekeeping standards",
    "a port's hazardous-cargo rules",
    "a greenhouse irrigation system",
];
const TOPICS_ZH: &[&str] = &[
    "城市自来水厂",
    "医院药剂科",
    "轮渡码头",
    "高校图书馆借阅规则",
    "风电场检修规程",
    "面包店食品安全计划",
    "数据中心故障处理流程",
    "城市共享单车",
    "牙科诊所患者指南",
    "冷库仓储管理",
    "航空公司行李规定",
    "中学实验室安全守则",
    "光伏逆变器安装手册",
    "博物馆文物修复部",
    "铁路信号维修工区",
    "宠物医院",
    "社区游泳馆",
    "印刷厂色彩管理流程",
    "电动汽车充电网络",
    "山地营地预订规则",
    "啤酒厂质量控制",
    "酒店客房服务标准",
    "港口危险货物管理",
    "温室灌溉系统",
];

fn suggested_topic(language: &str, seed: u64, index: usize) -> &'static str {
    let topics = if language == "zh" {
        TOPICS_ZH
    } else {
        TOPICS_EN
    };
    // Consecutive indexes take different topics; the seed shifts where a batch starts.
    topics[(seed as usize).wrapping_add(index.wrapping_mul(7)) % topics.len()]
}

/// How much of a document's vocabulary an earlier one shares (Jaccard over lower-case words, CJK
/// characters counted as words): at or above [`NEAR_DUPLICATE`] it is the same document again.
fn similarity(a: &str, b: &str) -> f64 {
    let words = |t: &str| -> std::collections::HashSet<String> {
        ragtester_text::words(t).into_iter().collect()
    };
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

/// Share of vocabulary at which a document repeats an earlier one.
pub const NEAR_DUPLICATE: f64 = 0.6;

/// The earlier document a draft repeats: the same title, or most of the same words.
fn repeats<'e>(markdown: &str, title: &str, earlier: &'e [GeneratedDoc]) -> Option<(&'e str, f64)> {
    earlier.iter().find_map(|e| {
        let shared = similarity(markdown, &e.markdown);
        (e.title.eq_ignore_ascii_case(title) || shared >= NEAR_DUPLICATE)
            .then_some((e.title.as_str(), shared))
    })
}

/// The reply's shape, for servers that take a JSON schema: sections of Markdown, at least two, none empty.
fn document_schema() -> OutputSchema {
    OutputSchema {
        name: "generated_document".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "title": { "type": "string", "minLength": 3, "maxLength": 160 },
                "sections": {
                    "type": "array",
                    "minItems": 2,
                    "items": {
                        "type": "object",
                        "properties": {
                            "heading": { "type": "string", "minLength": 2, "maxLength": 160 },
                            "body": { "type": "string", "minLength": 80 }
                        },
                        "required": ["heading", "body"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["title", "sections"],
            "additionalProperties": false
        }),
    }
}

#[derive(Deserialize)]
struct JsonDocument {
    title: String,
    sections: Vec<JsonSection>,
}

#[derive(Deserialize)]
struct JsonSection {
    heading: String,
    body: String,
}

/// The Markdown of a reply: a JSON document assembled (`# title`, `## heading` and body per section), else
/// the Markdown the reply holds.
fn reply_markdown(reply: &str) -> String {
    let json = match (reply.find('{'), reply.rfind('}')) {
        (Some(a), Some(b)) if a < b => serde_json::from_str::<JsonDocument>(&reply[a..=b]).ok(),
        _ => None,
    };
    let Some(doc) = json else {
        return extract_markdown(reply);
    };
    let mut out = format!("# {}\n", one_line(&doc.title));
    for section in &doc.sections {
        out.push_str(&format!(
            "\n## {}\n\n{}\n",
            one_line(&section.heading),
            section.body.trim()
        ));
    }
    out.trim_end().to_string()
}

/// A title or heading on one line, without Markdown heading marks of its own.
fn one_line(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_start_matches('#')
        .trim()
        .to_string()
}

/// The Markdown inside a reply: a fenced ```markdown block is unwrapped, text before the first heading
/// (a model's preamble) dropped.
fn extract_markdown(reply: &str) -> String {
    let mut text = reply.trim();
    for fence in ["```markdown", "```md", "```"] {
        if let Some(rest) = text.strip_prefix(fence)
            && let Some(body) = rest.trim_end().strip_suffix("```")
        {
            text = body.trim();
            break;
        }
    }
    match text.find("\n#") {
        Some(i) if !text.starts_with('#') => text[i + 1..].trim().to_string(),
        _ => text.to_string(),
    }
}

fn headings(markdown: &str, level: usize) -> Vec<String> {
    let marker = format!("{} ", "#".repeat(level));
    markdown
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(&marker))
        .map(|h| h.trim().to_string())
        .collect()
}

/// What is wrong with a reply, in words a model can act on; empty when it is a usable document.
fn problems(markdown: &str, req: &DocRequest) -> Vec<String> {
    let mut out = Vec::new();
    let sections = headings(markdown, 2);
    if ragtester_text::word_count(markdown) < 40 || sections.is_empty() {
        out.push("the reply is not a Markdown document with `##` sections".to_string());
        return out;
    }
    let lower: Vec<String> = sections.iter().map(|s| s.to_lowercase()).collect();
    let missing: Vec<&str> = req
        .sections
        .iter()
        .filter(|want| !lower.iter().any(|h| h.contains(&want.to_lowercase())))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        out.push(format!(
            "these required sections are missing as `##` headings: {}",
            missing.join(", ")
        ));
    }
    let n = ragtester_text::word_count(markdown);
    if n * 3 < req.words {
        out.push(format!(
            "it has about {n} words; about {} were asked for",
            req.words
        ));
    }
    out
}

/// One document from `model`.
pub async fn write_with_model(
    req: &DocRequest,
    model: &dyn ChatModel,
    prompts: &DocumentPrompts,
) -> Result<GeneratedDoc> {
    write_in_batch(req, Batch::default(), &[], model, prompts).await
}

/// One document of a batch from `model`: its place in the batch and the seed enter the prompt, and a draft
/// that repeats an `earlier` document (same title, or most of its words) is re-asked like any other fault.
pub async fn write_in_batch(
    req: &DocRequest,
    batch: Batch,
    earlier: &[GeneratedDoc],
    model: &dyn ChatModel,
    prompts: &DocumentPrompts,
) -> Result<GeneratedDoc> {
    let mut messages = prompts
        .templates
        .messages(&req.language, &Values::in_batch(req, batch))?;
    let mut last_problems = Vec::new();
    for attempt in 0..=REASKS {
        let request = ChatRequest {
            messages: messages.clone(),
            temperature: req.temperature,
            max_tokens: None,
            seed: Some(req.seed),
            format: ReplyFormat::Schema(document_schema()),
            sample: 0,
            hint: None,
        };
        let reply = model.chat(&request).await?;
        let mut markdown = reply_markdown(&reply.content);
        last_problems = problems(&markdown, req);
        let title = headings(&markdown, 1)
            .into_iter()
            .next()
            .or_else(|| req.title.clone())
            .unwrap_or_else(|| "Generated document".into());
        if last_problems.is_empty()
            && let Some((twin, shared)) = repeats(&markdown, &title, earlier)
        {
            last_problems.push(format!(
                "it repeats the earlier document \"{twin}\" ({:.0}% of the same words): write a different \
                 document, with its own subject, names and figures",
                shared * 100.0
            ));
        }
        if last_problems.is_empty() {
            if headings(&markdown, 1).is_empty() {
                markdown = format!("# {title}\n\n{markdown}");
            }
            return Ok(GeneratedDoc {
                title,
                language: req.language.clone(),
                markdown: markdown + "\n",
                facts: Vec::new(),
            });
        }
        if attempt < REASKS {
            messages.push(Message {
                role: Role::Assistant,
                content: reply.content,
            });
            messages.push(Message::user(if req.language == "zh" {
                format!(
                    "这篇文档不符合要求：{}。请重新输出完整的文档（同样的 JSON 格式）。",
                    last_problems.join("；")
                )
            } else {
                format!(
                    "The document does not meet the request: {}. Reply with the whole corrected document, as the same JSON object.",
                    last_problems.join("; ")
                )
            }));
        }
    }
    bail!(
        "{} did not write a usable document after {} re-asks: {}",
        model.name(),
        REASKS,
        last_problems.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fenced_and_prefaced_replies_are_unwrapped() {
        assert_eq!(
            extract_markdown("```markdown\n# T\n\n## A\nx\n```"),
            "# T\n\n## A\nx"
        );
        assert_eq!(
            extract_markdown("Sure! Here it is:\n# T\n## A"),
            "# T\n## A"
        );
        assert_eq!(extract_markdown("# T"), "# T");
    }

    #[test]
    fn json_documents_become_markdown_and_markdown_replies_stay() {
        let reply = r###"{"title": "Ferry  terminal\nrules", "sections": [{"heading": "## Tickets", "body": "Tickets cost 4 EUR.\n\n| a | b |\n|---|---|\n| 1 | 2 |"}, {"heading": "Safety", "body": "1. Stay seated."}]}"###;
        assert_eq!(
            reply_markdown(reply),
            "# Ferry terminal rules\n\n## Tickets\n\nTickets cost 4 EUR.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Safety\n\n1. Stay seated."
        );
        assert_eq!(reply_markdown("# T\n\n## A\nx"), "# T\n\n## A\nx");
    }

    #[test]
    fn problems_name_missing_sections_and_short_replies() {
        let req = DocRequest {
            sections: vec!["Safety".into(), "Contacts".into()],
            words: 600,
            ..Default::default()
        };
        let body = "word ".repeat(60);
        let doc = format!("# T\n\n## Overview\n{body}\n\n## Safety rules\n{body}");
        let p = problems(&doc, &req);
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("Contacts") && !p[0].contains("Safety"));
        assert!(p[1].contains("600"));
        assert_eq!(problems("Sorry, I cannot.", &req).len(), 1);
    }

    #[test]
    fn templates_render_the_controls_in_each_language() {
        let p = DocumentPrompts::default();
        let req = DocRequest {
            topic: Some("ferry terminal".into()),
            sections: vec!["Tickets".into(), "Safety".into()],
            ..Default::default()
        };
        let en = p.templates.messages("en", &Values::of(&req)).unwrap();
        assert!(en[0].content.contains("Markdown"));
        assert!(en[1].content.contains("Topic: ferry terminal"));
        assert!(
            en[1]
                .content
                .contains("Required sections (use these as level-2 headings): Tickets, Safety")
        );
        let zh = p.templates.messages("zh", &Values::of(&req)).unwrap();
        assert!(
            zh[1]
                .content
                .contains("必须包含的章节（作为二级标题）：Tickets、Safety")
        );
        assert_eq!(p.version(), DOCUMENT_PROMPT_VERSION);
    }
}
