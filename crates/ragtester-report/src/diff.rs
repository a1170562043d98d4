//! Comparing two judged runs cell by cell: which (case, configuration) cells regressed (passed, now fail),
//! were fixed, or changed error state, and how each configuration's pass rate moved. Cases are matched by
//! their lineage (a case `generate --update` wrote again carries its ancestor's id) and configurations by
//! their id without the repeat (`run --repeat N`), so runs of a suite before and after its documents
//! changed, and runs with repeats, line up. What is not a regression is kept apart: cases rewritten because
//! their source changed, retired, new or stale; and flaky cells, whose repeats disagree in either run.

use crate::paired::paired_tests;
use crate::summary::primary_verdicts;
use ragtester_core::{Configuration, TestCase, Verdict, VerdictStatus};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    Error,
    /// Passed in some repeats and not in others.
    Flaky,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Error => "error",
            Outcome::Flaky => "flaky",
        }
    }
}

fn outcome(v: &Verdict) -> Outcome {
    match (v.status, v.passed) {
        (VerdictStatus::Ok, Some(true)) => Outcome::Passed,
        (VerdictStatus::Ok, Some(false)) => Outcome::Failed,
        _ => Outcome::Error,
    }
}

/// A cell's repeats as one outcome: passed or failed in every repeat, flaky where judged repeats disagree,
/// and an error where any repeat has no verdict — a cell that passed and now errors in one repeat has lost
/// its pass (a regression), not flaked.
fn folded(outcomes: &[Outcome]) -> Outcome {
    let passed = outcomes.iter().filter(|o| **o == Outcome::Passed).count();
    if outcomes.contains(&Outcome::Error) {
        Outcome::Error
    } else if passed == outcomes.len() {
        Outcome::Passed
    } else if passed > 0 {
        Outcome::Flaky
    } else {
        Outcome::Failed
    }
}

/// How many of a cell's repeats passed, of how many ran: a repeat with no verdict counts as not passed,
/// as it does in the report's repeat policies and gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Passes {
    pub passed: usize,
    pub of: usize,
    /// Repeats with no verdict (an execution or judge error).
    pub errors: usize,
}

impl Passes {
    fn add(&mut self, outcome: Outcome) {
        self.of += 1;
        self.passed += usize::from(outcome == Outcome::Passed);
        self.errors += usize::from(outcome == Outcome::Error);
    }

    fn rate(self) -> f64 {
        self.passed as f64 / self.of.max(1) as f64
    }

    fn mixed(self) -> bool {
        self.passed > 0 && self.passed < self.of
    }
}

impl std::fmt::Display for Passes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.passed, self.of)
    }
}

/// One-sided significance at which a change in a cell's pass count is called a regression or a fix.
pub const GATE_ALPHA: f64 = 0.05;
/// Up to this one-sided p-value a change is suggestive but unproven: inconclusive, asking for more repeats.
pub const SUGGESTIVE: f64 = 0.25;

/// What the gate calls one cell compared in both runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Call {
    Regressed,
    Improved,
    /// The pass count moved as chance moves it, in a cell that passes only some of the time.
    Flaky,
    /// The pass count moved more than chance usually moves it, with too few repeats to tell.
    Inconclusive,
    ErrorChange,
    Same,
}

/// The gate on one cell: k of N passes before against j of M after, by Fisher's exact test (one-sided, in
/// the direction the pass rate moved): 5/5 → 1/5 (p = 0.024) and 3/3 → 0/3 (p = 0.05) regress; one run
/// against one run keeps its plain meaning, passed then failed is a regression. Returns the call and the
/// test's p-value; `holm` then holds the cells of one diff together (Holm with Tarone's family).
fn call(x: Outcome, y: Outcome, before: Passes, after: Passes) -> (Call, Option<f64>) {
    if before.of <= 1 && after.of <= 1 {
        let plain = match (x, y) {
            (Outcome::Passed, Outcome::Failed | Outcome::Error) => Call::Regressed,
            (Outcome::Failed, Outcome::Passed) => Call::Improved,
            (p, q) if p != q => Call::ErrorChange,
            _ => Call::Same,
        };
        return (plain, None);
    }
    let (k, n, j, m) = (before.passed, before.of, after.passed, after.of);
    let (rate_before, rate_after) = (before.rate(), after.rate());
    if (rate_before - rate_after).abs() < 1e-12 {
        let c = if before.mixed() || after.mixed() {
            Call::Flaky
        } else if before.errors != after.errors {
            Call::ErrorChange
        } else {
            Call::Same
        };
        return (c, None);
    }
    let dropped = rate_after < rate_before;
    let p = if dropped {
        ragtester_judge::stats::fisher_greater(k, n, j, m)
    } else {
        ragtester_judge::stats::fisher_greater(j, m, k, n)
    };
    let c = if p <= GATE_ALPHA {
        if dropped {
            Call::Regressed
        } else {
            Call::Improved
        }
    } else if p <= SUGGESTIVE || !(before.mixed() || after.mixed()) {
        // Every repeat agreed on each side (0/1 → 2/2): not chance at work, too few repeats to call.
        Call::Inconclusive
    } else {
        Call::Flaky
    };
    (c, Some(p))
}

/// The smallest p-value a cell's pass counts could give with the same totals: every pass on the side that
/// moved ahead. A cell whose counts could never reach significance (5/5 → 4/5: at best p = 0.5) is not a
/// test the diff can lose, so it does not widen the correction (Tarone's rule for discrete tests).
fn least_p(before: Passes, after: Passes, dropped: bool) -> f64 {
    let (ahead, behind) = if dropped {
        (before.of, after.of)
    } else {
        (after.of, before.of)
    };
    let total = before.passed + after.passed;
    let most = total.min(ahead);
    ragtester_judge::stats::fisher_greater(most, ahead, total - most, behind)
}

