//! `ragtester bench retrieval`: the built-in retrievers on a public benchmark in the BEIR layout — quality
//! (nDCG@k, recall@k, MRR@k) and the time to index and to answer every query — so retrieval choices are made
//! on measured numbers, and so ragtester's retrieval can be compared with other tools on the same data.

use crate::events::Events;
use crate::models::Models;
use anyhow::{Result, bail};
use ragtester_core::{Fusion, RetrieverKind};
use ragtester_retrieve::beir::{BeirSet, IrScores, mean_scores, score_ranking};
use ragtester_retrieve::{
    Bm25Index, DenseIndex, HybridRetriever, RerankedRetriever, Retriever, Scope,
};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub struct BenchArgs<'a> {
    pub beir: &'a Path,
    pub retrievers: &'a [RetrieverKind],
    pub embedder: &'a str,
    pub reranker: &'a str,
    pub k: usize,
    /// Corpora of at least this many documents are searched through HNSW.
    pub ann_threshold: usize,
    pub json: Option<&'a Path>,
}

/// One retriever's figures.
#[derive(Serialize)]
pub struct Row {
    pub name: String,
    #[serde(rename = "ndcg@10")]
    pub ndcg: f64,
    #[serde(rename = "recall@10")]
    pub recall: f64,
    #[serde(rename = "mrr@10")]
    pub mrr: f64,
    /// Seconds to build the index (for hybrid: what it adds beyond its parts, which are shared).
    pub index_s: f64,
    /// Seconds to answer every query, one after another.
    pub query_s: f64,
}

#[derive(Serialize)]
struct Report<'a> {
    dataset: String,
    documents: usize,
    queries: usize,
    k: usize,
    embedder: &'a str,
    /// Whether dense search went through an HNSW graph.
    ann: bool,
    retrievers: &'a [Row],
}

/// Every retriever on the data set, in the order asked; with `json`, the figures also written there.
pub fn retrieval(args: &BenchArgs<'_>, models: &Models, events: &dyn Events) -> Result<Vec<Row>> {
    if args.retrievers.is_empty() {
        bail!("name at least one --retriever (bm25, dense, hybrid, hybrid-rerank)");
    }
    if args.k == 0 {
        bail!("--k must be at least 1");
    }
    let started = Instant::now();
    let set = BeirSet::load(args.beir)?;
    events.info(format!(
        "{}: {} documents, {} judged queries (loaded in {:.1} s)",
        args.beir.display(),
        set.corpus.len(),
        set.queries.len(),
        started.elapsed().as_secs_f64()
    ));
    let chunks = Arc::new(set.corpus.clone());
    let mut bm25: Option<(Arc<Bm25Index>, f64)> = None;
    let mut dense: Option<(Arc<DenseIndex>, f64)> = None;
    let mut rows = Vec::new();
    for kind in args.retrievers {
        let needs_dense = kind.uses_dense();
        if bm25.is_none() && *kind != RetrieverKind::Dense {
            let t = Instant::now();
            let index = Arc::new(Bm25Index::build(&chunks)?);
            bm25 = Some((index, t.elapsed().as_secs_f64()));
        }
        if dense.is_none() && needs_dense {
            // No vector cache: index time is the embedder's real cost.
            let embedder = models.fresh_embedder(args.embedder)?;
            let t = Instant::now();
            let ann = ragtester_retrieve::AnnSettings {
                threshold: args.ann_threshold,
                cache: None,
            };
            let index = Arc::new(DenseIndex::build_with(&chunks, embedder, &ann)?);
            dense = Some((index, t.elapsed().as_secs_f64()));
        }
        let (retriever, index_s): (Arc<dyn Retriever>, f64) = match kind {
            RetrieverKind::Bm25 => {
                let (b, t) = bm25.clone().expect("built above");
                (b, t)
            }
            RetrieverKind::Dense => {
                let (d, t) = dense.clone().expect("built above");
                (d, t)
            }
            RetrieverKind::Hybrid | RetrieverKind::HybridRerank => {
                let (b, tb) = bm25.clone().expect("built above");
                let (d, td) = dense.clone().expect("built above");
                let hybrid: Arc<dyn Retriever> = Arc::new(HybridRetriever {
                    keyword: b,
                    dense: d,
                    fusion: Fusion::default(),
                });
                if *kind == RetrieverKind::Hybrid {
                    (hybrid, tb + td)
                } else {
                    let reranker = models.reranker(args.reranker, &|spec| models.get(spec))?;
                    (
                        Arc::new(RerankedRetriever {
                            inner: hybrid,
                            reranker,
                            chunks: chunks.clone(),
                            candidates: (args.k * 2).max(20),
                        }),
                        tb + td,
                    )
                }
            }
            RetrieverKind::External => bail!("`external` is not a built-in retriever"),
        };
        let t = Instant::now();
        let mut scores: Vec<IrScores> = Vec::with_capacity(set.queries.len());
        for (id, text) in &set.queries {
            let hits = retriever.retrieve(text, args.k, Scope::ALL)?;
            let ranked: Vec<&str> = hits
                .iter()
                .map(|h| chunks[h.chunk].document_id.as_str())
                .collect();
            scores.push(score_ranking(&ranked, &set.qrels[id], args.k));
        }
        let query_s = t.elapsed().as_secs_f64();
        let mean = mean_scores(&scores);
        rows.push(Row {
            name: kind.as_str().to_string(),
            ndcg: mean.ndcg,
            recall: mean.recall,
            mrr: mean.mrr,
            index_s,
            query_s,
        });
    }
    if let Some(path) = args.json {
        let report = Report {
            dataset: args.beir.display().to_string(),
            documents: set.corpus.len(),
            queries: set.queries.len(),
            k: args.k,
            embedder: args.embedder,
            ann: dense.as_ref().is_some_and(|(d, _)| d.ann_state().is_some()),
            retrievers: &rows,
        };
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&report)?.as_bytes(),
        )?;
    }
    Ok(rows)
}
