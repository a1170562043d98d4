//! The summary model: every figure of the report, computed once from the records.

use crate::cause::{attribution, failure_cause};
use crate::reference::Spend;
use crate::refusals::RefusalMatrix;
use ragtester_core::document::DocumentOrigin;
use ragtester_core::{Answer, Category, Configuration, Document, TestCase, Verdict, VerdictStatus};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

pub struct ReportInputs<'a> {
    /// Model prices; configurations whose model has none get no cost.
    pub prices: &'a ragtester_core::config::PriceTable,
    pub documents: &'a [Document],
    pub cases: &'a [TestCase],
    pub configs: &'a [Configuration],
    pub answers: &'a [Answer],
    pub verdicts: &'a [Verdict],
    /// The oracle's own figures (judges, agreement, intervals, audit), when the run has them.
    pub oracle: Option<&'a ragtester_core::oracle::OracleSummary>,
    pub audit: Option<&'a ragtester_core::oracle::AuditSummary>,
    /// The pairwise comparison of two configurations, when `judge --pairwise` made one.
    pub pairwise: Option<&'a ragtester_core::oracle::PairwiseSummary>,
    /// Per configuration id: the share of its chunks that hold a case's source span (how much of the
    /// corpus, as that configuration cuts it, the suite tests). Absent for external targets.
    pub chunk_coverage: &'a HashMap<String, f64>,
    /// Cells the run did not ask, with the reason (`skipped.jsonl`).
    pub skipped: &'a [ragtester_core::SkippedCell],
    /// How each embedder's tokenizer reads the corpus (`embedders.json`); empty for external targets.
    pub embedder_profiles: &'a [ragtester_core::EmbedderProfile],
}

pub use ragtester_core::{Attribution, FailureCause};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupSummary {
    pub name: String,
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    /// failed / (passed + failed); None when nothing was judged.
    pub fail_rate: Option<f64>,
    /// passed / cases: a cell with no verdict (an execution or judge error) counts against it. What gates
    /// hold a run to.
    #[serde(default)]
    pub pass_rate: Option<f64>,
    /// errors / cases.
    #[serde(default)]
    pub error_rate: Option<f64>,
    /// Mean of the paper's verdict score (mean of the five criteria) over judged cases.
    pub mean_score: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConfigSummary {
    pub id: String,
    pub label: String,
    /// For a repeat of a configuration (`run --repeat N`): the configuration it repeats, whose folded
    /// figures are in `Summary::repeats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat_of: Option<String>,
    pub retriever: String,
    pub top_k: usize,
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub judge_errors: usize,
    pub exec_errors: usize,
    /// failed / (passed + failed): the judged cells only.
    pub fail_rate: Option<f64>,
    /// passed / cases: errors count against it (what `--fail-under` holds a configuration to).
    #[serde(default)]
    pub pass_rate: Option<f64>,
    /// (exec + judge errors) / cases.
    #[serde(default)]
    pub error_rate: Option<f64>,
    /// Cells of this configuration the run did not ask (see `Summary::skipped`); in no count above.
    #[serde(default)]
    pub skipped: usize,
    /// Per category, the same counts (what `--fail-under-category` holds a configuration to).
    #[serde(default)]
    pub by_category: BTreeMap<String, GroupSummary>,
    pub mean_score: Option<f64>,
    pub mean_correctness: Option<f64>,
    /// Mean rating (1 / 0.5 / 0) of each criterion, in the paper's order.
    pub criteria: BTreeMap<String, f64>,
    /// Retrieval + generation time of the answers the system produced in this run (live calls: no cached
    /// reply, no error), without the time a cell waited for a call slot in our engine.
    pub latency_p50_ms: Option<f64>,
    pub latency_p95_ms: Option<f64>,
    /// Median time of each step over the live answers that have it: the built-in pipeline's retrieval
    /// (with query rewriting) and generation; a traced target's retrieval, rerank, embedding and generation
    /// steps as its spans report them; an untraced target's whole call as generation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stage_p50_ms: BTreeMap<String, f64>,
    /// For a target whose traces are received: how many calls came with a trace, of how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traced: Option<(usize, usize)>,
    /// Answers the latency figures are over.
    #[serde(default)]
    pub live_answers: usize,
    /// Answers replayed from the response cache (`--replay-answers`): no latency, no cost.
    #[serde(default)]
    pub replayed_answers: usize,
    /// replayed / answers without an error.
    #[serde(default)]
    pub replayed_share: Option<f64>,
    /// When the oldest replayed answer was first produced (seconds since the Unix epoch).
    #[serde(default)]
    pub replayed_since: Option<u64>,
    /// The same, as an RFC 3339 UTC timestamp.
    #[serde(default)]
    pub replayed_since_utc: Option<String>,
    /// Said instead of a latency when there is none to give (every answer replayed, or none answered).
    #[serde(default)]
    pub latency_note: Option<String>,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// US dollars for the answers of this configuration (cached answers cost nothing); None without a price.
    pub cost_usd: Option<f64>,
    pub hit_rate: Option<f64>,
    pub mrr: Option<f64>,
    pub ndcg: Option<f64>,
    /// Mean share of source spans retrieved in the top k.
    #[serde(default)]
    pub recall: Option<f64>,
    /// Mean share of the top k that overlap a source span.
    #[serde(default)]
    pub precision: Option<f64>,
    /// Share of this configuration's chunks that hold a source span of some case.
    #[serde(default)]
    pub chunk_coverage: Option<f64>,
    pub keyword_recall: Option<f64>,
    /// Checked citations, over the answers that cite their passages by number: the mean share of
    /// citations their passage supports, and of sentences their cited passages support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_precision: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_recall: Option<f64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub citing_answers: usize,
    /// Answers in another language than their question, over the answers whose language could be told.
    #[serde(default)]
    pub language_mismatches: usize,
    #[serde(default)]
    pub language_mismatch_rate: Option<f64>,
    /// Should have refused × did refuse.
    #[serde(default)]
    pub refusals: RefusalMatrix,
    pub causes: BTreeMap<String, usize>,
    /// Claim-level metrics (after RAGChecker), when the judge stage measured them.
    #[serde(default)]
    pub claims: Option<crate::claims::ClaimSummary>,
    /// This configuration against the one with the best pass rate, on the cases both decided.
    #[serde(default)]
    pub vs_best: Option<PairedComparison>,
    /// An agent's tool calls (tool-call F1 and the rest), when cases expect tools or answers report calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<crate::tools::ToolSummary>,
    /// Simulated users: goals reached, turns to the goal, how the conversations ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goals: Option<crate::goals::GoalSummary>,
}

impl ConfigSummary {
    /// The counts an audit's correction works from.
    pub fn tally(&self) -> crate::corrected::Tally<'_> {
        crate::corrected::Tally {
            config_id: &self.id,
            label: &self.label,
            cells: self.cases,
            passed: self.passed,
            failed: self.failed,
        }
    }
}