/// Tarone's count of the tests that can matter: the least K such that at most K of the cells could
/// reach a p-value of `GATE_ALPHA / K` at all.
fn tarone_family(least: &[f64]) -> usize {
    (1..=least.len().max(1))
        .find(|&k| {
            least
                .iter()
                .filter(|&&p| p <= GATE_ALPHA / k as f64)
                .count()
                <= k
        })
        .unwrap_or(least.len())
}

/// Holm's step-down over the cells whose pass count moved one way, each way apart: the cell with the
/// smallest p-value stays regressed (or improved) while that p-value is at most `GATE_ALPHA / K`; then the
/// next. K, the cells chance could have moved as far, is the larger of two counts of the cells still in
/// play: those whose totals could reach significance at all (Tarone's rule for discrete tests — 5/5 → 4/5
/// is at best p = 0.5, no test the diff can lose) and those whose repeats disagree in either run (each a
/// cell that passes only some of the time, so each could have fallen to 1/5 by chance). A cell that drops
/// 5/5 → 1/5 where the rest hold steady is a regression; the same drop among a dozen cells that flake both
/// ways is what an unchanged flaky system shows about once in fifty diffs (the burn-in in
/// docs/benchmarks.md), so it is inconclusive, listed with its counts and a word to confirm with more
/// repeats. The cells it holds back may still be called by `consistent_moves`.
fn holm(calls: &mut [(Call, Option<f64>)], passes: &[(Passes, Passes)]) {
    let flaking = passes
        .iter()
        .filter(|(b, a)| b.mixed() || a.mixed())
        .count();
    for dropped in [true, false] {
        let mut family: Vec<usize> = (0..calls.len())
            .filter(|&i| {
                let (b, a) = passes[i];
                calls[i].1.is_some() && (a.rate() < b.rate()) == dropped && a.rate() != b.rate()
            })
            .collect();
        family.sort_by(|&i, &j| {
            calls[i]
                .1
                .unwrap_or(1.0)
                .total_cmp(&calls[j].1.unwrap_or(1.0))
        });
        let least: Vec<f64> = family
            .iter()
            .map(|&i| least_p(passes[i].0, passes[i].1, dropped))
            .collect();
        let mut rejecting = true;
        for (rank, &i) in family.iter().enumerate() {
            let k = tarone_family(&least[rank..]).max(flaking.saturating_sub(rank));
            rejecting &= calls[i].1.unwrap_or(1.0) <= GATE_ALPHA / k as f64;
            let called = matches!(calls[i].0, Call::Regressed | Call::Improved);
            if called && !rejecting {
                calls[i].0 = Call::Inconclusive;
            }
        }
    }
}

/// Cells of one configuration that moved together: where the configuration's passes, pooled over the
/// cells compared, dropped (or rose) beyond chance (Fisher's exact test on the totals, conservative when
/// the cells' rates differ), each of its cells whose own p-value is within `GATE_ALPHA` that way is called,
/// though Holm held it back — four cells each at 5/5 → 1/5 are a regression, not four inconclusive cells.
/// A flaky system's pooled passes move as chance moves them, so its wobbles stay where Holm put them.
fn consistent_moves(
    calls: &mut [(Call, Option<f64>)],
    passes: &[(Passes, Passes)],
    configs: &[&str],
) {
    let mut pooled: HashMap<&str, (Passes, Passes)> = HashMap::new();
    for (i, config) in configs.iter().enumerate() {
        let (b, a) = passes[i];
        let entry = pooled.entry(config).or_default();
        entry.0.passed += b.passed;
        entry.0.of += b.of;
        entry.1.passed += a.passed;
        entry.1.of += a.of;
    }
    for (i, config) in configs.iter().enumerate() {
        let (Call::Inconclusive, Some(p)) = calls[i] else {
            continue;
        };
        let ((b, a), (pb, pa)) = (passes[i], pooled[config]);
        let dropped = a.rate() < b.rate();
        if p > GATE_ALPHA || (pa.rate() < pb.rate()) != dropped || pa.rate() == pb.rate() {
            continue;
        }
        let pooled_p = if dropped {
            ragtester_judge::stats::fisher_greater(pb.passed, pb.of, pa.passed, pa.of)
        } else {
            ragtester_judge::stats::fisher_greater(pa.passed, pa.of, pb.passed, pb.of)
        };
        if pooled_p <= GATE_ALPHA {
            calls[i].0 = if dropped {
                Call::Regressed
            } else {
                Call::Improved
            };
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellChange {
    pub case_id: String,
    pub config_id: String,
    /// The configuration's label, as the reports name it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub label: String,
    pub before: Outcome,
    pub after: Outcome,
    /// Repeats passed before, of how many.
    pub passes_before: Passes,
    /// Repeats passed after, of how many.
    pub passes_after: Passes,
    /// Fisher's exact one-sided p-value on the pass counts, where either run has repeats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<f64>,
    /// Why the cell fails now (its failure attribution, or the judge's rule), for a regression.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The case's question, as the person reading the diff knows it (empty where the suite is unknown).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub query: String,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ConfigDelta {
    pub config_id: String,
    pub label: String,
    pub pass_rate_before: Option<f64>,
    pub pass_rate_after: Option<f64>,
    pub regressions: usize,
    pub fixes: usize,
    /// Cells whose repeats disagree in either run.
    pub flaky: usize,
    /// Cells judged pass or fail in both runs.
    pub paired: usize,
    /// McNemar's exact p-value on the paired pass/fail cells (regressions against fixes).
    pub mcnemar_p: Option<f64>,
    /// Mean change of the criteria score over paired cells, with a 95 % percentile-bootstrap interval.
    pub score_change: Option<ragtester_core::oracle::Interval>,
}

/// How a case of the suite differs between the runs, apart from its results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SuiteChangeKind {
    /// Written again because its source text changed: its results before and after test different facts.
    Rewritten,
    /// In the earlier suite only: its source text is gone.
    Retired,
    /// In the later suite only.
    New,
    /// Kept, but its document no longer parses: it may test what the documents no longer say.
    Stale,
}

impl SuiteChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SuiteChangeKind::Rewritten => "rewritten",
            SuiteChangeKind::Retired => "retired",
            SuiteChangeKind::New => "new",
            SuiteChangeKind::Stale => "stale",
        }
    }
}

