//! A failed cell's cause, as every part of the report reads it: the summary, the diagnosis, CSV and JUnit.

use ragtester_core::{Answer, Attribution, FailureCause, TestCase, Verdict};

/// A failed or errored cell's cause and evidence: as the judge stage recorded it, else worked out now (runs
/// judged before causes were recorded).
pub fn attribution(
    case: &TestCase,
    answer: Option<&Answer>,
    verdict: &Verdict,
) -> Option<Attribution> {
    verdict
        .attribution
        .clone()
        .or_else(|| ragtester_judge::attribution::attribute(case, answer, verdict))
}

pub fn failure_cause(
    case: &TestCase,
    answer: Option<&Answer>,
    verdict: &Verdict,
) -> Option<FailureCause> {
    attribution(case, answer, verdict).map(|a| a.cause)
}
