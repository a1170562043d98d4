//! Documents, the spans that point into them, and the chunks a retriever indexes.
//!
//! All offsets are in Unicode scalar values (chars), not bytes, so they mean the same in Rust, Python and
//! JavaScript readers of the records.

use crate::record::default_schema_version;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DocumentFormat {
    Markdown,
    Text,
    Html,
    Pdf,
    Docx,
}

/// Where a document came from: the user's own files or ragtester's document generator (the paper's RQ3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DocumentOrigin {
    #[default]
    Real,
    Generated,
    /// A copy of a passage with a planted instruction, carried by a safety case (never a user's file).
    Poisoned,
}

impl DocumentOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentOrigin::Real => "real",
            DocumentOrigin::Generated => "generated",
            DocumentOrigin::Poisoned => "poisoned",
        }
    }
}

/// One page of a document: its 1-based number and its char range in `Document::text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    pub number: u32,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    /// Content hash of the extracted text: the same text under another name is the same document.
    pub id: String,
    /// Path or name the document was read from.
    pub source: String,
    pub format: DocumentFormat,
    #[serde(default)]
    pub origin: DocumentOrigin,
    pub title: String,
    /// ISO 639-1 code (`en`, `zh`) or `und`.
    pub language: String,
    pub text: String,
    /// Pages in reading order; formats without pages have one page spanning the text.
    pub pages: Vec<Page>,
}

impl Document {
    /// Build a document, deriving its id from the text and a single page when none are given.
    pub fn new(
        source: String,
        format: DocumentFormat,
        title: String,
        text: String,
        pages: Option<Vec<Page>>,
    ) -> Self {
        let id = crate::ids::content_id(text.as_bytes());
        let language = ragtester_text::detect_language(&text).to_string();
        let char_len = text.chars().count();
        let pages = pages.unwrap_or_else(|| {
            vec![Page {
                number: 1,
                start: 0,
                end: char_len,
            }]
        });
        Self {
            schema_version: crate::SCHEMA_VERSION,
            id,
            source,
            format,
            origin: DocumentOrigin::Real,
            title,
            language,
            text,
            pages,
        }
    }

    /// Page number holding the char at `offset` (the last page for offsets past the end).
    pub fn page_of(&self, offset: usize) -> u32 {
        self.pages
            .iter()
            .find(|p| offset >= p.start && offset < p.end)
            .or(self.pages.last())
            .map_or(1, |p| p.number)
    }

    /// The text of a char range, clamped to the document.
    pub fn slice(&self, start: usize, end: usize) -> String {
        self.text
            .chars()
            .skip(start)
            .take(end.saturating_sub(start))
            .collect()
    }
}

/// A range of a document that supports an expected answer: the ground truth of retrieval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceSpan {
    pub document_id: String,
    pub start: usize,
    pub end: usize,
    pub page: u32,
    /// Content hash of the span's text when the suite was written, so an updated corpus tells an untouched
    /// span from a changed one (`generate --update`). None in suites written before spans were hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
}

impl SourceSpan {
    /// The span `[start, end)` of `doc`, with its page and the hash of its text.
    pub fn in_document(doc: &Document, start: usize, end: usize) -> Self {
        Self {
            document_id: doc.id.clone(),
            start,
            end,
            page: doc.page_of(start),
            hash: Some(Self::hash_of(&doc.slice(start, end))),
        }
    }

    /// The content hash a span of this text carries.
    pub fn hash_of(text: &str) -> String {
        crate::ids::content_id(text.as_bytes())
    }

    /// Whether the char range `[start, end)` of `document_id` shares at least one char with this span.
    pub fn overlaps(&self, document_id: &str, start: usize, end: usize) -> bool {
        self.document_id == document_id && start < self.end && self.start < end
    }
}

/// A piece of a document as indexed by a retriever.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Hash of document id, range and text: stable while the chunker settings stay the same.
    pub id: String,
    pub document_id: String,
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Text with each whitespace run as one space — none beside a CJK character, where extractors add spaces at
/// font changes (`39°C 时`) that the writer never typed — and each kept char's offset in the original.
fn squash(text: &str) -> (String, Vec<usize>) {
    let cjk = ragtester_text::is_cjk_script;
    let mut out = String::new();
    let mut offsets = Vec::new();
    let mut prev: Option<char> = None;
    let mut gap = false;
    for (i, c) in text.chars().enumerate() {
        if c.is_whitespace() {
            gap = prev.is_some();
            continue;
        }
        if gap && !prev.is_some_and(cjk) && !cjk(c) {
            out.push(' ');
            offsets.push(i - 1);
        }
        gap = false;
        out.push(c);
        offsets.push(i);
        prev = Some(c);
    }
    (out, offsets)
}