/// A case the suites differ on, with its outcome in each configuration before and after.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SuiteChange {
    pub kind: SuiteChangeKind,
    pub lineage: String,
    pub query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// (configuration, before, after): None where the case was not in that run.
    pub cells: Vec<(String, Option<Outcome>, Option<Outcome>)>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RunDiff {
    /// Cells that passed before and now fail or error.
    pub regressions: Vec<CellChange>,
    pub fixes: Vec<CellChange>,
    /// Other cells whose error state changed (failed → error, or error → pass or fail).
    pub error_changes: Vec<CellChange>,
    /// Cells whose repeats disagree and whose pass count moved as chance moves it: never counted as
    /// regressions or fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flaky: Vec<CellChange>,
    /// Cells whose pass count moved more than chance usually does, with too few repeats to call it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inconclusive: Vec<CellChange>,
    /// Cells of an unchanged case that both runs hold: what the gate compared.
    pub compared: usize,
    /// Cases rewritten, retired, new or stale between the suites: never counted as regressions or fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suite_changes: Vec<SuiteChange>,
    /// Cells of an unchanged case present in only one of the runs (a configuration one run lacks).
    pub only_before: usize,
    pub only_after: usize,
    pub configs: Vec<ConfigDelta>,
    /// Conversations, as units, whose every-turn-passed state changed in a configuration.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<ConversationChange>,
}

impl RunDiff {
    /// How many cases changed in the suite in this way.
    pub fn suite_count(&self, kind: SuiteChangeKind) -> usize {
        self.suite_changes.iter().filter(|c| c.kind == kind).count()
    }
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

/// One judged run as the diff reads it: its suite, its configurations and its verdicts (the first judge's
/// are compared).
#[derive(Debug, Clone, Copy)]
pub struct RunSide<'a> {
    pub cases: &'a [TestCase],
    pub configs: &'a [Configuration],
    pub verdicts: &'a [Verdict],
}

/// One run's cells keyed by (case lineage, configuration without its repeat), repeats folded.
struct Cells<'a> {
    outcomes: HashMap<(String, String), Outcome>,
    passes: HashMap<(String, String), Passes>,
    /// The first verdict of each cell that did not pass.
    failing: HashMap<(String, String), &'a Verdict>,
    /// Case id → the case.
    cases: HashMap<&'a str, &'a TestCase>,
    /// Lineage → case id.
    by_lineage: HashMap<&'a str, &'a str>,
    /// Configuration id (a repeat's too) → base id.
    base: HashMap<&'a str, String>,
    primary: Vec<&'a Verdict>,
}

impl<'a> Cells<'a> {
    /// A cell of this (the later) run as the diff lists it: the case by its id and question, and what it
    /// did before and after.
    fn change(
        &self,
        key: &(String, String),
        (before, after): (Outcome, Outcome),
        (passes_before, passes_after): (Passes, Passes),
        p_value: Option<f64>,
    ) -> CellChange {
        let case_id = self
            .by_lineage
            .get(key.0.as_str())
            .map_or(key.0.clone(), |id| id.to_string());
        let query = self
            .cases
            .get(case_id.as_str())
            .map(|c| c.query.clone())
            .unwrap_or_default();
        CellChange {
            case_id,
            query,
            config_id: key.1.clone(),
            label: String::new(),
            before,
            after,
            passes_before,
            passes_after,
            p_value,
            cause: None,
        }
    }

    /// `rename` maps a configuration's base id to the one it is compared as (`--compare BEFORE AFTER`).
    fn of(side: RunSide<'a>, rename: &HashMap<String, String>) -> Self {
        let primary = primary_verdicts(side.verdicts);
        let cases: HashMap<&str, &TestCase> =
            side.cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let by_lineage = side
            .cases
            .iter()
            .map(|c| (c.lineage_id(), c.id.as_str()))
            .collect();
        let base: HashMap<&str, String> = side
            .configs
            .iter()
            .map(|c| {
                let base = c.base_id();
                (c.id.as_str(), rename.get(&base).cloned().unwrap_or(base))
            })
            .collect();
        let mut repeats: HashMap<(String, String), Vec<Outcome>> = HashMap::new();
        let mut failing = HashMap::new();
        for v in &primary {
            let lineage = cases
                .get(v.case_id.as_str())
                .map_or(v.case_id.as_str(), |c| c.lineage_id());
            let config = base
                .get(v.config_id.as_str())
                .cloned()
                .unwrap_or_else(|| v.config_id.clone());
            let key = (lineage.to_string(), config);
            if outcome(v) != Outcome::Passed {
                failing.entry(key.clone()).or_insert(*v);
            }
            repeats.entry(key).or_default().push(outcome(v));
        }
        let passes = repeats
            .iter()
            .map(|(k, list)| {
                let mut p = Passes::default();
                list.iter().for_each(|o| p.add(*o));
                (k.clone(), p)
            })
            .collect();
        let outcomes = repeats
            .into_iter()
            .map(|(k, list)| (k, folded(&list)))
            .collect();
        Self {
            outcomes,
            passes,
            failing,
            cases,
            by_lineage,
            base,
            primary,
        }
    }