/// A paired test between two configurations of one run, case by case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedComparison {
    /// The configuration compared against.
    pub against: String,
    /// Cases both decided (pass or fail).
    pub paired: usize,
    /// McNemar's exact p-value on pass/fail.
    pub mcnemar_p: Option<f64>,
    /// Mean criteria-score difference (this − against), 95 % bootstrap interval.
    pub score_change: Option<ragtester_core::oracle::Interval>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BadCase {
    pub case_id: String,
    pub config_id: String,
    pub config_label: String,
    pub category: String,
    pub strategy: String,
    pub query: String,
    pub expected_answer: String,
    pub keywords: Vec<String>,
    pub answer: String,
    pub contexts: Vec<String>,
    pub cause: Option<FailureCause>,
    /// What the cause was read from (spans, ranks, terms, the judge's reason).
    #[serde(default)]
    pub evidence: Option<String>,
    pub correctness: Option<u8>,
    pub reasons: Vec<String>,
    pub error: Option<String>,
    /// A simulated user's conversation, turn by turn: `user (move): message` then `→ answer`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversation: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub schema_version: u32,
    /// True when any role ran on the offline heuristics: the figures exercise the pipeline, not a model.
    pub heuristic: bool,
    pub heuristic_note: Option<String>,
    pub judge: Option<String>,
    /// The corpus, without the poisoned copies safety cases add.
    pub documents: usize,
    /// Poisoned copies of passages that safety cases added to the corpus.
    #[serde(default)]
    pub poisoned_copies: usize,
    pub cases: usize,
    /// Cells with no verdict, and why: they count against every gate's pass rate.
    #[serde(default)]
    pub not_judged: NotJudged,
    /// Cells the run did not ask, by reason (`kind` is `skipped`).
    #[serde(default)]
    pub skipped: Vec<ErrorReason>,
    pub configs: Vec<ConfigSummary>,
    pub categories: Vec<GroupSummary>,
    pub weakest_category: Option<String>,
    pub generators: Vec<GroupSummary>,
    pub languages: Vec<GroupSummary>,
    pub origins: Vec<GroupSummary>,
    pub strategies: Vec<GroupSummary>,
    /// category → configuration id → fail rate, for the heat map.
    pub heatmap: BTreeMap<String, BTreeMap<String, Option<f64>>>,
    pub bad_cases: Vec<BadCase>,
    /// Why cells failed, what the corpus does to the embedders, and what to change.
    #[serde(default)]
    pub diagnosis: crate::diagnosis::Diagnosis,
    #[serde(default)]
    pub oracle: Option<ragtester_core::oracle::OracleSummary>,
    /// How far each judge's verdicts can be trusted, a line per judge: the agreement with people measured
    /// for its profile (which labels, how many, held-out figures per language), or "not measured against
    /// people".
    #[serde(default)]
    pub agreement_with_people: Vec<String>,
    /// The same, a phrase per judge: its first held-out figure per language (the console's TRUST line).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trust_brief: Vec<String>,
    /// Answers a rule failed where their judge's own ratings passed them, per judge and rule: a rule
    /// fighting its judge shows here instead of silently undoing it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rule_overrides: Vec<RuleOverride>,
    /// Axes of the matrix whose values changed no answer (their configurations' rows repeat one result).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle_axes: Vec<String>,
    #[serde(default)]
    pub audit: Option<ragtester_core::oracle::AuditSummary>,
    /// Pass rates corrected by the audit's labels, best first (none without an audit).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrected: Vec<ragtester_core::oracle::CorrectedRate>,
    /// Neighbours in the corrected ranking whose intervals overlap: not distinguishable at 95 %.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indistinguishable: Vec<(String, String)>,
    /// Two configurations compared answer by answer (`judge --pairwise A B`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairwise: Option<ragtester_core::oracle::PairwiseSummary>,
    /// Conversations as units, per configuration (none when the suite has no conversational cases).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conversations: Vec<crate::conversations::ConversationSummary>,
    /// Conversations a configuration failed, with their turns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_conversations: Vec<crate::conversations::FailedConversation>,
    /// Each configuration against the oracle reference of the same model (`--retriever oracle`): what
    /// perfect retrieval would add, and how many of its failures it fixes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headroom: Vec<crate::reference::Headroom>,
    /// Answerable cases each closed-book configuration (`--retriever none`) passes: they test the model's
    /// memory, not the documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leaky: Vec<crate::reference::Leaky>,
    /// Each configuration against the same model given the case's whole documents (`--retriever
    /// full-doc`): pass rate, tokens, latency and cost of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub long_context: Vec<crate::reference::LongContext>,
    /// Each configuration answered N times (`run --repeat N`), its repeats folded: passes out of N per
    /// case and the flaky cases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<crate::repeats::RepeatedConfig>,
}

