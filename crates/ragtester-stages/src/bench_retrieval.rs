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
    /// bm25, dense, hybrid or hybrid-rerank, as named on the command line.
    pub retrievers: &'a [String],
    pub embedder: &'a str,
    pub reranker: &'a str,
    pub k: usize,
    /// Corpora of at least this many documents are searched through HNSW (default: the models' setting).
    pub ann_threshold: Option<usize>,
    /// `chroma:URL`: dense vectors kept in a Chroma server instead of in-process.
    pub vector_store: Option<&'a str>,
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
    /// The Chroma server dense vectors lived in, if not in-process.
    vector_store: Option<&'a str>,
    retrievers: &'a [Row],
    /// How the embedder's tokenizer reads the corpus, per detected language.
    embedders: &'a [ragtester_core::EmbedderProfile],
    /// Warnings with advice: unknown tokens, truncation, a fused retriever below its best part.
    diagnosis: &'a [ragtester_report::Finding],
}

/// Every retriever on the data set, in the order asked; with `json`, the figures also written there.
pub fn retrieval(args: &BenchArgs<'_>, cx: &crate::StageContext<'_>) -> Result<Vec<Row>> {
    let (models, events) = (cx.models(), cx.events());
    if args.retrievers.is_empty() {
        bail!("name at least one --retriever (bm25, dense, hybrid, hybrid-rerank)");
    }
    if args.k == 0 {
        bail!("--k must be at least 1");
    }
    let retrievers = args
        .retrievers
        .iter()
        .map(|r| RetrieverKind::parse(r))
        .collect::<Result<Vec<_>>>()?;
    let started = Instant::now();
    let set = BeirSet::load(args.beir)?;
    events.info(format!(
        "{}: {} documents, {} judged queries (loaded in {:.1} s)",
        args.beir.display(),
        set.corpus.len(),
        set.queries.len(),
        started.elapsed().as_secs_f64()
    ));
    let mut indexes = Indexes {
        chunks: Arc::new(set.corpus.clone()),
        args,
        models,
        bm25: None,
        dense: None,
        ann: false,
        embedder: None,
    };
    let mut rows = Vec::new();
    for kind in &retrievers {
        let (retriever, index_s) = indexes.retriever(*kind)?;
        let t = Instant::now();
        let mut scores: Vec<IrScores> = Vec::with_capacity(set.queries.len());
        for (id, text) in &set.queries {
            let hits = retriever.retrieve(text, args.k, Scope::ALL)?;
            let chunks = &indexes.chunks;
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
    diagnose(&set, &indexes, &rows, events)?;
    Ok(rows)
}

/// The indexes of a benchmark, each built once, with the seconds building it took.
struct Indexes<'a> {
    chunks: Arc<Vec<ragtester_core::Chunk>>,
    args: &'a BenchArgs<'a>,
    models: &'a Models,
    bm25: Option<(Arc<Bm25Index>, f64)>,
    dense: Option<(Arc<dyn Retriever>, f64)>,
    /// Whether dense search went through the HNSW graph.
    ann: bool,
    embedder: Option<Arc<dyn ragtester_core::Embedder>>,
}

impl Indexes<'_> {
    fn keyword(&mut self) -> Result<(Arc<Bm25Index>, f64)> {
        if self.bm25.is_none() {
            let t = Instant::now();
            let index = Arc::new(Bm25Index::build(&self.chunks)?);
            self.bm25 = Some((index, t.elapsed().as_secs_f64()));
        }
        Ok(self.bm25.clone().expect("built above"))
    }

    fn dense(&mut self) -> Result<(Arc<dyn Retriever>, f64)> {
        if self.dense.is_none() {
            // No vector cache: index time is the embedder's real cost.
            let model = self.models.fresh_embedder(self.args.embedder)?;
            self.embedder = Some(model.clone());
            let t = Instant::now();
            let index: Arc<dyn Retriever> = match self.args.vector_store {
                // A collection already filled for this corpus and embedder is reused: its index time is
                // then only the check.
                Some(spec) => Arc::new(ragtester_chroma::ChromaStore::open(
                    spec,
                    &self.chunks,
                    model,
                    &self.models.provider_env().http,
                )?),
                None => {
                    let settings = ragtester_retrieve::AnnSettings {
                        threshold: self
                            .args
                            .ann_threshold
                            .unwrap_or(self.models.ann_settings().threshold),
                        cache: None,
                    };
                    let index = DenseIndex::build_with(&self.chunks, model, &settings)?;
                    self.ann = index.ann_state().is_some();
                    Arc::new(index)
                }
            };
            self.dense = Some((index, t.elapsed().as_secs_f64()));
        }
        Ok(self.dense.clone().expect("built above"))
    }

    /// A retriever of this kind and the seconds its indexes took to build.
    fn retriever(&mut self, kind: RetrieverKind) -> Result<(Arc<dyn Retriever>, f64)> {
        Ok(match kind {
            RetrieverKind::Bm25 => {
                let (b, t) = self.keyword()?;
                (b, t)
            }
            RetrieverKind::Dense => self.dense()?,
            RetrieverKind::Hybrid | RetrieverKind::HybridRerank => {
                let (b, tb) = self.keyword()?;
                let (d, td) = self.dense()?;
                let hybrid: Arc<dyn Retriever> = Arc::new(HybridRetriever {
                    keyword: b,
                    dense: d,
                    fusion: Fusion::default(),
                });
                if kind == RetrieverKind::Hybrid {
                    return Ok((hybrid, tb + td));
                }
                let models = self.models;
                let reranker = models.reranker(self.args.reranker, &|spec| models.get(spec))?;
                let reranked = RerankedRetriever {
                    inner: hybrid,
                    reranker,
                    chunks: self.chunks.clone(),
                    candidates: (self.args.k * 2).max(20),
                };
                (Arc::new(reranked), tb + td)
            }
            RetrieverKind::External => bail!("`external` is not a built-in retriever"),
            RetrieverKind::Oracle | RetrieverKind::ClosedBook | RetrieverKind::FullDoc => bail!(
                "`{}` is a reference point of a run's matrix, not a retriever to benchmark",
                kind.as_str()
            ),
        })
    }
}

