//! Reranking: a second, finer scoring of the fused candidates before the top-k cut (the spec's group D).

use crate::dense::sort_hits;
use crate::{Hit, Retriever, Scope};
use anyhow::Result;
use ragtester_core::Chunk;
pub use ragtester_core::Reranker;
use ragtester_text::terms;
use std::collections::HashSet;
use std::sync::Arc;

/// The offline reranker: the share of the query's distinct terms a passage contains, plus a bonus for
/// adjacent query-term pairs (phrases) found in order. A heuristic stand-in for a cross-encoder, labelled so.
pub struct LexicalReranker;

impl Reranker for LexicalReranker {
    fn id(&self) -> String {
        "lexical-coverage-v1".into()
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>> {
        let q = terms(query);
        let unique: HashSet<&String> = q.iter().collect();
        let pairs: Vec<(&String, &String)> = q.windows(2).map(|w| (&w[0], &w[1])).collect();
        Ok(passages
            .iter()
            .map(|p| {
                let pt = terms(p);
                let set: HashSet<&String> = pt.iter().collect();
                if unique.is_empty() {
                    return 0.0;
                }
                let coverage =
                    unique.iter().filter(|t| set.contains(*t)).count() as f64 / unique.len() as f64;
                let adjacent: HashSet<(&String, &String)> =
                    pt.windows(2).map(|w| (&w[0], &w[1])).collect();
                let phrase = if pairs.is_empty() {
                    0.0
                } else {
                    pairs.iter().filter(|p| adjacent.contains(p)).count() as f64
                        / pairs.len() as f64
                };
                coverage + 0.5 * phrase
            })
            .collect())
    }
}

pub struct RerankedRetriever {
    pub inner: Arc<dyn Retriever>,
    pub reranker: Arc<dyn Reranker>,
    pub chunks: Arc<Vec<Chunk>>,
    pub candidates: usize,
}

impl Retriever for RerankedRetriever {
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>> {
        let candidates = self.inner.retrieve(query, self.candidates.max(k), scope)?;
        let texts: Vec<&str> = candidates
            .iter()
            .map(|h| self.chunks[h.chunk].text.as_str())
            .collect();
        let scores = self.reranker.score(query, &texts)?;
        let mut hits: Vec<Hit> = candidates
            .iter()
            .zip(scores)
            .map(|(h, s)| Hit {
                chunk: h.chunk,
                score: s,
            })
            .collect();
        sort_hits(&mut hits);
        hits.truncate(k);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_and_phrase_by_hand() {
        let s = LexicalReranker
            .score(
                "relief valve pressure",
                &["the relief valve", "pressure relief valve", "nothing"],
            )
            .unwrap();
        // Terms: relief, valve, pressure; pairs: (relief,valve), (valve,pressure).
        assert!((s[0] - (2.0 / 3.0 + 0.5 * 0.5)).abs() < 1e-12);
        assert!((s[1] - (1.0 + 0.5 * 0.5)).abs() < 1e-12);
        assert_eq!(s[2], 0.0);
    }
}
