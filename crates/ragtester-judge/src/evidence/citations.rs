//! Checked citations: an answer that cites its passages by number (`[1]`, `[2, 3]`, `[1][2]`, `【1】`, the
//! passages' ranks) is held to them, deterministically. Each sentence carrying a marker is checked against
//! the passages it cites: a citation is correct when its passage alone supports the sentence (after ALCE's
//! citation precision), and a sentence is supported when its cited passages together do (citation recall,
//! over every sentence that states something, cited or not).
//!
//! Support is lexical, as the offline judge's grounding is: most of the sentence's terms are in the passage,
//! and every figure it states is there as written, so a changed number never counts as cited correctly.

use ragtester_core::{Citation, RetrievedContext};
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

/// Share of a sentence's terms a passage must hold to support it.
const SUPPORTED: f64 = 0.6;

/// Terms a sentence needs to state something a passage could support ("See [1]." does not).
const MIN_TERMS: usize = 2;

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[(\d+(?:\s*[,，、]\s*\d+)*)\]|【(\d+(?:\s*[,，、]\s*\d+)*)】")
        .expect("valid pattern")
});

/// What checking an answer's citations found.
#[derive(Debug, Clone, PartialEq)]
pub struct CitationCheck {
    /// (sentence, cited passage) pairs, and how many of them the passage supports.
    pub citations: usize,
    pub correct: usize,
    /// Sentences that state something, and how many their cited passages support.
    pub statements: usize,
    pub supported: usize,
    /// The first sentence its cited passages do not support while another retrieved passage does:
    /// (sentence, first cited rank, supporting rank).
    pub misattributed: Option<(String, usize, usize)>,
}

impl CitationCheck {
    pub fn precision(&self) -> Option<f64> {
        (self.citations > 0).then(|| self.correct as f64 / self.citations as f64)
    }

    pub fn recall(&self) -> Option<f64> {
        (self.statements > 0).then(|| self.supported as f64 / self.statements as f64)
    }
}

/// `text` without its citation markers.
pub fn unmarked(text: &str) -> std::borrow::Cow<'_, str> {
    MARKER.replace_all(text, "")
}

/// The check of `answer`'s citations — its markers and the system's own `cited` field — against
/// `contexts`; None when it cites nothing.
pub fn check(
    answer: &str,
    cited: &[Citation],
    contexts: &[RetrievedContext],
) -> Option<CitationCheck> {
    if !MARKER.is_match(answer) && cited.is_empty() {
        return None;
    }
    let mut found = CitationCheck {
        citations: 0,
        correct: 0,
        statements: 0,
        supported: 0,
        misattributed: None,
    };
    for (claim, cited) in statements(answer, cited) {
        found.statements += 1;
        let passage = |rank: usize| contexts.iter().find(|c| c.rank == rank);
        let mut together = String::new();
        for &rank in &cited {
            found.citations += 1;
            let Some(p) = passage(rank) else { continue };
            together.push_str(&p.text);
            together.push('\n');
            if supports(&p.text, &claim) {
                found.correct += 1;
            }
        }
        if cited.is_empty() {
            continue;
        }
        if supports(&together, &claim) {
            found.supported += 1;
        } else if found.misattributed.is_none()
            && let Some(other) = contexts.iter().find(|c| supports(&c.text, &claim))
        {
            found.misattributed = Some((claim.trim().to_string(), cited[0], other.rank));
        }
    }
    Some(found)
}

/// The sentences that state something, without their markers, each with the ranks it cites. A marker
/// standing after a sentence's full stop ("…开启。【2】") cites that sentence. A citation from the system's
/// own field cites the sentences holding most of its cited text's terms, or, naming no text (or a text no
/// sentence holds), every sentence.
fn statements(answer: &str, field: &[Citation]) -> Vec<(String, Vec<usize>)> {
    let mut out = marked_statements(answer);
    for citation in field {
        let quoted: HashSet<String> = citation
            .text
            .as_deref()
            .map(ragtester_text::terms)
            .unwrap_or_default()
            .into_iter()
            .collect();
        let holds = |claim: &str| {
            let found = ragtester_text::terms(claim)
                .into_iter()
                .filter(|t| quoted.contains(t))
                .collect::<HashSet<_>>()
                .len();
            found * 2 > quoted.len()
        };
        let targeted = !quoted.is_empty() && out.iter().any(|(claim, _)| holds(claim));
        for (claim, ranks) in &mut out {
            if !targeted || holds(claim) {
                for &rank in &citation.ranks {
                    if !ranks.contains(&rank) {
                        ranks.push(rank);
                    }
                }
            }
        }
    }
    out
}

/// The statements with the ranks their `[n]` / `【n】` markers cite.
fn marked_statements(answer: &str) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for (start, end) in ragtester_text::sentences(answer) {
        let sentence: String = answer.chars().skip(start).take(end - start).collect();
        let cited = cited_ranks(&sentence);
        let claim = MARKER.replace_all(&sentence, " ").to_string();
        if ragtester_text::terms(&claim).len() >= MIN_TERMS {
            out.push((claim, cited));
        } else if let Some((_, before)) = out.last_mut() {
            for rank in cited {
                if !before.contains(&rank) {
                    before.push(rank);
                }
            }
        }
    }
    out
}

/// The passage ranks a sentence cites, in order, each once.
fn cited_ranks(sentence: &str) -> Vec<usize> {
    let mut ranks = Vec::new();
    for found in MARKER.captures_iter(sentence) {
        let list = found
            .get(1)
            .or_else(|| found.get(2))
            .map_or("", |m| m.as_str());
        for n in list.split([',', '，', '、']) {
            if let Ok(rank) = n.trim().parse::<usize>()
                && !ranks.contains(&rank)
            {
                ranks.push(rank);
            }
        }
    }
    ranks
}

