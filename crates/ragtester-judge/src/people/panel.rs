//! Several judges, or several samples of one, become one verdict per cell: by majority vote on pass/fail,
//! or by the mean of the criteria. Every judge's verdict stays in the records beside the panel's.

use ragtester_core::{Verdict, VerdictStatus};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelMethod {
    /// Pass when more verdicts pass than fail; a tie goes to the mean of the criteria (≥ 0.5).
    Majority,
    /// Pass when the mean of the verdicts' criteria means is ≥ 0.5 and most did not rate faithfulness False.
    Mean,
}

impl PanelMethod {
    pub fn parse(s: &str) -> anyhow::Result<Self> {
        match s {
            "majority" => Ok(Self::Majority),
            "mean" => Ok(Self::Mean),
            other => anyhow::bail!("unknown panel method `{other}`: expected majority or mean"),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Majority => "majority",
            Self::Mean => "mean",
        }
    }

    /// The judge name panel verdicts carry.
    pub fn judge_name(self) -> String {
        format!("panel:{}", self.as_str())
    }
}

/// One verdict per (case, configuration), in the order cells first appear. Errors of some judges do not
/// stop the others deciding; a cell no judge could decide keeps the error (exec errors stay exec errors).
pub fn consensus(verdicts: &[Verdict], method: PanelMethod) -> Vec<Verdict> {
    let mut order: Vec<(&str, &str)> = Vec::new();
    let mut cells: HashMap<(&str, &str), Vec<&Verdict>> = HashMap::new();
    for v in verdicts {
        let key = (v.case_id.as_str(), v.config_id.as_str());
        cells
            .entry(key)
            .or_insert_with(|| {
                order.push(key);
                Vec::new()
            })
            .push(v);
    }
    order
        .into_iter()
        .map(|key| decide(&cells[&key], method))
        .collect()
}

fn decide(votes: &[&Verdict], method: PanelMethod) -> Verdict {
    let decided: Vec<&Verdict> = votes
        .iter()
        .copied()
        .filter(|v| v.status == VerdictStatus::Ok && v.passed.is_some())
        .collect();
    let first = votes[0];
    let mut out = Verdict {
        judge: method.judge_name(),
        sample: 0,
        ..first.clone()
    };
    if decided.is_empty() {
        out.error = Some(
            votes
                .iter()
                .filter_map(|v| v.error.as_ref().map(|e| format!("{}: {e}", v.judge)))
                .collect::<Vec<_>>()
                .join(" | "),
        );
        return out;
    }
    let means: Vec<f64> = decided.iter().filter_map(|v| v.criteria_mean).collect();
    let mean = means.iter().sum::<f64>() / means.len().max(1) as f64;
    let passes = decided.iter().filter(|v| v.passed == Some(true)).count();
    let fails = decided.len() - passes;
    let passed = match method {
        PanelMethod::Majority if passes != fails => passes > fails,
        PanelMethod::Majority => mean >= 0.5,
        PanelMethod::Mean => {
            let unfaithful = decided
                .iter()
                .filter(|v| {
                    v.criteria
                        .as_ref()
                        .is_some_and(|c| c.faithfulness.rating == ragtester_core::Rating::False)
                })
                .count();
            mean >= 0.5 && unfaithful * 2 <= decided.len()
        }
    };
    // The reasons shown are those of the first judge that decided as the panel did.
    let representative = decided
        .iter()
        .find(|v| v.passed == Some(passed))
        .unwrap_or(&decided[0]);
    out.status = VerdictStatus::Ok;
    // Rule failures come from the case and the answer, the same for every vote: no panel overrules them.
    out.passed = Some(passed && first.rule_failure.is_none());
    out.criteria_mean = Some(mean);
    out.criteria = representative.criteria.clone();
    out.rubric = representative.rubric.clone();
    out.error = None;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(judge: &str, passed: Option<bool>, mean: f64) -> Verdict {
        Verdict {
            schema_version: 1,
            case_id: "c".into(),
            config_id: "k".into(),
            judge: judge.into(),
            status: if passed.is_some() {
                VerdictStatus::Ok
            } else {
                VerdictStatus::JudgeError
            },
            criteria: None,
            criteria_mean: passed.map(|_| mean),
            rubric: None,
            metrics: Default::default(),
            passed,
            error: passed.is_none().then(|| "unreadable".to_string()),
            sample: 0,
            notes: Vec::new(),
            rule_failure: None,
            overrode_judge: None,
            claims: None,
            attribution: None,
            score: None,
            profile: None,
            row_id: None,
        }
    }

    #[test]
    fn majority_mean_ties_and_errors() {
        let v = [
            vote("a", Some(true), 0.9),
            vote("b", Some(false), 0.3),
            vote("c", Some(true), 0.6),
            vote("d", None, 0.0),
        ];
        let m = consensus(&v, PanelMethod::Majority);
        assert_eq!(m.len(), 1);
        assert_eq!(
            (m[0].passed, m[0].judge.as_str()),
            (Some(true), "panel:majority")
        );
        assert!((m[0].criteria_mean.unwrap() - 0.6).abs() < 1e-12);
        // A tie is broken by the mean: (0.9 + 0.3 + 0.6 + 0.1) / 4 = 0.475 < 0.5.
        let tie = [
            vote("a", Some(true), 0.9),
            vote("b", Some(false), 0.3),
            vote("c", Some(true), 0.6),
            vote("e", Some(false), 0.1),
        ];
        assert_eq!(
            consensus(&tie, PanelMethod::Majority)[0].passed,
            Some(false)
        );
        assert_eq!(
            consensus(&v[..2], PanelMethod::Mean)[0].passed,
            Some(true),
            "mean 0.6"
        );
        let none = consensus(&[vote("d", None, 0.0)], PanelMethod::Majority);
        assert_eq!(none[0].status, VerdictStatus::JudgeError);
        assert!(none[0].error.as_ref().unwrap().contains("d: unreadable"));
    }
}
