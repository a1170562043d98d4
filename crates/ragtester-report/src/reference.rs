//! What the retrieval is worth, from the matrix's reference points: a configuration's headroom is what
//! the same model, chunking and history mode pass with the case's own passages (`oracle`) over what it
//! passes with its retriever, on the answerable cases — with how many of its failures perfect retrieval
//! fixes. Leaky cases are the answerable cases a model passes with no passages at all (`none`, closed
//! book): they test its memory, not the documents.

use ragtester_core::oracle::Interval;
use ragtester_core::{Configuration, RetrieverKind, TestCase, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One configuration against its oracle reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Headroom {
    pub config_id: String,
    pub label: String,
    /// The oracle configuration it is measured against.
    pub oracle_id: String,
    /// Answerable cases judged in both.
    pub cases: usize,
    pub pass_rate: f64,
    pub oracle_pass_rate: f64,
    /// Oracle's pass rate minus this configuration's, with a 95 % interval (Newcombe's hybrid score).
    pub headroom: f64,
    pub interval: Option<Interval>,
    /// This configuration's failures on those cases, and how many pass with the oracle's passages.
    pub failures: usize,
    pub fixed_by_oracle: usize,
}

/// Answerable cases a model passes closed book, for one closed-book configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Leaky {
    pub config_id: String,
    pub llm: String,
    /// Answerable cases it was judged on.
    pub cases: usize,
    pub leaky: Vec<LeakyCase>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeakyCase {
    pub case_id: String,
    pub query: String,
}

/// Whether a configuration and a reference differ only in retrieval: the same model, chunking and history.
fn same_but_retrieval(a: &Configuration, b: &Configuration) -> bool {
    a.target.is_none()
        && b.target.is_none()
        && a.llm == b.llm
        && a.chunking == b.chunking
        && a.history == b.history
}

/// The headroom of every configuration that has an oracle reference, and the leaky cases of every
/// closed-book configuration.
pub fn reference_points(
    cases: &[TestCase],
    configs: &[Configuration],
    verdicts: &[&Verdict],
) -> (Vec<Headroom>, Vec<Leaky>) {
    let answerable: HashMap<&str, &TestCase> = cases
        .iter()
        .filter(|c| !c.expects_refusal())
        .map(|c| (c.id.as_str(), c))
        .collect();
    let mut passed: HashMap<&str, HashMap<&str, bool>> = HashMap::new();
    for v in verdicts {
        if answerable.contains_key(v.case_id.as_str()) {
            passed
                .entry(v.config_id.as_str())
                .or_default()
                .insert(v.case_id.as_str(), v.passed == Some(true));
        }
    }
    let empty = HashMap::new();
    let of = |c: &Configuration| passed.get(c.id.as_str()).unwrap_or(&empty);
    let mut headroom = Vec::new();
    for oracle in configs
        .iter()
        .filter(|c| c.retriever == RetrieverKind::Oracle)
    {
        let with = of(oracle);
        for config in configs
            .iter()
            .filter(|c| c.retriever != RetrieverKind::Oracle && same_but_retrieval(c, oracle))
        {
            let own = of(config);
            let both: Vec<(&str, bool, bool)> = own
                .iter()
                .filter_map(|(case, p)| with.get(case).map(|q| (*case, *p, *q)))
                .collect();
            if both.is_empty() {
                continue;
            }
            let n = both.len();
            let (ours, theirs) = (
                both.iter().filter(|b| b.1).count(),
                both.iter().filter(|b| b.2).count(),
            );
            let (p, q) = (ours as f64 / n as f64, theirs as f64 / n as f64);
            headroom.push(Headroom {
                config_id: config.id.clone(),
                label: config.label(),
                oracle_id: oracle.id.clone(),
                cases: n,
                pass_rate: p,
                oracle_pass_rate: q,
                headroom: q - p,
                interval: newcombe((theirs, n), (ours, n)),
                failures: n - ours,
                fixed_by_oracle: both.iter().filter(|b| !b.1 && b.2).count(),
            });
        }
    }
    let leaky = configs
        .iter()
        .filter(|c| c.retriever == RetrieverKind::ClosedBook)
        .map(|closed| {
            let judged = of(closed);
            let mut leaky: Vec<LeakyCase> = judged
                .iter()
                .filter(|(_, p)| **p)
                .map(|(case, _)| LeakyCase {
                    case_id: case.to_string(),
                    query: answerable[case].query.clone(),
                })
                .collect();
            leaky.sort_by(|a, b| a.case_id.cmp(&b.case_id));
            Leaky {
                config_id: closed.id.clone(),
                llm: closed.llm.clone(),
                cases: judged.len(),
                leaky,
            }
        })
        .collect();
    (headroom, leaky)
}

/// Newcombe's hybrid score interval for the difference of two proportions a − b (95 %), from each one's
/// Wilson interval.
fn newcombe(a: (usize, usize), b: (usize, usize)) -> Option<Interval> {
    let wilson = |(k, n): (usize, usize)| ragtester_judge::stats::wilson(k, n, 0.95);
    let (wa, wb) = (wilson(a)?, wilson(b)?);
    let (pa, pb) = (a.0 as f64 / a.1 as f64, b.0 as f64 / b.1 as f64);
    let d = pa - pb;
    Some(Interval {
        low: d - ((pa - wa.low).powi(2) + (wb.high - pb).powi(2)).sqrt(),
        high: d + ((wa.high - pa).powi(2) + (pb - wb.low).powi(2)).sqrt(),
        estimate: d,
    })
}

impl Headroom {
    /// One line for a person: the gain perfect retrieval would bring, and the failures it fixes.
    pub fn line(&self) -> String {
        let interval = self.interval.map_or(String::new(), |i| {
            format!(" [95% {:+.1}–{:+.1}]", i.low * 100.0, i.high * 100.0)
        });
        format!(
            "{}: {:.1}% → {:.1}% with the oracle's passages, headroom {:+.1} pts{interval}; perfect retrieval \
             fixes {} of its {} failures on {} answerable cases",
            self.label,
            self.pass_rate * 100.0,
            self.oracle_pass_rate * 100.0,
            self.headroom * 100.0,
            self.fixed_by_oracle,
            self.failures,
            self.cases
        )
    }
}

impl Leaky {
    /// One line for a person: how many answerable cases the model passes from memory.
    pub fn line(&self) -> String {
        format!(
            "{} passes {} of {} answerable cases closed book: they test its memory, not the documents",
            self.llm,
            self.leaky.len(),
            self.cases
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, verdict};
    use ragtester_core::{ChunkingSettings, VerdictStatus};

    fn config(retriever: RetrieverKind) -> Configuration {
        Configuration::new(
            "offline".into(),
            "none".into(),
            retriever,
            3,
            ChunkingSettings::default(),
            Default::default(),
        )
    }

    #[test]
    fn headroom_and_leaky_cases_come_from_the_reference_points() {
        let cases: Vec<TestCase> = (0..4).map(|i| case(&format!("c{i}"), "q?")).collect();
        let (bm25, oracle, closed) = (
            config(RetrieverKind::Bm25),
            config(RetrieverKind::Oracle),
            config(RetrieverKind::ClosedBook),
        );
        let mut verdicts = Vec::new();
        // bm25 passes c0 only; the oracle passes c0, c1, c2; closed book passes c3.
        for (config, passing) in [(&bm25, [0]), (&oracle, [0]), (&closed, [3])] {
            for i in 0..4 {
                let pass = passing.contains(&i) || (config.id == oracle.id && i < 3);
                let id = format!("c{i}");
                verdicts.push(verdict(&id, &config.id, Some(pass), VerdictStatus::Ok));
            }
        }
        let refs: Vec<&Verdict> = verdicts.iter().collect();
        let configs = [bm25.clone(), oracle.clone(), closed.clone()];
        let (headroom, leaky) = reference_points(&cases, &configs, &refs);
        let of = |id: &str| headroom.iter().find(|h| h.config_id == id).unwrap();
        let h = of(&bm25.id);
        assert_eq!((h.cases, h.failures, h.fixed_by_oracle), (4, 3, 2));
        assert!((h.headroom - 0.5).abs() < 1e-9);
        let i = h.interval.unwrap();
        assert!(i.low < 0.5 && 0.5 < i.high, "{i:?}");
        // Closed book has headroom too (the oracle's passages are what it lacks).
        assert_eq!(of(&closed.id).fixed_by_oracle, 3);
        assert_eq!(leaky.len(), 1);
        assert_eq!(leaky[0].leaky.len(), 1);
        assert_eq!(leaky[0].leaky[0].case_id, "c3");
    }
}
