//! A judge's graded opinion of one answer, as the agreement measures and the pairwise comparison both read
//! it: the verdict with its criteria and claims as tie-breakers, and for the offline judge its closeness to
//! the reference.

use ragtester_core::{Verdict, VerdictStatus};

/// A judge's graded opinion of one answer, for correlations: its verdict first (a pass is worth one), then
/// the mean of its five criteria, then the claim-level correctness and completeness against the reference
/// (RAGChecker's claim precision and recall) — each a tie-breaker of the one before within [0, 1]. None for a
/// judge error.
pub fn judge_score(v: &Verdict) -> Option<f64> {
    if v.status != VerdictStatus::Ok {
        return None;
    }
    let pass = f64::from(u8::from(v.passed == Some(true)));
    let criteria = v.criteria_mean.unwrap_or(0.0);
    let claims = v.claims.as_ref().map_or(0.0, |c| {
        (c.claim_precision.unwrap_or(0.0) + c.claim_recall.unwrap_or(0.0)) / 2.0
    });
    Some(pass + 0.5 * criteria + 0.5 * claims)
}

/// The offline judge's graded opinion: [`judge_score`] plus how closely the answer agrees with the
/// reference — the F1 of their terms (stemmed words, CJK bigrams) and whether both state a negation or
/// neither does. Lexical claims score a paraphrase as unsupported; these two carry most of what separates a
/// reworded correct answer from a wrong one (measured on HalluQA, docs/benchmarks.md).
pub fn offline_score(reference: &str, answer: &str, v: &Verdict) -> Option<f64> {
    let verdict = judge_score(v)?;
    let overlap = ragtester_text::term_f1(answer, reference).unwrap_or(0.0);
    let polarity = f64::from(u8::from(
        ragtester_text::negated(answer) == ragtester_text::negated(reference),
    ));
    Some(VERDICT_WEIGHT * verdict + OVERLAP_WEIGHT * overlap + POLARITY_WEIGHT * polarity)
}

/// Weights of [`offline_score`]'s parts (the verdict part lies in [0, 2], the others in [0, 1]).
const VERDICT_WEIGHT: f64 = 0.5;
const OVERLAP_WEIGHT: f64 = 1.0;
const POLARITY_WEIGHT: f64 = 1.0;
