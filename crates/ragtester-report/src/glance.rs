//! The report read at a glance: what its first screen shows before any table — each configuration's pass
//! rate with its 95 % interval as one chart (labels short and distinct), the top causes with what to change,
//! the headroom perfect retrieval leaves, how far the judge agrees with people, and the matrix's axes that
//! changed nothing.

use crate::Summary;
use crate::table::ShortLabels;
use serde::Serialize;

/// Causes shown on the first screen; the Diagnosis section has them all.
const TOP_CAUSES: usize = 3;
/// Configurations charted on the first screen: the best and the worst half each; the rest are one click
/// away below the chart.
const GLANCE_ROWS: usize = 12;

#[derive(Debug, Serialize)]
pub struct Glance {
    /// The parts every configuration's label shares, said once above the chart.
    pub shared: String,
    /// The configurations charted first: every one, or, past `GLANCE_ROWS`, the best and the worst.
    pub rows: Vec<PassRow>,
    /// The configurations between the best and the worst, in the run's order.
    pub rest: Vec<PassRow>,
    pub causes: Vec<CauseLine>,
    /// The configuration with the largest headroom against its oracle reference, in a sentence.
    pub headroom: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct PassRow {
    pub label: String,
    /// The whole label, for a tooltip.
    pub full: String,
    /// Pass rate and its Wilson 95 % interval over the cells, as percentages.
    pub rate: f64,
    pub low: f64,
    pub high: f64,
    pub cells: usize,
}

#[derive(Debug, Serialize)]
pub struct CauseLine {
    pub cause: String,
    pub message: String,
    pub advice: String,
}

impl Glance {
    pub fn of(s: &Summary) -> Self {
        let labels = ShortLabels::of(s);
        let mut rows: Vec<PassRow> = s
            .configs
            .iter()
            .filter(|c| c.cases > 0)
            .map(|c| {
                let passed = c.passed;
                let interval = ragtester_judge::stats::wilson(passed, c.cases, 0.95);
                let rate = passed as f64 / c.cases as f64;
                PassRow {
                    label: labels.of_label(&c.label),
                    full: c.label.clone(),
                    rate: rate * 100.0,
                    low: interval.map_or(rate, |i| i.low) * 100.0,
                    high: interval.map_or(rate, |i| i.high) * 100.0,
                    cells: c.cases,
                }
            })
            .collect();
        let causes = s
            .diagnosis
            .findings
            .iter()
            .filter(|f| f.kind == "cause")
            .take(TOP_CAUSES)
            .map(|f| CauseLine {
                cause: f.subject.replace('_', " "),
                message: f.message.clone(),
                advice: f.advice.clone(),
            })
            .collect();
        let headroom = s
            .headroom
            .iter()
            .max_by(|a, b| a.headroom.total_cmp(&b.headroom))
            .map(|h| h.line());
        let mut rest = Vec::new();
        if rows.len() > GLANCE_ROWS {
            let mut order: Vec<usize> = (0..rows.len()).collect();
            order.sort_by(|&a, &b| rows[b].rate.total_cmp(&rows[a].rate));
            let half = GLANCE_ROWS / 2;
            let shown: std::collections::HashSet<usize> = order[..half]
                .iter()
                .chain(&order[order.len() - half..])
                .copied()
                .collect();
            let (mut first, mut others) = (Vec::new(), Vec::new());
            for (i, row) in rows.into_iter().enumerate() {
                if shown.contains(&i) {
                    first.push(row);
                } else {
                    others.push(row);
                }
            }
            first.sort_by(|a, b| b.rate.total_cmp(&a.rate));
            (rows, rest) = (first, others);
        }
        Self {
            shared: labels.shared.join(" · "),
            rows,
            rest,
            causes,
            headroom,
        }
    }
}

/// The configurations whose simulated users fared best and worst (every one when there are three or
/// fewer), one line each.
/// [`goals_best_and_worst`] with each configuration's goals reached, and nothing more.
/// Labels without the parts every configuration shares (said once above, `every configuration: …`).
pub fn goals_best_and_worst_brief(s: &crate::summary::Summary) -> Vec<String> {
    let labels = ShortLabels::of(s);
    goal_rows(s)
        .iter()
        .map(|(c, g)| crate::goals::goal_brief(&labels.of_label(&c.label), g))
        .collect()
}

pub fn goals_best_and_worst(s: &crate::summary::Summary) -> Vec<String> {
    goal_rows(s)
        .iter()
        .map(|(c, g)| crate::goals::goal_line(&c.label, g))
        .collect()
}

/// The configurations with simulated users' goals, best first; only the best and the worst of many.
fn goal_rows(
    s: &crate::summary::Summary,
) -> Vec<(&crate::summary::ConfigSummary, &crate::goals::GoalSummary)> {
    let mut rows: Vec<(&crate::summary::ConfigSummary, &crate::goals::GoalSummary)> = s
        .configs
        .iter()
        .filter_map(|c| Some((c, c.goals.as_ref()?)))
        .collect();
    rows.sort_by(|a, b| {
        b.1.reached_rate
            .unwrap_or(0.0)
            .total_cmp(&a.1.reached_rate.unwrap_or(0.0))
    });
    if rows.len() > 3 {
        rows = vec![rows[0], rows[rows.len() - 1]];
    }
    rows
}
