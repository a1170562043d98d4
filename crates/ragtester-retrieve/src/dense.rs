//! Exact dense search: every chunk vector scored by dot product (vectors are L2-normalised, so this is cosine).
//! Exact search is the ground truth an approximate index is measured against, and fast enough for test corpora.

use crate::ann::{AnnIndex, index_key};
use crate::{Hit, Retriever, Scope};
use anyhow::{Result, bail};
use ragtester_core::{Chunk, EmbedKind, Embedder};
use std::path::PathBuf;
use std::sync::Arc;

pub struct DenseIndex {
    embedder: Arc<dyn Embedder>,
    dimension: usize,
    /// Row-major: chunk i occupies `vectors[i*dimension..(i+1)*dimension]`.
    vectors: Vec<f32>,
    documents: Vec<String>,
    /// The HNSW graph, for corpora at or above the threshold.
    ann: Option<AnnIndex>,
}

/// When to add an HNSW graph, and where graphs are kept between runs.
#[derive(Debug, Clone)]
pub struct AnnSettings {
    /// Chunks from which queries go through HNSW rather than exact search.
    pub threshold: usize,
    pub cache: Option<PathBuf>,
}

impl Default for AnnSettings {
    /// Exact search whatever the corpus size (about 10 ms a query over 100,000 chunks at 384 dimensions)
    /// unless the caller sets where the HNSW graph takes over (`RAGTESTER_ANN_THRESHOLD`): measured on a synthetic Zipf
    /// corpus, the graph returned 25 % of exact search's top 10 at 20,000 chunks and 7 % at 100,000
    /// (`bench index`, docs/benchmarks.md), a loss a run would blame on the system under test.
    fn default() -> Self {
        Self {
            threshold: usize::MAX,
            cache: None,
        }
    }
}

/// Texts per embedding call when indexing.
const EMBED_WINDOW: usize = 16_384;

impl DenseIndex {
    /// Exact search only.
    pub fn build(chunks: &[Chunk], embedder: Arc<dyn Embedder>) -> Result<Self> {
        Self::build_with(
            chunks,
            embedder,
            &AnnSettings {
                threshold: usize::MAX,
                cache: None,
            },
        )
    }

