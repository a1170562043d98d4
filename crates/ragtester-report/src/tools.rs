//! An agent's tool calls per configuration: the mean of each cell's tool-call figures (`ToolMetrics`,
//! set by the judge's rules) and how many cells each kind of mistake failed.

use crate::percent::pct;
use ragtester_core::{ToolMistakeKind, Verdict, VerdictStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolSummary {
    /// Cells whose case expects tools and whose calls were observed: what F1 and the shares are over.
    pub cases: usize,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_match: Option<f64>,
    /// Of the cells whose tools must come in order, the share that did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_order: Option<f64>,
    /// Calls that repeated an earlier call with the same arguments, over every observed cell.
    pub redundant_calls: usize,
    pub calls: usize,
    /// Of the cells whose own searches returned passages, the share where one held the answer, and the
    /// mean reciprocal rank of the first that did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_hit_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_mrr: Option<f64>,
    /// Cells per mistake (`wrong_tool`, `missing_search`, `wrong_argument`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mistakes: BTreeMap<String, usize>,
    /// Cells whose case expects tools but whose calls the system did not report.
    #[serde(default)]
    pub unobserved: usize,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The tool figures of one configuration's verdicts; None when no cell expects or reports tool calls.
/// `expects` tells whether a verdict's case expects tools.
pub fn summarise_tools<'a>(
    verdicts: impl Iterator<Item = &'a Verdict>,
    expects: &dyn Fn(&Verdict) -> bool,
) -> Option<ToolSummary> {
    let verdicts: Vec<&Verdict> = verdicts.collect();
    let observed: Vec<_> = verdicts
        .iter()
        .filter_map(|v| v.metrics.tools.as_ref())
        .collect();
    let unobserved = verdicts
        .iter()
        .filter(|v| v.status == VerdictStatus::Ok && v.metrics.tools.is_none() && expects(v))
        .count();
    if observed.is_empty() && unobserved == 0 {
        return None;
    }
    let scored: Vec<_> = observed.iter().filter(|t| t.expected > 0).collect();
    let searched: Vec<_> = observed
        .iter()
        .filter_map(|t| t.search_hit.map(|h| (h, t.search_rank)))
        .collect();
    let mut mistakes = BTreeMap::new();
    for m in observed.iter().filter_map(|t| t.mistake.as_ref()) {
        let name = match m.kind {
            ToolMistakeKind::WrongTool => "wrong_tool",
            ToolMistakeKind::MissingSearch => "missing_search",
            ToolMistakeKind::WrongArgument => "wrong_argument",
        };
        *mistakes.entry(name.to_string()).or_insert(0) += 1;
    }
    Some(ToolSummary {
        cases: scored.len(),
        precision: mean(scored.iter().filter_map(|t| t.precision)),
        recall: mean(scored.iter().filter_map(|t| t.recall)),
        f1: mean(scored.iter().filter_map(|t| t.f1)),
        argument_match: mean(scored.iter().filter_map(|t| t.argument_match)),
        in_order: mean(
            scored
                .iter()
                .filter_map(|t| t.in_order.map(|o| f64::from(u8::from(o)))),
        ),
        redundant_calls: observed.iter().map(|t| t.redundant).sum(),
        calls: observed.iter().map(|t| t.called).sum(),
        search_hit_rate: mean(searched.iter().map(|(h, _)| f64::from(u8::from(*h)))),
        search_mrr: mean(
            searched
                .iter()
                .map(|(_, r)| r.map_or(0.0, |r| 1.0 / r as f64)),
        ),
        mistakes,
        unobserved,
    })
}

/// One configuration's tool calls, for a person.
/// [`tool_line`]'s first figures: F1, and how often its searches found the source.
pub fn tool_brief(label: &str, t: &ToolSummary) -> String {
    let mut line = format!("{label}: tool-call F1 {}", pct(t.f1));
    if t.search_hit_rate.is_some() {
        line.push_str(&format!(", source found {}", pct(t.search_hit_rate)));
    }
    line
}

pub fn tool_line(label: &str, t: &ToolSummary) -> String {
    let mut line = format!(
        "{label}: tool-call F1 {} (precision {}, recall {}) over {} cases",
        pct(t.f1),
        pct(t.precision),
        pct(t.recall),
        t.cases
    );
    if t.argument_match.is_some() {
        line.push_str(&format!(", arguments {}", pct(t.argument_match)));
    }
    if t.in_order.is_some() {
        line.push_str(&format!(", in order {}", pct(t.in_order)));
    }
    if t.redundant_calls > 0 {
        line.push_str(&format!(
            ", {} of {} calls repeated",
            t.redundant_calls, t.calls
        ));
    }
    if t.search_hit_rate.is_some() {
        line.push_str(&format!(
            "; its searches found the source in {} (MRR {:.2})",
            pct(t.search_hit_rate),
            t.search_mrr.unwrap_or(0.0)
        ));
    }
    if !t.mistakes.is_empty() {
        let named: Vec<String> = t
            .mistakes
            .iter()
            .map(|(k, n)| format!("{} {n}", k.replace('_', " ")))
            .collect();
        line.push_str(&format!("; mistakes: {}", named.join(", ")));
    }
    if t.unobserved > 0 {
        line.push_str(&format!(
            "; {} cases expect tools whose calls were not reported",
            t.unobserved
        ));
    }
    line
}