    /// Why a cell did not pass: its failure attribution, else the judge's rule or error.
    fn cause_of(&self, key: &(String, String)) -> Option<String> {
        let v = self.failing.get(key)?;
        let case = self.cases.get(v.case_id.as_str());
        let attributed = case.and_then(|c| crate::cause::attribution(c, None, v));
        attributed
            .map(|a| format!("{}: {}", a.cause.as_str().replace('_', " "), a.evidence))
            .or_else(|| v.rule_failure.clone())
            .or_else(|| v.error.clone())
    }

    /// The primary verdicts per configuration without its repeat, in one pass.
    fn by_configuration(&self) -> HashMap<String, Vec<&'a Verdict>> {
        let mut out: HashMap<String, Vec<&'a Verdict>> = HashMap::new();
        for v in &self.primary {
            out.entry(self.base_of(&v.config_id)).or_default().push(*v);
        }
        out
    }

    fn base_of(&self, config_id: &str) -> String {
        self.base
            .get(config_id)
            .cloned()
            .unwrap_or_else(|| config_id.to_string())
    }
}

/// Compare run `before` with run `after`.
pub fn diff_runs(before: RunSide<'_>, after: RunSide<'_>) -> RunDiff {
    diff_runs_paired(before, after, &[])
}

/// The configurations' labels by base id; a configuration compared as another (`pairs`: before's base id,
/// after's base id) is labelled by both, `bm25 k=1 → bm25 k=3`, and not listed apart.
fn labels_of(
    before: RunSide<'_>,
    after: RunSide<'_>,
    pairs: &[(String, String)],
) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = BTreeMap::new();
    for c in before.configs.iter().chain(after.configs) {
        if pairs.iter().any(|(b, _)| *b == c.base_id()) {
            continue;
        }
        labels.entry(c.base_id()).or_insert_with(|| c.base_label());
    }
    for (b, a) in pairs {
        let label = |configs: &[Configuration], id: &str| {
            configs
                .iter()
                .find(|c| c.base_id() == id)
                .map_or(id.to_string(), |c| c.base_label())
        };
        labels.insert(
            a.clone(),
            format!("{} → {}", label(before.configs, b), label(after.configs, a)),
        );
    }
    labels
}

/// [`diff_runs`], with configurations of the first run compared as configurations of the second
/// (`pairs`: before's base id, after's base id) — the change under test being the setting that tells
/// them apart (`diff run1 run2 --compare "bm25 k=1" "bm25 k=3"`).
pub fn diff_runs_paired(
    before: RunSide<'_>,
    after: RunSide<'_>,
    pairs: &[(String, String)],
) -> RunDiff {
    let rename: HashMap<String, String> = pairs.iter().cloned().collect();
    let (b, a) = (
        Cells::of(before, &rename),
        Cells::of(after, &HashMap::new()),
    );
    let mut diff = RunDiff {
        regressions: vec![],
        fixes: vec![],
        error_changes: vec![],
        flaky: vec![],
        inconclusive: vec![],
        compared: 0,
        suite_changes: suite_changes(&b, &a),
        only_before: 0,
        only_after: 0,
        configs: vec![],
        conversations: vec![],
    };
    let set_apart: BTreeSet<&str> = diff
        .suite_changes
        .iter()
        .map(|c| c.lineage.as_str())
        .collect();
    let compared = |k: &(String, String)| !set_apart.contains(k.0.as_str());
    diff.only_before = b
        .outcomes
        .keys()
        .filter(|k| compared(k) && !a.outcomes.contains_key(*k))
        .count();
    diff.only_after = a
        .outcomes
        .keys()
        .filter(|k| compared(k) && !b.outcomes.contains_key(*k))
        .count();
    let mut keys: Vec<&(String, String)> = b
        .outcomes
        .keys()
        .filter(|k| compared(k) && a.outcomes.contains_key(*k))
        .collect();
    keys.sort();
    diff.compared = keys.len();
    let labels = labels_of(before, after, pairs);
    let mut calls: Vec<(Call, Option<f64>)> = keys
        .iter()
        .map(|key| {
            call(
                b.outcomes[*key],
                a.outcomes[*key],
                b.passes[*key],
                a.passes[*key],
            )
        })
        .collect();
    let passes: Vec<(Passes, Passes)> = keys.iter().map(|k| (b.passes[*k], a.passes[*k])).collect();
    holm(&mut calls, &passes);
    let configs: Vec<&str> = keys.iter().map(|k| k.1.as_str()).collect();
    consistent_moves(&mut calls, &passes, &configs);
    for (key, (verdict, p_value)) in keys.into_iter().zip(calls) {
        let (x, y) = (b.outcomes[key], a.outcomes[key]);
        let (passes_before, passes_after) = (b.passes[key], a.passes[key]);
        let mut change = a.change(key, (x, y), (passes_before, passes_after), p_value);
        change.label = labels.get(&key.1).cloned().unwrap_or_default();
        match verdict {
            // A cell that passed and now has no verdict has lost its pass: a regression, not a shrug.
            Call::Regressed => diff.regressions.push(CellChange {
                cause: a.cause_of(key),
                ..change
            }),
            Call::Improved => diff.fixes.push(change),
            Call::Flaky => diff.flaky.push(change),
            Call::Inconclusive => diff.inconclusive.push(change),
            Call::ErrorChange => diff.error_changes.push(change),
            Call::Same => {}
        }
    }
    diff.conversations = conversation_changes(after.cases, &b, &a, &set_apart);
    diff.configs = config_deltas((before, after, &labels), &b, &a, &diff, &set_apart);
    diff
}

