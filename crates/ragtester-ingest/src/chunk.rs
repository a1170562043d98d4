//! Chunkers, all under a token budget counted with a real tokenizer (cl100k):
//!
//! - `paragraph`: text-splitter packs the largest units that fit (paragraphs, then sentences by Unicode
//!   segmentation, which knows 。！？, then words), so no chunk ends inside a word or a number;
//! - `fixed`: windows of the budget with overlap, cut only between jieba pieces (whole English words, whole
//!   Chinese words) and never inside a number, ignoring paragraphs;
//! - `headings`: a chunk never crosses a heading; inside a section, as `paragraph`.

use crate::Document;
use anyhow::{Result, anyhow, bail};
use ragtester_core::{Chunk, ChunkStrategy, ChunkingSettings, ids::stable_id};
use ragtester_text::tokens::{cl100k, count_tokens};
use ragtester_text::{is_heading, word_pieces};
use text_splitter::{ChunkConfig, TextSplitter};

/// Split a document into retrieval chunks.
pub fn chunk_document(doc: &Document, settings: &ChunkingSettings) -> Result<Vec<Chunk>> {
    if settings.overlap_tokens >= settings.max_tokens {
        bail!(
            "invalid chunking settings: overlap ({}) must be below max_tokens ({})",
            settings.overlap_tokens,
            settings.max_tokens
        );
    }
    let pieces = match settings.strategy {
        ChunkStrategy::Paragraph => split(&doc.text, settings.max_tokens, settings.overlap_tokens)?,
        ChunkStrategy::Fixed => {
            fixed_windows(&doc.text, settings.max_tokens, settings.overlap_tokens)
        }
        ChunkStrategy::Headings => {
            by_headings(&doc.text, settings.max_tokens, settings.overlap_tokens)?
        }
    };
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
    let chunks: Vec<(usize, String)> = splitter
        .chunk_char_indices(text)
        .map(|c| (c.char_offset, c.chunk.to_string()))
        .collect();
    Ok(reattach_closing_punctuation(chunks))
}

/// Closing punctuation belongs to the sentence it ends. The splitter packs a chunk to the token budget at
/// its finest level, so a sentence that fills the budget exactly can leave its "。" to open the next chunk
/// ("…每次持续14小时" | "。该项工作…"): such leading marks go back to the chunk before, which then exceeds the
/// budget by those few characters.
fn reattach_closing_punctuation(chunks: Vec<(usize, String)>) -> Vec<(usize, String)> {
    const CLOSING: &[char] = &[
        '。', '！', '？', '，', '、', '；', '：', '」', '』', '）', '》', '”', '’', '.', ',', ';',
        ':', '!', '?', ')',
    ];
    let mut out: Vec<(usize, String)> = Vec::with_capacity(chunks.len());
    for (start, text) in chunks {
        let moved: String = text.chars().take_while(|c| CLOSING.contains(c)).collect();
        match out.last_mut() {
            Some((prev_start, prev))
                if !moved.is_empty() && *prev_start + prev.chars().count() == start =>
            {
                prev.push_str(&moved);
                let rest = text[moved.len()..].trim_start();
                let skipped = text.chars().count() - rest.chars().count();
                if !rest.is_empty() {
                    out.push((start + skipped, rest.to_string()));
                }
            }
            _ => out.push((start, text)),
        }
    }
    out
}

/// Sections start at heading paragraphs; each section is split on its own, so no chunk spans two.
fn by_headings(text: &str, max_tokens: usize, overlap: usize) -> Result<Vec<(usize, String)>> {
    let mut out = Vec::new();
    for (start, section) in heading_sections(text) {
        for (offset, chunk) in split(section, max_tokens, overlap)? {
            out.push((start + offset, chunk));
        }
    }
    Ok(out)
}

/// (char start, text) of each section: a heading paragraph and everything up to the next heading.
fn heading_sections(text: &str) -> Vec<(usize, &str)> {
    let mut bounds = vec![0usize];
    let mut byte = 0usize;
    for paragraph in text.split_inclusive("\n\n") {
        if byte > 0 && is_heading(paragraph.trim()) {
            bounds.push(byte);
        }
        byte += paragraph.len();
    }
    bounds.push(text.len());
    bounds
        .windows(2)
        .map(|w| (text[..w[0]].chars().count(), &text[w[0]..w[1]]))
        .filter(|(_, s)| !s.trim().is_empty())
        .collect()
}

/// Fixed token windows cut at piece boundaries, each window starting `overlap` tokens before the last one
/// ended. Leading whitespace is trimmed from each window so chunks start on text.
fn fixed_windows(text: &str, max_tokens: usize, overlap: usize) -> Vec<(usize, String)> {
    let pieces = atoms(text);
    let tokens: Vec<usize> = pieces.iter().map(|p| count_tokens(p.1).max(1)).collect();
    let mut out = Vec::new();
    let mut first = 0;
    while first < pieces.len() {
        while first < pieces.len() && pieces[first].1.trim().is_empty() {
            first += 1;
        }
        if first == pieces.len() {
            break;
        }
        let mut last = first;
        let mut budget = tokens[first];
        while last + 1 < pieces.len() && budget + tokens[last + 1] <= max_tokens {
            last += 1;
            budget += tokens[last];
        }
        let start_byte = pieces[first].0;
        let end_byte = pieces[last].0 + pieces[last].1.len();
        let chunk = text[start_byte..end_byte].trim_end();
        out.push((text[..start_byte].chars().count(), chunk.to_string()));
        if last + 1 == pieces.len() {
            break;
        }
        // Step back over whole pieces worth at most `overlap` tokens, always moving forward.
        let mut next = last + 1;
        let mut shared = 0;
        while next > first + 1 && shared + tokens[next - 1] <= overlap {
            next -= 1;
            shared += tokens[next];
        }
        first = next;
    }
    out
}

