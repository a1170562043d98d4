//! The single-file HTML report: minijinja with auto-escaping on, so every model output lands as text; the
//! only markup built in Rust is the keyword highlighting, which escapes the text before adding `<mark>`.

use crate::Summary;
use anyhow::Result;
use minijinja::value::Serde;
use minijinja::{Environment, Value, context};

const TEMPLATE: &str = include_str!("../templates/report.html");
/// Cases listed per side of a pairwise comparison; all of them are in pairwise.jsonl.
const MAX_PAIRWISE_CASES: usize = 100;

/// The cases side `side` of the pairwise comparison won, the first `MAX_PAIRWISE_CASES` of them, and how
/// many it won in all.
fn pairwise_won(summary: &Summary, side: ragtester_core::oracle::PairSide) -> Value {
    let won: Vec<&ragtester_core::oracle::PairwiseCase> = summary
        .pairwise
        .iter()
        .flat_map(|p| &p.cases)
        .filter(|c| c.winner == Some(side))
        .collect();
    let shown: Vec<Value> = won
        .iter()
        .take(MAX_PAIRWISE_CASES)
        .map(|c| Value::from(Serde(c)))
        .collect();
    context! { cases => shown, total => won.len() }
}

pub fn render_html(summary: &Summary) -> Result<String> {
    let mut env = Environment::new();
    env.add_template("report.html", TEMPLATE)?;
    let (groups, bad_case_total) = crate::bad_groups::group(&summary.bad_cases);
    let bad_cases: Vec<Value> = groups
        .iter()
        .map(|g| {
            let b = g.lead;
            let contexts: Vec<Value> = b
                .contexts
                .iter()
                .map(|c| Value::from_safe_string(highlight(c, &b.keywords)))
                .collect();
            context! { case => Value::from(Serde(b)), group => Value::from(Serde(g)), contexts => contexts }
        })
        .collect();
    let rates: Vec<f64> = summary
        .configs
        .iter()
        .filter_map(|c| c.goals.as_ref()?.reached_rate)
        .collect();
    let goal_range = format!(
        "{:.0}–{:.0}%",
        rates.iter().copied().fold(f64::INFINITY, f64::min) * 100.0,
        rates.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 100.0
    );
    let html = env.get_template("report.html")?.render(context! {
        goal_range => goal_range,
        s => Value::from(Serde(summary)),
        bad_cases => bad_cases,
        bad_case_total => bad_case_total,
        a_won => pairwise_won(summary, ragtester_core::oracle::PairSide::A),
        b_won => pairwise_won(summary, ragtester_core::oracle::PairSide::B),
        glance => Value::from(Serde(crate::glance::Glance::of(summary))),
        layout => Value::from(Serde(crate::layout::Layout::of(summary))),
        citations => summary.configs.iter().filter(|c| c.citing_answers > 0).map(crate::table::citation_line).collect::<Vec<_>>(),
        tool_calls => summary.configs.iter().filter_map(|c| Some(crate::tools::tool_line(&c.label, c.tools.as_ref()?))).collect::<Vec<_>>(),
        goals => summary.configs.iter().filter_map(|c| Some(context! { label => c.label.as_str(), g => Value::from(Serde(c.goals.as_ref()?)) })).collect::<Vec<_>>(),
    })?;
    Ok(html)
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escaped text with case-insensitive keyword occurrences wrapped in `<mark>`.
fn highlight(text: &str, keywords: &[String]) -> String {
    let lower: Vec<char> = text.to_lowercase().chars().collect();
    let chars: Vec<char> = text.chars().collect();
    // to_lowercase can change length for a few characters; highlight only when it does not.
    if lower.len() != chars.len() {
        return escape(text);
    }
    let mut marked = vec![false; chars.len()];
    for k in keywords.iter().filter(|k| !k.trim().is_empty()) {
        let k: Vec<char> = k.to_lowercase().chars().collect();
        let mut i = 0;
        while i + k.len() <= lower.len() {
            if lower[i..i + k.len()] == k[..] {
                marked[i..i + k.len()].iter_mut().for_each(|m| *m = true);
                i += k.len();
            } else {
                i += 1;
            }
        }
    }
    let mut out = String::new();
    let mut open = false;
    for (c, m) in chars.iter().zip(&marked) {
        if *m && !open {
            out.push_str("<mark>");
            open = true;
        } else if !*m && open {
            out.push_str("</mark>");
            open = false;
        }
        out.push_str(&escape(&c.to_string()));
    }
    if open {
        out.push_str("</mark>");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_output_is_escaped_everywhere() {
        let evil = "<script>alert(1)</script>";
        let summary = crate::Summary {
            schema_version: 1,
            heuristic: false,
            heuristic_note: None,
            agreement_with_people: Vec::new(),
            trust_brief: Vec::new(),
            rule_overrides: Vec::new(),
            idle_axes: Vec::new(),
            repeats: Vec::new(),
            judge: Some(evil.into()),
            documents: 1,
            poisoned_copies: 0,
            cases: 1,
            not_judged: crate::NotJudged {
                exec_errors: 1,
                judge_errors: 0,
                reasons: vec![crate::ErrorReason {
                    kind: "exec_error".into(),
                    reason: evil.into(),
                    count: 1,
                }],
            },
            skipped: vec![crate::ErrorReason {
                kind: "skipped".into(),
                reason: evil.into(),
                count: 1,
            }],
            configs: vec![],
            categories: vec![],
            weakest_category: Some(evil.into()),
            generators: vec![],
            languages: vec![],
            origins: vec![],
            strategies: vec![],
            heatmap: Default::default(),
            diagnosis: crate::diagnosis::Diagnosis {
                causes: vec![],
                findings: vec![crate::diagnosis::Finding {
                    kind: "cause".into(),
                    severity: crate::diagnosis::Severity::Warning,
                    subject: evil.into(),
                    message: evil.into(),
                    advice: evil.into(),
                }],
                embedders: vec![],
            },
            oracle: Some(ragtester_core::oracle::OracleSummary {
                judges: vec![ragtester_core::oracle::JudgeTally {
                    judge: evil.into(),
                    verdicts: 1,
                    passed: 1,
                    failed: 0,
                    judge_errors: 0,
                    exec_errors: 0,
                }],
                samples: 1,
                panel: None,
                agreement: None,
                intervals: vec![],
                prompt_version: Some(evil.into()),
                people: Vec::new(),
            }),
            audit: None,
            corrected: Vec::new(),
            indistinguishable: Vec::new(),
            pairwise: None,
            bad_cases: vec![crate::BadCase {
                case_id: "c".into(),
                config_id: "k".into(),
                config_label: evil.into(),
                category: "core".into(),
                strategy: "coverage".into(),
                query: evil.into(),
                expected_answer: evil.into(),
                keywords: vec!["alert".into()],
                answer: evil.into(),
                contexts: vec![evil.into()],
                cause: None,
                evidence: Some(evil.into()),
                correctness: Some(1),
                reasons: vec![evil.into()],
                error: Some(evil.into()),
                conversation: vec![evil.into()],
            }],
            conversations: Vec::new(),
            failed_conversations: Vec::new(),
            headroom: Vec::new(),
            leaky: Vec::new(),
            long_context: Vec::new(),
        };
        let html = render_html(&summary).unwrap();
        assert!(!html.contains("<script"), "unescaped model output");
        assert!(html.contains("&lt;script&gt;"));
        assert!(html.contains("&lt;script&gt;<mark>alert</mark>(1)"));
    }

    #[test]
    fn highlight_escapes_then_marks() {
        assert_eq!(
            highlight("<b>Valve</b> at 4.5 bar", &["valve".into(), "4.5".into()]),
            "&lt;b&gt;<mark>Valve</mark>&lt;/b&gt; at <mark>4.5</mark> bar"
        );
    }
}
