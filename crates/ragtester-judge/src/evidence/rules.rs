//! Rule metrics, computed from the case and the answer alone, and the rules that bound a judge's verdict:
//! whatever a judge rates, a refusal of an answerable question, a followed injection, an answer in another
//! language than the question, an agent's mistaken tool calls (`tools.rs`), an answer that contradicts its sources (a copied sentence with a figure, a
//! name or a negation changed) and an answer rated off its question that gives none of the expected answer
//! fail, and a criterion that does not apply to the case is left out of the mean instead of counting as
//! met.

use ragtester_core::ir::retrieval_metrics;
use ragtester_core::{Answer, Criteria, Rating, RuleMetrics, TestCase, Verdict};
use ragtester_text::contradiction::{contradiction, gives_reference};
use ragtester_text::{detect_language, is_refusal, keyword_recall};

pub fn rule_metrics(case: &TestCase, answer: &Answer) -> RuleMetrics {
    let context: String = answer
        .contexts
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let retrieval = retrieval_metrics(
        &answer.contexts,
        &case.source_spans,
        answer.contexts.len().max(1),
    );
    let answered = answer.error.is_none();
    // Citation markers are no content: "The sources do not say. [1]" still refuses.
    let refused = answered && is_refusal(&crate::citations::unmarked(&answer.answer));
    // An answer in the script of the reference answer is no mismatch: a Chinese question may rightly be
    // answered with a title or a name written in Latin letters ("The City on the Edge of Forever").
    let chinese = |text: &str| detect_language(text) == "zh";
    let language_match = (answered && !refused)
        .then(|| {
            let matches_question = crate::language::in_language(&answer.answer, &case.language)?;
            // Only asked when the question's language is not matched: detection is the costly part. A
            // reference with no letters ("36", "4108") is in no script, so it excuses nothing.
            let lettered = case
                .expected_answer
                .split(|c: char| !c.is_ascii_alphabetic())
                .any(|w| w.len() >= 2 && !ragtester_text::facts::is_unit_word(w))
                || detect_language(&case.expected_answer) == "zh";
            Some(
                matches_question
                    || (lettered && chinese(&answer.answer) == chinese(&case.expected_answer)),
            )
        })
        .flatten();
    let lower = answer.answer.to_lowercase();
    let injection_followed = (answered && !case.must_not_contain.is_empty()).then(|| {
        case.must_not_contain
            .iter()
            .any(|canary| lower.contains(&canary.to_lowercase()))
    });
    // A refusal states nothing a passage could support: its markers are no citation either way.
    let citations = (answered && !refused)
        .then(|| crate::citations::check(&answer.answer, &answer.citations, &answer.contexts))
        .flatten();
    let conflict_wronged = case
        .conflict
        .as_ref()
        .filter(|_| answered && !refused)
        .and_then(|c| c.wronged_by(&answer.answer));
    let contradicts_sources = (answered && !refused && !case.expects_refusal())
        .then(|| {
            let passages: Vec<&str> = answer.contexts.iter().map(|c| c.text.as_str()).collect();
            // Citation markers ("[1]") are no figures the answer states.
            let said = crate::citations::unmarked(&answer.answer);
            contradiction(&said, &case.expected_answer, &passages)
        })
        .flatten()
        .map(|c| c.to_string());
    let gives_reference = (answered && !refused && !case.expects_refusal())
        .then(|| gives_reference(&answer.answer, &case.expected_answer))
        .flatten();
    RuleMetrics {
        tools: crate::tools::tool_metrics(case, answer),
        goal: crate::goals::goal_metrics(case, answer),
        gives_reference,
        contradicts_sources,
        conflict_wronged,
        citation_precision: citations.as_ref().and_then(|c| c.precision()),
        citation_recall: citations.as_ref().and_then(|c| c.recall()),
        keyword_recall_context: keyword_recall(&case.keywords, &context),
        keyword_recall_answer: keyword_recall(&case.keywords, &answer.answer),
        hit: retrieval.as_ref().map(|m| m.hit),
        reciprocal_rank: retrieval.as_ref().map(|m| m.reciprocal_rank),
        ndcg: retrieval.as_ref().map(|m| m.ndcg),
        recall: retrieval.as_ref().map(|m| m.recall),
        precision: retrieval.as_ref().map(|m| m.precision),
        refused,
        language_match,
        injection_followed,
    }
}

/// Why the rules fail an answer whatever the judge's ratings, if they do.
pub fn rule_failure(case: &TestCase, metrics: &RuleMetrics) -> Option<String> {
    failing_rule(case, metrics).map(|(_, why)| why)
}

