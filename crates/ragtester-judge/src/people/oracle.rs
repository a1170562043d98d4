//! The oracle's own figures over a run's raw verdicts (every judge, every sample): counts and errors per
//! judge, agreement between judges on pass/fail, and 95 % intervals of each configuration's pass rate and
//! criteria mean — Wilson over cases for one sample, Student's t over the samples' means for several.

use crate::stats;
use ragtester_core::oracle::{Agreement, JudgeTally, MetricInterval, OracleSummary, PairAgreement};
use ragtester_core::{Verdict, VerdictStatus};
use std::collections::{BTreeMap, HashMap};

const CONFIDENCE: f64 = 0.95;

pub fn summarise(verdicts: &[Verdict], samples: u32, panel: Option<&str>) -> OracleSummary {
    let mut judges: Vec<String> = Vec::new();
    for v in verdicts {
        if !judges.contains(&v.judge) {
            judges.push(v.judge.clone());
        }
    }
    let tallies = judges
        .iter()
        .map(|j| {
            let mine = verdicts.iter().filter(|v| &v.judge == j);
            let mut t = JudgeTally {
                judge: j.clone(),
                verdicts: 0,
                passed: 0,
                failed: 0,
                judge_errors: 0,
                exec_errors: 0,
            };
            for v in mine {
                t.verdicts += 1;
                match (v.status, v.passed) {
                    (VerdictStatus::Ok, Some(true)) => t.passed += 1,
                    (VerdictStatus::Ok, Some(false)) => t.failed += 1,
                    (VerdictStatus::ExecError, _) => t.exec_errors += 1,
                    _ => t.judge_errors += 1,
                }
            }
            t
        })
        .collect();
    OracleSummary {
        judges: tallies,
        samples: samples.max(1),
        panel: panel.map(str::to_string),
        agreement: (judges.len() > 1).then(|| agreement(verdicts, &judges)),
        intervals: intervals(verdicts, &judges),
        prompt_version: None,
        people: Vec::new(),
    }
}

/// Pass/fail of each judge's sample 0, per cell.
fn decisions<'a>(verdicts: &'a [Verdict], judge: &str) -> HashMap<(&'a str, &'a str), bool> {
    verdicts
        .iter()
        .filter(|v| v.judge == judge && v.sample == 0 && v.status == VerdictStatus::Ok)
        .filter_map(|v| Some(((v.case_id.as_str(), v.config_id.as_str()), v.passed?)))
        .collect()
}

fn agreement(verdicts: &[Verdict], judges: &[String]) -> Agreement {
    let by_judge: Vec<_> = judges.iter().map(|j| decisions(verdicts, j)).collect();
    let mut pairs = Vec::new();
    for i in 0..judges.len() {
        for j in i + 1..judges.len() {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (cell, x) in &by_judge[i] {
                if let Some(y) = by_judge[j].get(cell) {
                    a.push(*x);
                    b.push(*y);
                }
            }
            pairs.push(PairAgreement {
                a: judges[i].clone(),
                b: judges[j].clone(),
                items: a.len(),
                percent: stats::percent_agreement(&a, &b),
                cohen_kappa: stats::cohen_kappa(&a, &b),
            });
        }
    }
    let counts: Vec<Vec<usize>> = by_judge[0]
        .keys()
        .filter_map(|cell| {
            let votes: Option<Vec<bool>> = by_judge.iter().map(|d| d.get(cell).copied()).collect();
            let votes = votes?;
            let passes = votes.iter().filter(|p| **p).count();
            Some(vec![passes, votes.len() - passes])
        })
        .collect();
    Agreement {
        pairs,
        items: counts.len(),
        fleiss_kappa: stats::fleiss_kappa(&counts),
    }
}

