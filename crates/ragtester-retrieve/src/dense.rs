//! Exact dense search: every chunk vector scored by dot product (vectors are L2-normalised, so this is cosine).
//! Exact search is the ground truth an approximate index is measured against, and fast enough for test corpora.

use crate::{Hit, Retriever, Scope};
use anyhow::{Result, bail};
use ragtester_core::{Chunk, EmbedKind, Embedder};
use std::sync::Arc;

pub struct DenseIndex {
    embedder: Arc<dyn Embedder>,
    dimension: usize,
    /// Row-major: chunk i occupies `vectors[i*dimension..(i+1)*dimension]`.
    vectors: Vec<f32>,
    documents: Vec<String>,
}

impl DenseIndex {
    pub fn build(chunks: &[Chunk], embedder: Arc<dyn Embedder>) -> Result<Self> {
        let dimension = embedder.dimension();
        let mut vectors = Vec::with_capacity(chunks.len() * dimension);
        // Large batches let a model embedder sort by length and pad little.
        for batch in chunks.chunks(512) {
            let texts: Vec<&str> = batch.iter().map(|c| c.text.as_str()).collect();
            let embedded = embedder.embed(&texts, EmbedKind::Passage)?;
            if embedded.len() != texts.len() {
                bail!(
                    "embedder {} returned {} vectors for {} texts",
                    embedder.id(),
                    embedded.len(),
                    texts.len()
                );
            }
            for v in embedded {
                if v.len() != dimension {
                    bail!(
                        "embedder {} returned a vector of dimension {} (expected {dimension})",
                        embedder.id(),
                        v.len()
                    );
                }
                vectors.extend(v);
            }
        }
        Ok(Self {
            embedder,
            dimension,
            vectors,
            documents: chunks.iter().map(|c| c.document_id.clone()).collect(),
        })
    }

    pub fn embedder_id(&self) -> String {
        self.embedder.id()
    }
}

impl Retriever for DenseIndex {
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>> {
        if query.trim().is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let q = self
            .embedder
            .embed(&[query], EmbedKind::Query)?
            .pop()
            .unwrap_or_default();
        if q.len() != self.dimension {
            bail!(
                "query vector has dimension {} (index has {})",
                q.len(),
                self.dimension
            );
        }
        if q.iter().all(|x| *x == 0.0) {
            return Ok(Vec::new());
        }
        let mut hits: Vec<Hit> = self
            .vectors
            .chunks_exact(self.dimension)
            .enumerate()
            .filter(|(i, _)| scope.admits(&self.documents[*i]))
            .map(|(i, v)| Hit {
                chunk: i,
                score: f64::from(v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>()),
            })
            .collect();
        sort_hits(&mut hits);
        hits.truncate(k);
        Ok(hits)
    }
}

/// Best first; ties broken by chunk order so rankings are deterministic.
pub(crate) fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashEmbedder;

    #[test]
    fn finds_lexically_close_chunk_and_respects_scope() {
        let chunks: Vec<Chunk> = [
            ("a", "relief valve opens at pressure"),
            ("b", "motor power rating"),
            ("b", "valve seals"),
        ]
        .iter()
        .enumerate()
        .map(|(i, (d, t))| Chunk {
            id: i.to_string(),
            document_id: d.to_string(),
            start: 0,
            end: 1,
            text: t.to_string(),
        })
        .collect();
        let index = DenseIndex::build(&chunks, Arc::new(HashEmbedder::default())).unwrap();
        let hits = index.retrieve("relief valves", 2, Scope::ALL).unwrap();
        assert_eq!(hits[0].chunk, 0);
        let hits = index
            .retrieve(
                "relief valves",
                2,
                Scope {
                    documents: &["b".into()],
                },
            )
            .unwrap();
        assert!(hits.iter().all(|h| h.chunk != 0));
        assert!(index.retrieve("", 2, Scope::ALL).unwrap().is_empty());
    }
}