/// Jieba pieces with byte offsets, merged where a cut would split a number (`4` `.` `5`) or a Latin word.
fn atoms(text: &str) -> Vec<(usize, &str)> {
    let mut out: Vec<(usize, &str)> = Vec::new();
    let mut byte = 0;
    for piece in word_pieces(text) {
        // Judge the cut by the text on both sides of it, not by the pieces, which may be single characters.
        let glue = !out.is_empty() && {
            let mut before = text[..byte].chars().rev();
            let mut after = text[byte..].chars();
            let (b0, b1) = (before.next(), before.next());
            let (a0, a1) = (after.next(), after.next());
            let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
            let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
            let sep = |c: Option<char>| matches!(c, Some('.' | ',' | ':'));
            (alnum(b0) && alnum(a0))
                || (digit(b0) && sep(a0) && digit(a1))
                || (sep(b0) && digit(b1) && digit(a0))
        };
        if glue {
            let last = out.last_mut().expect("glue needs a previous piece");
            *last = (last.0, &text[last.0..byte + piece.len()]);
        } else {
            out.push((byte, piece));
        }
        byte += piece.len();
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_sentence_keeps_its_closing_mark() {
        let chunks = vec![
            (0, "每次持续14小时".to_string()),
            (8, "。该项工作每年开展".to_string()),
            (17, "27次。".to_string()),
        ];
        assert_eq!(
            reattach_closing_punctuation(chunks),
            vec![
                (0, "每次持续14小时。".to_string()),
                (9, "该项工作每年开展".to_string()),
                (17, "27次。".to_string()),
            ]
        );
    }

    use super::*;
    use ragtester_core::DocumentFormat;
    use ragtester_text::tokens::count_tokens;

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
            strategy: ChunkStrategy::Paragraph,
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
                strategy: ChunkStrategy::Paragraph,
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
                    overlap_tokens: 10,
                    strategy: ChunkStrategy::Fixed,
                }
            )
            .is_err()
        );
    }

    #[test]
    fn fixed_windows_keep_words_and_numbers_whole_and_overlap() {
        let text = "离心泵的最大工作压力为4.5巴，额定流量为每小时12,500升。The relief valve opens at 4.5 bar. \
                    Maintenance intervals are 2,000 operating hours. "
            .repeat(4);
        let d = doc(&text);
        let settings = ChunkingSettings {
            max_tokens: 24,
            overlap_tokens: 6,
            strategy: ChunkStrategy::Fixed,
        };
        let chunks = chunk_document(&d, &settings).unwrap();
        assert!(chunks.len() > 4, "{}", chunks.len());
        let starts: Vec<usize> = atoms(&text)
            .iter()
            .map(|(byte, _)| text[..*byte].chars().count())
            .collect();
        for c in &chunks {
            assert!(count_tokens(&c.text) <= 24 + 2, "{}", c.text);
            assert_eq!(d.slice(c.start, c.end), c.text);
            for number in ["4.5", "12,500", "2,000"] {
                let (head, tail) = number.split_at(1);
                assert!(
                    !c.text.ends_with(head) || c.text.ends_with(number),
                    "{}",
                    c.text
                );
                assert!(!c.text.starts_with(&tail[1..]), "{}", c.text);
            }
            // Chunks start where a jieba word starts (no half words such as 压 | 力).
            assert!(starts.contains(&c.start), "{}", c.text);
        }
        assert!(
            chunks
                .windows(2)
                .all(|w| w[1].start < w[0].end && w[1].start > w[0].start)
        );
        assert_eq!(chunks.last().unwrap().end, text.trim_end().chars().count());
    }

    #[test]
    fn heading_chunks_never_cross_a_heading() {
        let body = "The pump is rated for continuous duty in clean water at room temperature. ";
        let text = format!(
            "Installation\n\n{}\n\nMaintenance\n\n{}\n\n保修条款\n\n保修期为二十四个月。",
            body.repeat(3),
            body.repeat(2)
        );
        let d = doc(&text);
        let settings = ChunkingSettings {
            max_tokens: 200,
            overlap_tokens: 0,
            strategy: ChunkStrategy::Headings,
        };
        let chunks = chunk_document(&d, &settings).unwrap();
        let firsts: Vec<&str> = chunks
            .iter()
            .map(|c| c.text.lines().next().unwrap())
            .collect();
        assert_eq!(firsts, ["Installation", "Maintenance", "保修条款"]);
        for c in &chunks {
            assert_eq!(d.slice(c.start, c.end), c.text);
        }
        // The paragraph chunker, with the same budget, packs across headings.
        let plain = chunk_document(
            &d,
            &ChunkingSettings {
                strategy: ChunkStrategy::Paragraph,
                ..settings
            },
        )
        .unwrap();
        assert!(plain.len() < chunks.len());
    }

    #[test]
    fn chinese_sentences_end_chunks_at_sentence_marks() {
        let text = "第一句说明额定电压为二百二十伏。第二句描述保修期限为二十四个月！第三句问能否在户外使用？".repeat(3);
        let d = doc(&text);
        let settings = ChunkingSettings {
            max_tokens: 40,
            overlap_tokens: 0,
            strategy: ChunkStrategy::Paragraph,
        };
        for c in chunk_document(&d, &settings).unwrap() {
            assert!(c.text.ends_with(['。', '！', '？']), "{}", c.text);
        }
    }
}
