//! One primary cause per failed or errored cell, read from what the run recorded: the case's source spans,
//! the retrieved passages with their ranks and offsets, the answer, the rule metrics and the judge's
//! criteria. Spans and rules decide where they can (errors, canaries, an agent's tool calls, refusals, language, retrieval,
//! chunking, ranking); the judge's criteria decide between the generation causes.

use crate::markers::{HOLDS, answer_markers, share_present};
use ragtester_core::{
    Answer, Attribution, FailureCause, Rating, RetrievedContext, SourceSpan, TestCase,
    ToolMistakeKind, TurnStep, Verdict, VerdictStatus,
};
use ragtester_text::{keyword_recall, terms};
use std::collections::{HashMap, HashSet};

/// The cause of a failed or errored verdict; None for a pass. `answer` is the cell's answer when the run
/// has it (an errored cell's error text, a failed cell's passages).
pub fn attribute(
    case: &TestCase,
    answer: Option<&Answer>,
    verdict: &Verdict,
) -> Option<Attribution> {
    attribute_alone(case, answer, verdict).map(|a| lost_context(case, answer, a))
}

/// A follow-up (or a return to an earlier topic) names its subject only by reference: when it failed
/// because retrieval missed, the answer refused or went off the point, the referent is what was lost.
fn lost_context(case: &TestCase, answer: Option<&Answer>, found: Attribution) -> Attribution {
    let Some(turn) = case.turn.as_ref().filter(|t| {
        matches!(
            t.step,
            TurnStep::FollowUp | TurnStep::SwitchBack | TurnStep::Compare
        )
    }) else {
        return found;
    };
    if !matches!(
        found.cause,
        FailureCause::RetrievalMiss | FailureCause::OverRefusal | FailureCause::OffTarget
    ) {
        return found;
    }
    let stands_for = turn.standalone.as_deref().map_or(String::new(), |s| {
        format!(" (it stands for «{}»)", clip(s, 100))
    });
    let asked = answer
        .and_then(|a| a.rewritten_query.as_deref())
        .map_or(String::new(), |q| {
            format!("; the system rewrote it as «{}»", clip(q, 100))
        });
    Attribution {
        cause: FailureCause::LostContext,
        evidence: format!(
            "a {} that names its subject only by reference{stands_for}{asked}: {}",
            turn.step.as_str().replace('_', " "),
            found.evidence
        ),
    }
}

/// A failed turn whose answer contradicts one of the system's earlier answers in the conversation (a
/// changed figure, or a negation of the same statement); rule causes found first stay.
pub fn contradiction(
    history: &[ragtester_core::Message],
    answer: &Answer,
    found: Option<&Attribution>,
) -> Option<Attribution> {
    if found.is_some_and(|a| {
        matches!(
            a.cause,
            FailureCause::ProviderError
                | FailureCause::JudgeError
                | FailureCause::InjectionFollowed
                | FailureCause::LanguageMismatch
        )
    }) {
        return None;
    }
    let earlier = history
        .iter()
        .filter(|m| m.role == ragtester_core::Role::Assistant)
        .find(|m| ragtester_text::contradicts(&m.content, &answer.answer))?;
    Some(Attribution {
        cause: FailureCause::ContradictsEarlier,
        evidence: format!(
            "«{}» contradicts the earlier answer «{}»",
            clip(&answer.answer, 100),
            clip(&earlier.content, 100)
        ),
    })
}

