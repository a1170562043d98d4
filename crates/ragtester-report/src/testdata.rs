//! Records for the crate's unit tests.

use ragtester_core::{Criteria, Criterion, Rating, RuleMetrics, TestCase, Verdict, VerdictStatus};

/// A cell of configuration `k` that passed its one repeat before and fails it now.
pub fn regressed_cell(case: &str) -> crate::diff::CellChange {
    use crate::diff::{CellChange, Outcome, Passes};
    let passes = |passed| Passes {
        passed,
        of: 1,
        errors: 0,
    };
    CellChange {
        case_id: case.into(),
        config_id: "k".into(),
        label: String::new(),
        before: Outcome::Passed,
        after: Outcome::Failed,
        passes_before: passes(1),
        passes_after: passes(0),
        p_value: None,
        cause: None,
        query: String::new(),
    }
}

pub fn case(id: &str, query: &str) -> TestCase {
    ragtester_testkit::case(id, query, "e")
}

/// Turn `index` of `of` of the follow-up conversation `conversation`.
pub fn turn(id: &str, conversation: &str, index: usize, of: usize) -> TestCase {
    let mut c = case(id, "q?");
    c.turn = Some(ragtester_core::Turn {
        conversation: conversation.into(),
        index,
        of,
        kind: ragtester_core::ConversationKind::FollowUp,
        step: if index == 1 {
            ragtester_core::TurnStep::Opening
        } else {
            ragtester_core::TurnStep::FollowUp
        },
        standalone: None,
        history: Vec::new(),
    });
    c
}

pub fn verdict(case: &str, config: &str, passed: Option<bool>, status: VerdictStatus) -> Verdict {
    let c = |r| Criterion {
        rating: r,
        reason: "why <b>\u{0}".into(),
        score: None,
    };
    Verdict {
        schema_version: 1,
        case_id: case.into(),
        config_id: config.into(),
        judge: "offline".into(),
        status,
        criteria: passed.map(|p| Criteria {
            faithfulness: c(if p { Rating::True } else { Rating::False }),
            relevance: c(Rating::True),
            completeness: c(Rating::True),
            clarity: c(Rating::True),
            keyword_match: c(Rating::True),
        }),
        criteria_mean: passed.map(|p| if p { 1.0 } else { 0.8 }),
        rubric: None,
        metrics: RuleMetrics::default(),
        passed,
        error: (status != VerdictStatus::Ok).then(|| "boom \"quoted\"".into()),
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

pub fn config() -> ragtester_core::Configuration {
    ragtester_core::Configuration::new(
        "offline".into(),
        "none".into(),
        ragtester_core::RetrieverKind::Bm25,
        3,
        Default::default(),
        Default::default(),
    )
}

/// The summary of one configuration's verdicts over the given cases.
pub fn summary_of(cases: &[TestCase], verdicts: &[Verdict]) -> crate::Summary {
    let configs = [config()];
    crate::summarise(&crate::ReportInputs {
        prices: &Default::default(),
        documents: &[],
        cases,
        configs: &configs,
        answers: &[],
        verdicts,
        oracle: None,
        audit: None,
        pairwise: None,
        chunk_coverage: &Default::default(),
        skipped: &[],
        embedder_profiles: &[],
    })
}