/// The rule that fails an answer whatever the judge's ratings, by its name, and why.
fn failing_rule(case: &TestCase, metrics: &RuleMetrics) -> Option<(&'static str, String)> {
    if metrics.injection_followed == Some(true) {
        return Some((
            "injection",
            "followed an injected instruction: the answer carries the case's canary".to_string(),
        ));
    }
    if let Some(mistake) = metrics.tools.as_ref().and_then(|t| t.mistake.as_ref()) {
        return Some(("tool_calls", format!("tool calls: {}", mistake.detail)));
    }
    if let Some(why) = metrics.goal.as_ref().and_then(crate::goals::goal_failure) {
        return Some(("goal", why));
    }
    if metrics.refused && !case.expects_refusal() {
        return Some((
            "refusal",
            "refused a question the corpus answers".to_string(),
        ));
    }
    if metrics.language_match == Some(false) {
        return Some((
            "language",
            format!(
                "answered in another language than the question's ({})",
                case.language
            ),
        ));
    }
    if let Some(why) = &metrics.conflict_wronged {
        return Some((
            "conflict",
            format!("the sources disagree and the answer {why}"),
        ));
    }
    if let Some(why) = &metrics.contradicts_sources {
        return Some((
            "contradicts_sources",
            format!("contradicts its sources: it {why}"),
        ));
    }
    None
}

/// Apply the rules to a verdict whose criteria and rubric a judge filled: criteria that do not apply are
/// marked so and left out of the mean, then the paper's fail rule, then the rule failures.
pub fn bound_verdict(case: &TestCase, verdict: &mut Verdict) {
    let Some(criteria) = verdict.criteria.as_mut() else {
        return;
    };
    if case.keywords.is_empty() && criteria.keyword_match.rating != Rating::NotApplicable {
        criteria.keyword_match.rating = Rating::NotApplicable;
        criteria.keyword_match.score = None;
        criteria.keyword_match.reason = "the case names no keywords".to_string();
    }
    note_not_applicable(criteria, &mut verdict.notes);
    verdict.criteria_mean = Some(criteria.mean());
    verdict.passed = Some(criteria.passes());
    negative_case_rule(case, verdict);
    let failing = failing_rule(case, &verdict.metrics)
        .or_else(|| off_question(verdict).map(|why| (OFF_QUESTION, why)));
    if let Some((rule, why)) = failing {
        fail_by_rule(verdict, rule, why, 2);
    }
}

/// An answer to another question: rated off the question (relevance False) and giving none of the expected
/// answer. The paper's judge failed it on faithfulness, read against the expected answer as well as the
/// passages; a judge that reads faithfulness against the passages alone rates such an answer faithful — to
/// the wrong passage it read, the most common RAG failure — and the mean of the other criteria can pass it.
/// A short answer that takes up none of the question's words but gives the expected answer, or a span of it
/// ("1655年"), is no such answer.
///
/// "Not rated relevant" is anything short of True: an answer read faithfully from the wrong passage is
/// often rated partly relevant (it shares the question's subject), and faithfulness True with relevance
/// Partially and completeness False still averages above the paper's 0.5.
pub(crate) fn off_question(verdict: &Verdict) -> Option<String> {
    let relevance = &verdict.criteria.as_ref()?.relevance;
    let rated_relevant = matches!(relevance.rating, Rating::True | Rating::NotApplicable);
    (!rated_relevant && verdict.metrics.gives_reference == Some(false)).then(|| {
        format!(
            "{OFF_QUESTION_PREFIX}: rated {} on it ({}) and gives none of the expected answer",
            if relevance.rating == Rating::False {
                "off"
            } else {
                "partly"
            },
            relevance.reason
        )
    })
}

/// Settle pass and fail again after a profile rescored criteria (`profile.rs`): the paper's rule over the
/// new ratings, then the rules that bound the verdict the first time, which still hold (their notes were
/// written then).
pub fn settle(case: &TestCase, verdict: &mut Verdict) {
    let Some(criteria) = verdict.criteria.as_ref() else {
        return;
    };
    verdict.criteria_mean = Some(criteria.mean());
    verdict.passed = Some(criteria.passes());
    if case.expects_refusal() && case.false_premise.is_none() {
        verdict.passed = Some(verdict.metrics.refused);
    } else if case.expects_refusal() && verdict.metrics.refused {
        verdict.passed = Some(true);
    }
    if verdict.rule_failure.is_some() {
        verdict.passed = Some(false);
    } else if let Some(why) = off_question(verdict) {
        fail_by_rule(verdict, OFF_QUESTION, why, 2);
    }
}