/// How often one rule failed answers one judge passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleOverride {
    pub judge: String,
    pub rule: String,
    pub count: usize,
    /// The judge's verdicts (with ratings) in the run: what `count` is out of.
    pub of: usize,
}

impl RuleOverride {
    /// "the contradicts sources rule failed 12 of 400 answers judge offline passed".
    pub fn line(&self) -> String {
        format!(
            "the {} rule failed {} of {} answers judge {} passed",
            self.rule.replace('_', " "),
            self.count,
            self.of,
            self.judge
        )
    }
}

/// Per judge and rule, the answers a rule failed that the judge passed, most first.
fn rule_overrides(verdicts: &[&Verdict]) -> Vec<RuleOverride> {
    let mut judged: BTreeMap<&str, usize> = BTreeMap::new();
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for v in verdicts.iter().filter(|v| v.status == VerdictStatus::Ok) {
        *judged.entry(v.judge.as_str()).or_default() += 1;
        if let Some(rule) = &v.overrode_judge {
            *counts.entry((v.judge.as_str(), rule.as_str())).or_default() += 1;
        }
    }
    let mut out: Vec<RuleOverride> = counts
        .into_iter()
        .map(|((judge, rule), count)| RuleOverride {
            judge: judge.to_string(),
            rule: rule.to_string(),
            count,
            of: judged.get(judge).copied().unwrap_or(0),
        })
        .collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.rule.cmp(&b.rule)));
    out
}

/// Cells that got no verdict: how many, and the reasons, most frequent first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotJudged {
    pub exec_errors: usize,
    pub judge_errors: usize,
    pub reasons: Vec<ErrorReason>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReason {
    /// `exec_error` or `judge_error`.
    pub kind: String,
    /// The error's first line, cut at 160 characters.
    pub reason: String,
    pub count: usize,
}

impl NotJudged {
    fn from_verdicts(verdicts: &[&Verdict]) -> Self {
        let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
        let mut out = NotJudged::default();
        for v in verdicts {
            let kind = match v.status {
                VerdictStatus::Ok => continue,
                VerdictStatus::ExecError => {
                    out.exec_errors += 1;
                    "exec_error"
                }
                VerdictStatus::JudgeError => {
                    out.judge_errors += 1;
                    "judge_error"
                }
            };
            let first_line = v
                .error
                .as_deref()
                .unwrap_or("no reason recorded")
                .lines()
                .next();
            let reason: String = first_line.unwrap_or_default().chars().take(160).collect();
            *counts.entry((kind.to_string(), reason)).or_default() += 1;
        }
        out.reasons = counts
            .into_iter()
            .map(|((kind, reason), count)| ErrorReason {
                kind,
                reason,
                count,
            })
            .collect();
        out.reasons.sort_by_key(|r| std::cmp::Reverse(r.count));
        out.reasons.truncate(10);
        out
    }
}

fn skip_reasons(skipped: &[ragtester_core::SkippedCell]) -> Vec<ErrorReason> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in skipped {
        *counts.entry(s.reason.as_str()).or_default() += 1;
    }
    counts
        .into_iter()
        .map(|(reason, count)| ErrorReason {
            kind: "skipped".to_string(),
            reason: reason.to_string(),
            count,
        })
        .collect()
}

#[derive(Default)]
struct Tally {
    cases: usize,
    passed: usize,
    failed: usize,
    errors: usize,
    score_sum: f64,
    scored: usize,
}

impl Tally {
    fn add(&mut self, v: &Verdict) {
        self.cases += 1;
        match (v.status, v.passed) {
            (VerdictStatus::Ok, Some(true)) => self.passed += 1,
            (VerdictStatus::Ok, Some(false)) => self.failed += 1,
            _ => self.errors += 1,
        }
        if let Some(m) = v.criteria_mean {
            self.score_sum += m;
            self.scored += 1;
        }
    }

    fn fail_rate(&self) -> Option<f64> {
        let judged = self.passed + self.failed;
        (judged > 0).then(|| self.failed as f64 / judged as f64)
    }

    fn group(&self, name: &str) -> GroupSummary {
        let share = |k: usize| (self.cases > 0).then(|| k as f64 / self.cases as f64);
        GroupSummary {
            name: name.to_string(),
            cases: self.cases,
            passed: self.passed,
            failed: self.failed,
            errors: self.errors,
            fail_rate: self.fail_rate(),
            pass_rate: share(self.passed),
            error_rate: share(self.errors),
            mean_score: (self.scored > 0).then(|| self.score_sum / self.scored as f64),
        }
    }
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Nearest-rank percentile of unsorted values.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    Some(v[rank.min(v.len()) - 1])
}

