//! The corpus the quality gate's critic searches: every document chunked with the default settings and
//! indexed with BM25, so a negative question is checked against the passages a keyword retriever would
//! hand a RAG system for it.

use anyhow::Result;
use ragtester_core::config::ChunkingSettings;
use ragtester_core::{Chunk, Document};
use ragtester_retrieve::{Bm25Index, Retriever, Scope};

pub struct KeywordCorpus {
    chunks: Vec<Chunk>,
    index: Bm25Index,
}

impl KeywordCorpus {
    pub fn build(docs: &[Document]) -> Result<Self> {
        let settings = ChunkingSettings::default();
        let mut chunks = Vec::new();
        for doc in docs {
            chunks.extend(ragtester_ingest::chunk_document(doc, &settings)?);
        }
        let index = Bm25Index::build(&chunks)?;
        Ok(Self { chunks, index })
    }
}

impl ragtester_testgen::Corpus for KeywordCorpus {
    fn passages(&self, query: &str, k: usize, documents: &[String]) -> Result<Vec<String>> {
        Ok(self
            .index
            .retrieve(query, k, Scope::only(documents))?
            .into_iter()
            .map(|hit| self.chunks[hit.chunk].text.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;
    use ragtester_testgen::Corpus;

    #[test]
    fn passages_come_from_the_named_documents_only() {
        let doc = |name: &str, text: &str| {
            Document::new(
                name.into(),
                DocumentFormat::Text,
                name.into(),
                text.into(),
                None,
            )
        };
        let docs = [
            doc("a", "The relief valve opens at 4.5 bar."),
            doc("b", "The relief valve of the boiler opens at 3 bar."),
        ];
        let corpus = KeywordCorpus::build(&docs).unwrap();
        assert_eq!(corpus.passages("relief valve", 5, &[]).unwrap().len(), 2);
        let only_b = corpus
            .passages("relief valve", 5, std::slice::from_ref(&docs[1].id))
            .unwrap();
        assert_eq!(
            only_b,
            vec!["The relief valve of the boiler opens at 3 bar.".to_string()]
        );
    }
}