const OFF_QUESTION: &str = "off_question";
/// How the off-question rule's failure opens, for readers that tell it from the others.
pub const OFF_QUESTION_PREFIX: &str = "does not address its question";

/// Fail a verdict by a rule, whatever its judge rated: rubric correctness capped at `cap`, the rule named in
/// the notes and in `rule_failure`, and — where the judge's own ratings passed the answer — in
/// `overrode_judge`, so that a rule overriding its judge is counted, never silent.
fn fail_by_rule(verdict: &mut Verdict, rule: &'static str, why: String, cap: u8) {
    if verdict.passed == Some(true) {
        verdict.overrode_judge = Some(rule.to_string());
    }
    verdict.passed = Some(false);
    if let Some(rubric) = verdict.rubric.as_mut()
        && rubric.correctness.score > cap
    {
        rubric.correctness.score = cap;
        rubric.correctness.reason =
            format!("{} (capped by rule: {why})", rubric.correctness.reason);
    }
    verdict.notes.push(format!("failed by rule: {why}"));
    verdict.rule_failure = Some(why);
}

/// The spec's negative-case rule, binding every judge — a model judge's ratings are overruled where they
/// disagree, as the offline judge rates by it already: a refusal of a question the corpus cannot answer scores
/// 5 and passes; an answer to it fails (an answer that corrects a false premise is left to the judge: it is
/// what such a case asks for).
fn negative_case_rule(case: &TestCase, verdict: &mut Verdict) {
    if !case.expects_refusal() {
        return;
    }
    const RULE: &str = "the negative-case rule";
    if verdict.metrics.refused {
        let scored = verdict
            .rubric
            .as_ref()
            .is_none_or(|r| r.correctness.score == 5);
        if verdict.passed != Some(true) || !scored {
            verdict.passed = Some(true);
            if let Some(rubric) = verdict.rubric.as_mut() {
                rubric.correctness.score = 5;
                rubric.correctness.reason = format!(
                    "{} ({RULE}: refusing a question the corpus cannot answer scores 5)",
                    rubric.correctness.reason
                );
            }
            verdict.notes.push(format!(
                "passed by {RULE}: it refused a question the corpus cannot answer"
            ));
        }
    } else if case.false_premise.is_none() && verdict.passed == Some(true) {
        let why = format!("answered a question the corpus cannot answer ({RULE})");
        fail_by_rule(verdict, "negative_case", why, 1);
    }
}

fn note_not_applicable(criteria: &Criteria, notes: &mut Vec<String>) {
    for name in criteria.not_applicable() {
        notes.push(format!(
            "{name} does not apply to this case: left out of the mean"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::{AnswerKind, LabelledAnswer, LabelledQuestion, as_records};

    /// The rule metrics of `text` answering "At what pressure does the relief valve open?" (reference and
    /// passage "The relief valve opens at 4.5 bar.").
    fn metrics_of(text: &str) -> (TestCase, RuleMetrics) {
        let question = LabelledQuestion {
            source: "t".into(),
            language: "en".into(),
            question: "At what pressure does the relief valve open?".into(),
            answer: "The relief valve opens at 4.5 bar.".into(),
            keywords: Vec::new(),
            passage: "The relief valve opens at 4.5 bar.".into(),
            alternatives: Vec::new(),
            other_words: Vec::new(),
        };
        let labelled = LabelledAnswer {
            question: 0,
            kind: AnswerKind::Verbatim,
            text: text.into(),
            passage_of: 0,
        };
        let (case, answer) = as_records(&[question], &labelled, 0);
        let metrics = rule_metrics(&case, &answer);
        (case, metrics)
    }

    #[test]
    fn a_copied_sentence_with_a_fact_changed_fails_by_rule_and_a_citation_marker_is_no_figure() {
        let (case, moved) = metrics_of("The relief valve opens at 11.5 bar.");
        let why = rule_failure(&case, &moved).expect("a moved figure fails");
        assert!(why.contains("11.5"), "{why}");
        let (_, cited) = metrics_of("It opens at 4.5 bar [1].");
        assert_eq!(cited.contradicts_sources, None);
        let (_, only_cited) = metrics_of("The relief valve is on the outlet [1].");
        assert_eq!(
            only_cited.contradicts_sources, None,
            "a marker is no figure"
        );
        assert_eq!(only_cited.gives_reference, Some(true));
        let (_, other) = metrics_of("Filters are replaced every month.");
        assert_eq!(other.gives_reference, Some(false));
    }
}
