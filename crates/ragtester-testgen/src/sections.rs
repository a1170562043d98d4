//! The paper's section split: each document cut at paragraph ends into sections of at most N tokens, each
//! classified (prose, contents, code, … — see `section_class`) and scored for readability (in its own
//! detected language) so the hardest prose can be chosen.

use crate::section_class::classify;
use anyhow::Result;
use ragtester_core::{Document, SectionClass};
use ragtester_text::detect_language;
use ragtester_text::readability::readability;

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub index: usize,
    /// Char range in the document text.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Detected on the section itself: a Chinese passage inside an English document is scored (and can be
    /// asked about) as Chinese. The document's language where the section has no letters.
    pub language: String,
    pub readability: Option<f64>,
    pub measure: Option<&'static str>,
    pub class: SectionClass,
    /// Why a section that is not prose was classed so (empty for prose).
    pub class_reason: String,
}

pub fn sections_of(doc: &Document, max_tokens: usize) -> Result<Vec<Section>> {
    Ok(ragtester_ingest::split_sections(&doc.text, max_tokens)?
        .into_iter()
        .enumerate()
        .map(|(index, (start, text))| section(doc, index, start, text))
        .collect())
}

/// The chars `[start, end)` of `doc` as section `index`, its whitespace trimmed: a suite update asks about
/// just the text that changed or is new, not the whole section around it.
pub(crate) fn section_at(doc: &Document, index: usize, start: usize, end: usize) -> Section {
    let text = doc.slice(start, end);
    let lead = text.chars().take_while(|c| c.is_whitespace()).count();
    let trimmed = text.trim().to_string();
    section(doc, index, start + lead, trimmed)
}

fn section(doc: &Document, index: usize, start: usize, text: String) -> Section {
    let language = match detect_language(&text) {
        "und" => doc.language.clone(),
        detected => detected.to_string(),
    };
    let scored = readability(&text, &language);
    let classified = classify(&text, index);
    Section {
        class: classified.class,
        class_reason: classified.reason,
        index,
        start,
        end: start + text.chars().count(),
        language,
        readability: scored.map(|s| s.0),
        measure: scored.map(|s| s.1),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;

    #[test]
    fn each_section_has_its_own_language_and_measure() {
        let english = "The relief valve opens at four and a half bar and closes again at three point nine bar. ";
        let chinese = "离心泵的最大工作压力为四点五巴，每次启动前必须检查密封圈是否完好，并确认进口阀门已经打开。";
        let text = format!("{}\n\n{}", english.repeat(4), chinese);
        let doc = Document::new("d".into(), DocumentFormat::Text, "d".into(), text, None);
        assert_eq!(doc.language, "en");
        let sections = sections_of(&doc, 64).unwrap();
        let langs: Vec<(&str, Option<&str>)> = sections
            .iter()
            .map(|s| (s.language.as_str(), s.measure))
            .collect();
        assert_eq!(langs.first().unwrap(), &("en", Some("flesch")), "{langs:?}");
        assert_eq!(
            langs.last().unwrap(),
            &("zh", Some("zh-asl-v1")),
            "{langs:?}"
        );
    }
}