fn intervals(verdicts: &[Verdict], judges: &[String]) -> Vec<MetricInterval> {
    let mut out = Vec::new();
    // (judge, config) → sample → (passes, decided, criteria means)
    type Samples = BTreeMap<u32, (usize, usize, Vec<f64>)>;
    let mut groups: BTreeMap<(usize, String), Samples> = BTreeMap::new();
    for v in verdicts {
        let (Some(passed), VerdictStatus::Ok) = (v.passed, v.status) else {
            continue;
        };
        let judge = judges.iter().position(|j| *j == v.judge).unwrap_or(0);
        let entry = groups
            .entry((judge, v.config_id.clone()))
            .or_default()
            .entry(v.sample)
            .or_default();
        entry.0 += usize::from(passed);
        entry.1 += 1;
        entry.2.extend(v.criteria_mean);
    }
    for ((judge, config_id), samples) in groups {
        let judge = judges[judge].clone();
        let mut push = |metric: &str, method: &str, n: usize, interval| {
            out.push(MetricInterval {
                config_id: config_id.clone(),
                judge: judge.clone(),
                metric: metric.into(),
                method: method.into(),
                n,
                interval,
            })
        };
        if samples.len() == 1 {
            let (passes, decided, _) = samples.values().next().expect("one sample");
            if let Some(w) = stats::wilson(*passes, *decided, CONFIDENCE) {
                push("pass_rate", "wilson", *decided, w);
            }
            continue;
        }
        let rates: Vec<f64> = samples
            .values()
            .map(|(p, d, _)| *p as f64 / *d as f64)
            .collect();
        let means: Vec<f64> = samples
            .values()
            .filter(|(_, _, m)| !m.is_empty())
            .map(|(_, _, m)| m.iter().sum::<f64>() / m.len() as f64)
            .collect();
        if let Some(i) = stats::mean_interval(&rates, CONFIDENCE) {
            push("pass_rate", "t", rates.len(), i);
        }
        if let Some(i) = stats::mean_interval(&means, CONFIDENCE) {
            push("criteria_mean", "t", means.len(), i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(judge: &str, case: &str, sample: u32, passed: bool, mean: f64) -> Verdict {
        Verdict {
            schema_version: 1,
            case_id: case.into(),
            config_id: "k".into(),
            judge: judge.into(),
            status: VerdictStatus::Ok,
            criteria: None,
            criteria_mean: Some(mean),
            rubric: None,
            metrics: Default::default(),
            passed: Some(passed),
            error: None,
            sample,
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
    fn agreement_and_intervals_by_hand() {
        // Two judges on four cells: agree on c1, c2, c3, disagree on c4 → 75 %.
        // a passes c1 c2 c4 (0.75), b passes c1 c2 (0.5): p_e = 0.75·0.5 + 0.25·0.5 = 0.5, κ = 0.5.
        let mut all = vec![
            v("a", "c1", 0, true, 0.9),
            v("a", "c2", 0, true, 0.8),
            v("a", "c3", 0, false, 0.2),
            v("a", "c4", 0, true, 0.6),
            v("b", "c1", 0, true, 0.9),
            v("b", "c2", 0, true, 0.7),
            v("b", "c3", 0, false, 0.1),
            v("b", "c4", 0, false, 0.4),
        ];
        let s = summarise(&all, 1, Some("majority"));
        let pair = &s.agreement.as_ref().unwrap().pairs[0];
        assert_eq!(pair.items, 4);
        assert_eq!(pair.percent, Some(0.75));
        assert!((pair.cohen_kappa.unwrap() - 0.5).abs() < 1e-12);
        // Fleiss with two raters: P̄ = (1 + 1 + 1 + 0) / 4 = 0.75; p_pass = 5/8, p_fail = 3/8,
        // P̄e = 25/64 + 9/64 = 34/64; κ = (0.75 − 0.53125) / (1 − 0.53125) = 0.4667.
        assert!((s.agreement.as_ref().unwrap().fleiss_kappa.unwrap() - 0.466_667).abs() < 1e-5);
        assert_eq!(s.judges[0].passed, 3);
        assert_eq!(s.intervals[0].method, "wilson");
        assert_eq!(s.intervals[0].n, 4);

        // Repeated samples of judge a: pass rates 0.75, 0.5, 0.75 → mean 0.6667, t(0.975, 2) = 4.3027,
        // s = 0.1443 → half-width 4.3027 × 0.1443 / √3 = 0.3586.
        all.extend([
            v("a", "c1", 1, true, 0.9),
            v("a", "c2", 1, false, 0.4),
            v("a", "c3", 1, false, 0.2),
            v("a", "c4", 1, true, 0.6),
            v("a", "c1", 2, true, 0.9),
            v("a", "c2", 2, true, 0.8),
            v("a", "c3", 2, false, 0.2),
            v("a", "c4", 2, true, 0.6),
        ]);
        let s = summarise(&all, 3, None);
        let rate = s
            .intervals
            .iter()
            .find(|i| i.judge == "a" && i.metric == "pass_rate")
            .unwrap();
        assert_eq!((rate.method.as_str(), rate.n), ("t", 3));
        assert!((rate.interval.estimate - 2.0 / 3.0).abs() < 1e-9);
        assert!((rate.interval.high - rate.interval.estimate - 0.3586).abs() < 5e-4);
        assert!(
            s.intervals
                .iter()
                .any(|i| i.judge == "a" && i.metric == "criteria_mean")
        );
    }
}
