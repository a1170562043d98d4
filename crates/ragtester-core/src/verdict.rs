//! The oracle's judgement of one answer: the paper's five criteria, the spec's rubric, and rule metrics.

use crate::record::default_schema_version;
use serde::{Deserialize, Serialize};

/// The paper's three-level rating (§3.5), scored 1 / 0.5 / 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rating {
    True,
    Partially,
    False,
}

impl Rating {
    pub fn score(self) -> f64 {
        match self {
            Rating::True => 1.0,
            Rating::Partially => 0.5,
            Rating::False => 0.0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub rating: Rating,
    pub reason: String,
}

/// The paper's five criteria.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criteria {
    pub faithfulness: Criterion,
    pub relevance: Criterion,
    pub completeness: Criterion,
    pub clarity: Criterion,
    pub keyword_match: Criterion,
}

impl Criteria {
    pub fn all(&self) -> [&Criterion; 5] {
        [
            &self.faithfulness,
            &self.relevance,
            &self.completeness,
            &self.clarity,
            &self.keyword_match,
        ]
    }

    /// The paper's verdict score: the mean of the five ratings.
    pub fn mean(&self) -> f64 {
        self.all().iter().map(|c| c.rating.score()).sum::<f64>() / 5.0
    }

    /// The paper's fail rule: mean below 0.5, or faithfulness False.
    pub fn passes(&self) -> bool {
        self.mean() >= 0.5 && self.faithfulness.rating != Rating::False
    }
}

/// One 1–5 score of the spec's rubric (§5.2), in the spec's output shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RubricScore {
    pub score: u8,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rubric {
    pub correctness: RubricScore,
    pub completeness: RubricScore,
    pub honesty: RubricScore,
}

impl Rubric {
    /// The spec's bad case: a score below 3 (we take correctness, the spec's headline score).
    pub fn is_bad_case(&self) -> bool {
        self.correctness.score < 3
    }
}

/// Metrics computed by rule, without a judge. `None` where a metric is undefined (no keywords, a negative case
/// with no relevant passage): never NaN.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RuleMetrics {
    pub keyword_recall_context: Option<f64>,
    pub keyword_recall_answer: Option<f64>,
    pub hit: Option<bool>,
    pub reciprocal_rank: Option<f64>,
    pub ndcg: Option<f64>,
    /// Share of the case's source spans covered by the top k (records before this field read as None).
    #[serde(default)]
    pub recall: Option<f64>,
    /// Share of the top k that overlap a source span.
    #[serde(default)]
    pub precision: Option<f64>,
    pub refused: bool,
    /// Whether the answer is in the language of the query (None for refusals and empty answers).
    pub language_match: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictStatus {
    Ok,
    JudgeError,
    ExecError,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    pub case_id: String,
    pub config_id: String,
    /// The judge's model spec (`offline` = the lexical heuristic judge).
    pub judge: String,
    pub status: VerdictStatus,
    pub criteria: Option<Criteria>,
    pub criteria_mean: Option<f64>,
    pub rubric: Option<Rubric>,
    pub metrics: RuleMetrics,
    /// Pass or fail by the paper's rule; None unless status is `ok`.
    pub passed: Option<bool>,
    /// For errors: what went wrong, with the raw judge reply where there was one.
    pub error: Option<String>,
    /// Which of the judge's repeated samples this is (0 unless `--samples` asked for more).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
