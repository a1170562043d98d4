//! Ground truth by location: the expected answer is found in the source section, never taken on the
//! generator's word. Each sentence of the answer becomes a span where it occurs verbatim, or where the
//! section sentence sharing most of its terms is (at least half of them).

use crate::sections::Section;
use ragtester_core::{Document, SourceSpan};
use ragtester_text::{sentences, terms};
use std::collections::HashSet;

/// Spans in `doc` supporting `answer` within `section`; None when some part of the answer is not found.
pub fn locate(doc: &Document, section: &Section, answer: &str) -> Option<Vec<SourceSpan>> {
    locate_in(&[(doc, section)], answer).map(|per_part| per_part.concat())
}

/// Spans supporting `answer` within several sections (of one document or several), grouped per section:
/// each sentence of the answer is placed in the section that holds it verbatim, or else in the section
/// sentence sharing most of its terms. None when some sentence is found nowhere.
pub fn locate_in(parts: &[(&Document, &Section)], answer: &str) -> Option<Vec<Vec<SourceSpan>>> {
    // Each section's chars (for verbatim search) and sentence ranges (for the overlap fallback).
    type Prepared = (Vec<char>, Vec<(usize, usize)>);
    let prepared: Vec<Prepared> = parts
        .iter()
        .map(|(_, s)| (s.text.chars().collect(), sentences(&s.text)))
        .collect();
    let mut found: Vec<Vec<SourceSpan>> = vec![Vec::new(); parts.len()];
    for (a, b) in sentences(answer) {
        let part: String = answer.chars().skip(a).take(b - a).collect();
        let verbatim = prepared
            .iter()
            .enumerate()
            .find_map(|(i, (chars, _))| find_chars(chars, &part).map(|r| (i, r)));
        let (i, range) = verbatim.or_else(|| {
            prepared
                .iter()
                .enumerate()
                .filter_map(|(i, (_, sents))| {
                    best_overlap(parts[i].1, sents, &part).map(|(r, share)| (i, r, share))
                })
                .max_by(|x, y| x.2.total_cmp(&y.2))
                .map(|(i, r, _)| (i, r))
        })?;
        let (doc, section) = parts[i];
        let start = section.start + range.0;
        let end = section.start + range.1;
        if !found[i].iter().any(|s| s.start == start && s.end == end) {
            found[i].push(SourceSpan::in_document(doc, start, end));
        }
    }
    found.iter().any(|f| !f.is_empty()).then_some(found)
}

fn find_chars(haystack: &[char], needle: &str) -> Option<(usize, usize)> {
    let needle: Vec<char> = needle.chars().collect();
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .map(|start| (start, start + needle.len()))
}

/// The candidate sentence sharing most of `part`'s terms (at least half), with that share.
fn best_overlap(
    section: &Section,
    candidates: &[(usize, usize)],
    part: &str,
) -> Option<((usize, usize), f64)> {
    let wanted: HashSet<String> = terms(part).into_iter().collect();
    if wanted.is_empty() {
        return None;
    }
    candidates
        .iter()
        .map(|&(a, b)| {
            let text: String = section.text.chars().skip(a).take(b - a).collect();
            let have: HashSet<String> = terms(&text).into_iter().collect();
            let share =
                wanted.iter().filter(|t| have.contains(*t)).count() as f64 / wanted.len() as f64;
            ((a, b), share)
        })
        .filter(|(_, share)| *share >= 0.5)
        .max_by(|x, y| x.1.total_cmp(&y.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;

    /// One section holding the whole text.
    fn whole(text: &str) -> Section {
        Section {
            index: 0,
            start: 0,
            end: text.chars().count(),
            text: text.into(),
            language: "en".into(),
            readability: None,
            measure: None,
            class: ragtester_core::SectionClass::Prose,
            class_reason: String::new(),
        }
    }

    #[test]
    fn verbatim_and_paraphrased_answers_are_located() {
        let text =
            "Intro line here.\n\nThe relief valve opens at 4.5 bar. The motor is rated at 2.2 kW.";
        let doc = Document::new(
            "d".into(),
            DocumentFormat::Text,
            "d".into(),
            text.into(),
            None,
        );
        let section = whole(text);
        let spans = locate(&doc, &section, "The motor is rated at 2.2 kW.").unwrap();
        assert_eq!(
            doc.slice(spans[0].start, spans[0].end),
            "The motor is rated at 2.2 kW."
        );
        let spans = locate(&doc, &section, "Relief valves open at 4.5 bar.").unwrap();
        assert_eq!(
            doc.slice(spans[0].start, spans[0].end),
            "The relief valve opens at 4.5 bar."
        );
        assert!(locate(&doc, &section, "The company was founded in Oslo.").is_none());
    }

    #[test]
    fn an_answer_spanning_two_documents_is_placed_in_each() {
        let (a, b) = (
            "The relief valve opens at 4.5 bar.",
            "Bearings take lithium grease.",
        );
        let doc_a = Document::new("a".into(), DocumentFormat::Text, "a".into(), a.into(), None);
        let doc_b = Document::new("b".into(), DocumentFormat::Text, "b".into(), b.into(), None);
        let (sa, sb) = (whole(a), whole(b));
        let found = locate_in(
            &[(&doc_a, &sa), (&doc_b, &sb)],
            "Bearings take lithium grease. The relief valve opens at 4.5 bar.",
        )
        .unwrap();
        assert_eq!(found[0][0].document_id, doc_a.id);
        assert_eq!(found[1][0].document_id, doc_b.id);
        assert!(
            locate_in(
                &[(&doc_a, &sa), (&doc_b, &sb)],
                "The motor hums loudly at night."
            )
            .is_none()
        );
    }
}
