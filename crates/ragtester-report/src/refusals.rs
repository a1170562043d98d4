//! The refusal confusion matrix of a configuration: should it have refused (a negative case) against did it
//! refuse. RAGAS scores a refusal NaN; here every judged cell lands in one of four boxes, with rates and
//! Wilson 95 % intervals.
//!
//! "Did refuse" is the rule detector's (`metrics.refused`), except that a false-premise negative answered
//! with the correction counts as declined: the premise was rejected, which is what the case asks for.

use ragtester_core::oracle::Interval;
use ragtester_core::{TestCase, Verdict, VerdictStatus};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RefusalMatrix {
    /// Negative cases refused (or their false premise corrected).
    pub correct_refusals: usize,
    /// Negative cases answered: under-refusals, the hallucinations.
    pub under_refusals: usize,
    /// Answerable cases refused: over-refusals.
    pub over_refusals: usize,
    /// Answerable cases answered (rightly or wrongly: the verdict says which).
    pub answered: usize,
    /// Cells left out: no answer (execution error) or no readable verdict (judge error).
    pub not_judged: usize,
    /// over_refusals / (over_refusals + answered), with a 95 % interval.
    pub over_refusal_rate: Option<Interval>,
    /// under_refusals / (under_refusals + correct_refusals), with a 95 % interval.
    pub hallucination_rate: Option<Interval>,
}

impl RefusalMatrix {
    pub fn add(&mut self, case: &TestCase, verdict: &Verdict) {
        if verdict.status != VerdictStatus::Ok {
            self.not_judged += 1;
            return;
        }
        let refused = verdict.metrics.refused;
        if case.expects_refusal() {
            let corrected = case.false_premise.is_some() && verdict.passed == Some(true);
            if refused || corrected {
                self.correct_refusals += 1;
            } else {
                self.under_refusals += 1;
            }
        } else if refused {
            self.over_refusals += 1;
        } else {
            self.answered += 1;
        }
    }

    /// Fill the rates from the counts.
    pub fn finish(mut self) -> Self {
        let wilson = |k: usize, n: usize| ragtester_judge::stats::wilson(k, n, 0.95);
        self.over_refusal_rate = wilson(self.over_refusals, self.over_refusals + self.answered);
        self.hallucination_rate = wilson(
            self.under_refusals,
            self.under_refusals + self.correct_refusals,
        );
        self
    }
}
