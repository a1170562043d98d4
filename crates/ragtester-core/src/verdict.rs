//! The oracle's judgement of one answer: the paper's five criteria, the spec's rubric, and rule metrics.

use crate::record::default_schema_version;
use serde::{Deserialize, Serialize};

/// The paper's three-level rating (§3.5), scored 1 / 0.5 / 0, and a criterion that does not apply to the
/// case (keyword match for a case that names no keywords), which is left out of the mean rather than counted
/// as met.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Rating {
    True,
    Partially,
    False,
    NotApplicable,
}

impl Rating {
    /// The rating's score; None for a criterion that does not apply.
    pub fn score(self) -> Option<f64> {
        match self {
            Rating::True => Some(1.0),
            Rating::Partially => Some(0.5),
            Rating::False => Some(0.0),
            Rating::NotApplicable => None,
        }
    }

    /// The rating a criterion's score in [0, 1] stands for, on the paper's three levels: True from
    /// [`Rating::TRUE_FROM`], Partially from [`Rating::PARTLY_FROM`], False below.
    pub fn of_score(score: f64) -> Rating {
        if score >= Self::TRUE_FROM {
            Rating::True
        } else if score >= Self::PARTLY_FROM {
            Rating::Partially
        } else {
            Rating::False
        }
    }

    /// Where a criterion's score turns True: the upper third of [0, 1].
    pub const TRUE_FROM: f64 = 2.0 / 3.0;
    /// Where a criterion's score turns Partially: the middle third.
    pub const PARTLY_FROM: f64 = 1.0 / 3.0;
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Criterion {
    pub rating: Rating,
    pub reason: String,
    /// The graded judgement in [0, 1] the rating is a threshold on (the offline judge's measured share, a
    /// calibrated profile's estimate); None in records written before scores, and for a criterion that
    /// does not apply. [`Criterion::graded`] reads such a record's rating as its score.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl Criterion {
    /// A criterion rated outright: its score is the rating's (1, 0.5, 0; none when it does not apply).
    pub fn rated(rating: Rating, reason: impl Into<String>) -> Self {
        Self {
            rating,
            reason: reason.into(),
            score: rating.score(),
        }
    }

    /// A criterion from its score in [0, 1] (clamped; NaN reads as 0), rated by [`Rating::of_score`].
    pub fn scored(score: f64, reason: impl Into<String>) -> Self {
        let score = if score.is_nan() {
            0.0
        } else {
            score.clamp(0.0, 1.0)
        };
        Self {
            rating: Rating::of_score(score),
            reason: reason.into(),
            score: Some(score),
        }
    }

    /// The criterion's score, or its rating's where the record has none; None when it does not apply.
    pub fn graded(&self) -> Option<f64> {
        match self.rating {
            Rating::NotApplicable => None,
            rating => self.score.or(rating.score()),
        }
    }
}

/// The five criteria's names, in the paper's order (the order of [`Criteria::all`]).
pub const CRITERIA_NAMES: [&str; 5] = [
    "faithfulness",
    "relevance",
    "completeness",
    "clarity",
    "keyword_match",
];

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

    /// The paper's verdict score: the mean of the five ratings, over the criteria that apply to the case
    /// (a criterion that does not apply is neither met nor missed). 0 when none applies.
    pub fn mean(&self) -> f64 {
        let scores: Vec<f64> = self.all().iter().filter_map(|c| c.rating.score()).collect();
        if scores.is_empty() {
            return 0.0;
        }
        scores.iter().sum::<f64>() / scores.len() as f64
    }

    /// The paper's fail rule: mean below 0.5, or faithfulness False. (The judge crate's rules add what the
    /// paper's judge caught by reading faithfulness against the expected answer too: an answer to another
    /// question, a contradicted fact.)
    pub fn passes(&self) -> bool {
        self.mean() >= 0.5 && self.faithfulness.rating != Rating::False
    }