/// Each configuration against the one with the lowest fail rate: is the difference more than noise?
fn compare_with_best(configs: &mut [ConfigSummary], verdicts: &[&Verdict]) {
    let Some(best) = configs
        .iter()
        .filter(|c| c.fail_rate.is_some())
        .min_by(|a, b| {
            a.fail_rate
                .partial_cmp(&b.fail_rate)
                .expect("rates are finite")
        })
        .map(|c| c.id.clone())
    else {
        return;
    };
    let of = |id: &str| -> Vec<&Verdict> {
        verdicts
            .iter()
            .copied()
            .filter(|v| v.config_id == id)
            .collect()
    };
    let best_verdicts = of(&best);
    for c in configs.iter_mut().filter(|c| c.id != best) {
        let (paired, mcnemar_p, score_change) =
            crate::paired::paired_tests(&best_verdicts, &of(&c.id));
        c.vs_best = Some(PairedComparison {
            against: best.clone(),
            paired,
            mcnemar_p,
            score_change,
        });
    }
}

/// Whether a verdict's cell is listed among the bad cases (failed, errored, or rated bad by the rubric):
/// the cells whose answer and retrieved passages a report shows.
pub fn is_bad_case(v: &Verdict) -> bool {
    v.passed == Some(false)
        || v.rubric.as_ref().is_some_and(|r| r.is_bad_case())
        || v.status != VerdictStatus::Ok
}

/// The verdicts reports follow: those of the first judge. Other judges' verdicts stay in the records.
pub fn primary_verdicts(verdicts: &[Verdict]) -> Vec<&Verdict> {
    let judge = verdicts.first().map(|v| v.judge.as_str());
    verdicts
        .iter()
        .filter(|v| Some(v.judge.as_str()) == judge)
        .collect()
}

/// Compute the summary over the primary judge's verdicts.
pub fn summarise(inputs: &ReportInputs<'_>) -> Summary {
    let judge = inputs.verdicts.first().map(|v| v.judge.clone());
    let verdicts = primary_verdicts(inputs.verdicts);
    let index = Index::new(inputs);
    let mut configs: Vec<ConfigSummary> = inputs
        .configs
        .iter()
        .map(|config| config_summary(inputs, &index, &verdicts, config))
        .collect();
    compare_with_best(&mut configs, &verdicts);
    let Groups {
        categories,
        generators,
        languages,
        strategies,
        origins,
    } = Groups::of(inputs, &index, &verdicts);
    let weakest_category = weakest(&categories);
    let heatmap = heatmap(inputs.configs, &index, &verdicts);
    let bad_cases = bad_cases(inputs.configs, &index, &verdicts);
    let heuristic_parts = heuristic_parts(inputs, judge.as_deref());
    let heuristic = !heuristic_parts.is_empty();
    let diagnosis = crate::diagnosis::diagnose(&crate::diagnosis::DiagnosisInputs {
        cases: &index.cases,
        answers: &index.answers,
        configs: inputs.configs,
        verdicts: &verdicts,
        embedders: inputs.embedder_profiles,
    });
    let (corrected, indistinguishable) = corrected(inputs.audit, &configs);
    let (headroom, leaky, mut long_context) =
        crate::reference::reference_points(inputs.cases, inputs.configs, &verdicts);
    for lc in &mut long_context {
        let row = |id: &str| configs.iter().find(|c| c.id == id);
        lc.spend = row(&lc.config_id).map(spend).unwrap_or_default();
        lc.full_doc_spend = row(&lc.full_doc_id).map(spend).unwrap_or_default();
    }
    let (conversations, failed_conversations) = crate::conversations::conversations(
        inputs.cases,
        inputs.configs,
        &index.answers,
        &verdicts
            .iter()
            .map(|v| ((v.case_id.as_str(), v.config_id.as_str()), *v))
            .collect(),
        &inputs
            .skipped
            .iter()
            .map(|s| (s.case_id.as_str(), s.config_id.as_str()))
            .collect(),
    );
    Summary {
        schema_version: ragtester_core::SCHEMA_VERSION,
        heuristic,
        heuristic_note: heuristic.then(|| heuristic_note(&heuristic_parts)),
        agreement_with_people: agreement_with_people(inputs.oracle),
        trust_brief: trust_brief(inputs.oracle),
        rule_overrides: rule_overrides(inputs.verdicts.iter().collect::<Vec<_>>().as_slice()),
        idle_axes: crate::axes::idle_axes(inputs.configs, inputs.answers),
        repeats: crate::repeats::fold_repeats(inputs.cases, inputs.configs, &verdicts),
        judge,
        documents: inputs
            .documents
            .iter()
            .filter(|d| d.origin != DocumentOrigin::Poisoned)
            .count(),
        poisoned_copies: inputs
            .documents
            .iter()
            .filter(|d| d.origin == DocumentOrigin::Poisoned)
            .count(),
        cases: inputs.cases.len(),
        not_judged: NotJudged::from_verdicts(&verdicts),
        skipped: skip_reasons(inputs.skipped),
        configs,
        categories,
        weakest_category,
        generators,
        languages,
        origins,
        strategies,
        heatmap,
        bad_cases,
        diagnosis,
        oracle: inputs.oracle.cloned(),
        audit: inputs.audit.cloned(),
        corrected,
        indistinguishable,
        pairwise: inputs.pairwise.cloned(),
        conversations,
        failed_conversations,
        headroom,
        leaky,
        long_context,
    }
}