    pub fn build_with(
        chunks: &[Chunk],
        embedder: Arc<dyn Embedder>,
        ann: &AnnSettings,
    ) -> Result<Self> {
        let dimension = embedder.dimension();
        let mut vectors = Vec::with_capacity(chunks.len() * dimension);
        // Large calls let a model embedder sort by length and pad little; the window bounds the tokenizer's
        // memory.
        for batch in chunks.chunks(EMBED_WINDOW) {
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
        let ann = if !chunks.is_empty() && chunks.len() >= ann.threshold {
            let key = index_key(
                &embedder.id(),
                dimension,
                chunks.iter().map(|c| c.text.as_str()),
            );
            Some(AnnIndex::build_or_load(
                &vectors,
                dimension,
                &key,
                ann.cache.as_deref(),
            )?)
        } else {
            None
        };
        Ok(Self {
            embedder,
            dimension,
            vectors,
            documents: chunks.iter().map(|c| c.document_id.clone()).collect(),
            ann,
        })
    }

    pub fn embedder_id(&self) -> String {
        self.embedder.id()
    }

    /// Whether queries go through an HNSW graph, and whether it came from the cache.
    pub fn ann_state(&self) -> Option<bool> {
        self.ann.as_ref().map(|a| a.loaded)
    }

    /// The query's vector; `None` when nothing in it embeds (no hits then).
    fn query_vector(&self, query: &str) -> Result<Option<Vec<f32>>> {
        if query.trim().is_empty() {
            return Ok(None);
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
        Ok((!q.iter().all(|x| *x == 0.0)).then_some(q))
    }

    /// Exact search whatever the corpus size: the ground truth an HNSW graph's recall is measured against.
    pub fn retrieve_exact(&self, query: &str, k: usize) -> Result<Vec<Hit>> {
        Ok(match self.query_vector(query)? {
            Some(q) if k > 0 => self.exact(&q, k, Scope::ALL),
            _ => Vec::new(),
        })
    }

    fn exact(&self, q: &[f32], k: usize, scope: Scope<'_>) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self
            .vectors
            .chunks_exact(self.dimension)
            .enumerate()
            .filter(|(i, _)| scope.admits(&self.documents[*i]))
            .map(|(i, v)| Hit {
                chunk: i,
                score: f64::from(dot(v, q)),
            })
            .collect();
        sort_hits(&mut hits);
        hits.truncate(k);
        hits
    }
}

impl Retriever for DenseIndex {
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>> {
        if k == 0 {
            return Ok(Vec::new());
        }
        let Some(q) = self.query_vector(query)? else {
            return Ok(Vec::new());
        };
        // Scoped queries search exactly: a document's few chunks are cheap to score, and a graph search
        // filtered down to them could miss some.
        // Hidden documents are few chunks: the graph is asked for extra hits to filter them out, and the
        // exact search below serves the rare query the filter leaves short.
        if let Some(ann) = &self.ann
            && scope.documents.is_empty()
        {
            let extra = if scope.hidden.is_empty() { 0 } else { k + 32 };
            let hits: Vec<Hit> = ann
                .search(&q, k + extra)
                .into_iter()
                .filter(|(chunk, _)| scope.admits(&self.documents[*chunk]))
                .take(k)
                .map(|(chunk, score)| Hit {
                    chunk,
                    score: f64::from(score),
                })
                .collect();
            if hits.len() == k || scope.hidden.is_empty() {
                return Ok(hits);
            }
        }
        Ok(self.exact(&q, k, scope))
    }
}

/// Dot product with eight independent partial sums: a single running sum must be added in order, which
/// keeps the compiler from using vector lanes; eight sums map onto them.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a8.zip(b8) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Best first; ties broken by chunk order so rankings are deterministic.
pub(crate) fn sort_hits(hits: &mut [Hit]) {
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.chunk.cmp(&b.chunk)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HashEmbedder;

    fn corpus(n: usize) -> Vec<Chunk> {
        let words = [
            "valve", "pump", "motor", "seal", "tank", "filter", "heater", "pipe", "gauge", "relay",
            "fuse", "cable", "sensor", "bearing", "gear", "shaft",
        ];
        (0..n)
            .map(|i| Chunk {
                id: i.to_string(),
                document_id: format!("d{}", i % 7),
                start: 0,
                end: 1,
                text: format!(
                    "{} {} {} item {i}",
                    words[i % 16],
                    words[(i / 16) % 16],
                    words[(i * 7) % 16]
                ),
            })
            .collect()
    }

    #[test]
    fn hnsw_agrees_with_exact_search_and_is_reloaded_from_cache() {
        let chunks = corpus(600);
        let embedder: Arc<dyn Embedder> = Arc::new(HashEmbedder::default());
        let exact = DenseIndex::build(&chunks, embedder.clone()).unwrap();
        assert_eq!(exact.ann_state(), None);
        let cache = tempfile::tempdir().unwrap();
        let settings = AnnSettings {
            threshold: 100,
            cache: Some(cache.path().to_path_buf()),
        };
        let ann = DenseIndex::build_with(&chunks, embedder.clone(), &settings).unwrap();
        assert_eq!(ann.ann_state(), Some(false));
        let mut found = 0;
        let queries = [
            "valve pump",
            "motor seal tank",
            "sensor gear",
            "heater pipe gauge",
            "relay fuse",
        ];
        for q in queries {
            // Many chunks tie on score, so a graph hit counts when it scores at least the exact 10th best.
            let tenth = exact.retrieve(q, 10, Scope::ALL).unwrap()[9].score;
            found += ann
                .retrieve(q, 10, Scope::ALL)
                .unwrap()
                .iter()
                .filter(|h| h.score >= tenth - 1e-5)
                .count();
        }
        // Recall@10 of the graph against exact search (ties counted).
        assert!(found as f64 / 50.0 >= 0.9, "recall {found}/50");
        // Scoped queries are exact.
        let scope = ["d3".to_string()];
        assert_eq!(
            ann.retrieve("valve", 5, Scope::only(&scope)).unwrap(),
            exact.retrieve("valve", 5, Scope::only(&scope)).unwrap()
        );
        // Hidden documents never come back from the graph, and k hits still do.
        let hidden_scope = Scope {
            documents: &[],
            hidden: &scope,
        };
        let hits = ann.retrieve("valve", 10, hidden_scope).unwrap();
        assert_eq!(hits.len(), 10);
        assert!(hits.iter().all(|h| chunks[h.chunk].document_id != "d3"));
        // A second build loads the stored graph; other chunks do not.
        let again = DenseIndex::build_with(&chunks, embedder.clone(), &settings).unwrap();
        assert_eq!(again.ann_state(), Some(true));
        assert_eq!(
            again.retrieve("valve pump", 10, Scope::ALL).unwrap(),
            ann.retrieve("valve pump", 10, Scope::ALL).unwrap()
        );
        let other = DenseIndex::build_with(&chunks[..500], embedder.clone(), &settings).unwrap();
        assert_eq!(other.ann_state(), Some(false));
        // A damaged dump is rebuilt, not trusted.
        for entry in std::fs::read_dir(cache.path()).unwrap() {
            let dir = entry.unwrap().path();
            for file in std::fs::read_dir(&dir).unwrap() {
                std::fs::write(file.unwrap().path(), b"garbage").unwrap();
            }
        }
        let rebuilt = DenseIndex::build_with(&chunks, embedder, &settings).unwrap();
        assert_eq!(rebuilt.ann_state(), Some(false));
    }

    #[test]
    fn lane_dot_equals_the_plain_sum() {
        for n in [0, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "n = {n}");
        }
    }

    #[test]
    fn duplicate_texts_do_not_break_the_graph() {
        let mut chunks = corpus(150);
        for c in chunks.iter_mut().take(50) {
            c.text = "identical text".into();
        }
        let settings = AnnSettings {
            threshold: 10,
            cache: None,
        };
        let index =
            DenseIndex::build_with(&chunks, Arc::new(HashEmbedder::default()), &settings).unwrap();
        assert_eq!(
            index
                .retrieve("identical text", 3, Scope::ALL)
                .unwrap()
                .len(),
            3
        );
    }

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
            .retrieve("relief valves", 2, Scope::only(&["b".into()]))
            .unwrap();
        assert!(hits.iter().all(|h| h.chunk != 0));
        let hidden = ["a".to_string()];
        let hits = index
            .retrieve(
                "relief valves",
                2,
                Scope {
                    documents: &[],
                    hidden: &hidden,
                },
            )
            .unwrap();
        assert!(!hits.is_empty() && hits.iter().all(|h| h.chunk != 0));
        assert!(index.retrieve("", 2, Scope::ALL).unwrap().is_empty());
    }
}