/// Whether `passage` supports `claim`: most of its terms there, and each of its figures as written.
fn supports(passage: &str, claim: &str) -> bool {
    let held: HashSet<String> = ragtester_text::terms(passage).into_iter().collect();
    let said: Vec<String> = ragtester_text::terms(claim);
    if said.is_empty() {
        return false;
    }
    let figures_held = said
        .iter()
        .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
        .all(|t| held.contains(t));
    let share = said.iter().filter(|t| held.contains(*t)).count() as f64 / said.len() as f64;
    figures_held && share >= SUPPORTED
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passages(texts: &[&str]) -> Vec<RetrievedContext> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| RetrievedContext {
                rank: i + 1,
                score: 1.0,
                chunk_id: format!("c{i}"),
                document_id: "d".into(),
                start: 0,
                end: t.chars().count(),
                text: t.to_string(),
            })
            .collect()
    }

    fn contexts() -> Vec<RetrievedContext> {
        passages(&[
            "The relief valve of the pump opens at 4.5 bar.",
            "The pump weighs 12 kilograms and runs on 24 volt.",
        ])
    }

    #[test]
    fn correct_citations_are_precise_and_complete() {
        let c = check(
            "The relief valve opens at 4.5 bar [1]. The pump weighs 12 kilograms [2].",
            &[],
            &contexts(),
        )
        .unwrap();
        assert_eq!(
            (c.citations, c.correct, c.statements, c.supported),
            (2, 2, 2, 2)
        );
        assert_eq!((c.precision(), c.recall()), (Some(1.0), Some(1.0)));
        assert_eq!(c.misattributed, None);
    }

    #[test]
    fn a_wrong_citation_is_misattributed() {
        // The weight comes from passage 2, but the answer cites passage 1 for it.
        let c = check(
            "The relief valve opens at 4.5 bar [1]. The pump weighs 12 kilograms [1].",
            &[],
            &contexts(),
        )
        .unwrap();
        assert_eq!((c.citations, c.correct), (2, 1));
        assert_eq!(c.recall(), Some(0.5));
        let (sentence, cited, actual) = c.misattributed.unwrap();
        assert!(
            sentence.starts_with("The pump weighs 12 kilograms"),
            "{sentence}"
        );
        assert_eq!((cited, actual), (1, 2));
        // A changed figure is supported by no passage: not misattributed, just unsupported.
        let c = check("The pump weighs 15 kilograms [2].", &[], &contexts()).unwrap();
        assert_eq!((c.correct, c.supported, c.misattributed), (0, 0, None));
    }

    #[test]
    fn a_missing_citation_lowers_recall_and_no_marker_checks_nothing() {
        let c = check(
            "The relief valve opens at 4.5 bar [1]. The pump weighs 12 kilograms.",
            &[],
            &contexts(),
        )
        .unwrap();
        assert_eq!((c.statements, c.supported), (2, 1));
        assert_eq!(c.precision(), Some(1.0));
        assert_eq!(
            check("The pump weighs 12 kilograms.", &[], &contexts()),
            None
        );
        // A citation of a passage that was not retrieved is a wrong one.
        let c = check("The pump weighs 12 kilograms [7].", &[], &contexts()).unwrap();
        assert_eq!((c.citations, c.correct), (1, 0));
    }

    #[test]
    fn chinese_markers_and_lists_are_read() {
        let zh = passages(&["电池组自购买之日起享受24个月保修。", "充电器重2千克。"]);
        let c = check(
            "电池组享受24个月保修【1】。充电器重2千克【1，2】。",
            &[],
            &zh,
        )
        .unwrap();
        assert_eq!(c.citations, 3);
        assert_eq!(c.correct, 2);
        assert_eq!((c.statements, c.supported), (2, 2));
        assert_eq!(
            c.misattributed, None,
            "a superfluous citation beside the right one"
        );
        assert_eq!(cited_ranks("X [1, 3][2]."), vec![1, 3, 2]);
    }

    #[test]
    fn the_system_s_own_citation_field_is_checked_as_markers_are() {
        let answer = "The relief valve opens at 4.5 bar. The pump weighs 12 kilograms.";
        let cite = |ranks: Vec<usize>, text: Option<&str>| Citation {
            ranks,
            text: text.map(str::to_string),
        };
        // Each citation names the part of the answer it stands for: both right.
        let c = check(
            answer,
            &[
                cite(vec![1], Some("relief valve opens at 4.5 bar")),
                cite(vec![2], Some("weighs 12 kilograms")),
            ],
            &contexts(),
        )
        .unwrap();
        assert_eq!((c.citations, c.correct, c.supported), (2, 2, 2));
        // The weight cited to passage 1: misattributed, as the marker would be.
        let c = check(
            answer,
            &[
                cite(vec![1], Some("relief valve opens at 4.5 bar")),
                cite(vec![1], Some("weighs 12 kilograms")),
            ],
            &contexts(),
        )
        .unwrap();
        assert_eq!((c.correct, c.supported), (1, 1));
        assert_eq!(c.misattributed.map(|m| (m.1, m.2)), Some((1, 2)));
        // A citation naming no part of the answer stands for all of it: passage 2 supports one sentence.
        let c = check(answer, &[cite(vec![2], None)], &contexts()).unwrap();
        assert_eq!(
            (c.citations, c.correct, c.statements, c.supported),
            (2, 1, 2, 1)
        );
        // No marker and no field: nothing to check.
        assert_eq!(check(answer, &[], &contexts()), None);
    }
}