/// The summary's groupings of verdicts by a property of their case.
struct Groups {
    categories: Vec<GroupSummary>,
    generators: Vec<GroupSummary>,
    languages: Vec<GroupSummary>,
    strategies: Vec<GroupSummary>,
    origins: Vec<GroupSummary>,
}

impl Groups {
    fn of(inputs: &ReportInputs<'_>, index: &Index<'_>, verdicts: &[&Verdict]) -> Self {
        let origin_of: HashMap<&str, DocumentOrigin> = inputs
            .documents
            .iter()
            .map(|d| (d.id.as_str(), d.origin))
            .collect();
        let group_by = |key: &dyn Fn(&TestCase) -> String| group_by(index, verdicts, key);
        // RQ1–RQ2 compare the generators' questions, trimmed to as many cells each: a simulated user's
        // goal, built on one of them, is counted under its own strategy, not again under its generator.
        let questions: Vec<&Verdict> = verdicts
            .iter()
            .copied()
            .filter(|v| index.case(v).is_none_or(|c| c.goal.is_none()))
            .collect();
        Self {
            categories: group_by(&|c| c.category.as_str().to_string()),
            generators: self::group_by(index, &questions, &|c| c.generator.as_str().to_string()),
            languages: group_by(&|c| c.language.clone()),
            strategies: group_by(&|c| c.strategy.as_str().to_string()),
            origins: group_by(&|c| {
                origin_of
                    .get(c.document_id.as_str())
                    .copied()
                    .unwrap_or_default()
                    .as_str()
                    .to_string()
            }),
        }
    }
}

/// A line per judge on its measured agreement with people (none without an oracle).
fn agreement_with_people(oracle: Option<&ragtester_core::oracle::OracleSummary>) -> Vec<String> {
    let Some(oracle) = oracle else {
        return Vec::new();
    };
    if oracle.people.is_empty() {
        return vec![
            "not measured against people: these verdicts were judged before judges carried their \
             agreement with people (judge the run again to see it)"
                .to_string(),
        ];
    }
    oracle
        .people
        .iter()
        .map(|p| {
            let profile = p.profile.as_deref().map_or(String::new(), |name| {
                format!(
                    " (profile {name}, {})",
                    p.profile_hash.as_deref().unwrap_or("–")
                )
            });
            match &p.measured {
                Some(m) => format!(
                    "judge {}{profile}: agreement with people {}",
                    p.judge,
                    m.describe()
                ),
                None => format!("judge {}{profile}: not measured against people", p.judge),
            }
        })
        .collect()
}

/// A phrase per judge on its agreement with people: its first held-out figure per language.
fn trust_brief(oracle: Option<&ragtester_core::oracle::OracleSummary>) -> Vec<String> {
    let Some(oracle) = oracle else {
        return Vec::new();
    };
    oracle
        .people
        .iter()
        .map(|p| match &p.measured {
            Some(m) => format!("judge {} vs people, {}", p.judge, brief(m)),
            None => format!("judge {}: not measured against people", p.judge),
        })
        .collect()
}

/// In a phrase, the first figure of each language and how it was held out, a measure named once for the
/// languages it is shared by (`4 held-out sets: verdicts kappa en 0.48, zh 0.18`).
fn brief(m: &ragtester_core::oracle::MeasuredAgreement) -> String {
    let mut measures: Vec<(&str, Vec<String>)> = Vec::new();
    for (language, figures) in &m.by_language {
        let Some(f) = figures.first() else { continue };
        let figure = format!("{language} {:.2}", f.value);
        match measures.iter_mut().find(|(name, _)| *name == f.measure) {
            Some((_, list)) => list.push(figure),
            None => measures.push((f.measure.as_str(), vec![figure])),
        }
    }
    let firsts: Vec<String> = measures
        .into_iter()
        .map(|(name, list)| format!("{name} {}", list.join(", ")))
        .collect();
    let sets = match m.labels.len() {
        1 => "1 held-out set".to_string(),
        n => format!("{n} held-out sets"),
    };
    format!("{sets}: {}", firsts.join("; "))
}

fn heuristic_note(parts: &[&str]) -> String {
    format!(
        "Offline heuristics in use ({}): these results exercise the pipeline and compare retrieval settings; \
         they are not the behaviour of a language model.",
        parts.join(", ")
    )
}

/// Pass rates corrected by the audit, when there is one.
fn corrected(
    audit: Option<&ragtester_core::oracle::AuditSummary>,
    configs: &[ConfigSummary],
) -> (
    Vec<ragtester_core::oracle::CorrectedRate>,
    Vec<(String, String)>,
) {
    audit
        .map(|a| {
            let tallies: Vec<_> = configs.iter().map(ConfigSummary::tally).collect();
            crate::corrected::corrected_rates(&tallies, a)
        })
        .unwrap_or_default()
}

/// The run's cases and answers by id, as every part of the summary looks them up.
struct Index<'a> {
    cases: HashMap<&'a str, &'a TestCase>,
    answers: HashMap<(&'a str, &'a str), &'a Answer>,
}

