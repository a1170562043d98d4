//! The paper's section split: each document cut at paragraph ends into sections of at most N tokens, each
//! scored for readability so the hardest can be chosen.

use anyhow::Result;
use ragtester_core::Document;
use ragtester_core::readability::readability;

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub index: usize,
    /// Char range in the document text.
    pub start: usize,
    pub end: usize,
    pub text: String,
    pub readability: Option<f64>,
    pub measure: Option<&'static str>,
}

pub fn sections_of(doc: &Document, max_tokens: usize) -> Result<Vec<Section>> {
    Ok(ragtester_ingest::split_sections(&doc.text, max_tokens)?
        .into_iter()
        .enumerate()
        .map(|(index, (start, text))| {
            let scored = readability(&text, &doc.language);
            Section {
                index,
                start,
                end: start + text.chars().count(),
                readability: scored.map(|s| s.0),
                measure: scored.map(|s| s.1),
                text,
            }
        })
        .collect())
}
