//! The lexical critic: the quality gate's checks by term overlap. A question is supported when its passages
//! hold most of the expected answer's terms and some of the question's; answered when one passage sentence
//! holds nearly every term of the question; contradicted when a sentence restates the false claim with
//! another figure. Replies `{"verdict", "reason"}`, the shape a real critic is asked for.

use super::judge::share;
use anyhow::{Result, bail};
use ragtester_core::TaskHint;
use ragtester_core::chat::CriticCheck;
use ragtester_text::{sentences, terms};
use serde_json::json;
use std::collections::HashSet;

/// Share of a question's terms one sentence must hold to answer it.
const ANSWERED_SHARE: f64 = 0.85;

pub fn critique(hint: &TaskHint) -> Result<String> {
    let TaskHint::Critic {
        check,
        question,
        expected_answer,
        evidence,
        premise,
        ..
    } = hint
    else {
        bail!("not a critic task");
    };
    let (yes, reason) = match check {
        CriticCheck::Supported => supported(question, expected_answer, evidence),
        CriticCheck::Answered => answered(question, evidence),
        CriticCheck::Contradicted => contradicted(premise.as_deref().unwrap_or_default(), evidence),
    };
    Ok(json!({ "verdict": if yes { "yes" } else { "no" }, "reason": reason }).to_string())
}

fn term_set(text: &str) -> HashSet<String> {
    terms(text).into_iter().collect()
}

/// Supported: most of the expected answer's terms are in the passages, and the question names at least two
/// of their terms (one for a one-term question), so it is about them. A share of the question would punish
/// question templates and Chinese bigrams, which add many terms no passage holds.
fn supported(question: &str, expected: &str, evidence: &[String]) -> (bool, String) {
    let have: HashSet<String> = evidence.iter().flat_map(|e| terms(e)).collect();
    let answer = share(&have, &term_set(expected));
    let asked = term_set(question);
    let shared = asked.iter().filter(|t| have.contains(*t)).count();
    let yes = answer >= 0.6 && shared >= asked.len().min(2);
    (
        yes,
        format!(
            "the passages hold {:.0}% of the expected answer's terms and {shared} of the question's",
            answer * 100.0
        ),
    )
}

/// Each sentence of each passage.
fn passage_sentences(evidence: &[String]) -> impl Iterator<Item = String> + '_ {
    evidence.iter().flat_map(|e| {
        sentences(e)
            .into_iter()
            .map(|(a, b)| e.chars().skip(a).take(b - a).collect::<String>())
    })
}

fn answered(question: &str, evidence: &[String]) -> (bool, String) {
    let wanted = term_set(question);
    let best = passage_sentences(evidence)
        .map(|s| (share(&term_set(&s), &wanted), s))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((x, sentence)) if x >= ANSWERED_SHARE => (
            true,
            format!(
                "\"{}\" holds {:.0}% of the question's terms",
                sentence.trim(),
                x * 100.0
            ),
        ),
        Some((x, _)) => (
            false,
            format!(
                "no passage sentence holds more than {:.0}% of the question's terms",
                x * 100.0
            ),
        ),
        None => (
            false,
            "the corpus returned no passage for the question".into(),
        ),
    }
}

fn is_number(term: &str) -> bool {
    term.chars().any(|c| c.is_ascii_digit()) && term.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn contradicted(premise: &str, evidence: &[String]) -> (bool, String) {
    let claim = term_set(premise);
    let (numbers, words): (HashSet<String>, HashSet<String>) =
        claim.into_iter().partition(|t| is_number(t));
    for sentence in passage_sentences(evidence) {
        let have = term_set(&sentence);
        let restated = share(&have, &words) >= 0.6;
        let differs = numbers.iter().any(|n| !have.contains(n));
        if restated && differs && !numbers.is_empty() {
            return (
                true,
                format!("\"{}\" states another figure", sentence.trim()),
            );
        }
    }
    (
        false,
        "no passage sentence restates the claim with another figure".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(check: CriticCheck, question: &str, expected: &str, premise: Option<&str>) -> bool {
        let hint = TaskHint::Critic {
            check,
            question: question.into(),
            expected_answer: expected.into(),
            evidence: vec![
                "Maintenance. The relief valve opens at 4.5 bar. The pump is blue.".into(),
            ],
            premise: premise.map(str::to_string),
            language: "en".into(),
        };
        let v: serde_json::Value = serde_json::from_str(&critique(&hint).unwrap()).unwrap();
        assert!(!v["reason"].as_str().unwrap().is_empty());
        v["verdict"] == "yes"
    }

    #[test]
    fn supported_needs_the_answer_in_the_passages() {
        let q = "At what pressure does the relief valve open?";
        assert!(ask(
            CriticCheck::Supported,
            q,
            "The relief valve opens at 4.5 bar.",
            None
        ));
        assert!(!ask(
            CriticCheck::Supported,
            q,
            "It opens at 7 bar after a delay of 3 s.",
            None
        ));
        // A question about something else is not supported, even with a quoted answer.
        assert!(!ask(
            CriticCheck::Supported,
            "Who audits the ledger?",
            "The relief valve opens at 4.5 bar.",
            None
        ));
    }

    #[test]
    fn answered_when_one_sentence_holds_the_question() {
        assert!(ask(
            CriticCheck::Answered,
            "Which valve opens at 4.5 bar?",
            "",
            None
        ));
        assert!(!ask(
            CriticCheck::Answered,
            "What is the retail price of the relief valve?",
            "",
            None
        ));
    }

    #[test]
    fn contradicted_when_a_sentence_gives_another_figure() {
        let claim = Some("The relief valve opens at 9.0 bar");
        assert!(ask(CriticCheck::Contradicted, "Why?", "", claim));
        assert!(!ask(
            CriticCheck::Contradicted,
            "Why?",
            "",
            Some("The relief valve opens at 4.5 bar")
        ));
        assert!(!ask(
            CriticCheck::Contradicted,
            "Why?",
            "",
            Some("The motor turns at 900 rpm")
        ));
    }
}
