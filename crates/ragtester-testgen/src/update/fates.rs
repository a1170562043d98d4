//! What became of each earlier document and of each case's source spans: the decisions of an update,
//! before any question is written.

use super::text_map::{Fate, TextMap};
use ragtester_core::{Document, SourceSpan, TestCase};
use std::collections::HashMap;
use std::path::Path;

/// A document of the corpus the suite was written from, as the new corpus has it.
pub(crate) enum DocStatus<'a> {
    Unchanged(&'a Document),
    Changed { new: &'a Document, map: TextMap },
    Removed,
    Unparsable(String),
}

/// A file that was there and no longer parses: its source and why.
#[derive(Debug, Clone)]
pub struct Unparsed {
    pub source: String,
    pub reason: String,
}

/// Each earlier document's status (by its id), and the new documents no earlier one became.
pub(crate) fn match_documents<'a>(
    earlier: &[Document],
    docs: &'a [Document],
    unparsed: &[Unparsed],
) -> (HashMap<String, DocStatus<'a>>, Vec<&'a Document>) {
    let mut claimed = vec![false; docs.len()];
    let mut status = HashMap::new();
    let name = |s: &str| {
        Path::new(s)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    // The same text first (wherever it now lives), then the same path, then the same file name.
    let mut order: Vec<&Document> = earlier.iter().collect();
    order.sort_by_key(|d| !docs.iter().any(|n| n.id == d.id));
    for old in order {
        let free = |pred: &dyn Fn(&Document) -> bool, claimed: &[bool]| {
            (0..docs.len()).find(|&i| !claimed[i] && pred(&docs[i]))
        };
        let found = free(&|n| n.id == old.id, &claimed)
            .or_else(|| free(&|n| n.source == old.source, &claimed))
            .or_else(|| free(&|n| name(&n.source) == name(&old.source), &claimed));
        let s = match found {
            Some(i) => {
                claimed[i] = true;
                let new = &docs[i];
                if new.id == old.id {
                    DocStatus::Unchanged(new)
                } else {
                    let map = TextMap::new(&old.text, &new.text);
                    DocStatus::Changed { new, map }
                }
            }
            None => match unparsed
                .iter()
                .find(|u| u.source == old.source || name(&u.source) == name(&old.source))
            {
                Some(u) => DocStatus::Unparsable(u.reason.clone()),
                None => DocStatus::Removed,
            },
        };
        status.insert(old.id.clone(), s);
    }
    let added = (0..docs.len())
        .filter(|&i| !claimed[i])
        .map(|i| &docs[i])
        .collect();
    (status, added)
}

/// What became of one source span.
#[derive(Debug, Clone)]
pub(crate) enum SpanFate<'a> {
    /// Its text is unchanged: the span in the new corpus.
    Same(SourceSpan),
    /// Its words changed: where its text now is.
    Changed {
        doc: &'a Document,
        start: usize,
        end: usize,
        was: String,
    },
    Removed(String),
    Stale(String),
}

/// The earlier corpus and what became of it.
pub(crate) struct Corpus<'a> {
    pub earlier: HashMap<&'a str, &'a Document>,
    pub status: HashMap<String, DocStatus<'a>>,
    /// The new documents by id.
    pub now: HashMap<&'a str, &'a Document>,
}

impl<'a> Corpus<'a> {
    /// The new version of an earlier document, when it has one.
    pub fn successor(&self, old_id: &str) -> Option<&'a Document> {
        match self.status.get(old_id) {
            Some(DocStatus::Unchanged(d)) | Some(DocStatus::Changed { new: d, .. }) => Some(d),
            _ => self.now.get(old_id).copied(),
        }
    }

    /// What became of `span` of `case`.
    pub fn fate(&self, case: &TestCase, span: &SourceSpan) -> SpanFate<'a> {
        if let Some(injected) = case
            .injected_documents
            .iter()
            .find(|d| d.id == span.document_id)
        {
            return self.injected_fate(case, injected, span);
        }
        let Some(old) = self.earlier.get(span.document_id.as_str()) else {
            // No snapshot of the document: its text is known unchanged only when the corpus still has it.
            return match self.now.get(span.document_id.as_str()) {
                Some(_) => SpanFate::Same(span.clone()),
                None => SpanFate::Stale(format!(
                    "its document ({}) is not in the suite's documents snapshot, so whether its text \
                     changed cannot be told",
                    span.document_id
                )),
            };
        };
        let was = old.slice(span.start, span.end);
        if span
            .hash
            .as_ref()
            .is_some_and(|h| *h != SourceSpan::hash_of(&was))
        {
            return SpanFate::Stale(format!(
                "the documents snapshot does not hold the text its span was written from ({})",
                old.source
            ));
        }
        match &self.status[span.document_id.as_str()] {
            DocStatus::Unchanged(_) => SpanFate::Same(span.clone()),
            DocStatus::Changed { new, map } => match map.fate(span.start, span.end) {
                Fate::Same(r) => SpanFate::Same(SourceSpan::in_document(new, r.start, r.end)),
                Fate::Changed(r) => SpanFate::Changed {
                    doc: new,
                    start: r.start,
                    end: r.end,
                    was,
                },
                Fate::Removed => SpanFate::Removed(format!("its text is gone from {}", new.source)),
            },
            DocStatus::Removed => {
                SpanFate::Removed(format!("{} is no longer in the corpus", old.source))
            }
            DocStatus::Unparsable(reason) => SpanFate::Stale(format!(
                "{} no longer parses ({reason}); its cases are kept as they were",
                old.source
            )),
        }
    }

    /// A span into a poisoned copy the case carries: the copy is the case's own, so it stays as it is while
    /// the passage it copies (found in the earlier document) is unchanged.
    fn injected_fate(
        &self,
        case: &TestCase,
        injected: &Document,
        span: &SourceSpan,
    ) -> SpanFate<'a> {
        let text = injected.slice(span.start, span.end);
        let Some(old) = self.earlier.get(case.document_id.as_str()) else {
            return match self.now.contains_key(case.document_id.as_str()) {
                true => SpanFate::Same(span.clone()),
                false => SpanFate::Stale(
                    "its document is not in the suite's documents snapshot".to_string(),
                ),
            };
        };
        let Some((_, start, end)) =
            ragtester_core::document::find_text(std::slice::from_ref(*old), &text)
        else {
            return SpanFate::Same(span.clone());
        };
        let copied = SourceSpan {
            document_id: old.id.clone(),
            start,
            end,
            page: span.page,
            hash: None,
        };
        match self.fate(case, &copied) {
            SpanFate::Same(_) => SpanFate::Same(span.clone()),
            other => other,
        }
    }
}