/// Per configuration (repeats folded): pass rates, regressions, fixes, flaky cells and the paired tests on
/// the cases both suites hold unchanged (first repeats).
fn config_deltas(
    (before, after, labels): (RunSide<'_>, RunSide<'_>, &BTreeMap<String, String>),
    b: &Cells<'_>,
    a: &Cells<'_>,
    diff: &RunDiff,
    set_apart: &BTreeSet<&str>,
) -> Vec<ConfigDelta> {
    let first_repeat = |configs: &[Configuration], id: &str| {
        configs
            .iter()
            .find(|c| c.id == id)
            .is_none_or(|c| c.repeat.is_none_or(|r| r.index == 1))
    };
    let unchanged = |cells: &Cells<'_>, v: &Verdict| {
        cells
            .cases
            .get(v.case_id.as_str())
            .is_none_or(|c| !set_apart.contains(c.lineage_id()))
    };
    let (by_b, by_a) = (b.by_configuration(), a.by_configuration());
    let mut out = Vec::new();
    for (id, label) in labels.clone() {
        let vb: Vec<&Verdict> = by_b.get(&id).cloned().unwrap_or_default();
        let va: Vec<&Verdict> = by_a.get(&id).cloned().unwrap_or_default();
        let pb: Vec<&Verdict> = vb
            .iter()
            .copied()
            .filter(|v| first_repeat(before.configs, &v.config_id) && unchanged(b, v))
            .collect();
        let pa: Vec<&Verdict> = va
            .iter()
            .copied()
            .filter(|v| first_repeat(after.configs, &v.config_id) && unchanged(a, v))
            .collect();
        let (paired, mcnemar_p, score_change) = paired_tests(&pb, &pa);
        let count = |list: &[CellChange]| list.iter().filter(|c| c.config_id == id).count();
        out.push(ConfigDelta {
            paired,
            mcnemar_p,
            score_change,
            pass_rate_before: pass_rate(&vb),
            pass_rate_after: pass_rate(&va),
            regressions: count(&diff.regressions),
            fixes: count(&diff.fixes),
            flaky: count(&diff.flaky),
            config_id: id,
            label,
        });
    }
    out
}

/// The cases the two suites differ on: rewritten (same lineage, another id), retired, new and stale.
fn suite_changes(b: &Cells<'_>, a: &Cells<'_>) -> Vec<SuiteChange> {
    let configs: BTreeSet<&String> = b
        .outcomes
        .keys()
        .chain(a.outcomes.keys())
        .map(|k| &k.1)
        .collect();
    let cells = |lineage: &str| -> Vec<(String, Option<Outcome>, Option<Outcome>)> {
        configs
            .iter()
            .map(|c| {
                let key = (lineage.to_string(), (*c).clone());
                (
                    (*c).clone(),
                    b.outcomes.get(&key).copied(),
                    a.outcomes.get(&key).copied(),
                )
            })
            .filter(|(_, x, y)| x.is_some() || y.is_some())
            .collect()
    };
    let mut out = Vec::new();
    let mut lineages: BTreeSet<&str> = b.by_lineage.keys().copied().collect();
    lineages.extend(a.by_lineage.keys().copied());
    for lineage in lineages {
        let was = b.by_lineage.get(lineage).map(|id| b.cases[id]);
        let is = a.by_lineage.get(lineage).map(|id| a.cases[id]);
        let (kind, case, reason) = match (was, is) {
            (Some(_), Some(now)) if now.stale.is_some() => {
                (SuiteChangeKind::Stale, now, now.stale.clone())
            }
            (Some(then), Some(now)) if then.id != now.id => (
                SuiteChangeKind::Rewritten,
                now,
                Some(format!(
                    "expected «{}», now «{}»",
                    then.expected_answer, now.expected_answer
                )),
            ),
            (Some(_), Some(_)) => continue,
            (Some(then), None) => (SuiteChangeKind::Retired, then, None),
            (None, Some(now)) => (SuiteChangeKind::New, now, now.stale.clone()),
            (None, None) => continue,
        };
        out.push(SuiteChange {
            kind,
            lineage: lineage.to_string(),
            query: case.query.clone(),
            reason,
            cells: cells(lineage),
        });
    }
    out.sort_by(|x, y| x.kind.cmp(&y.kind).then(x.lineage.cmp(&y.lineage)));
    out
}

/// Conversations whose every-turn-passed state differs between the runs, per configuration both ran;
/// conversations with a turn set apart (rewritten, stale, new) are not compared.
fn conversation_changes(
    cases: &[TestCase],
    before: &Cells<'_>,
    after: &Cells<'_>,
    set_apart: &BTreeSet<&str>,
) -> Vec<ConversationChange> {
    let mut turns: BTreeMap<&str, Vec<&TestCase>> = BTreeMap::new();
    for case in cases {
        if let Some(id) = case.conversation() {
            turns.entry(id).or_default().push(case);
        }
    }
    let configs: BTreeSet<&str> = before
        .outcomes
        .keys()
        .filter(|k| after.outcomes.contains_key(*k))
        .map(|k| k.1.as_str())
        .collect();
    let mut out = Vec::new();
    for (id, list) in &mut turns {
        if list.iter().any(|c| set_apart.contains(c.lineage_id())) {
            continue;
        }
        list.sort_by_key(|c| c.turn.as_ref().map_or(0, |t| t.index));
        for config in &configs {
            let key = |c: &TestCase| (c.lineage_id().to_string(), config.to_string());
            let passed = |cells: &Cells<'_>| {
                list.iter()
                    .all(|c| cells.outcomes.get(&key(c)) == Some(&Outcome::Passed))
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
                    .filter(|c| before.outcomes.get(&key(c)) != after.outcomes.get(&key(c)))
                    .filter_map(|c| c.turn.as_ref().map(|t| t.index))
                    .collect(),
            });
        }
    }
    out
}