impl<'a> Index<'a> {
    fn new(inputs: &ReportInputs<'a>) -> Self {
        Self {
            cases: inputs.cases.iter().map(|c| (c.id.as_str(), c)).collect(),
            answers: inputs
                .answers
                .iter()
                .map(|a| ((a.case_id.as_str(), a.config_id.as_str()), a))
                .collect(),
        }
    }

    fn answer(&self, v: &Verdict) -> Option<&'a Answer> {
        self.answers
            .get(&(v.case_id.as_str(), v.config_id.as_str()))
            .copied()
    }

    fn case(&self, v: &Verdict) -> Option<&'a TestCase> {
        self.cases.get(v.case_id.as_str()).copied()
    }
}

/// Latency over the answers the system produced in this run; replayed answers counted apart.
struct LatencyFigures {
    p50: Option<f64>,
    p95: Option<f64>,
    live: usize,
    replayed: usize,
    replayed_share: Option<f64>,
    replayed_since: Option<u64>,
    note: Option<String>,
    stages: BTreeMap<String, f64>,
    traced: Option<(usize, usize)>,
}

/// Each step's median over the answers that have it (a traced answer's steps summed per answer).
fn stage_medians(live: &[&&Answer]) -> BTreeMap<String, f64> {
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for a in live {
        match a.trace.as_ref().filter(|t| !t.stages.is_empty()) {
            Some(trace) => {
                let mut per: BTreeMap<&str, f64> = BTreeMap::new();
                for s in &trace.stages {
                    *per.entry(s.stage.as_str()).or_default() += s.ms;
                }
                for (stage, ms) in per {
                    times.entry(stage.to_string()).or_default().push(ms);
                }
            }
            None => {
                if a.latency.retrieval_ms > 0.0 {
                    times
                        .entry("retrieval".into())
                        .or_default()
                        .push(a.latency.retrieval_ms);
                }
                times
                    .entry("generation".into())
                    .or_default()
                    .push(a.latency.generation_ms);
            }
        }
    }
    times
        .into_iter()
        .filter_map(|(stage, ms)| Some((stage, percentile(&ms, 50.0)?)))
        .collect()
}

fn latency_figures(answered: &[&Answer]) -> LatencyFigures {
    let live: Vec<&&Answer> = answered
        .iter()
        .filter(|a| a.error.is_none() && !a.cached)
        .collect();
    // A time that is negative or not a number (a hand-edited record) says nothing of the system: left out of
    // the percentiles rather than becoming one.
    let latencies: Vec<f64> = live
        .iter()
        .map(|a| a.latency.total_ms)
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .collect();
    let replayed: Vec<&&Answer> = answered
        .iter()
        .filter(|a| a.error.is_none() && a.cached)
        .collect();
    let without_error = answered.iter().filter(|a| a.error.is_none()).count();
    let note = if without_error == 0 {
        Some("no answer without an error: no latency to report".to_string())
    } else if live.is_empty() {
        Some(format!(
            "all {} answers were replayed from the response cache: no latency was measured in this run",
            replayed.len()
        ))
    } else {
        None
    };
    let traced = answered.iter().any(|a| a.trace.is_some()).then(|| {
        let with = answered
            .iter()
            .filter(|a| a.trace.as_ref().is_some_and(|t| t.spans > 0));
        (
            with.count(),
            answered.iter().filter(|a| a.trace.is_some()).count(),
        )
    });
    LatencyFigures {
        stages: stage_medians(&live),
        traced,
        p50: percentile(&latencies, 50.0),
        p95: percentile(&latencies, 95.0),
        live: live.len(),
        replayed: replayed.len(),
        replayed_share: (without_error > 0).then(|| replayed.len() as f64 / without_error as f64),
        replayed_since: replayed.iter().filter_map(|a| a.cached_at).min(),
        note,
    }
}

/// The mean of each of the five criteria's ratings, where any verdict rated it.
fn criteria_means(vs: &[&&Verdict]) -> BTreeMap<String, f64> {
    let mut criteria = BTreeMap::new();
    for (i, name) in [
        "1_faithfulness",
        "2_relevance",
        "3_completeness",
        "4_clarity",
        "5_keyword_match",
    ]
    .iter()
    .enumerate()
    {
        if let Some(m) = mean(
            vs.iter()
                .filter_map(|v| v.criteria.as_ref())
                .filter_map(|c| c.all()[i].rating.score()),
        ) {
            criteria.insert(name[2..].to_string(), m);
        }
    }
    criteria
}

/// A configuration's verdicts by their case: tallies per category, the refusal matrix, failure causes.
fn by_case(
    index: &Index<'_>,
    vs: &[&&Verdict],
) -> (
    BTreeMap<String, Tally>,
    RefusalMatrix,
    BTreeMap<String, usize>,
) {
    let mut by_category: BTreeMap<String, Tally> = BTreeMap::new();
    let mut refusals = RefusalMatrix::default();
    let mut causes = BTreeMap::new();
    for v in vs {
        if let Some(case) = index.case(v) {
            by_category
                .entry(case.category.as_str().to_string())
                .or_default()
                .add(v);
            refusals.add(case, v);
            if let Some(cause) = failure_cause(case, index.answer(v), v) {
                *causes.entry(cause.as_str().to_string()).or_insert(0) += 1;
            }
        }
    }
    (by_category, refusals, causes)
}

