//! What the retrieval is worth, from the matrix's reference points: a configuration's headroom is what
//! the same model, chunking and history mode pass with the case's own passages (`oracle`) over what it
//! passes with its retriever, on the answerable cases — with how many of its failures perfect retrieval
//! fixes. Leaky cases are the answerable cases a model passes with no passages at all (`none`, closed
//! book): they test its memory, not the documents. Long context is each configuration against the same
//! model reading the case's whole documents (`full-doc`): pass rate, and what each costs in tokens, money
//! and time.

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

/// A configuration against the same model given the whole documents instead of retrieval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongContext {
    pub config_id: String,
    pub label: String,
    /// The `full-doc` configuration it is compared with.
    pub full_doc_id: String,
    /// Answerable cases judged in both.
    pub cases: usize,
    pub pass_rate: f64,
    pub full_doc_pass_rate: f64,
    /// This configuration's pass rate minus the whole documents', with a 95 % interval (Newcombe).
    pub difference: f64,
    pub interval: Option<Interval>,
    /// What each answers with: filled from the configurations' rows.
    #[serde(default)]
    pub spend: Spend,
    #[serde(default)]
    pub full_doc_spend: Spend,
}

/// What a configuration's answers cost: prompt tokens per answer, median latency, dollars (with a price).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    pub prompt_tokens_per_answer: Option<f64>,
    pub latency_p50_ms: Option<f64>,
    pub cost_usd: Option<f64>,
}

/// Two configurations' verdicts on the answerable cases both were judged on.
struct Paired {
    cases: usize,
    ours: usize,
    theirs: usize,
    /// Cases ours failed and theirs passed.
    only_theirs: usize,
}

impl Paired {
    fn of(own: &HashMap<&str, bool>, with: &HashMap<&str, bool>) -> Option<Self> {
        let both: Vec<(bool, bool)> = own
            .iter()
            .filter_map(|(case, p)| with.get(case).map(|q| (*p, *q)))
            .collect();
        (!both.is_empty()).then(|| Self {
            cases: both.len(),
            ours: both.iter().filter(|b| b.0).count(),
            theirs: both.iter().filter(|b| b.1).count(),
            only_theirs: both.iter().filter(|b| !b.0 && b.1).count(),
        })
    }

    fn rates(&self) -> (f64, f64) {
        let n = self.cases as f64;
        (self.ours as f64 / n, self.theirs as f64 / n)
    }
}

/// Whether a configuration and a reference differ only in retrieval: the same model, chunking and history.
fn same_but_retrieval(a: &Configuration, b: &Configuration) -> bool {
    a.target.is_none()
        && b.target.is_none()
        && a.llm == b.llm
        && a.chunking == b.chunking
        && a.history == b.history
}

/// Answerable cases' outcomes per configuration: whether each judged cell passed.
type Outcomes<'v> = HashMap<&'v str, HashMap<&'v str, bool>>;

/// The headroom of every configuration that has an oracle reference, its comparison with the whole
/// documents where `full-doc` ran, and the leaky cases of every closed-book configuration.
pub fn reference_points(
    cases: &[TestCase],
    configs: &[Configuration],
    verdicts: &[&Verdict],
) -> (Vec<Headroom>, Vec<Leaky>, Vec<LongContext>) {
    let answerable: HashMap<&str, &TestCase> = cases
        .iter()
        .filter(|c| !c.expects_refusal())
        .map(|c| (c.id.as_str(), c))
        .collect();
    let mut passed: Outcomes = HashMap::new();
    // A cell with no verdict (an execution or judge error) is left out of every pair: it is neither a
    // pass nor a failure perfect retrieval could fix.
    for v in verdicts {
        if let Some(pass) = v.passed
            && answerable.contains_key(v.case_id.as_str())
        {
            passed
                .entry(v.config_id.as_str())
                .or_default()
                .insert(v.case_id.as_str(), pass);
        }
    }
    (
        headroom(configs, &passed),
        leaky(configs, &passed, &answerable),
        long_context(configs, &passed),
    )
}

fn outcomes_of<'o, 'v>(passed: &'o Outcomes<'v>, c: &Configuration) -> &'o HashMap<&'v str, bool> {
    static EMPTY: std::sync::LazyLock<HashMap<&'static str, bool>> =
        std::sync::LazyLock::new(HashMap::new);
    passed.get(c.id.as_str()).unwrap_or(&EMPTY)
}

/// Each configuration against the oracle of the same model, chunking and history.
fn headroom(configs: &[Configuration], passed: &Outcomes) -> Vec<Headroom> {
    let mut out = Vec::new();
    for oracle in configs
        .iter()
        .filter(|c| c.retriever == RetrieverKind::Oracle)
    {
        let with = outcomes_of(passed, oracle);
        for config in configs
            .iter()
            .filter(|c| c.retriever != RetrieverKind::Oracle && same_but_retrieval(c, oracle))
        {
            let Some(pair) = Paired::of(outcomes_of(passed, config), with) else {
                continue;
            };
            let (p, q) = pair.rates();
            out.push(Headroom {
                config_id: config.id.clone(),
                label: config.label(),
                oracle_id: oracle.id.clone(),
                cases: pair.cases,
                pass_rate: p,
                oracle_pass_rate: q,
                headroom: q - p,
                interval: newcombe((pair.theirs, pair.cases), (pair.ours, pair.cases)),
                failures: pair.cases - pair.ours,
                fixed_by_oracle: pair.only_theirs,
            });
        }
    }
    out
}