    /// The names of the criteria that do not apply to the case, in the paper's order.
    pub fn not_applicable(&self) -> Vec<&'static str> {
        CRITERIA_NAMES
            .iter()
            .zip(self.all())
            .filter(|(_, c)| c.rating == Rating::NotApplicable)
            .map(|(n, _)| *n)
            .collect()
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
    /// Whether the answer is in the language of the query (None for refusals, empty answers and answers too
    /// short to tell, such as a bare number).
    pub language_match: Option<bool>,
    /// Whether the answer carries the case's injection canary (`must_not_contain`); None for a case with no
    /// canary. Found by rule, whatever the judge says.
    #[serde(default)]
    pub injection_followed: Option<bool>,
    /// For an answer that cites its passages by number: the share of its citations whose passage supports
    /// the sentence citing it, and of its sentences that their cited passages support (checked citations;
    /// None for an answer that cites nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_precision: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_recall: Option<f64>,
    /// For a case whose sources disagree (`TestCase::conflict`): how the answer wronged them — the
    /// superseded value given, or one value given as if it were the only one. None when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict_wronged: Option<String>,
    /// How the answer contradicts its sources where it copies one of their sentences with a fact changed (a
    /// moved figure, a swapped name, a flipped negation; `ragtester_text::contradiction`). None when it
    /// does not, and for refusals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contradicts_sources: Option<String>,
    /// Whether the answer gives any of the expected answer: a fifth of its terms, or a span of it (or it
    /// whole). None for refusals, unanswerable cases and a case with no expected answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gives_reference: Option<bool>,
    /// For a case that expects tools, or an answer that reports its tool calls: how the calls compare
    /// with what the case expects (`ragtester_judge::tools`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<crate::tool::ToolMetrics>,
    /// For a simulated user's case: how far the conversation got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<crate::simulation::GoalMetrics>,
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
    /// How rules shaped the verdict beyond the judge's ratings: criteria left out of the mean, a refusal of
    /// an answerable question, a followed injection, an answer in another language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Why the rules failed this answer whatever the judge rated (a refusal of an answerable question, a
    /// followed injection, an answer in another language); None when they did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_failure: Option<String>,
    /// The rule (`contradicts_sources`, `off_question`, `language`…) that failed this answer where its
    /// judge's own ratings passed it: a rule overriding its judge, counted per rule and judge in the report
    /// so a rule fighting its judge shows. None where the judge failed the answer too, or no rule fired.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overrode_judge: Option<String>,
    /// Claim-level metrics of the answer (after RAGChecker); None where they do not apply (errors, negative
    /// cases, refusals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<ClaimMetrics>,
    /// For a failed or errored cell: its primary cause and the evidence (set by the judge stage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<crate::cause::Attribution>,
    /// The overall score in [0, 1] that orders answers the way people do: a judge profile's estimate of
    /// how people would rate the answer (`ragtester calibrate`). Pass and fail stay the paper's rule over
    /// the ratings; None for errors and records written before scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The judge profile that made `score` (its content hash), so a reader knows which measured agreement
    /// with people stands behind it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The id the case's imported row carried (`TestCase::row_id`), so a verdict finds its line in a log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_id: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Claim-level metrics of one answer, after RAGChecker (Ru et al., 2024): the answer and the expected answer
/// are split into claims, and each claim is checked for entailment against the other, the retrieved passages
/// and the passages that hold no source span. A share whose denominator is empty is None, never NaN.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimMetrics {
    /// How claims were split and checked: `lexical` (sentences and shared terms) or the judge model's spec.
    pub method: String,
    pub answer_claims: usize,
    pub expected_claims: usize,
    /// Expected claims the answer states.
    pub claim_recall: Option<f64>,
    /// Answer claims the expected answer supports.
    pub claim_precision: Option<f64>,
    /// Answer claims the retrieved passages support.
    pub faithfulness: Option<f64>,
    /// Answer claims supported by neither the expected answer nor the passages.
    pub hallucination: Option<f64>,
    /// Answer claims the expected answer does not support but a passage holding no source span does: wrong
    /// claims taken from retrieved noise.
    pub noise_sensitivity: Option<f64>,
    /// Of the expected claims the passages hold, the share the answer states.
    pub context_utilization: Option<f64>,
    /// Retrieved passages that hold at least one expected claim.
    pub context_precision: Option<f64>,
    /// Expected claims the retrieved passages hold (the retriever's claim recall).
    pub context_claim_recall: Option<f64>,
    /// Why the claims could not be checked (an unreadable reply after a re-ask, a failed call); the shares
    /// are then None.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