/// One configuration's figures: outcomes, per category, latency, tokens and cost, retrieval, causes.
fn config_summary(
    inputs: &ReportInputs<'_>,
    index: &Index<'_>,
    verdicts: &[&Verdict],
    config: &Configuration,
) -> ConfigSummary {
    let vs: Vec<&&Verdict> = verdicts
        .iter()
        .filter(|v| v.config_id == config.id)
        .collect();
    let mut tally = Tally::default();
    vs.iter().for_each(|v| tally.add(v));
    let answered: Vec<&Answer> = vs.iter().filter_map(|v| index.answer(v)).collect();
    let latency = latency_figures(&answered);
    let (by_category, refusals, causes) = by_case(index, &vs);
    let told: Vec<bool> = vs.iter().filter_map(|v| v.metrics.language_match).collect();
    let language_mismatches = told.iter().filter(|m| !**m).count();
    let group = tally.group(&config.id);
    let status_count = |s: VerdictStatus| vs.iter().filter(|v| v.status == s).count();
    let metric = |f: fn(&Verdict) -> Option<f64>| mean(vs.iter().filter_map(|v| f(v)));
    ConfigSummary {
        id: config.id.clone(),
        label: config.label(),
        repeat_of: config.repeat.map(|_| config.base_id()),
        retriever: config.retriever.as_str().to_string(),
        top_k: config.top_k,
        cases: group.cases,
        passed: group.passed,
        failed: group.failed,
        errors: group.errors,
        judge_errors: status_count(VerdictStatus::JudgeError),
        exec_errors: status_count(VerdictStatus::ExecError),
        fail_rate: group.fail_rate,
        pass_rate: group.pass_rate,
        error_rate: group.error_rate,
        skipped: inputs
            .skipped
            .iter()
            .filter(|s| s.config_id == config.id)
            .count(),
        by_category: by_category
            .iter()
            .map(|(name, t)| (name.clone(), t.group(name)))
            .collect(),
        mean_score: group.mean_score,
        mean_correctness: metric(|v| v.rubric.as_ref().map(|r| f64::from(r.correctness.score))),
        criteria: criteria_means(&vs),
        latency_p50_ms: latency.p50,
        latency_p95_ms: latency.p95,
        stage_p50_ms: latency.stages,
        traced: latency.traced,
        live_answers: latency.live,
        replayed_answers: latency.replayed,
        replayed_share: latency.replayed_share,
        replayed_since: latency.replayed_since,
        replayed_since_utc: latency
            .replayed_since
            .and_then(|t| jiff::Timestamp::from_second(i64::try_from(t).ok()?).ok())
            .map(|t| t.to_string()),
        latency_note: latency.note,
        // Saturating: an imported record's counts may be anything.
        prompt_tokens: answered
            .iter()
            .fold(0u64, |n, a| n.saturating_add(a.usage.prompt_tokens)),
        completion_tokens: answered
            .iter()
            .fold(0u64, |n, a| n.saturating_add(a.usage.completion_tokens)),
        cost_usd: inputs.prices.get(&config.llm).map(|p| {
            answered
                .iter()
                .filter(|a| !a.cached)
                .map(|a| p.cost(a.usage.prompt_tokens, a.usage.completion_tokens))
                .sum()
        }),
        hit_rate: metric(|v| v.metrics.hit.map(|h| f64::from(u8::from(h)))),
        mrr: metric(|v| v.metrics.reciprocal_rank),
        ndcg: metric(|v| v.metrics.ndcg),
        recall: metric(|v| v.metrics.recall),
        precision: metric(|v| v.metrics.precision),
        chunk_coverage: inputs.chunk_coverage.get(&config.id).copied(),
        keyword_recall: metric(|v| v.metrics.keyword_recall_context),
        citation_precision: metric(|v| v.metrics.citation_precision),
        citation_recall: metric(|v| v.metrics.citation_recall),
        citing_answers: vs
            .iter()
            .filter(|v| v.metrics.citation_precision.is_some())
            .count(),
        language_mismatches,
        language_mismatch_rate: (!told.is_empty())
            .then(|| language_mismatches as f64 / told.len() as f64),
        refusals: refusals.finish(),
        causes,
        claims: crate::claims::summarise_claims(vs.iter().map(|v| **v)),
        vs_best: None,
        tools: tool_figures(config, index, &vs),
        goals: crate::goals::summarise_goals(vs.iter().map(|v| **v)),
    }
}

/// An agent's tool-call figures. Only an agent or a target can report its calls: a plain pipeline's are
/// not missing.
fn tool_figures(
    config: &Configuration,
    index: &Index<'_>,
    vs: &[&&Verdict],
) -> Option<crate::tools::ToolSummary> {
    crate::tools::summarise_tools(vs.iter().map(|v| **v), &|v| {
        (config.agent || config.target.is_some())
            && index.case(v).is_some_and(|c| !c.expected_tools.is_empty())
    })
}

/// Verdicts grouped by a property of their case.
fn group_by(
    index: &Index<'_>,
    verdicts: &[&Verdict],
    key: &dyn Fn(&TestCase) -> String,
) -> Vec<GroupSummary> {
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    for v in verdicts {
        if let Some(case) = index.case(v) {
            tallies.entry(key(case)).or_default().add(v);
        }
    }
    tallies.iter().map(|(name, t)| t.group(name)).collect()
}