/// The embedder's token profile and the findings over the rows, told and kept in the JSON report.
fn diagnose(set: &BeirSet, indexes: &Indexes, rows: &[Row], events: &dyn Events) -> Result<()> {
    let args = indexes.args;
    let profiles = match &indexes.embedder {
        Some(model) => profile_corpus(&indexes.chunks, model.as_ref(), args.embedder)?,
        None => Vec::new(),
    };
    let language = majority_language(set.queries.iter().map(|(_, q)| q.as_str()));
    let mut findings = ragtester_report::embedder_findings(&profiles);
    findings.extend(fusion_findings(rows, set.queries.len(), &language));
    for f in &findings {
        events.warning(format!("{} → {}", f.message, f.advice));
    }
    if let Some(path) = args.json {
        let report = Report {
            dataset: args.beir.display().to_string(),
            documents: set.corpus.len(),
            queries: set.queries.len(),
            k: args.k,
            embedder: args.embedder,
            ann: indexes.ann,
            vector_store: args.vector_store,
            retrievers: rows,
            embedders: &profiles,
            diagnosis: &findings,
        };
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&report)?.as_bytes(),
        )?;
    }
    Ok(())
}

/// The corpus's passages as the embedder's tokenizer reads them, per detected language.
fn profile_corpus(
    chunks: &[ragtester_core::Chunk],
    embedder: &dyn ragtester_core::Embedder,
    spec: &str,
) -> Result<Vec<ragtester_core::EmbedderProfile>> {
    let mut by_language: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for c in chunks {
        by_language
            .entry(ragtester_text::detect_language(&c.text))
            .or_default()
            .push(c.text.as_str());
    }
    let mut out = Vec::new();
    for (language, texts) in by_language {
        let mut profile = ragtester_core::TokenProfile::default();
        for slice in texts.chunks(256) {
            match embedder.token_profile(slice) {
                Some(p) => profile.add(&p?),
                None => return Ok(Vec::new()),
            }
        }
        out.push(ragtester_core::EmbedderProfile {
            embedder: spec.to_string(),
            chunking: "corpus documents".into(),
            language: language.to_string(),
            profile,
        });
    }
    Ok(out)
}

fn majority_language<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    let mut counts: std::collections::HashMap<&str, usize> = Default::default();
    for t in texts {
        *counts
            .entry(ragtester_text::detect_language(t))
            .or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(l, n)| (*n, *l))
        .map_or(String::new(), |(l, _)| l.to_string())
}

/// The hybrid row against its best part (BM25 or dense), on the benchmark's queries.
fn fusion_findings(rows: &[Row], queries: usize, language: &str) -> Vec<ragtester_report::Finding> {
    let figures = |r: &Row| ragtester_report::RetrievalFigures {
        cases: queries,
        ndcg: r.ndcg,
        hit_rate: None,
    };
    let Some(fused) = rows
        .iter()
        .find(|r| r.name == RetrieverKind::Hybrid.as_str())
    else {
        return Vec::new();
    };
    let Some(part) = rows
        .iter()
        .filter(|r| r.name == "bm25" || r.name == "dense")
        .max_by(|a, b| a.ndcg.total_cmp(&b.ndcg))
    else {
        return Vec::new();
    };
    let pair = ragtester_report::FusionPair {
        fused: "hybrid",
        fusion: Fusion::default(),
        part: &part.name,
        part_kind: RetrieverKind::parse(&part.name).unwrap_or(RetrieverKind::Bm25),
        language,
    };
    ragtester_report::fusion_finding(&pair, figures(fused), figures(part))
        .into_iter()
        .collect()
}

/// The rows as the table `ragtester bench retrieval` prints.
pub fn render(rows: &[Row], k: usize) -> String {
    let mut out = format!(
        "{:<15} {:>9} {:>10} {:>8} {:>9} {:>9}\n",
        "retriever",
        format!("nDCG@{k}"),
        format!("recall@{k}"),
        format!("MRR@{k}"),
        "index s",
        "query s"
    );
    for r in rows {
        out.push_str(&format!(
            "{:<15} {:>9.4} {:>10.4} {:>8.4} {:>9.2} {:>9.2}\n",
            r.name, r.ndcg, r.recall, r.mrr, r.index_s, r.query_s
        ));
    }
    out
}