/// Where `text` occurs in the corpus, whitespace runs compared as one space (and ignored beside CJK
/// characters): (document id, start, end) in chars of the original text. For contexts returned by external
/// services, imported datasets and planted facts read back from PDFs, whose whitespace rarely survives intact.
pub fn find_text(documents: &[Document], text: &str) -> Option<(String, usize, usize)> {
    TextLocator::new(documents).find(text)
}

/// A context returned by an external service, placed in the corpus where its text occurs (whitespace runs
/// compared as one space), so retrieval metrics work for black-box targets too. Unplaced contexts keep an
/// empty document id and never count as relevant.
pub fn locate_context(documents: &[Document], rank: usize, text: &str) -> crate::RetrievedContext {
    let placed = find_text(documents, text);
    let (document_id, start, end) = placed.unwrap_or_default();
    crate::RetrievedContext {
        rank,
        score: 0.0,
        chunk_id: crate::ids::content_id(text.as_bytes()),
        document_id,
        start,
        end,
        text: text.to_string(),
    }
}

/// [`find_text`] over a corpus squashed once, for callers that locate many passages (an import of a
/// run's answers locates every retrieved context).
pub struct TextLocator<'a> {
    /// Each document's id, squashed text and the char offset in its original text of each squashed char.
    documents: Vec<(&'a str, String, Vec<usize>)>,
}

impl<'a> TextLocator<'a> {
    pub fn new(documents: &'a [Document]) -> Self {
        Self {
            documents: documents
                .iter()
                .map(|d| {
                    let (squashed, offsets) = squash(&d.text);
                    (d.id.as_str(), squashed, offsets)
                })
                .collect(),
        }
    }

    /// Where `text` occurs: (document id, start, end) in chars of the original text.
    pub fn find(&self, text: &str) -> Option<(String, usize, usize)> {
        let (needle, _) = squash(text);
        if needle.is_empty() {
            return None;
        }
        self.documents.iter().find_map(|(id, squashed, offsets)| {
            let byte = squashed.find(&needle)?;
            let start_char = squashed[..byte].chars().count();
            let len = needle.chars().count();
            Some((
                id.to_string(),
                offsets[start_char],
                offsets[start_char + len - 1] + 1,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_text_squashes_whitespace_and_ignores_it_beside_cjk() {
        let doc = Document::new(
            "d".into(),
            DocumentFormat::Text,
            "t".into(),
            "前言。进水温度超过39°C 时必须\n停止运行。 The  pump\nopens.".into(),
            None,
        );
        let docs = std::slice::from_ref(&doc);
        let (_, s, e) = find_text(docs, "进水温度超过39°C时必须停止运行。").unwrap();
        let found: String = doc.text.chars().skip(s).take(e - s).collect();
        assert_eq!(found, "进水温度超过39°C 时必须\n停止运行。");
        let (_, s, e) = find_text(docs, "The pump opens.").unwrap();
        let found: String = doc.text.chars().skip(s).take(e - s).collect();
        assert_eq!(found, "The  pump\nopens.");
        assert!(find_text(docs, "Thepump").is_none());
    }

    #[test]
    fn id_is_content_hash_and_pages_default() {
        let a = Document::new(
            "a.md".into(),
            DocumentFormat::Markdown,
            "A".into(),
            "héllo".into(),
            None,
        );
        let b = Document::new(
            "b.txt".into(),
            DocumentFormat::Text,
            "B".into(),
            "héllo".into(),
            None,
        );
        assert_eq!(a.id, b.id);
        assert_eq!(
            a.pages,
            vec![Page {
                number: 1,
                start: 0,
                end: 5
            }]
        );
        assert_eq!(a.slice(1, 3), "él");
    }

    #[test]
    fn span_overlap_is_half_open() {
        let s = SourceSpan {
            document_id: "d".into(),
            start: 10,
            end: 20,
            page: 1,
            hash: None,
        };
        assert!(s.overlaps("d", 19, 30));
        assert!(!s.overlaps("d", 20, 30));
        assert!(!s.overlaps("e", 12, 14));
    }
}