/// Each retrieving configuration against the same model given the whole documents.
fn long_context(configs: &[Configuration], passed: &Outcomes) -> Vec<LongContext> {
    let mut out = Vec::new();
    for full in configs
        .iter()
        .filter(|c| c.retriever == RetrieverKind::FullDoc)
    {
        for config in configs
            .iter()
            .filter(|c| !c.retriever.is_reference() && same_but_retrieval(c, full))
        {
            let Some(pair) = Paired::of(outcomes_of(passed, config), outcomes_of(passed, full))
            else {
                continue;
            };
            let (p, q) = pair.rates();
            out.push(LongContext {
                config_id: config.id.clone(),
                label: config.label(),
                full_doc_id: full.id.clone(),
                cases: pair.cases,
                pass_rate: p,
                full_doc_pass_rate: q,
                difference: p - q,
                interval: newcombe((pair.ours, pair.cases), (pair.theirs, pair.cases)),
                spend: Spend::default(),
                full_doc_spend: Spend::default(),
            });
        }
    }
    out
}

/// The answerable cases each closed-book configuration passes.
fn leaky(
    configs: &[Configuration],
    passed: &Outcomes,
    answerable: &HashMap<&str, &TestCase>,
) -> Vec<Leaky> {
    configs
        .iter()
        .filter(|c| c.retriever == RetrieverKind::ClosedBook)
        .map(|closed| {
            let judged = outcomes_of(passed, closed);
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
        .collect()
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

impl LongContext {
    /// One line for a person: retrieval against the whole documents in pass rate and in what it costs.
    pub fn line(&self) -> String {
        let interval = self.interval.map_or(String::new(), |i| {
            format!(" [95% {:+.1}–{:+.1}]", i.low * 100.0, i.high * 100.0)
        });
        let spend = |s: &Spend| {
            let mut parts = Vec::new();
            if let Some(t) = s.prompt_tokens_per_answer {
                parts.push(format!("{t:.0} prompt tokens"));
            }
            if let Some(ms) = s.latency_p50_ms {
                parts.push(format!("P50 {ms:.1} ms"));
            }
            if let Some(usd) = s.cost_usd {
                parts.push(format!("${usd:.4}"));
            }
            parts.join(", ")
        };
        format!(
            "{}: {:.1}% against {:.1}% with the whole documents ({:+.1} pts{interval}) on {} answerable \
             cases; per answer {} against {}",
            self.label,
            self.pass_rate * 100.0,
            self.full_doc_pass_rate * 100.0,
            self.difference * 100.0,
            self.cases,
            spend(&self.spend),
            spend(&self.full_doc_spend)
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
        let (headroom, leaky, long_context) = reference_points(&cases, &configs, &refs);
        assert!(long_context.is_empty(), "no full-doc configuration was run");
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

    #[test]
    fn cells_without_a_verdict_are_left_out_and_long_context_is_paired_alike() {
        let cases: Vec<TestCase> = (0..4).map(|i| case(&format!("c{i}"), "q?")).collect();
        let (bm25, oracle, full) = (
            config(RetrieverKind::Bm25),
            config(RetrieverKind::Oracle),
            config(RetrieverKind::FullDoc),
        );
        let mut verdicts = Vec::new();
        for i in 0..4 {
            let id = format!("c{i}");
            // bm25 fails all four; the oracle passes c0 and c1 and could not be judged on c2 and c3.
            verdicts.push(verdict(&id, &bm25.id, Some(false), VerdictStatus::Ok));
            let judged = i < 2;
            let status = if judged {
                VerdictStatus::Ok
            } else {
                VerdictStatus::JudgeError
            };
            verdicts.push(verdict(&id, &oracle.id, judged.then_some(true), status));
            // The whole documents pass c0 to c2.
            verdicts.push(verdict(&id, &full.id, Some(i < 3), VerdictStatus::Ok));
        }
        let refs: Vec<&Verdict> = verdicts.iter().collect();
        let configs = [bm25.clone(), oracle, full.clone()];
        let (headroom, _, long_context) = reference_points(&cases, &configs, &refs);
        let h = headroom.iter().find(|h| h.config_id == bm25.id).unwrap();
        // Only c0 and c1 were judged in both: the errored oracle cells fix nothing and fail nothing.
        assert_eq!((h.cases, h.failures, h.fixed_by_oracle), (2, 2, 2));
        assert!((h.headroom - 1.0).abs() < 1e-9);
        // The whole documents are not compared with the other reference points, only with bm25.
        assert_eq!(long_context.len(), 1);
        let lc = &long_context[0];
        assert_eq!(
            (lc.config_id.as_str(), lc.full_doc_id.as_str()),
            (bm25.id.as_str(), full.id.as_str())
        );
        assert_eq!(lc.cases, 4);
        assert!((lc.difference + 0.75).abs() < 1e-9, "{lc:?}");
        assert!(
            lc.line()
                .contains("0.0% against 75.0% with the whole documents"),
            "{}",
            lc.line()
        );
    }
}