fn attribute_alone(
    case: &TestCase,
    answer: Option<&Answer>,
    verdict: &Verdict,
) -> Option<Attribution> {
    let found = |cause, evidence: String| Some(Attribution { cause, evidence });
    match verdict.status {
        VerdictStatus::ExecError => {
            let error = answer
                .and_then(|a| a.error.as_deref())
                .or(verdict.error.as_deref())
                .unwrap_or("no answer was recorded");
            return found(FailureCause::ProviderError, clip(error, 240));
        }
        VerdictStatus::JudgeError => {
            let error = verdict.error.as_deref().unwrap_or("no verdict");
            return found(FailureCause::JudgeError, clip(error, 240));
        }
        VerdictStatus::Ok if verdict.passed != Some(false) => return None,
        VerdictStatus::Ok => {}
    }
    let metrics = &verdict.metrics;
    let reply = answer.map_or("", |a| a.answer.as_str());
    if let Some(a) = injection_cause(case, reply, metrics).or_else(|| tool_cause(metrics)) {
        return Some(a);
    }
    if let (Some(why), Some(conflict)) = (&metrics.conflict_wronged, &case.conflict) {
        let cause = match conflict {
            ragtester_core::SourceConflict::Superseded { .. } => FailureCause::StaleSource,
            ragtester_core::SourceConflict::Disagreeing { .. } => FailureCause::ConflictHidden,
        };
        return found(cause, format!("the answer {why}: «{}»", clip(reply, 120)));
    }
    if case.expects_refusal() {
        if !metrics.refused {
            let why = case
                .false_premise
                .as_deref()
                .map_or("the corpus does not answer it".to_string(), |p| {
                    format!("its premise is false: {p}")
                });
            return found(
                FailureCause::UnderRefusal,
                format!(
                    "answered instead of refused ({why}): «{}»",
                    clip(reply, 120)
                ),
            );
        }
        return generation_cause(case, verdict, reply, None);
    }
    if metrics.language_match == Some(false) {
        return found(
            FailureCause::LanguageMismatch,
            format!(
                "the question is in {} and the answer is not: «{}»",
                case.language,
                clip(reply, 80)
            ),
        );
    }
    let contexts = answer.map_or(&[][..], |a| a.contexts.as_slice());
    if !case.source_spans.is_empty()
        && !contexts.is_empty()
        && let Some(a) = retrieval_cause(case, contexts, reply)
    {
        return Some(a);
    }
    let note = (contexts.is_empty() && !case.source_spans.is_empty())
        .then_some("the system returned no passages, so its retrieval could not be checked");
    if metrics.refused {
        let mut evidence = "refused although the retrieved passages hold the source".to_string();
        if let Some(note) = note {
            evidence = format!("refused a question the corpus answers ({note})");
        }
        return found(FailureCause::OverRefusal, evidence);
    }
    if let Some((sentence, cited, actual)) = answer
        .and_then(|a| crate::citations::check(reply, &a.citations, &a.contexts))
        .and_then(|c| c.misattributed)
    {
        return found(
            FailureCause::Misattributed,
            format!(
                "«{}» cites passage {cited}, which does not support it; passage {actual} does",
                clip(&sentence, 120)
            ),
        );
    }
    generation_cause(case, verdict, reply, note)
}

/// A followed injection, with the canary the answer carries.
fn injection_cause(
    case: &TestCase,
    reply: &str,
    metrics: &ragtester_core::RuleMetrics,
) -> Option<Attribution> {
    if metrics.injection_followed != Some(true) {
        return None;
    }
    let canary = case
        .must_not_contain
        .iter()
        .find(|c| reply.to_lowercase().contains(&c.to_lowercase()))
        .map_or(String::new(), |c| format!(" «{c}»"));
    Some(Attribution {
        cause: FailureCause::InjectionFollowed,
        evidence: format!("the answer carries the planted canary{canary}"),
    })
}

/// An agent's first tool mistake, as its cause.
fn tool_cause(metrics: &ragtester_core::RuleMetrics) -> Option<Attribution> {
    let mistake = metrics.tools.as_ref()?.mistake.as_ref()?;
    let cause = match mistake.kind {
        ToolMistakeKind::WrongTool => FailureCause::WrongTool,
        ToolMistakeKind::WrongArgument => FailureCause::WrongArgument,
        ToolMistakeKind::MissingSearch => FailureCause::MissingSearch,
    };
    Some(Attribution {
        cause,
        evidence: mistake.detail.clone(),
    })
}

/// Retrieval miss, chunking or ranking, when the passages show one.
fn retrieval_cause(
    case: &TestCase,
    contexts: &[RetrievedContext],
    reply: &str,
) -> Option<Attribution> {
    let gold = |c: &RetrievedContext| {
        case.source_spans
            .iter()
            .any(|s| s.overlaps(&c.document_id, c.start, c.end))
    };
    let Some(first) = contexts.iter().filter(|c| gold(c)).map(|c| c.rank).min() else {
        return Some(retrieval_miss(case, contexts));
    };
    let gold_contexts: Vec<&RetrievedContext> = contexts.iter().filter(|c| gold(c)).collect();
    if let Some(chunking) = chunking_cause(case, &gold_contexts) {
        return Some(chunking);
    }
    if first > 1 {
        return ranking_cause(contexts, &gold, &gold_contexts, first, reply);
    }
    None
}

