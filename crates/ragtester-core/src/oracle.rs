//! How far the oracle can be trusted, as a record: verdict counts and judge errors per judge, agreement
//! between judges, intervals per configuration, and audits of reported failures. Computed by the judge
//! crate, shown by the report.

use serde::{Deserialize, Serialize};

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
    /// The judge prompt templates used (`judge-v3`, or `custom-…` for a user's).
    #[serde(default)]
    pub prompt_version: Option<String>,
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
}
