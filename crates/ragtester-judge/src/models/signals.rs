//! What a judge measured of one answer, as named numbers a judge profile combines into scores
//! (`profile.rs`): the judge's own ratings and rubric, the claim metrics, and signals read from the answer,
//! the reference and the passages — lexical ones always, semantic ones when a model of meaning is given
//! (`meaning.rs`). Every signal lies in [0, 1] (the length ratio in [-1, 1]); one that cannot be measured
//! takes a neutral value and its `*_measured` companion says so, so a profile never reads a NaN.

use crate::meaning::Meaning;
use ragtester_core::{Answer, TestCase, Verdict};
use std::collections::HashSet;

/// The lexical signals, in the order of [`Signals::lexical`].
pub const LEXICAL: &[&str] = &[
    "passed",
    "criteria_mean",
    "faithfulness",
    "relevance",
    "completeness",
    "clarity",
    "keyword_match",
    "rubric_correctness",
    "rubric_honesty",
    "claims_measured",
    "claim_precision",
    "claim_recall",
    "claim_faithfulness",
    "claim_hallucination",
    "reference_term_f1",
    "reference_term_recall",
    "reference_term_precision",
    "negation_agrees",
    "figures_agree",
    "refused",
    "refusal_expected",
    "length_ratio",
    "contexts_measured",
    "context_support",
];

/// The signal that measures a criterion by its definition: faithfulness is the share of the answer's
/// claims its passages support, completeness the share of the expected answer's claims it states. A
/// fitted profile may refine it, never fall below it on a label set it was not fitted on
/// (`fit::fit_across_sets`); `bench oracle --labels` reports it beside the criterion.
pub const DEFINING: &[(&str, &str)] = &[
    ("faithfulness", "claim_faithfulness"),
    ("completeness", "claim_recall"),
];

/// The defining signal of a criterion, if it has one.
pub fn defining_signal(criterion: &str) -> Option<&'static str> {
    DEFINING
        .iter()
        .find(|(c, _)| *c == criterion)
        .map(|(_, s)| *s)
}

/// The semantic signals a model of meaning adds, in the order of [`Signals::semantic`].
pub use crate::meaning::NAMES as SEMANTIC;

/// One answer's signals by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Signals {
    pub lexical: Vec<f64>,
    /// Empty when no model of meaning was given.
    pub semantic: Vec<f64>,
}

impl Signals {
    /// The value of a named signal; None for a name this judge did not measure.
    pub fn get(&self, name: &str) -> Option<f64> {
        if let Some(i) = LEXICAL.iter().position(|n| *n == name) {
            return self.lexical.get(i).copied();
        }
        let i = SEMANTIC.iter().position(|n| *n == name)?;
        self.semantic.get(i).copied()
    }

    /// Every signal measured, by name (what `bench oracle --items` writes: the raw numbers a profile reads).
    pub fn named(&self) -> std::collections::BTreeMap<&'static str, f64> {
        let lexical = LEXICAL.iter().copied().zip(self.lexical.iter().copied());
        let semantic = SEMANTIC.iter().copied().zip(self.semantic.iter().copied());
        lexical.chain(semantic).collect()
    }
}

fn bit(b: bool) -> f64 {
    f64::from(u8::from(b))
}

/// Terms of a text that state a figure.
fn figures(terms: &HashSet<String>) -> HashSet<&String> {
    terms
        .iter()
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        .collect()
}

/// Share of `whole` found in `part`; None when `whole` is empty.
fn share(part: &HashSet<String>, whole: &HashSet<String>) -> Option<f64> {
    (!whole.is_empty())
        .then(|| whole.iter().filter(|t| part.contains(*t)).count() as f64 / whole.len() as f64)
}

/// Everything measured of one judged answer. `meaning` adds the semantic signals.
pub fn measure(
    case: &TestCase,
    answer: &Answer,
    verdict: &Verdict,
    meaning: Option<&Meaning>,
) -> Signals {
    let contexts: Vec<&str> = answer.contexts.iter().map(|c| c.text.as_str()).collect();
    let mut lexical = judged(verdict);
    lexical.extend(read(
        &case.expected_answer,
        &answer.answer,
        &contexts,
        case.expects_refusal(),
    ));
    let semantic = meaning
        .map(|m| m.signals(&case.expected_answer, &answer.answer, &contexts))
        .unwrap_or_default();
    Signals { lexical, semantic }
}

