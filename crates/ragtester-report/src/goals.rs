//! Simulated users per configuration: how many reached their goal, in how many turns, how the
//! conversations ended, and whether the answers kept to their passages, the user's language and — where
//! the documents cannot meet the goal — their refusals.

use crate::percent::pct;
use ragtester_core::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GoalSummary {
    /// Simulated conversations judged.
    pub conversations: usize,
    pub reached: usize,
    pub reached_rate: Option<f64>,
    /// Over the conversations that reached an answerable goal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_turns_to_goal: Option<f64>,
    pub mean_turns: Option<f64>,
    /// Of the goals the documents cannot meet: how many kept refusing, of how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusals_kept: Option<(usize, usize)>,
    pub language_kept_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faithful_share: Option<f64>,
    /// Conversations per ending (`satisfied`, `gave_up`, `turn_budget`, `error`).
    pub endings: BTreeMap<String, usize>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The goal figures of one configuration's verdicts; None when none is a simulated conversation.
pub fn summarise_goals<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> Option<GoalSummary> {
    let goals: Vec<_> = verdicts.filter_map(|v| v.metrics.goal.as_ref()).collect();
    if goals.is_empty() {
        return None;
    }
    let reached = goals.iter().filter(|g| g.reached).count();
    let kept: Vec<bool> = goals.iter().filter_map(|g| g.refusals_kept).collect();
    let mut endings = BTreeMap::new();
    for g in &goals {
        *endings.entry(g.ending.clone()).or_insert(0) += 1;
    }
    Some(GoalSummary {
        conversations: goals.len(),
        reached,
        reached_rate: Some(reached as f64 / goals.len() as f64),
        mean_turns_to_goal: mean(
            goals
                .iter()
                .filter_map(|g| g.turns_to_goal.map(|t| t as f64)),
        ),
        mean_turns: mean(goals.iter().map(|g| g.turns as f64)),
        refusals_kept: (!kept.is_empty())
            .then(|| (kept.iter().filter(|k| **k).count(), kept.len())),
        language_kept_rate: mean(goals.iter().map(|g| f64::from(u8::from(g.language_kept)))),
        faithful_share: mean(goals.iter().filter_map(|g| g.faithful_share)),
        endings,
    })
}

/// One configuration's simulated users, for a person.
/// [`goal_line`]'s first figure: how many conversations reached their goal.
pub fn goal_brief(label: &str, g: &GoalSummary) -> String {
    format!(
        "{label}: goals reached {}/{} ({})",
        g.reached,
        g.conversations,
        pct(g.reached_rate)
    )
}

pub fn goal_line(label: &str, g: &GoalSummary) -> String {
    let mut line = format!(
        "{label}: goal reached in {} of {} simulated conversations ({})",
        g.reached,
        g.conversations,
        pct(g.reached_rate)
    );
    if let Some(t) = g.mean_turns_to_goal {
        line.push_str(&format!(", in {t:.1} turns on average"));
    }
    if let Some((kept, of)) = g.refusals_kept {
        line.push_str(&format!("; refusals kept {kept} of {of}"));
    }
    line.push_str(&format!("; language kept {}", pct(g.language_kept_rate)));
    let endings: Vec<String> = g
        .endings
        .iter()
        .map(|(e, n)| format!("{} {n}", e.replace('_', " ")))
        .collect();
    line.push_str(&format!("; ended: {}", endings.join(", ")));
    line
}