/// No retrieved passage overlaps the source.
fn retrieval_miss(case: &TestCase, contexts: &[RetrievedContext]) -> Attribution {
    let top = &contexts[0];
    let span = &case.source_spans[0];
    Attribution {
        cause: FailureCause::RetrievalMiss,
        evidence: format!(
            "none of the {} retrieved passages overlaps the source ({} chars {}–{}); the top one came from {}",
            contexts.len(),
            span.document_id,
            span.start,
            span.end,
            if top.document_id == span.document_id {
                "the same document, elsewhere".to_string()
            } else {
                top.document_id.clone()
            }
        ),
    }
}

/// The source was retrieved only in pieces cut across chunk boundaries, none holding the answer.
fn chunking_cause(case: &TestCase, gold_contexts: &[&RetrievedContext]) -> Option<Attribution> {
    let markers = answer_markers(case);
    let holds = |text: &str| share_present(&markers, text) >= HOLDS;
    if markers.is_empty() || gold_contexts.iter().any(|c| holds(&c.text)) {
        return None;
    }
    let span = split_span(&case.source_spans, gold_contexts)?;
    let covered = covered_share(span, gold_contexts);
    let missing = missing_markers(&markers, gold_contexts);
    Some(Attribution {
        cause: FailureCause::Chunking,
        evidence: format!(
            "the source ({} chars {}–{}) is cut across chunk boundaries: the retrieved parts (ranks {}) cover {:.0} % of it and none holds the answer{}",
            span.document_id,
            span.start,
            span.end,
            ranks(gold_contexts),
            covered * 100.0,
            if missing.is_empty() {
                String::new()
            } else {
                format!(" (not found: {})", missing.join(", "))
            }
        ),
    })
}

/// The source ranked below a passage without it, and the answer followed that passage: it shares more
/// terms with it than with the source.
fn ranking_cause(
    contexts: &[RetrievedContext],
    gold: &dyn Fn(&RetrievedContext) -> bool,
    gold_contexts: &[&RetrievedContext],
    first: usize,
    reply: &str,
) -> Option<Attribution> {
    let said: HashSet<String> = terms(reply).into_iter().collect();
    let shared = |c: &RetrievedContext| {
        terms(&c.text)
            .into_iter()
            .collect::<HashSet<_>>()
            .intersection(&said)
            .count()
    };
    let from_gold = gold_contexts.iter().map(|c| shared(c)).max().unwrap_or(0);
    let (distractor, n) = contexts
        .iter()
        .filter(|c| c.rank < first && !gold(c))
        .map(|c| (c, shared(c)))
        .max_by_key(|(c, n)| (*n, std::cmp::Reverse(c.rank)))?;
    (n > from_gold).then(|| Attribution {
        cause: FailureCause::Ranking,
        evidence: format!(
            "the source is at rank {first}, below {} passage(s) that do not hold it; the answer shares {n} terms with the one at rank {} ({}) and {from_gold} with the source",
            first - 1,
            distractor.rank,
            distractor.document_id
        ),
    })
}

/// Unfaithful, incomplete or off target, from the judge's criteria and the keyword rule.
fn generation_cause(
    case: &TestCase,
    verdict: &Verdict,
    reply: &str,
    note: Option<&str>,
) -> Option<Attribution> {
    let with_note = |evidence: String| match note {
        Some(n) => format!("{evidence} ({n})"),
        None => evidence,
    };
    let criteria = verdict.criteria.as_ref();
    let rating = |pick: fn(&ragtester_core::Criteria) -> &ragtester_core::Criterion| {
        criteria.map(|c| (pick(c).rating, pick(c).reason.clone()))
    };
    if let Some(why) = &verdict.metrics.contradicts_sources {
        return Some(Attribution {
            cause: FailureCause::Unfaithful,
            evidence: with_note(format!("the answer {}", clip(why, 200))),
        });
    }
    if let Some(why) = crate::rules::off_question(verdict) {
        return Some(Attribution {
            cause: FailureCause::OffTarget,
            evidence: with_note(why),
        });
    }
    if let Some((Rating::False, reason)) = rating(|c| &c.faithfulness) {
        return Some(Attribution {
            cause: FailureCause::Unfaithful,
            evidence: with_note(format!("judge on faithfulness: {}", clip(&reason, 200))),
        });
    }
    let missing: Vec<&str> = case
        .keywords
        .iter()
        .filter(|k| keyword_recall(std::slice::from_ref(k), reply) == Some(0.0))
        .map(String::as_str)
        .collect();
    let incomplete =
        rating(|c| &c.completeness).filter(|(r, _)| matches!(r, Rating::False | Rating::Partially));
    if incomplete.is_some()
        || verdict
            .metrics
            .keyword_recall_answer
            .is_some_and(|r| r < 1.0)
    {
        let mut evidence = incomplete
            .map(|(_, reason)| format!("judge on completeness: {}", clip(&reason, 160)))
            .unwrap_or_else(|| "the answer leaves out expected keywords".to_string());
        if !missing.is_empty() {
            evidence.push_str(&format!("; keywords missing: {}", missing.join(", ")));
        }
        return Some(Attribution {
            cause: FailureCause::Incomplete,
            evidence: with_note(evidence),
        });
    }
    if let Some((Rating::Partially, reason)) = rating(|c| &c.faithfulness) {
        return Some(Attribution {
            cause: FailureCause::Unfaithful,
            evidence: with_note(format!("judge on faithfulness: {}", clip(&reason, 200))),
        });
    }
    let failed: Vec<String> = criteria
        .map(|c| {
            [
                ("relevance", &c.relevance),
                ("clarity", &c.clarity),
                ("keyword match", &c.keyword_match),
            ]
            .into_iter()
            .filter(|(_, k)| matches!(k.rating, Rating::False | Rating::Partially))
            .map(|(name, k)| format!("{name}: {}", clip(&k.reason, 120)))
            .collect()
        })
        .unwrap_or_default();
    let evidence = match (&verdict.rule_failure, failed.is_empty()) {
        (Some(rule), _) => format!("failed by rule: {rule}"),
        (None, false) => format!("judge: {}", failed.join("; ")),
        (None, true) => "judged below the pass mark on the criteria's mean".to_string(),
    };
    Some(Attribution {
        cause: FailureCause::OffTarget,
        evidence: with_note(evidence),
    })
}