/// One line per case the suites differ on, with its outcomes per configuration before → after.
pub(crate) fn suite_change_lines(out: &mut String, diff: &RunDiff) {
    for c in &diff.suite_changes {
        let outcomes: Vec<String> = c
            .cells
            .iter()
            .map(|(_, x, y)| {
                let show = |o: &Option<Outcome>| o.map_or("–", |o| o.as_str());
                format!("{} → {}", show(x), show(y))
            })
            .collect();
        let _ = writeln!(
            out,
            "{}: case {} {} [{}]{}",
            c.kind.as_str(),
            c.lineage,
            c.query.chars().take(60).collect::<String>(),
            outcomes.join(", "),
            c.reason
                .as_deref()
                .map(|r| format!(" — {}", r.chars().take(160).collect::<String>()))
                .unwrap_or_default()
        );
    }
}

impl RunDiff {
    /// Whether the runs shared no cell: a diff of nothing, which no gate may read as "no regressions".
    pub fn compared_nothing(&self) -> bool {
        self.compared == 0
    }

    /// Drops the gate held back as chance: inconclusive cells whose pass rate fell with p ≤ 0.05 on their
    /// own — regressions alone, but among cells that flake (see `holm`). `diff --strict` fails on them too.
    pub fn held_drops(&self) -> impl Iterator<Item = &CellChange> {
        self.inconclusive.iter().filter(|c| {
            c.passes_after.rate() < c.passes_before.rate()
                && c.p_value.is_some_and(|p| p <= GATE_ALPHA)
        })
    }

    /// A word where chance may have made the call: drops the gate held back as inconclusive because the
    /// runs' cells flake (each would be a regression on its own), or regressions that are all marginal calls
    /// (0.01 < p ≤ 0.05) among flaky cells. Either way more repeats tell (docs/benchmarks.md, the burn-in).
    pub fn chance_note(&self) -> Option<String> {
        let held = self.held_drops().count();
        if held > 0 {
            return Some(format!(
                "note: {} would be a regression on its own, but these runs have {}, and among that \
                 many chance alone takes one this far now and then: run again with more repeats \
                 (--repeat 10) to tell",
                counted(held, "drop", "drops"),
                counted(
                    self.flaky.len() + self.inconclusive.len(),
                    "cell that flakes",
                    "cells that flake"
                )
            ));
        }
        let marginal = |c: &CellChange| c.p_value.is_some_and(|p| p > 0.01);
        if self.regressions.is_empty()
            || self.flaky.is_empty()
            || !self.regressions.iter().all(marginal)
        {
            return None;
        }
        Some(format!(
            "note: these runs have {}, and every regression is a marginal call (p > 0.01): one can be \
             chance at this many repeats; run again with more (--repeat 10) to confirm",
            counted(self.flaky.len(), "flaky cell", "flaky cells")
        ))
    }

    /// The first line every rendering opens with: what was compared and what the gate found.
    pub fn headline(&self) -> String {
        if self.compared_nothing() {
            return format!(
                "nothing compared: the two runs share no cell (no case in the same configuration); \
                 {} cells only before, {} only after",
                self.only_before, self.only_after
            );
        }
        let mut line = format!(
            "{}, {}, {}",
            counted(self.compared, "cell compared", "cells compared"),
            counted(self.regressions.len(), "regression", "regressions"),
            counted(self.fixes.len(), "fix", "fixes")
        );
        if !self.inconclusive.is_empty() {
            let _ = write!(line, ", {} inconclusive", self.inconclusive.len());
        }
        if !self.flaky.is_empty() {
            let _ = write!(line, ", {} flaky", self.flaky.len());
        }
        line
    }
}

pub(crate) use ragtester_core::progress::counted;

/// Characters of a question a listed cell quotes.
const QUERY_CHARS: usize = 60;

