//! BM25 over chunks with tantivy, in memory.

use crate::analyzer::{ANALYZER_NAME, analyze, mixed_analyzer};
use crate::{Hit, Retriever, Scope};
use anyhow::{Context, Result};
use ragtester_core::Chunk;
use std::sync::Mutex;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
    Value,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, TantivyDocument, Term, doc};

pub struct Bm25Index {
    index: Index,
    reader: IndexReader,
    text: Field,
    document: Field,
    ordinal: Field,
    analyzer: Mutex<TextAnalyzer>,
}

impl Bm25Index {
    pub fn build(chunks: &[Chunk]) -> Result<Self> {
        let mut builder = Schema::builder();
        let text_options = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(ANALYZER_NAME)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let text = builder.add_text_field("text", text_options);
        let document = builder.add_text_field("document", STRING);
        let ordinal = builder.add_u64_field("ordinal", INDEXED | STORED);
        let index = Index::create_in_ram(builder.build());
        index.tokenizers().register(ANALYZER_NAME, mixed_analyzer());
        // One thread and a small arena: chunks of a test corpus fit, and it keeps memory flat.
        let mut writer = index
            .writer_with_num_threads::<TantivyDocument>(1, 50_000_000)
            .context("cannot create BM25 index writer")?;
        for (i, chunk) in chunks.iter().enumerate() {
            writer.add_document(doc!(
                text => chunk.text.as_str(),
                document => chunk.document_id.as_str(),
                ordinal => i as u64,
            ))?;
        }
        writer.commit().context("cannot commit BM25 index")?;
        let reader = index.reader().context("cannot open BM25 index reader")?;
        Ok(Self {
            index,
            reader,
            text,
            document,
            ordinal,
            analyzer: Mutex::new(mixed_analyzer()),
        })
    }

    fn query_for(&self, query: &str, scope: Scope<'_>) -> Option<Box<dyn Query>> {
        let terms = {
            let mut analyzer = self.analyzer.lock().expect("analyzer lock");
            analyze(&mut analyzer, query)
        };
        if terms.is_empty() {
            return None;
        }
        let text_query: Box<dyn Query> = Box::new(BooleanQuery::new(
            terms
                .into_iter()
                .map(|t| {
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(self.text, &t),
                        IndexRecordOption::WithFreqs,
                    ));
                    (Occur::Should, q)
                })
                .collect(),
        ));
        if scope.is_all() {
            return Some(text_query);
        }
        let document_term = |d: &String| -> Box<dyn Query> {
            Box::new(TermQuery::new(
                Term::from_field_text(self.document, d),
                IndexRecordOption::Basic,
            ))
        };
        if scope.documents.is_empty() {
            // Everything but the hidden documents.
            let mut clauses = vec![(Occur::Must, text_query)];
            clauses.extend(
                scope
                    .hidden
                    .iter()
                    .map(|d| (Occur::MustNot, document_term(d))),
            );
            return Some(Box::new(BooleanQuery::new(clauses)));
        }
        let filter = BooleanQuery::new(
            scope
                .documents
                .iter()
                .map(|d| (Occur::Should, document_term(d)))
                .collect(),
        );
        // The filter must match but must not move scores: boost it to zero.
        Some(Box::new(BooleanQuery::new(vec![
            (Occur::Must, text_query),
            (
                Occur::Must,
                Box::new(BoostQuery::new(Box::new(filter), 0.0)),
            ),
        ])))
    }

    /// Number of indexed chunks.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[doc(hidden)]
    pub fn index(&self) -> &Index {
        &self.index
    }
}

impl Retriever for Bm25Index {
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>> {
        let Some(q) = self.query_for(query, scope) else {
            return Ok(Vec::new());
        };
        if k == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let top = searcher.search(&q, &TopDocs::with_limit(k).order_by_score())?;
        top.into_iter()
            .map(|(score, address)| {
                let stored: TantivyDocument = searcher.doc(address)?;
                let ordinal = stored
                    .get_first(self.ordinal)
                    .and_then(|v| v.as_u64())
                    .context("BM25 index entry without ordinal")?;
                Ok(Hit {
                    chunk: ordinal as usize,
                    score: f64::from(score),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn chunks(texts: &[(&str, &str)]) -> Vec<Chunk> {
        texts
            .iter()
            .enumerate()
            .map(|(i, (doc, text))| Chunk {
                id: format!("c{i}"),
                document_id: doc.to_string(),
                start: 0,
                end: text.chars().count(),
                text: text.to_string(),
            })
            .collect()
    }

    #[test]
    fn ranks_the_matching_chunk_first_in_both_languages() {
        let index = Bm25Index::build(&chunks(&[
            ("a", "The relief valve opens at 4.5 bar."),
            ("a", "The pump motor is rated at 2.2 kW."),
            ("b", "本产品的保修期为二十四个月。"),
            ("b", "设备的额定电压为220伏。"),
        ]))
        .unwrap();
        let hits = index
            .retrieve("At what pressure do relief valves open?", 2, Scope::ALL)
            .unwrap();
        assert_eq!(hits[0].chunk, 0);
        let hits = index.retrieve("保修期是多久？", 2, Scope::ALL).unwrap();
        assert_eq!(hits[0].chunk, 2);
    }

    #[test]
    fn scope_filters_without_changing_scores() {
        let index =
            Bm25Index::build(&chunks(&[("a", "valve data"), ("b", "valve valve data")])).unwrap();
        let all = index.retrieve("valve", 5, Scope::ALL).unwrap();
        let only_a = index
            .retrieve("valve", 5, Scope::only(&["a".into()]))
            .unwrap();
        assert_eq!(only_a.len(), 1);
        let without_a = index
            .retrieve(
                "valve",
                5,
                Scope {
                    documents: &[],
                    hidden: &["a".into()],
                },
            )
            .unwrap();
        assert_eq!(without_a.len(), 1);
        assert_eq!(without_a[0].chunk, 1);
        assert_eq!(only_a[0].chunk, 0);
        let a_in_all = all.iter().find(|h| h.chunk == 0).unwrap();
        assert!((a_in_all.score - only_a[0].score).abs() < 1e-6);
    }

    #[test]
    fn empty_query_and_empty_index() {
        let index = Bm25Index::build(&chunks(&[("a", "valve")])).unwrap();
        assert!(index.retrieve("  ?! ", 3, Scope::ALL).unwrap().is_empty());
        let empty = Bm25Index::build(&[]).unwrap();
        assert!(empty.retrieve("valve", 3, Scope::ALL).unwrap().is_empty());
    }
}
