//! Chunkers: paragraph- and sentence-aware splitting under a token budget (cl100k tokens), with overlap.
//!
//! text-splitter does the semantic work: it packs the largest units that fit (paragraphs, then sentences by
//! Unicode segmentation, which knows 。！？, then words), so no chunk ends inside a word or a number.

use crate::Document;
use anyhow::{Result, anyhow};
use ragtester_core::tokens::cl100k;
use ragtester_core::{Chunk, ChunkingSettings, ids::stable_id};
use text_splitter::{ChunkConfig, TextSplitter};

/// Split a document into retrieval chunks.
pub fn chunk_document(doc: &Document, settings: &ChunkingSettings) -> Result<Vec<Chunk>> {
    let pieces = split(&doc.text, settings.max_tokens, settings.overlap_tokens)?;
    Ok(pieces
        .into_iter()
        .map(|(start, text)| {
            let end = start + text.chars().count();
            Chunk {
                id: stable_id("chunk", &(&doc.id, start, end, &text)),
                document_id: doc.id.clone(),
                start,
                end,
                text,
            }
        })
        .collect())
}

/// The paper's section split: consecutive paragraphs packed up to `max_tokens`, no overlap, so each region of
/// the document belongs to exactly one section. Returns (char start, text).
pub fn split_sections(text: &str, max_tokens: usize) -> Result<Vec<(usize, String)>> {
    split(text, max_tokens, 0)
}

fn split(text: &str, max_tokens: usize, overlap: usize) -> Result<Vec<(usize, String)>> {
    let config = ChunkConfig::new(max_tokens)
        .with_sizer(cl100k())
        .with_overlap(overlap)
        .map_err(|e| anyhow!("invalid chunking settings: {e}"))?;
    let splitter = TextSplitter::new(config);
    Ok(splitter
        .chunk_char_indices(text)
        .map(|c| (c.char_offset, c.chunk.to_string()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;
    use ragtester_core::tokens::count_tokens;

    fn doc(text: &str) -> Document {
        Document::new(
            "d".into(),
            DocumentFormat::Text,
            "d".into(),
            text.into(),
            None,
        )
    }

    #[test]
    fn chunks_respect_budget_and_offsets() {
        let para = "The relief valve opens at 4.5 bar and closes at 3.9 bar. ".repeat(6);
        let text = format!(
            "{para}\n\n{para}\n\n第一段说明额定电压为二百二十伏。第二句话描述保修期限为二十四个月。"
        );
        let d = doc(&text);
        let settings = ChunkingSettings {
            max_tokens: 40,
            overlap_tokens: 0,
        };
        let chunks = chunk_document(&d, &settings).unwrap();
        assert!(chunks.len() > 3);
        for c in &chunks {
            assert!(count_tokens(&c.text) <= 40, "{}", c.text);
            assert_eq!(d.slice(c.start, c.end), c.text);
            // Never inside a number.
            assert!(
                !c.text.starts_with('5') && !c.text.ends_with("4."),
                "{}",
                c.text
            );
        }
        let ids: std::collections::HashSet<_> = chunks.iter().map(|c| &c.id).collect();
        assert_eq!(ids.len(), chunks.len());
    }

    #[test]
    fn overlap_repeats_text_and_sections_do_not() {
        let text = "Sentence number one is here. ".repeat(30);
        let with = chunk_document(
            &doc(&text),
            &ChunkingSettings {
                max_tokens: 30,
                overlap_tokens: 10,
            },
        )
        .unwrap();
        assert!(with.windows(2).any(|w| w[1].start < w[0].end));
        let sections = split_sections(&text, 30).unwrap();
        for w in sections.windows(2) {
            assert!(w[1].0 >= w[0].0 + w[0].1.chars().count());
        }
    }

    #[test]
    fn bad_settings_error() {
        assert!(
            chunk_document(
                &doc("x"),
                &ChunkingSettings {
                    max_tokens: 10,
                    overlap_tokens: 10
                }
            )
            .is_err()
        );
    }
}
