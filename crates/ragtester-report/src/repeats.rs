//! The repeats of one configuration (`run --repeat N`) folded together: how many cases passed in k of the
//! N repeats, each case whose outcomes disagree across repeats (flaky), and the pass rate under a policy —
//! every repeat passes, at least k of N, or the mean over repeats. A cell with no verdict counts as not
//! passed, as it does in every gate.

use ragtester_core::{Configuration, TestCase, Verdict, VerdictStatus};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Flaky cases listed per configuration (all of them are counted).
const LISTED: usize = 50;

/// How a case answered N times counts as passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum RepeatPolicy {
    /// Passes in every repeat.
    All,
    /// Passes in at least `k` of the repeats.
    AtLeast { k: u32 },
    /// Counts as the share of repeats it passed.
    #[default]
    Mean,
}

impl RepeatPolicy {
    /// `all`, `mean`, or `K` (at least K of N).
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        match text.trim() {
            "all" => Ok(Self::All),
            "mean" => Ok(Self::Mean),
            k => match k.parse::<u32>() {
                Ok(k) if k >= 1 => Ok(Self::AtLeast { k }),
                _ => anyhow::bail!(
                    "`{text}`: a repeat policy is `all`, `mean` or a number K (at least K of N passes)"
                ),
            },
        }
    }

    pub fn describe(self) -> String {
        match self {
            Self::All => "every repeat passes".into(),
            Self::AtLeast { k } => format!("at least {k} repeats pass"),
            Self::Mean => "the mean over repeats".into(),
        }
    }
}

/// One configuration's repeats folded together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatedConfig {
    /// The configuration without its repeat (`Configuration::base_id`).
    pub base_id: String,
    pub label: String,
    pub repeats: u32,
    pub cases: usize,
    /// `passes[k]`: cases that passed in exactly k of the repeats (k = 0..=N).
    pub passes: Vec<usize>,
    /// Cases whose outcomes disagree across repeats: passed in some, not in others.
    pub flaky: usize,
    /// The first flaky cases, worst first (fewest passes).
    pub flaky_cases: Vec<FlakyCase>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlakyCase {
    pub case_id: String,
    pub query: String,
    pub passed: u32,
    pub of: u32,
    /// Repeats with no verdict (an execution or judge error).
    pub errors: u32,
}

impl RepeatedConfig {
    /// "pass rate every repeat X, mean Y": the two ends of the policies, as every rendering says them.
    pub fn rates(&self) -> String {
        format!(
            "pass rate every repeat {}, mean {}",
            crate::percent::pct(self.pass_rate(RepeatPolicy::All)),
            crate::percent::pct(self.pass_rate(RepeatPolicy::Mean))
        )
    }

    /// The pass rate under `policy`: None without cases.
    pub fn pass_rate(&self, policy: RepeatPolicy) -> Option<f64> {
        if self.cases == 0 {
            return None;
        }
        let n = self.repeats as usize;
        let passed: f64 = match policy {
            RepeatPolicy::All => self.passes[n] as f64,
            RepeatPolicy::AtLeast { k } => {
                self.passes[(k as usize).min(n)..].iter().sum::<usize>() as f64
            }
            RepeatPolicy::Mean => {
                self.passes
                    .iter()
                    .enumerate()
                    .map(|(k, c)| (k * c) as f64)
                    .sum::<f64>()
                    / n as f64
            }
        };
        Some(passed / self.cases as f64)
    }
}

