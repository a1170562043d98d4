//! Ground truth by location: the expected answer is found in the source section, never taken on the
//! generator's word. Each sentence of the answer becomes a span where it occurs verbatim, or where the
//! section sentence sharing most of its terms is (at least half of them).

use crate::sections::Section;
use ragtester_core::text::{sentences, terms};
use ragtester_core::{Document, SourceSpan};
use std::collections::HashSet;

/// Spans in `doc` supporting `answer` within `section`; None when some part of the answer is not found.
pub fn locate(doc: &Document, section: &Section, answer: &str) -> Option<Vec<SourceSpan>> {
    let section_sentences: Vec<(usize, usize)> = sentences(&section.text);
    let section_chars: Vec<char> = section.text.chars().collect();
    let mut spans: Vec<SourceSpan> = Vec::new();
    for (a, b) in sentences(answer) {
        let part: String = answer.chars().skip(a).take(b - a).collect();
        let range = find_chars(&section_chars, &part)
            .or_else(|| best_overlap(section, &section_sentences, &part))?;
        let start = section.start + range.0;
        let end = section.start + range.1;
        if !spans.iter().any(|s| s.start == start && s.end == end) {
            spans.push(SourceSpan {
                document_id: doc.id.clone(),
                start,
                end,
                page: doc.page_of(start),
            });
        }
    }
    (!spans.is_empty()).then_some(spans)
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

fn best_overlap(
    section: &Section,
    candidates: &[(usize, usize)],
    part: &str,
) -> Option<(usize, usize)> {
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
        .map(|(range, _)| range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;

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
        let section = Section {
            index: 0,
            start: 0,
            end: text.chars().count(),
            text: text.into(),
            language: "en".into(),
            readability: None,
            measure: None,
        };
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
}