/// The spec's weakest category: lowest mean score; ties go to the higher fail rate.
fn weakest(categories: &[GroupSummary]) -> Option<String> {
    categories
        .iter()
        .filter(|g| g.mean_score.is_some())
        .min_by(|a, b| {
            a.mean_score
                .unwrap()
                .total_cmp(&b.mean_score.unwrap())
                .then(
                    b.fail_rate
                        .unwrap_or(0.0)
                        .total_cmp(&a.fail_rate.unwrap_or(0.0)),
                )
        })
        .map(|g| g.name.clone())
}

/// category → configuration id → fail rate.
fn heatmap(
    configs: &[Configuration],
    index: &Index<'_>,
    verdicts: &[&Verdict],
) -> BTreeMap<String, BTreeMap<String, Option<f64>>> {
    let mut heatmap = BTreeMap::new();
    for category in Category::ALL {
        let mut row = BTreeMap::new();
        for config in configs {
            let mut t = Tally::default();
            verdicts
                .iter()
                .filter(|v| {
                    v.config_id == config.id
                        && index.case(v).is_some_and(|c| c.category == category)
                })
                .for_each(|v| t.add(v));
            if t.cases > 0 {
                row.insert(config.id.clone(), t.fail_rate());
            }
        }
        if !row.is_empty() {
            heatmap.insert(category.as_str().to_string(), row);
        }
    }
    heatmap
}

/// Every failed or errored cell with what the report shows of it: the case, the answer, the passages,
/// the cause and the judge's reasons.
fn bad_cases(configs: &[Configuration], index: &Index<'_>, verdicts: &[&Verdict]) -> Vec<BadCase> {
    let labels: HashMap<&str, String> =
        configs.iter().map(|c| (c.id.as_str(), c.label())).collect();
    verdicts
        .iter()
        .filter(|v| is_bad_case(v))
        .filter_map(|v| {
            let case = index.case(v)?;
            let answer = index.answer(v);
            let attribution = attribution(case, answer, v);
            Some(BadCase {
                case_id: case.id.clone(),
                config_id: v.config_id.clone(),
                config_label: labels
                    .get(v.config_id.as_str())
                    .cloned()
                    .unwrap_or_else(|| v.config_id.clone()),
                category: case.category.as_str().to_string(),
                strategy: case.strategy.as_str().to_string(),
                query: case.query.clone(),
                expected_answer: case.expected_answer.clone(),
                keywords: case.keywords.clone(),
                answer: answer.map(|a| a.answer.clone()).unwrap_or_default(),
                contexts: answer
                    .map(|a| a.contexts.iter().map(|c| c.text.clone()).collect())
                    .unwrap_or_default(),
                cause: attribution.as_ref().map(|a| a.cause),
                evidence: attribution.map(|a| a.evidence),
                correctness: v.rubric.as_ref().map(|r| r.correctness.score),
                reasons: judge_reasons(v),
                error: v.error.clone(),
                conversation: answer.map(transcript).unwrap_or_default(),
            })
        })
        .collect()
}

/// A simulated conversation as the report prints it, one line a message.
fn transcript(answer: &Answer) -> Vec<String> {
    answer
        .simulation
        .iter()
        .flat_map(|s| &s.turns)
        .flat_map(|t| {
            [
                format!(
                    "user ({}): {}",
                    t.user_move.as_str().replace('_', " "),
                    t.user
                ),
                format!("→ {}", t.error.as_deref().unwrap_or(&t.answer)),
            ]
        })
        .collect()
}

/// A verdict's reasons as the report lists them: each criterion, the rubric's correctness, the notes.
fn judge_reasons(v: &Verdict) -> Vec<String> {
    let mut reasons = Vec::new();
    if let Some(c) = &v.criteria {
        for (name, crit) in [
            "faithfulness",
            "relevance",
            "completeness",
            "clarity",
            "keyword match",
        ]
        .iter()
        .zip(c.all())
        {
            reasons.push(format!("{name}: {:?} — {}", crit.rating, crit.reason));
        }
    }
    if let Some(r) = &v.rubric {
        reasons.push(format!(
            "correctness {}/5 — {}",
            r.correctness.score, r.correctness.reason
        ));
    }
    reasons.extend(v.notes.iter().cloned());
    reasons
}

/// Which roles ran on the offline heuristics (the report then says its figures are not a model's).
fn heuristic_parts(inputs: &ReportInputs<'_>, judge: Option<&str>) -> Vec<&'static str> {
    [
        (
            inputs.cases.iter().any(|c| c.generator_model == "offline"),
            "template question generator",
        ),
        (
            inputs.configs.iter().any(|c| c.llm == "offline"),
            "extractive reader as the LLM under test",
        ),
        (judge == Some("offline"), "lexical judge"),
        (
            inputs
                .configs
                .iter()
                .any(|c| c.retriever.uses_dense() && c.embedder == "hash"),
            "hashing embedder as the dense fallback",
        ),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// What a configuration's answers cost, from its row: prompt tokens per answer, median latency, dollars.
fn spend(row: &ConfigSummary) -> Spend {
    let answers = row.cases.saturating_sub(row.exec_errors);
    Spend {
        prompt_tokens_per_answer: (answers > 0).then(|| row.prompt_tokens as f64 / answers as f64),
        latency_p50_ms: row.latency_p50_ms,
        cost_usd: row.cost_usd,
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&v, 50.0), Some(3.0));
        assert_eq!(percentile(&v, 95.0), Some(5.0));
        assert_eq!(percentile(&[], 50.0), None);
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&hundred, 95.0), Some(95.0));
    }
}