/// Every repeated configuration of a run, folded; empty when the run has no repeats.
pub fn fold_repeats(
    cases: &[TestCase],
    configs: &[Configuration],
    verdicts: &[&Verdict],
) -> Vec<RepeatedConfig> {
    let outcome: HashMap<(&str, &str), bool> = verdicts
        .iter()
        .map(|v| {
            let passed = v.status == VerdictStatus::Ok && v.passed == Some(true);
            ((v.case_id.as_str(), v.config_id.as_str()), passed)
        })
        .collect();
    let judged: HashMap<(&str, &str), bool> = verdicts
        .iter()
        .map(|v| {
            let ok = v.status == VerdictStatus::Ok && v.passed.is_some();
            ((v.case_id.as_str(), v.config_id.as_str()), ok)
        })
        .collect();
    let mut groups: BTreeMap<String, Vec<&Configuration>> = BTreeMap::new();
    for c in configs.iter().filter(|c| c.repeat.is_some()) {
        groups.entry(c.base_id()).or_default().push(c);
    }
    let mut out = Vec::new();
    for (base_id, repeats) in groups {
        let n = repeats.len() as u32;
        let mut passes = vec![0; n as usize + 1];
        let mut flaky_cases = Vec::new();
        for case in cases {
            let passed = repeats
                .iter()
                .filter(|c| outcome.get(&(case.id.as_str(), c.id.as_str())) == Some(&true))
                .count() as u32;
            let errors = repeats
                .iter()
                .filter(|c| judged.get(&(case.id.as_str(), c.id.as_str())) != Some(&true))
                .count() as u32;
            passes[passed as usize] += 1;
            if passed > 0 && passed < n {
                flaky_cases.push(FlakyCase {
                    case_id: case.id.clone(),
                    query: case.query.clone(),
                    passed,
                    of: n,
                    errors,
                });
            }
        }
        flaky_cases.sort_by_key(|f| (f.passed, f.case_id.clone()));
        let flaky = flaky_cases.len();
        flaky_cases.truncate(LISTED);
        out.push(RepeatedConfig {
            label: repeats[0].base_label(),
            base_id,
            repeats: n,
            cases: cases.len(),
            passes,
            flaky,
            flaky_cases,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, config, verdict};

    #[test]
    fn passes_out_of_n_flaky_cases_and_each_policy() {
        let base = config();
        let repeats: Vec<Configuration> = (1..=3).map(|i| base.clone().with_repeat(i, 3)).collect();
        let cases = vec![case("steady", "q"), case("flaky", "q"), case("broken", "q")];
        let mut verdicts = Vec::new();
        for (i, r) in repeats.iter().enumerate() {
            let ok = VerdictStatus::Ok;
            verdicts.push(verdict("steady", &r.id, Some(true), ok));
            verdicts.push(verdict("flaky", &r.id, Some(i != 1), ok));
            verdicts.push(match i {
                0 => verdict("broken", &r.id, None, VerdictStatus::ExecError),
                _ => verdict("broken", &r.id, Some(false), ok),
            });
        }
        let refs: Vec<&Verdict> = verdicts.iter().collect();
        let folded = fold_repeats(&cases, &repeats, &refs);
        assert_eq!(folded.len(), 1);
        let f = &folded[0];
        assert_eq!(f.base_id, base.id);
        assert_eq!(f.label, base.label());
        assert_eq!(f.passes, [1, 0, 1, 1]);
        assert_eq!(f.flaky, 1);
        assert_eq!(f.flaky_cases[0].case_id, "flaky");
        assert_eq!((f.flaky_cases[0].passed, f.flaky_cases[0].of), (2, 3));
        assert_eq!(f.pass_rate(RepeatPolicy::All), Some(1.0 / 3.0));
        assert_eq!(f.pass_rate(RepeatPolicy::AtLeast { k: 2 }), Some(2.0 / 3.0));
        assert_eq!(f.pass_rate(RepeatPolicy::AtLeast { k: 9 }), Some(1.0 / 3.0));
        assert!((f.pass_rate(RepeatPolicy::Mean).unwrap() - 5.0 / 9.0).abs() < 1e-12);
        assert!(fold_repeats(&cases, &[base], &refs).is_empty());
        assert_eq!(
            RepeatPolicy::parse("2").unwrap(),
            RepeatPolicy::AtLeast { k: 2 }
        );
        assert!(RepeatPolicy::parse("0").is_err() && RepeatPolicy::parse("most").is_err());
    }
}
