//! How far the oracle can be trusted, as a record: verdict counts and judge errors per judge, agreement
//! between judges, intervals per configuration, and audits of reported failures. Computed by the judge
//! crate, shown by the report.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A two-sided interval around an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeTally {
    pub judge: String,
    pub verdicts: usize,
    pub passed: usize,
    pub failed: usize,
    pub judge_errors: usize,
    pub exec_errors: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairAgreement {
    pub a: String,
    pub b: String,
    /// Cells both judges decided (sample 0).
    pub items: usize,
    pub percent: Option<f64>,
    pub cohen_kappa: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub pairs: Vec<PairAgreement>,
    /// Cells every judge decided, for Fleiss' κ.
    pub items: usize,
    pub fleiss_kappa: Option<f64>,
}

/// One metric of one configuration under one judge, with its 95 % interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricInterval {
    pub config_id: String,
    pub judge: String,
    /// `pass_rate` or `criteria_mean`.
    pub metric: String,
    /// `wilson` over cases (one sample) or `t` over the means of repeated samples.
    pub method: String,
    /// Cases (Wilson) or samples (t).
    pub n: usize,
    pub interval: Interval,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct OracleSummary {
    pub judges: Vec<JudgeTally>,
    /// Samples per (answer, judge).
    pub samples: u32,
    /// How the verdicts reports follow were combined (`majority`, `mean`), when there were several.
    pub panel: Option<String>,
    pub agreement: Option<Agreement>,
    pub intervals: Vec<MetricInterval>,
    /// The judge prompt templates used (`judge-v4`, or `custom-…` for a user's).
    #[serde(default)]
    pub prompt_version: Option<String>,
    /// How far each judge's verdicts can be trusted: its profile and the agreement with people measured
    /// for it, or none measured. Empty in records written before profiles.
    #[serde(default)]
    pub people: Vec<PeopleAgreement>,
}

/// One judge's measured agreement with people, as a report states it beside the verdicts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PeopleAgreement {
    pub judge: String,
    /// The judge profile that scored its verdicts (name and content hash); None when none applies to it.
    pub profile: Option<String>,
    pub profile_hash: Option<String>,
    /// None: "not measured against people".
    pub measured: Option<MeasuredAgreement>,
}

/// Agreement with people measured on held-out labels (k-fold cross-validation of `ragtester calibrate`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct MeasuredAgreement {
    /// The label sets it was measured on, with how many labelled items each held.
    pub labels: Vec<LabelSet>,
    /// Folds of the cross-validation: every figure is on answers its model was not fitted on.
    pub folds: usize,
    /// Figures per language (`en`, `zh`).
    pub by_language: std::collections::BTreeMap<String, Vec<AgreementFigure>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LabelSet {
    pub name: String,
    pub items: usize,
}

/// One held-out figure: what was compared (`verdicts κ`, `scores pearson`, `preferences pearson`,
/// `faithfulness pearson`…), its value and how many labelled items it stands on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgreementFigure {
    pub measure: String,
    pub value: f64,
    pub n: usize,
}

impl MeasuredAgreement {
    /// The best held-out figure measured for a language; None when that language was not measured.
    pub fn best(&self, language: &str) -> Option<&AgreementFigure> {
        self.by_language
            .get(language)?
            .iter()
            .max_by(|a, b| a.value.total_cmp(&b.value))
    }

    /// One line a report prints: per language, its figures (`zh: preferences pearson 0.71 (n = 795)`).
    pub fn describe(&self) -> String {
        let languages: Vec<String> = self
            .by_language
            .iter()
            .map(|(language, figures)| {
                let figures: Vec<String> = figures
                    .iter()
                    .map(|f| format!("{} {:.2} (n = {})", f.measure, f.value, f.n))
                    .collect();
                format!("{language}: {}", figures.join(", "))
            })
            .collect();
        let sets: Vec<String> = self
            .labels
            .iter()
            .map(|l| format!("{} ({} items)", l.name, l.items))
            .collect();
        format!(
            "held out in {}-fold cross-validation on {} — {}",
            self.folds,
            sets.join(", "),
            languages.join("; ")
        )
    }
}

/// The audit of a run's reported failures: a sample labelled true or false failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditSummary {
    /// Failures the oracle reported.
    pub failures: usize,
    pub confidence: f64,
    pub margin: f64,
    /// Cochran's sample size for them.
    pub sample_size: usize,
    /// Who labelled: `person` (CSV) or the audit judges' specs.
    pub labeller: String,
    pub labelled: usize,
    pub true_failures: usize,
    pub false_failures: usize,
    /// True failures among labelled failures (the paper's oracle precision), with its Wilson interval.
    pub precision: Option<Interval>,
    pub false_discovery_rate: Option<Interval>,
    /// The same counts per configuration (audits made before this field have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_config: Vec<ConfigAudit>,
}

/// One configuration's share of an audit: how many of its reported failures were labelled, and how many of
/// those people (or the audit judges) confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigAudit {
    pub config_id: String,
    pub labelled: usize,
    pub true_failures: usize,
}

/// A configuration's pass rate corrected by the audit (prediction-powered, after ARES): the judge's verdicts
/// on every cell, with its reported failures discounted by the share the audit found to be false alarms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CorrectedRate {
    pub config_id: String,
    pub label: String,
    /// The judge's own pass rate over judged cells.
    pub raw_pass_rate: f64,
    /// The pass rate once false alarms are taken out, with its interval.
    pub pass_rate: Interval,
    /// Labelled failures of this configuration the correction rests on (0: the audit's pooled precision).
    pub labelled: usize,
}

/// Which of two configurations' answers is better, case by case (`judge --pairwise A B`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseSummary {
    pub a: String,
    pub a_label: String,
    pub b: String,
    pub b_label: String,
    pub judge: String,
    /// How each pair was asked: `claims` (the offline judge's claim-level comparison) or `both orders`.
    pub method: String,
    pub overall: PairwiseTally,
    pub by_category: BTreeMap<String, PairwiseTally>,
    pub by_language: BTreeMap<String, PairwiseTally>,
    /// Cases where the comparison failed (a judge error, an unreadable reply), and why the first did.
    pub errors: usize,
    pub first_error: Option<String>,
    /// Every case's outcome, in suite order: kept in `pairwise.jsonl` beside the summary's `pairwise.json`
    /// and joined to it when a run is read, so the report and the UI can list the cases each side won.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<PairwiseCase>,
}

/// Which answer of a pair is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PairSide {
    A,
    B,
    Tie,
}

/// One case of a pairwise comparison: who won overall and on each criterion, and why (a line of
/// `pairwise.jsonl`); a case that could not be compared carries the error instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairwiseCase {
    #[serde(default = "crate::record::default_schema_version")]
    pub schema_version: u32,
    pub case_id: String,
    pub category: String,
    pub language: String,
    pub query: String,
    pub winner: Option<PairSide>,
    pub correctness: Option<PairSide>,
    pub completeness: Option<PairSide>,
    /// The judge's reasons (an LLM judge's for each order asked), or what the offline comparison measured.
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Wins, losses and ties of A against B; A's win rate counts a tie as half, with its Wilson interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PairwiseTally {
    pub a_wins: usize,
    pub b_wins: usize,
    pub ties: usize,
    pub a_win_rate: Option<Interval>,
}
