//! Rule metrics: computed from the case and the answer alone, no judge involved.

use ragtester_core::ir::retrieval_metrics;
use ragtester_core::text::{detect_language, is_refusal, keyword_recall};
use ragtester_core::{Answer, RuleMetrics, TestCase};

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
    let refused = answer.error.is_none() && is_refusal(&answer.answer);
    let language_match = (!refused && answer.error.is_none() && !answer.answer.trim().is_empty())
        .then(|| detect_language(&answer.answer) == case.language);
    RuleMetrics {
        keyword_recall_context: keyword_recall(&case.keywords, &context),
        keyword_recall_answer: keyword_recall(&case.keywords, &answer.answer),
        hit: retrieval.as_ref().map(|m| m.hit),
        reciprocal_rank: retrieval.as_ref().map(|m| m.reciprocal_rank),
        ndcg: retrieval.as_ref().map(|m| m.ndcg),
        recall: retrieval.as_ref().map(|m| m.recall),
        precision: retrieval.as_ref().map(|m| m.precision),
        refused,
        language_match,
    }
}
