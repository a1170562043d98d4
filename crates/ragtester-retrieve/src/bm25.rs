//! BM25 over chunks with tantivy: in memory, or persisted in an index cache keyed by the chunks (ids,
//! documents, texts, order) and the analyzer version, so a second run over the same chunks opens the
//! index instead of tokenizing the corpus again.

use crate::analyzer::{ANALYZER_NAME, analyze, mixed_analyzer, query_analyzer};
use crate::{Hit, Retriever, Scope};
use anyhow::{Context, Result};
use ragtester_core::Chunk;
use ragtester_core::ids::stable_id;
use std::path::Path;
use std::sync::Mutex;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
    Value,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term, doc};

pub struct Bm25Index {
    index: Index,
    reader: IndexReader,
    text: Field,
    document: Field,
    ordinal: Field,
    /// Query terms; when a query is nothing but question words, its index-analyzer terms instead.
    query_analyzer: Mutex<TextAnalyzer>,
    analyzer: Mutex<TextAnalyzer>,
    loaded: bool,
}

/// Changes whenever the analyzer or the schema changes, so older persisted indexes are never opened.
const BM25_VERSION: &str = "bm25-v1";

struct Fields {
    text: Field,
    document: Field,
    ordinal: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text_options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER_NAME)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        text: builder.add_text_field("text", text_options),
        document: builder.add_text_field("document", STRING),
        ordinal: builder.add_u64_field("ordinal", INDEXED | STORED),
    };
    (builder.build(), fields)
}

impl Bm25Index {
    /// An index in memory.
    pub fn build(chunks: &[Chunk]) -> Result<Self> {
        let (schema, fields) = schema();
        Self::fill(Index::create_in_ram(schema), fields, chunks, false)
    }

