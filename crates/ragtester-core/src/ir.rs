//! Retrieval metrics where relevance is overlap with the case's source spans, not chunk ids, so the metrics
//! stay valid when chunking changes.
//!
//! Each ground-truth span is one relevant item. A retrieved passage gains 1 at the first rank where it covers
//! a span not yet covered, so a span split over two chunks is not counted twice; nDCG's ideal ranking puts one
//! gain at each of the first min(spans, k) ranks.

use crate::answer::RetrievedContext;
use crate::document::SourceSpan;

#[derive(Debug, Clone, PartialEq)]
pub struct RetrievalMetrics {
    pub hit: bool,
    pub reciprocal_rank: f64,
    pub ndcg: f64,
    pub recall: f64,
    pub precision: f64,
}

/// Metrics over a ranked list; None when there is no ground truth (negative cases) or nothing to rank against.
pub fn retrieval_metrics(
    contexts: &[RetrievedContext],
    spans: &[SourceSpan],
    k: usize,
) -> Option<RetrievalMetrics> {
    if spans.is_empty() || k == 0 {
        return None;
    }
    let ranked: Vec<&RetrievedContext> = contexts.iter().take(k).collect();
    let mut covered = vec![false; spans.len()];
    let mut dcg = 0.0;
    let mut first_relevant = None;
    let mut relevant_passages = 0usize;
    for (i, ctx) in ranked.iter().enumerate() {
        let mut gain = false;
        let mut relevant = false;
        for (j, span) in spans.iter().enumerate() {
            if span.overlaps(&ctx.document_id, ctx.start, ctx.end) {
                relevant = true;
                if !covered[j] {
                    covered[j] = true;
                    gain = true;
                }
            }
        }
        if relevant {
            relevant_passages += 1;
            first_relevant.get_or_insert(i);
        }
        if gain {
            dcg += 1.0 / ((i + 2) as f64).log2();
        }
    }
    let ideal: f64 = (0..spans.len().min(k))
        .map(|i| 1.0 / ((i + 2) as f64).log2())
        .sum();
    Some(RetrievalMetrics {
        hit: first_relevant.is_some(),
        reciprocal_rank: first_relevant.map_or(0.0, |i| 1.0 / (i + 1) as f64),
        ndcg: dcg / ideal,
        recall: covered.iter().filter(|c| **c).count() as f64 / spans.len() as f64,
        precision: relevant_passages as f64 / k as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(rank: usize, doc: &str, start: usize, end: usize) -> RetrievedContext {
        RetrievedContext {
            rank,
            score: 1.0,
            chunk_id: format!("c{rank}"),
            document_id: doc.into(),
            start,
            end,
            text: String::new(),
        }
    }

    fn span(doc: &str, start: usize, end: usize) -> SourceSpan {
        SourceSpan {
            document_id: doc.into(),
            start,
            end,
            page: 1,
            hash: None,
        }
    }

    #[test]
    fn single_span_at_rank_two() {
        let m = retrieval_metrics(
            &[ctx(1, "d", 0, 10), ctx(2, "d", 50, 80), ctx(3, "e", 50, 80)],
            &[span("d", 60, 70)],
            3,
        )
        .unwrap();
        assert!(m.hit);
        assert_eq!(m.reciprocal_rank, 0.5);
        // DCG = 1/log2(3); IDCG = 1/log2(2) = 1.
        assert!((m.ndcg - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert_eq!(m.recall, 1.0);
        assert!((m.precision - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn span_split_over_two_chunks_counts_once() {
        let m = retrieval_metrics(
            &[ctx(1, "d", 0, 10), ctx(2, "d", 10, 20)],
            &[span("d", 5, 15)],
            2,
        )
        .unwrap();
        assert_eq!(m.ndcg, 1.0);
        assert_eq!(m.precision, 1.0);
    }

    #[test]
    fn two_spans_one_found_at_rank_one() {
        let m = retrieval_metrics(
            &[ctx(1, "d", 0, 10), ctx(2, "d", 90, 99)],
            &[span("d", 0, 5), span("d", 40, 45)],
            2,
        )
        .unwrap();
        // DCG = 1; IDCG = 1 + 1/log2(3).
        assert!((m.ndcg - 1.0 / (1.0 + 1.0 / 3f64.log2())).abs() < 1e-12);
        assert_eq!(m.recall, 0.5);
    }

    #[test]
    fn miss_and_undefined() {
        let m = retrieval_metrics(&[ctx(1, "d", 0, 10)], &[span("d", 20, 30)], 3).unwrap();
        assert!(!m.hit);
        assert_eq!(m.reciprocal_rank, 0.0);
        assert_eq!(m.ndcg, 0.0);
        assert!(retrieval_metrics(&[ctx(1, "d", 0, 10)], &[], 3).is_none());
    }
}