/// A listed cell: its case (the question where known), its configuration (label where known) and its
/// passes before → after.
pub fn cell_line(c: &CellChange) -> String {
    let config = if c.label.is_empty() {
        &c.config_id
    } else {
        &c.label
    };
    let p = c
        .p_value
        .map(|p| format!(", p = {p:.3}"))
        .unwrap_or_default();
    let counts = format!("{} → {} passed{p}", c.passes_before, c.passes_after);
    if c.query.is_empty() {
        return format!("case {} in {config} ({counts})", c.case_id);
    }
    let mut query: String = c.query.chars().take(QUERY_CHARS).collect();
    if c.query.chars().count() > QUERY_CHARS {
        query.push('…');
    }
    format!("\"{query}\" in {config} ({counts}; case {})", c.case_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff_console::render_diff;
    use ragtester_core::RuleMetrics;

    fn side<'a>(cases: &'a [TestCase], verdicts: &'a [Verdict]) -> RunSide<'a> {
        RunSide {
            cases,
            configs: &[],
            verdicts,
        }
    }

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
            overrode_judge: None,
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
        let d = diff_runs(side(&[], &before), side(&[], &after));
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
        assert!(
            render_diff(&d, 200, true)
                .contains("2 regressions, 1 fix, 0 inconclusive, 0 error changes, 0 flaky")
        );
        // The error counts against the pass rate after: 2 of 4 cells passed, not 2 of 3.
        assert_eq!(pass_rate(&after.iter().collect::<Vec<_>>()), Some(0.5));
    }

    #[test]
    fn a_conversation_that_no_longer_passes_whole_is_one_change_naming_its_turns() {
        let turn = |id: &str, index| crate::testdata::turn(id, "talk", index, 2);
        let cases = vec![turn("t1", 1), turn("t2", 2)];
        let before = vec![v("t1", Some(true)), v("t2", Some(true))];
        let after = vec![v("t1", Some(true)), v("t2", Some(false))];
        let d = diff_runs(side(&cases, &before), side(&cases, &after));
        assert_eq!(d.conversations.len(), 1);
        let c = &d.conversations[0];
        assert_eq!((c.passed_before, c.passed_after), (true, false));
        assert_eq!(c.changed_turns, [2]);
        assert!(render_diff(&d, 200, true).contains("conversation talk (follow up)"));
        assert!(
            diff_runs(side(&cases, &before), side(&cases, &before))
                .conversations
                .is_empty()
        );
    }

    #[test]
    fn the_gate_calls_pass_counts_by_fishers_exact_test() {
        let base = crate::testdata::config();
        let repeats = |n: usize| -> Vec<Configuration> {
            (1..=n)
                .map(|i| base.clone().with_repeat(i as u32, n as u32))
                .collect()
        };
        // One cell per case: `passes` of the repeats pass.
        let run = |configs: &[Configuration], cells: &[(&str, usize)]| -> Vec<Verdict> {
            cells
                .iter()
                .flat_map(|(case, passes)| {
                    configs.iter().enumerate().map(move |(i, c)| Verdict {
                        config_id: c.id.clone(),
                        ..v(case, Some(i < *passes))
                    })
                })
                .collect()
        };
        let (five, three) = (repeats(5), repeats(3));
        let side = |configs: &'static [Configuration], verdicts| RunSide {
            cases: &[],
            configs,
            verdicts,
        };
        let five: &'static [Configuration] = Box::leak(five.into_boxed_slice());
        let three: &'static [Configuration] = Box::leak(three.into_boxed_slice());
        let before = run(
            five,
            &[("dropped", 5), ("wobbly", 3), ("steady", 5), ("healed", 0)],
        );
        let after = run(
            five,
            &[("dropped", 1), ("wobbly", 3), ("steady", 5), ("healed", 5)],
        );
        let d = diff_runs(side(five, &before), side(five, &after));
        let ids = |list: &[CellChange]| list.iter().map(|c| c.case_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&d.regressions), ["dropped"]);
        assert_eq!(ids(&d.fixes), ["healed"]);
        assert_eq!(ids(&d.flaky), ["wobbly"]);
        assert_eq!(d.compared, 4);
        let r = &d.regressions[0];
        assert_eq!(
            (r.passes_before.to_string(), r.passes_after.to_string()),
            ("5/5".into(), "1/5".into())
        );
        let text = render_diff(&d, 200, true);
        assert!(text.contains("regressed: case dropped in"), "{text}");
        assert!(text.contains("(5/5 → 1/5 passed, p = 0.024)"), "{text}");
        assert!(
            text.starts_with("4 cells compared, 1 regression, 1 fix, 1 flaky"),
            "{text}"
        );
        // In a system whose cells wobble on every side — as many passes gained as lost — the same drop is
        // not enough to call: Holm holds the diff's cells together, and the drop is inconclusive, listed
        // with its counts.
        let before = run(
            five,
            &[
                ("dropped", 5),
                ("wobbly", 3),
                ("suggestive", 4),
                ("up", 1),
                ("upper", 2),
            ],
        );
        let after = run(
            five,
            &[
                ("dropped", 1),
                ("wobbly", 2),
                ("suggestive", 1),
                ("up", 4),
                ("upper", 5),
            ],
        );
        let d = diff_runs(side(five, &before), side(five, &after));
        assert!(d.regressions.is_empty(), "{:?}", d.regressions);
        assert!(d.fixes.is_empty(), "{:?}", d.fixes);
        assert!(ids(&d.inconclusive).contains(&"dropped".to_string()));
        assert!(ids(&d.inconclusive).contains(&"suggestive".to_string()));
        assert_eq!(ids(&d.flaky), ["wobbly"]);
        // Every cell lower, though: the configuration fell as a whole, beyond chance, and its cells
        // within 5 % on their own are regressions.
        let before = run(five, &[("dropped", 5), ("wobbly", 3), ("suggestive", 4)]);
        let after = run(five, &[("dropped", 1), ("wobbly", 2), ("suggestive", 1)]);
        let d = diff_runs(side(five, &before), side(five, &after));
        assert_eq!(ids(&d.regressions), ["dropped"]);
        // Among ten cells, nine of them wobbling as a 20 % flake does (5/5 → 4/5, 4/5 → 3/5, 5/5 → 3/5),
        // 5/5 → 1/5 is still a regression: a wobble that could never reach significance does not widen
        // the correction.
        let mut cells_before = vec![("dropped", 5)];
        let mut cells_after = vec![("dropped", 1)];
        for (i, (b, a)) in [
            (5, 4),
            (4, 3),
            (5, 3),
            (4, 5),
            (5, 4),
            (3, 2),
            (5, 4),
            (4, 3),
            (5, 5),
        ]
        .into_iter()
        .enumerate()
        {
            let name: &'static str = Box::leak(format!("wobble{i}").into_boxed_str());
            cells_before.push((name, b));
            cells_after.push((name, a));
        }
        let (before, after) = (run(five, &cells_before), run(five, &cells_after));
        let d = diff_runs(side(five, &before), side(five, &after));
        assert_eq!(ids(&d.regressions), ["dropped"], "{:?}", d.inconclusive);
        assert_eq!(d.compared, 10);
        // 5/5 → 3/5 (p = 0.22) stays suggestive on its own count, as before.
        assert_eq!(ids(&d.inconclusive), ["wobble2"]);
        // The same drop where the other cells flake both ways — as many passes gained as lost, as an
        // unchanged system with a 20 % flake shows — is what chance gives about once in fifty diffs: each
        // flaky cell could have fallen as far, so the drop is inconclusive (with the counts listed), not a
        // regression that fails the gate.
        let mut cells_before = vec![("dropped", 5)];
        let mut cells_after = vec![("dropped", 1)];
        for (i, (b, a)) in [
            (4, 5),
            (5, 4),
            (3, 4),
            (4, 5),
            (4, 4),
            (3, 5),
            (5, 4),
            (4, 5),
            (5, 5),
        ]
        .into_iter()
        .enumerate()
        {
            let name: &'static str = Box::leak(format!("flake{i}").into_boxed_str());
            cells_before.push((name, b));
            cells_after.push((name, a));
        }
        let (before, after) = (run(five, &cells_before), run(five, &cells_after));
        let d = diff_runs(side(five, &before), side(five, &after));
        assert!(d.regressions.is_empty(), "{:?}", d.regressions);
        assert!(ids(&d.inconclusive).contains(&"dropped".to_string()));
        assert!(d.chance_note().is_some_and(|n| n.contains("--repeat 10")));
        // Four cells each at 5/5 → 1/5 beside six steady ones: Holm alone would hold each back (p = 0.024
        // against 0.05/3), but the configuration's pooled passes fell far beyond chance: four regressions.
        let mut cells_before = vec![];
        let mut cells_after = vec![];
        for i in 0..10 {
            let name: &'static str = Box::leak(format!("cell{i}").into_boxed_str());
            cells_before.push((name, 5));
            cells_after.push((name, if i < 4 { 1 } else { 5 }));
        }
        let (before, after) = (run(five, &cells_before), run(five, &cells_after));
        let d = diff_runs(side(five, &before), side(five, &after));
        assert_eq!(ids(&d.regressions), ["cell0", "cell1", "cell2", "cell3"]);
        assert!(d.inconclusive.is_empty(), "{:?}", d.inconclusive);
        // 3/3 → 0/3: every repeat passed and none does.
        let d = diff_runs(
            side(three, &run(three, &[("gone", 3)])),
            side(three, &run(three, &[("gone", 0)])),
        );
        assert_eq!(ids(&d.regressions), ["gone"]);
    }

    #[test]
    fn runs_that_share_no_cell_compare_nothing_and_say_so_first() {
        let base = crate::testdata::config();
        let other = base.clone().with_repeat(1, 1);
        let (b, a) = (
            [Verdict {
                config_id: base.id.clone(),
                ..v("q", Some(true))
            }],
            [Verdict {
                config_id: "elsewhere".into(),
                ..v("q", Some(true))
            }],
        );
        let _ = other;
        let d = diff_runs(side(&[], &b), side(&[], &a));
        assert!(d.compared_nothing());
        assert!(
            render_diff(&d, 200, true).starts_with("nothing compared: the two runs share no cell"),
            "{}",
            render_diff(&d, 200, true)
        );
    }

    #[test]
    fn a_configuration_compared_as_another_is_diffed_cell_by_cell() {
        let k1 = crate::testdata::config();
        let k3 = ragtester_core::Configuration::new(
            "offline".into(),
            "none".into(),
            ragtester_core::RetrieverKind::Bm25,
            5,
            Default::default(),
            Default::default(),
        );
        let at = |c: &Configuration, case: &str, passed| Verdict {
            config_id: c.id.clone(),
            ..v(case, Some(passed))
        };
        let (configs_b, configs_a) = ([k1.clone()], [k3.clone()]);
        let before = [
            at(&k1, "kept", true),
            at(&k1, "lost", true),
            at(&k1, "found", false),
        ];
        let after = [
            at(&k3, "kept", true),
            at(&k3, "lost", false),
            at(&k3, "found", true),
        ];
        let side = |configs, verdicts| RunSide {
            cases: &[],
            configs,
            verdicts,
        };
        // Unpaired, the two settings share no cell.
        assert!(diff_runs(side(&configs_b, &before), side(&configs_a, &after)).compared_nothing());
        let d = diff_runs_paired(
            side(&configs_b, &before),
            side(&configs_a, &after),
            &[(k1.base_id(), k3.base_id())],
        );
        assert_eq!(d.compared, 3);
        assert_eq!(d.regressions.len(), 1);
        assert_eq!(d.regressions[0].case_id, "lost");
        assert_eq!(d.fixes[0].case_id, "found");
        assert_eq!(
            d.regressions[0].label,
            "bm25 k=3 · offline → bm25 k=5 · offline"
        );
        assert_eq!(d.configs.len(), 1, "{:?}", d.configs);
    }

    #[test]
    fn repeats_that_disagree_are_flaky_and_a_repeat_with_no_verdict_counts_as_not_passed() {
        let base = crate::testdata::config();
        let repeats: Vec<Configuration> = (1..=2).map(|i| base.clone().with_repeat(i, 2)).collect();
        let at = |case: &str, r: usize, passed: Option<bool>| Verdict {
            config_id: repeats[r].id.clone(),
            ..v(case, passed)
        };
        let before: Vec<Verdict> = ["steady", "flaky", "broken"]
            .iter()
            .flat_map(|c| [at(c, 0, Some(true)), at(c, 1, Some(true))])
            .collect();
        let after = vec![
            at("steady", 0, Some(true)),
            at("steady", 1, Some(true)),
            at("flaky", 0, Some(true)),
            at("flaky", 1, Some(false)),
            at("broken", 0, Some(false)),
            at("broken", 1, None),
        ];
        let side = |verdicts| RunSide {
            cases: &[],
            configs: &repeats,
            verdicts,
        };
        let d = diff_runs(side(&before), side(&after));
        assert_eq!(d.flaky.len(), 1);
        assert_eq!(
            (d.flaky[0].case_id.as_str(), d.flaky[0].config_id.as_str()),
            ("flaky", base.id.as_str())
        );
        // 2/2 → 0/2 (one failed, one with no verdict): with two repeats no cell can show a regression at
        // 5 % (p = 1/6), so the drop is inconclusive — listed, never flaky, never silent.
        assert!(d.regressions.is_empty(), "{:?}", d.regressions);
        let broken = &d.inconclusive[0];
        assert_eq!(broken.case_id, "broken");
        assert_eq!(
            (
                broken.passes_before.to_string(),
                broken.passes_after.to_string()
            ),
            ("2/2".into(), "0/2".into())
        );
        assert_eq!(broken.passes_after.errors, 1);
        assert_eq!(d.configs.len(), 1, "repeats fold into their configuration");
        assert_eq!(d.configs[0].label, base.label());
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