/// The judge's own verdict as numbers: pass, criteria, rubric, claims.
fn judged(v: &Verdict) -> Vec<f64> {
    let mean = v.criteria_mean.unwrap_or(0.0);
    let criterion = |pick: fn(&ragtester_core::Criteria) -> &ragtester_core::Criterion| {
        v.criteria
            .as_ref()
            .and_then(|c| pick(c).graded())
            .unwrap_or(mean)
    };
    let rubric = |pick: fn(&ragtester_core::Rubric) -> u8| {
        v.rubric
            .as_ref()
            .map_or(0.5, |r| (f64::from(pick(r).clamp(1, 5)) - 1.0) / 4.0)
    };
    let claims = v.claims.as_ref().filter(|c| c.error.is_none());
    let claim = |pick: fn(&ragtester_core::ClaimMetrics) -> Option<f64>, neutral: f64| {
        claims.and_then(pick).unwrap_or(neutral)
    };
    vec![
        bit(v.passed == Some(true)),
        mean,
        criterion(|c| &c.faithfulness),
        criterion(|c| &c.relevance),
        criterion(|c| &c.completeness),
        criterion(|c| &c.clarity),
        criterion(|c| &c.keyword_match),
        rubric(|r| r.correctness.score),
        rubric(|r| r.honesty.score),
        bit(claims.is_some()),
        claim(|c| c.claim_precision, 0.5),
        claim(|c| c.claim_recall, 0.5),
        claim(|c| c.faithfulness, 0.5),
        claim(|c| c.hallucination, 0.5),
    ]
}

/// Signals read from the texts themselves: agreement with the reference, figures, negation, refusal,
/// length, grounding in the passages.
fn read(reference: &str, answer: &str, contexts: &[&str], refusal_expected: bool) -> Vec<f64> {
    let set = |t: &str| -> HashSet<String> { ragtester_text::terms(t).into_iter().collect() };
    let (said, expected) = (set(answer), set(reference));
    let f1 = ragtester_text::term_f1(answer, reference).unwrap_or(0.0);
    let recall = share(&said, &expected).unwrap_or(0.0);
    let precision = share(&expected, &said).unwrap_or(0.0);
    let negation_agrees = ragtester_text::negated(answer) == ragtester_text::negated(reference);
    let (stated, reference_figures) = (figures(&said), figures(&expected));
    let figures_agree = reference_figures.is_empty()
        || stated.is_empty()
        || !stated.is_disjoint(&reference_figures);
    let refused = ragtester_text::is_refusal(answer);
    let length = ((said.len() as f64 + 1.0) / (expected.len() as f64 + 1.0))
        .ln()
        .clamp(-2.0, 2.0)
        / 2.0;
    let grounded: HashSet<String> = contexts
        .iter()
        .flat_map(|c| ragtester_text::terms(c))
        .collect();
    let context_support = if contexts.is_empty() {
        0.5
    } else {
        share(&grounded, &said).unwrap_or(0.0)
    };
    vec![
        f1,
        recall,
        precision,
        bit(negation_agrees),
        bit(figures_agree),
        bit(refused),
        bit(refusal_expected),
        length,
        bit(!contexts.is_empty()),
        context_support,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_has_a_value_and_a_name() {
        let lexical = read(
            "The valve opens at 4.5 bar.",
            "It opens at 11.5 bar.",
            &[],
            false,
        );
        assert_eq!(lexical.len() + 14, LEXICAL.len());
        let at = |name: &str| lexical[LEXICAL.iter().position(|n| *n == name).unwrap() - 14];
        assert_eq!(at("figures_agree"), 0.0, "a changed figure disagrees");
        assert_eq!(at("negation_agrees"), 1.0);
        assert_eq!(at("contexts_measured"), 0.0);
        assert!(
            lexical
                .iter()
                .all(|x| x.is_finite() && (-1.0..=1.0).contains(x))
        );
        let denied = read("我没有国籍。", "我是中国人。", &["passage"], false);
        assert_eq!(
            denied[LEXICAL
                .iter()
                .position(|n| *n == "negation_agrees")
                .unwrap()
                - 14],
            0.0
        );
    }
}
