//! The lexical approximation of claim checking: a claim is a sentence (or a clause of one, cut at a
//! semicolon), and a reference entails it when it holds most of the claim's terms and every number the claim
//! states; a claim whose words the reference holds but whose numbers it does not is contradicted.
//! Replies have the JSON shape a model is asked for.

use anyhow::{Result, bail};
use ragtester_core::TaskHint;
use ragtester_text::{sentences, terms};
use serde_json::json;
use std::collections::HashSet;

/// The share of a claim's terms a reference must hold to entail it.
const SUPPORT: f64 = 0.6;

pub fn split(hint: &TaskHint) -> Result<String> {
    let TaskHint::Claims { text, .. } = hint else {
        bail!("not a claims task");
    };
    Ok(json!({ "claims": claims_of(text) }).to_string())
}

pub fn entail(hint: &TaskHint) -> Result<String> {
    let TaskHint::Entailment {
        claims, reference, ..
    } = hint
    else {
        bail!("not an entailment task");
    };
    let reference_terms = term_set(reference);
    let verdicts: Vec<&str> = claims
        .iter()
        .map(|c| verdict(c, &reference_terms))
        .collect();
    Ok(json!({ "verdicts": verdicts }).to_string())
}

fn claims_of(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    sentences(text)
        .into_iter()
        .flat_map(|(s, e)| {
            let sentence: String = chars[s..e].iter().collect();
            sentence
                .split([';', '；'])
                .map(|c| c.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|c| !terms(c).is_empty())
        .collect()
}

fn is_number(term: &str) -> bool {
    term.chars().any(|c| c.is_ascii_digit()) && term.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn verdict(claim: &str, reference: &HashSet<String>) -> &'static str {
    verdict_of(&term_set(claim), reference)
}

/// A text's terms with one spelling of every figure: "three years" and 3年 both give "3".
fn term_set(text: &str) -> HashSet<String> {
    terms(&ragtester_text::facts::normalise(text))
        .into_iter()
        .collect()
}

fn verdict_of(claimed: &HashSet<String>, reference: &HashSet<String>) -> &'static str {
    if claimed.is_empty() {
        return "neutral";
    }
    let (numbers, words): (Vec<&String>, Vec<&String>) = claimed.iter().partition(|t| is_number(t));
    let held = |ts: &[&String]| ts.iter().filter(|t| reference.contains(t.as_str())).count();
    let support = held(&words) as f64 / words.len().max(1) as f64;
    let numbers_held = held(&numbers) == numbers.len();
    match (support >= SUPPORT || words.is_empty(), numbers_held) {
        (true, true) => "entailed",
        // The reference speaks of the same things with other figures.
        (true, false) if reference.iter().any(|t| is_number(t)) => "contradicted",
        _ => "neutral",
    }
}

/// What the lexical checker says of one answer's claims, worked out directly: the same splits and
/// entailment verdicts asking this model the two tasks one prompt at a time gives, with every claim and every
/// text tokenized once instead of once per question asked of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimJudgements {
    pub expected_claims: usize,
    pub answer_claims: usize,
    /// Per expected claim: the answer states it.
    pub stated: Vec<bool>,
    /// Per answer claim: the expected answer supports it.
    pub correct: Vec<bool>,
    /// Per answer claim: the passages together support it.
    pub supported: Vec<bool>,
    /// Per expected claim: the passages together hold it.
    pub held: Vec<bool>,
    /// Per answer claim: the passages without a source span support it.
    pub from_noise: Vec<bool>,
    /// Passages that hold at least one expected claim.
    pub relevant: usize,
}

/// `passages` are the retrieved passages in rank order; `noise[i]` says whether passage `i` holds no source
/// span.
pub fn judge_claims(
    expected: &str,
    answer: &str,
    passages: &[&str],
    noise: &[bool],
) -> ClaimJudgements {
    let expected_claims: Vec<HashSet<String>> =
        claims_of(expected).iter().map(|c| term_set(c)).collect();
    let said: Vec<HashSet<String>> = claims_of(answer).iter().map(|c| term_set(c)).collect();
    let per_passage: Vec<HashSet<String>> = passages.iter().map(|p| term_set(p)).collect();
    // The prompted path asks about the passages joined by a blank line; a line break ends every term, so the
    // joined text's terms are the union of each passage's.
    let joined = |which: &dyn Fn(usize) -> bool| -> HashSet<String> {
        let mut set = HashSet::new();
        for (i, terms) in per_passage.iter().enumerate() {
            if which(i) {
                set.extend(terms.iter().cloned());
            }
        }
        set
    };
    let supported_by = |claims: &[HashSet<String>], reference: &HashSet<String>| -> Vec<bool> {
        claims
            .iter()
            .map(|c| verdict_of(c, reference) == "entailed")
            .collect()
    };
    let all_passages = joined(&|_| true);
    let relevant = if expected_claims.is_empty() {
        0
    } else {
        per_passage
            .iter()
            .filter(|p| supported_by(&expected_claims, p).contains(&true))
            .count()
    };
    let any_noise = noise.iter().any(|n| *n);
    ClaimJudgements {
        expected_claims: expected_claims.len(),
        answer_claims: said.len(),
        stated: supported_by(&expected_claims, &term_set(answer)),
        correct: supported_by(&said, &term_set(expected)),
        supported: supported_by(&said, &all_passages),
        held: supported_by(&expected_claims, &all_passages),
        from_noise: if any_noise {
            supported_by(&said, &joined(&|i| noise[i]))
        } else {
            vec![false; said.len()]
        },
        relevant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(claims: &[&str], reference: &str) -> Vec<String> {
        let hint = TaskHint::Entailment {
            claims: claims.iter().map(|c| c.to_string()).collect(),
            reference: reference.into(),
            language: "en".into(),
        };
        let reply: serde_json::Value = serde_json::from_str(&entail(&hint).unwrap()).unwrap();
        reply["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn sentences_and_clauses_become_claims() {
        let hint = TaskHint::Claims {
            text: "The valve opens at 4.5 bar; it closes at 2 bar. 安全阀在4.5巴时开启。".into(),
            language: "en".into(),
        };
        let reply: serde_json::Value = serde_json::from_str(&split(&hint).unwrap()).unwrap();
        assert_eq!(
            reply["claims"],
            json!([
                "The valve opens at 4.5 bar",
                "it closes at 2 bar.",
                "安全阀在4.5巴时开启。"
            ])
        );
    }

    #[test]
    fn numbers_decide_between_entailed_and_contradicted() {
        let reference = "The relief valve on the pump outlet opens at 4.5 bar.";
        assert_eq!(
            check(
                &[
                    "The relief valve opens at 4.5 bar.",
                    "The relief valve opens at 6 bar.",
                    "Penguins live in Antarctica."
                ],
                reference
            ),
            ["entailed", "contradicted", "neutral"]
        );
        assert_eq!(
            check(
                &["安全阀在4.5巴时开启。", "安全阀在6巴时开启。"],
                "泵出口的安全阀在4.5巴时开启。"
            ),
            ["entailed", "contradicted"]
        );
    }
}
