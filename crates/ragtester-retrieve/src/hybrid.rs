//! Hybrid retrieval: the keyword and dense lists fused, by weights after min–max normalisation (the spec's
//! 0.7 dense / 0.3 keyword) or by reciprocal rank.

use crate::dense::sort_hits;
use crate::{Hit, Retriever, Scope};
use anyhow::Result;
use ragtester_core::Fusion;
use std::collections::HashMap;
use std::sync::Arc;

pub struct HybridRetriever {
    pub keyword: Arc<dyn Retriever>,
    pub dense: Arc<dyn Retriever>,
    pub fusion: Fusion,
}

impl Retriever for HybridRetriever {
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>> {
        // Fuse over a deeper pool than k, so a chunk ranked 6th by one list and 2nd by the other can win.
        let pool = (k * 4).max(20);
        let keyword = self.keyword.retrieve(query, pool, scope)?;
        let dense = self.dense.retrieve(query, pool, scope)?;
        let mut fused = fuse(&keyword, &dense, self.fusion);
        fused.truncate(k);
        Ok(fused)
    }
}

/// Fuse two ranked lists (each best first).
pub fn fuse(keyword: &[Hit], dense: &[Hit], fusion: Fusion) -> Vec<Hit> {
    let mut scores: HashMap<usize, f64> = HashMap::new();
    match fusion {
        Fusion::Weighted {
            dense: wd,
            keyword: wk,
        } => {
            for (list, weight) in [(keyword, wk), (dense, wd)] {
                for (chunk, normalised) in min_max(list) {
                    *scores.entry(chunk).or_default() += weight * normalised;
                }
            }
        }
        Fusion::Rrf { k } => {
            for list in [keyword, dense] {
                for (rank, hit) in list.iter().enumerate() {
                    *scores.entry(hit.chunk).or_default() += 1.0 / (k + (rank + 1) as f64);
                }
            }
        }
    }
    let mut hits: Vec<Hit> = scores
        .into_iter()
        .map(|(chunk, score)| Hit { chunk, score })
        .collect();
    sort_hits(&mut hits);
    hits
}

/// Scores mapped to [0, 1]; a list whose scores are all equal maps to 1 (every entry is its list's best).
fn min_max(list: &[Hit]) -> Vec<(usize, f64)> {
    let max = list
        .iter()
        .map(|h| h.score)
        .fold(f64::NEG_INFINITY, f64::max);
    let min = list.iter().map(|h| h.score).fold(f64::INFINITY, f64::min);
    list.iter()
        .map(|h| {
            let n = if max > min {
                (h.score - min) / (max - min)
            } else {
                1.0
            };
            (h.chunk, n)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(v: &[(usize, f64)]) -> Vec<Hit> {
        v.iter()
            .map(|(c, s)| Hit {
                chunk: *c,
                score: *s,
            })
            .collect()
    }

    #[test]
    fn weighted_fusion_by_hand() {
        // keyword: 1→10 (1.0), 2→5 (0.0); dense: 2→0.9 (1.0), 3→0.5 (0.0).
        let fused = fuse(
            &hits(&[(1, 10.0), (2, 5.0)]),
            &hits(&[(2, 0.9), (3, 0.5)]),
            Fusion::Weighted {
                dense: 0.7,
                keyword: 0.3,
            },
        );
        // 2: 0.3·0 + 0.7·1 = 0.7; 1: 0.3·1 = 0.3; 3: 0.
        assert_eq!(
            fused.iter().map(|h| h.chunk).collect::<Vec<_>>(),
            vec![2, 1, 3]
        );
        assert!((fused[0].score - 0.7).abs() < 1e-12);
        assert!((fused[1].score - 0.3).abs() < 1e-12);
    }

    #[test]
    fn rrf_by_hand() {
        let fused = fuse(
            &hits(&[(1, 3.0), (2, 2.0)]),
            &hits(&[(2, 0.9), (1, 0.1)]),
            Fusion::Rrf { k: 60.0 },
        );
        // Both get 1/61 + 1/62; tie broken by chunk order.
        assert_eq!(fused[0].chunk, 1);
        assert!((fused[0].score - (1.0 / 61.0 + 1.0 / 62.0)).abs() < 1e-12);
    }

    #[test]
    fn single_entry_lists_normalise_to_one() {
        let fused = fuse(&hits(&[(1, 3.0)]), &[], Fusion::default());
        assert!((fused[0].score - 0.3).abs() < 1e-12);
    }
}