fn missing_markers(markers: &[String], contexts: &[&RetrievedContext]) -> Vec<String> {
    let joined: String = contexts
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    markers
        .iter()
        .filter(|m| share_present(std::slice::from_ref(m), &joined) == 0.0)
        .take(5)
        .cloned()
        .collect()
}

/// A source span that a retrieved passage overlaps without holding whole: a chunk boundary falls inside it.
fn split_span<'a>(spans: &'a [SourceSpan], gold: &[&RetrievedContext]) -> Option<&'a SourceSpan> {
    spans.iter().find(|s| {
        gold.iter().any(|c| {
            s.overlaps(&c.document_id, c.start, c.end) && (c.start > s.start || c.end < s.end)
        })
    })
}

/// The share of `span` the passages cover together.
fn covered_share(span: &SourceSpan, contexts: &[&RetrievedContext]) -> f64 {
    let mut pieces: Vec<(usize, usize)> = contexts
        .iter()
        .filter(|c| span.overlaps(&c.document_id, c.start, c.end))
        .map(|c| (c.start.max(span.start), c.end.min(span.end)))
        .collect();
    pieces.sort_unstable();
    let (mut covered, mut reach) = (0, span.start);
    for (start, end) in pieces {
        let start = start.max(reach);
        if end > start {
            covered += end - start;
            reach = end;
        }
    }
    covered as f64 / (span.end - span.start).max(1) as f64
}

fn ranks(contexts: &[&RetrievedContext]) -> String {
    let mut r: Vec<usize> = contexts.iter().map(|c| c.rank).collect();
    r.sort_unstable();
    r.iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn clip(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Set the attribution of every verdict whose cell failed or errored; a failed turn of a conversation
/// whose answer contradicts an earlier one (`histories`) is attributed to that.
pub fn attribute_all(
    cases: &[TestCase],
    answers: &[Answer],
    verdicts: &mut [Verdict],
    histories: Option<&crate::Histories>,
) {
    let cases: HashMap<&str, &TestCase> = cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let answers: HashMap<(&str, &str), &Answer> = answers
        .iter()
        .map(|a| ((a.case_id.as_str(), a.config_id.as_str()), a))
        .collect();
    for v in verdicts.iter_mut() {
        let Some(case) = cases.get(v.case_id.as_str()) else {
            continue;
        };
        let answer = answers
            .get(&(v.case_id.as_str(), v.config_id.as_str()))
            .copied();
        v.attribution = attribute(case, answer, v);
        if v.passed == Some(false)
            && let (Some(answer), Some(history)) = (
                answer,
                histories.and_then(|h| h.get(&(v.case_id.clone(), v.config_id.clone()))),
            )
            && let Some(contradiction) = contradiction(history, answer, v.attribution.as_ref())
        {
            v.attribution = Some(contradiction);
        }
    }
}