    /// The index of `chunks` from the cache under `dir` when one was stored for exactly these chunks;
    /// otherwise built there (in a temporary folder renamed into place, so a killed build leaves nothing
    /// half-written behind). A damaged stored index is rebuilt with a warning.
    pub fn build_cached(chunks: &[Chunk], dir: &Path) -> Result<Self> {
        let key = stable_id(
            BM25_VERSION,
            &chunks
                .iter()
                .map(|c| (&c.id, &c.document_id, &c.text))
                .collect::<Vec<_>>(),
        );
        let path = dir.join(format!("bm25-{key}"));
        if path.join("meta.json").is_file() {
            match Self::open(&path, chunks.len()) {
                Ok(index) => return Ok(index),
                Err(e) => {
                    tracing::warn!("BM25 index {} rebuilt: {e:#}", path.display());
                    std::fs::remove_dir_all(&path)
                        .with_context(|| format!("cannot remove {}", path.display()))?;
                }
            }
        }
        let staging = dir.join(format!("bm25-{key}.partial-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging)
            .with_context(|| format!("cannot create {}", staging.display()))?;
        let (schema, fields) = schema();
        let index = Index::create_in_dir(&staging, schema)
            .with_context(|| format!("cannot create a BM25 index in {}", staging.display()))?;
        drop(Self::fill(index, fields, chunks, false)?);
        if std::fs::rename(&staging, &path).is_err() {
            // Another process stored the same index first: use that one.
            let _ = std::fs::remove_dir_all(&staging);
        }
        let mut index = Self::open(&path, chunks.len())?;
        index.loaded = false;
        Ok(index)
    }

    /// Whether this index was opened from the cache rather than built.
    pub fn loaded(&self) -> bool {
        self.loaded
    }

    fn open(path: &Path, expected: usize) -> Result<Self> {
        let index = Index::open_in_dir(path)
            .with_context(|| format!("cannot open the BM25 index {}", path.display()))?;
        index.tokenizers().register(ANALYZER_NAME, mixed_analyzer());
        let schema = index.schema();
        let field = |name: &str| {
            schema
                .get_field(name)
                .with_context(|| format!("the stored BM25 index has no `{name}` field"))
        };
        let fields = Fields {
            text: field("text")?,
            document: field("document")?,
            ordinal: field("ordinal")?,
        };
        let opened = Self::fill(index, fields, &[], true)?;
        let found = opened.len();
        if found != expected as u64 {
            anyhow::bail!("holds {found} chunks, {expected} expected");
        }
        Ok(opened)
    }

    /// Add `chunks` (none when opening a stored index) and open a reader.
    fn fill(index: Index, fields: Fields, chunks: &[Chunk], loaded: bool) -> Result<Self> {
        index.tokenizers().register(ANALYZER_NAME, mixed_analyzer());
        if !loaded {
            // One thread and a small arena: chunks of a test corpus fit, and it keeps memory flat.
            let mut writer = index
                .writer_with_num_threads::<TantivyDocument>(1, 50_000_000)
                .context("cannot create BM25 index writer")?;
            for (i, chunk) in chunks.iter().enumerate() {
                writer.add_document(doc!(
                    fields.text => chunk.text.as_str(),
                    fields.document => chunk.document_id.as_str(),
                    fields.ordinal => i as u64,
                ))?;
            }
            writer.commit().context("cannot commit BM25 index")?;
        }
        // Written once, then only read: no reload watcher, which would also complain when a cached
        // index folder is replaced or removed under it.
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .context("cannot open BM25 index reader")?;
        Ok(Self {
            index,
            reader,
            text: fields.text,
            document: fields.document,
            ordinal: fields.ordinal,
            query_analyzer: Mutex::new(query_analyzer()),
            analyzer: Mutex::new(mixed_analyzer()),
            loaded,
        })
    }

    fn query_for(&self, query: &str, scope: Scope<'_>) -> Option<Box<dyn Query>> {
        let mut terms = {
            let mut analyzer = self.query_analyzer.lock().expect("analyzer lock");
            analyze(&mut analyzer, query)
        };
        if terms.is_empty() {
            // "What is it?": only question words; search with them rather than with nothing.
            let mut analyzer = self.analyzer.lock().expect("analyzer lock");
            terms = analyze(&mut analyzer, query);
        }
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
    fn a_stored_index_is_opened_for_the_same_chunks_and_rebuilt_when_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = chunks(&[
            ("a", "The relief valve opens at 4.5 bar."),
            ("b", "本产品的保修期为二十四个月。"),
        ]);
        let built = Bm25Index::build_cached(&corpus, dir.path()).unwrap();
        assert!(!built.loaded());
        let stored: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(stored.len(), 1, "{stored:?}");
        let again = Bm25Index::build_cached(&corpus, dir.path()).unwrap();
        assert!(again.loaded());
        for q in ["relief valve", "保修期"] {
            assert_eq!(
                again.retrieve(q, 2, Scope::ALL).unwrap(),
                Bm25Index::build(&corpus)
                    .unwrap()
                    .retrieve(q, 2, Scope::ALL)
                    .unwrap()
            );
        }
        // Other chunks (one text changed) are another index.
        let mut changed = corpus.clone();
        changed[0].text = "The relief valve opens at 5 bar.".into();
        assert!(
            !Bm25Index::build_cached(&changed, dir.path())
                .unwrap()
                .loaded()
        );
        // A stored index that lost its segment files is rebuilt, not trusted.
        drop((built, again));
        for f in std::fs::read_dir(&stored[0]).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "store" || e == "idx") {
                std::fs::remove_file(f).unwrap();
            }
        }
        let rebuilt = Bm25Index::build_cached(&corpus, dir.path()).unwrap();
        assert_eq!(
            rebuilt.retrieve("relief valve", 1, Scope::ALL).unwrap()[0].chunk,
            0
        );
        assert!(std::fs::read_dir(dir.path()).unwrap().all(|e| {
            !e.unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".partial-")
        }));
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
