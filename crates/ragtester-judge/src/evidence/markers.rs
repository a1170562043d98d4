//! What a passage must carry to hold a case's answer: the case's keywords, else its expected answer's terms
//! — shared by failure attribution (which passage held the source) and an agent's searches scored as
//! retrieval.

use ragtester_core::TestCase;
use ragtester_text::terms;
use std::collections::HashSet;

/// A passage "holds the answer" when it carries this share of the answer's markers (the case's keywords,
/// else the expected answer's terms).
pub(crate) const HOLDS: f64 = 0.8;

/// What an answer must carry: the case's keywords, else the expected answer's terms (deduplicated).
pub(crate) fn answer_markers(case: &TestCase) -> Vec<String> {
    if !case.keywords.is_empty() {
        return case.keywords.iter().map(|k| k.to_lowercase()).collect();
    }
    let mut seen = HashSet::new();
    terms(&case.expected_answer)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .collect()
}

pub(crate) fn share_present(markers: &[String], text: &str) -> f64 {
    if markers.is_empty() {
        return 0.0;
    }
    let lower = text.to_lowercase();
    let text_terms: HashSet<String> = terms(text).into_iter().collect();
    let found = markers
        .iter()
        .filter(|m| lower.contains(m.as_str()) || text_terms.contains(m.as_str()))
        .count();
    found as f64 / markers.len() as f64
}
