//! Comparing two judged runs cell by cell: which (case, configuration) cells regressed (passed, now fail),
//! were fixed, or changed error state, and how each configuration's pass rate moved. Cells are matched by
//! case id and configuration id, both stable hashes, so the same suite and settings line up across runs.

use crate::paired::paired_tests;
use crate::summary::primary_verdicts;
use ragtester_core::{Configuration, TestCase, Verdict, VerdictStatus};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    Error,
}

fn outcome(v: &Verdict) -> Outcome {
    match (v.status, v.passed) {
        (VerdictStatus::Ok, Some(true)) => Outcome::Passed,
        (VerdictStatus::Ok, Some(false)) => Outcome::Failed,
        _ => Outcome::Error,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellChange {
    pub case_id: String,
    pub config_id: String,
    pub before: Outcome,
    pub after: Outcome,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConfigDelta {
    pub config_id: String,
    pub label: String,
    pub pass_rate_before: Option<f64>,
    pub pass_rate_after: Option<f64>,
    pub regressions: usize,
    pub fixes: usize,
    /// Cells judged pass or fail in both runs.
    pub paired: usize,
    /// McNemar's exact p-value on the paired pass/fail cells (regressions against fixes).
    pub mcnemar_p: Option<f64>,
    /// Mean change of the criteria score over paired cells, with a 95 % percentile-bootstrap interval.
    pub score_change: Option<ragtester_core::oracle::Interval>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDiff {
    /// Cells that passed before and now fail or error.
    pub regressions: Vec<CellChange>,
    pub fixes: Vec<CellChange>,
    /// Other cells whose error state changed (failed → error, or error → pass or fail).
    pub error_changes: Vec<CellChange>,
    /// Cells present in only one of the runs.
    pub only_before: usize,
    pub only_after: usize,
    pub configs: Vec<ConfigDelta>,
    /// Conversations, as units, whose every-turn-passed state changed in a configuration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<ConversationChange>,
}

/// A conversation that passed as a whole in one run and not in the other, with the turns that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationChange {
    pub conversation: String,
    pub config_id: String,
    pub kind: String,
    pub passed_before: bool,
    pub passed_after: bool,
    /// 1-based places of the turns whose outcome changed.
    pub changed_turns: Vec<usize>,
}

/// Passed over every cell: a cell with no verdict counts against the rate, as in the report's gates.
fn pass_rate(verdicts: &[&Verdict]) -> Option<f64> {
    (!verdicts.is_empty()).then(|| {
        verdicts
            .iter()
            .filter(|v| outcome(v) == Outcome::Passed)
            .count() as f64
            / verdicts.len() as f64
    })
}

/// Compare run `before` with run `after` (each: its configurations and the first judge's verdicts);
/// `cases` (the suite) groups a conversation's turns into one unit.
pub fn diff_runs(
    cases: &[TestCase],
    before: (&[Configuration], &[Verdict]),
    after: (&[Configuration], &[Verdict]),
) -> RunDiff {
    let primary =
        |vs: &[Verdict]| -> Vec<Verdict> { primary_verdicts(vs).into_iter().cloned().collect() };
    let (b, a) = (primary(before.1), primary(after.1));
    let index = |vs: &[Verdict]| -> HashMap<(String, String), Outcome> {
        vs.iter()
            .map(|v| ((v.case_id.clone(), v.config_id.clone()), outcome(v)))
            .collect()
    };
    let (bi, ai) = (index(&b), index(&a));
    let mut diff = RunDiff {
        regressions: vec![],
        fixes: vec![],
        error_changes: vec![],
        only_before: bi.keys().filter(|k| !ai.contains_key(*k)).count(),
        only_after: ai.keys().filter(|k| !bi.contains_key(*k)).count(),
        configs: vec![],
        conversations: conversation_changes(cases, &bi, &ai),
    };
    let mut keys: Vec<&(String, String)> = bi.keys().filter(|k| ai.contains_key(*k)).collect();
    keys.sort();
    for key in keys {
        let (x, y) = (bi[key], ai[key]);
        let change = CellChange {
            case_id: key.0.clone(),
            config_id: key.1.clone(),
            before: x,
            after: y,
        };
        match (x, y) {
            // A cell that passed and now has no verdict has lost its pass: a regression, not a shrug.
            (Outcome::Passed, Outcome::Failed | Outcome::Error) => diff.regressions.push(change),
            (Outcome::Failed, Outcome::Passed) => diff.fixes.push(change),
            (p, q) if p != q => diff.error_changes.push(change),
            _ => {}
        }
    }
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    for c in before.0.iter().chain(after.0) {
        labels.entry(c.id.clone()).or_insert_with(|| c.label());
    }
    for (id, label) in labels {
        let vb: Vec<&Verdict> = b.iter().filter(|v| v.config_id == id).collect();
        let va: Vec<&Verdict> = a.iter().filter(|v| v.config_id == id).collect();
        let (paired, mcnemar_p, score_change) = paired_tests(&vb, &va);
        diff.configs.push(ConfigDelta {
            paired,
            mcnemar_p,
            score_change,
            pass_rate_before: pass_rate(&vb),
            pass_rate_after: pass_rate(&va),
            regressions: diff
                .regressions
                .iter()
                .filter(|c| c.config_id == id)
                .count(),
            fixes: diff.fixes.iter().filter(|c| c.config_id == id).count(),
            config_id: id,
            label,
        });
    }
    diff
}

/// Conversations whose every-turn-passed state differs between the runs, per configuration both ran.
fn conversation_changes(
    cases: &[TestCase],
    before: &HashMap<(String, String), Outcome>,
    after: &HashMap<(String, String), Outcome>,
) -> Vec<ConversationChange> {
    let mut turns: BTreeMap<&str, Vec<&TestCase>> = BTreeMap::new();
    for case in cases {
        if let Some(id) = case.conversation() {
            turns.entry(id).or_default().push(case);
        }
    }
    let configs: std::collections::BTreeSet<&str> = before
        .keys()
        .filter(|k| after.contains_key(*k))
        .map(|k| k.1.as_str())
        .collect();
    let mut out = Vec::new();
    for (id, list) in &mut turns {
        list.sort_by_key(|c| c.turn.as_ref().map_or(0, |t| t.index));
        for config in &configs {
            let key = |c: &TestCase| (c.id.clone(), config.to_string());
            let passed = |index: &HashMap<(String, String), Outcome>| {
                list.iter()
                    .all(|c| index.get(&key(c)) == Some(&Outcome::Passed))
            };
            let (was, is) = (passed(before), passed(after));
            if was == is {
                continue;
            }
            out.push(ConversationChange {
                conversation: id.to_string(),
                config_id: config.to_string(),
                kind: list[0]
                    .turn
                    .as_ref()
                    .map_or("", |t| t.kind.as_str())
                    .to_string(),
                passed_before: was,
                passed_after: is,
                changed_turns: list
                    .iter()
                    .filter(|c| before.get(&key(c)) != after.get(&key(c)))
                    .filter_map(|c| c.turn.as_ref().map(|t| t.index))
                    .collect(),
            });
        }
    }
    out
}

pub fn render_diff(diff: &RunDiff) -> String {
    let pct = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{:.1}%", v * 100.0));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<40} {:>10} {:>10} {:>12} {:>6} {:>9} {:>26}",
        "configuration",
        "pass rate",
        "→ now",
        "regressions",
        "fixes",
        "McNemar p",
        "Δ score (95% bootstrap)"
    );
    for c in &diff.configs {
        let _ = writeln!(
            out,
            "{:<40} {:>10} {:>10} {:>12} {:>6} {:>9} {:>26}",
            c.label.chars().take(40).collect::<String>(),
            pct(c.pass_rate_before),
            pct(c.pass_rate_after),
            c.regressions,
            c.fixes,
            c.mcnemar_p.map_or("–".into(), |p| format!("{p:.3}")),
            c.score_change.map_or("–".into(), |i| format!(
                "{:+.3} [{:+.3}, {:+.3}]",
                i.estimate, i.low, i.high
            ))
        );
    }
    let _ = writeln!(
        out,
        "\n{} regressions, {} fixes, {} error changes; {} cells only before, {} only after",
        diff.regressions.len(),
        diff.fixes.len(),
        diff.error_changes.len(),
        diff.only_before,
        diff.only_after
    );
    for c in &diff.regressions {
        let _ = writeln!(
            out,
            "regressed: case {} in configuration {}",
            c.case_id, c.config_id
        );
    }
    for c in &diff.conversations {
        let turns: Vec<String> = c.changed_turns.iter().map(usize::to_string).collect();
        let _ = writeln!(
            out,
            "conversation {} ({}) in configuration {}: {} (turns {} changed)",
            c.conversation,
            c.kind.replace('_', " "),
            c.config_id,
            if c.passed_after {
                "now passes whole"
            } else {
                "no longer passes whole"
            },
            turns.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::RuleMetrics;

    fn v(case: &str, passed: Option<bool>) -> Verdict {
        Verdict {
            schema_version: 1,
            case_id: case.into(),
            config_id: "k".into(),
            judge: "j".into(),
            status: if passed.is_some() {
                VerdictStatus::Ok
            } else {
                VerdictStatus::ExecError
            },
            criteria: None,
            criteria_mean: None,
            rubric: None,
            metrics: RuleMetrics::default(),
            passed,
            error: None,
            sample: 0,
            notes: Vec::new(),
            rule_failure: None,
            claims: None,
            attribution: None,
            score: None,
            profile: None,
            row_id: None,
        }
    }

    #[test]
    fn regressions_fixes_errors_and_rates() {
        let before = vec![
            v("a", Some(true)),
            v("b", Some(false)),
            v("c", Some(true)),
            v("d", Some(true)),
        ];
        let after = vec![
            v("a", Some(false)),
            v("b", Some(true)),
            v("c", None),
            v("e", Some(true)),
        ];
        let d = diff_runs(&[], (&[], &before), (&[], &after));
        // "c" passed and now errors: that is a regression too.
        let regressed: Vec<(&str, Outcome)> = d
            .regressions
            .iter()
            .map(|c| (c.case_id.as_str(), c.after))
            .collect();
        assert_eq!(regressed, [("a", Outcome::Failed), ("c", Outcome::Error)]);
        assert_eq!(d.fixes[0].case_id, "b");
        assert!(d.error_changes.is_empty());
        assert_eq!((d.only_before, d.only_after), (1, 1));
        assert!(render_diff(&d).contains("2 regressions, 1 fixes, 0 error changes"));
        // The error counts against the pass rate after: 2 of 4 cells passed, not 2 of 3.
        assert_eq!(pass_rate(&after.iter().collect::<Vec<_>>()), Some(0.5));
    }

    #[test]
    fn a_conversation_that_no_longer_passes_whole_is_one_change_naming_its_turns() {
        let turn = |id: &str, index| crate::testdata::turn(id, "talk", index, 2);
        let cases = vec![turn("t1", 1), turn("t2", 2)];
        let before = vec![v("t1", Some(true)), v("t2", Some(true))];
        let after = vec![v("t1", Some(true)), v("t2", Some(false))];
        let d = diff_runs(&cases, (&[], &before), (&[], &after));
        assert_eq!(d.conversations.len(), 1);
        let c = &d.conversations[0];
        assert_eq!((c.passed_before, c.passed_after), (true, false));
        assert_eq!(c.changed_turns, [2]);
        assert!(render_diff(&d).contains("conversation talk (follow up)"));
        assert!(
            diff_runs(&cases, (&[], &before), (&[], &before))
                .conversations
                .is_empty()
        );
    }

    #[test]
    fn paired_tests_by_hand() {
        // 2 regressions and 8 fixes among 12 paired cells: McNemar exact p = 0.109375.
        let mut before = Vec::new();
        let mut after = Vec::new();
        for i in 0..12 {
            let (p, q) = match i {
                0 | 1 => (true, false),
                2..=9 => (false, true),
                _ => (true, true),
            };
            let mut x = v(&format!("c{i}"), Some(p));
            let mut y = v(&format!("c{i}"), Some(q));
            x.criteria_mean = Some(if p { 0.8 } else { 0.2 });
            y.criteria_mean = Some(if q { 0.8 } else { 0.2 });
            before.push(x);
            after.push(y);
        }
        let b: Vec<&Verdict> = before.iter().collect();
        let a: Vec<&Verdict> = after.iter().collect();
        let (paired, p, change) = paired_tests(&b, &a);
        assert_eq!(paired, 12);
        assert!((p.unwrap() - 0.109375).abs() < 1e-12);
        // Changes: 2 × −0.6, 8 × +0.6, 2 × 0 → mean +0.3.
        let change = change.unwrap();
        assert!((change.estimate - 0.3).abs() < 1e-9);
        assert!(change.low < 0.3 && change.high > 0.3);
    }
}
