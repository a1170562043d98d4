//! `ragtester bench index`: how an index scales — a synthetic corpus of up to millions of chunks indexed with
//! BM25 (tantivy, on disk as a run's cache keeps it), exact dense search, an HNSW graph, or a Chroma server,
//! with the build time, each query's latency (P50/P95) and the process's memory. Synthetic text, so any size
//! can be asked for without a download; its words follow Zipf's law like real text's, and each query is the
//! rarest words of one chunk, so whether that chunk comes back is a sanity check on the index, not a quality
//! figure (`bench retrieval` measures quality on real data).

use anyhow::{Result, bail};
use ragtester_core::Chunk;
use ragtester_retrieve::{AnnSettings, Bm25Index, DenseIndex, HashEmbedder, Retriever, Scope};
use serde::Serialize;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub struct IndexBenchArgs<'a> {
    pub chunks: usize,
    /// Words per chunk.
    pub words: usize,
    pub queries: usize,
    pub seed: u64,
    /// `bm25`, `exact`, `hnsw` or `chroma:URL` (dense indexes use the `hash` embedder).
    pub index: &'a str,
    /// Where BM25 keeps its files, as a run's index cache does; in memory without it.
    pub work: Option<&'a Path>,
    pub json: Option<&'a Path>,
}

#[derive(Debug, Serialize)]
pub struct IndexBench {
    pub index: String,
    pub chunks: usize,
    pub words_per_chunk: usize,
    pub queries: usize,
    /// Seconds to write the synthetic corpus (not part of any index's cost).
    pub corpus_s: f64,
    /// Seconds from chunks to an index answering queries (embedding included for dense indexes).
    pub build_s: f64,
    pub query_p50_ms: f64,
    pub query_p95_ms: f64,
    /// Share of queries whose chunk came back in the top 10.
    pub source_at_10: f64,
    /// HNSW only: recall@10 against exact search (ties counted), over the first 100 queries.
    pub recall_vs_exact_at_10: Option<f64>,
    /// This process's resident memory once the corpus was written, and its peak (Linux; None elsewhere).
    /// A Chroma server's memory is its own process's.
    pub corpus_rss_mib: Option<f64>,
    pub peak_rss_mib: Option<f64>,
}

const TOP: usize = 10;
/// Distinct words of the synthetic language.
const VOCABULARY: usize = 50_000;
/// Chunks per synthetic document.
const CHUNKS_PER_DOCUMENT: usize = 100;

pub fn index(args: &IndexBenchArgs<'_>, cx: &crate::StageContext<'_>) -> Result<IndexBench> {
    let events = cx.events();
    if args.chunks == 0 || args.words == 0 {
        bail!("--chunks and --words must be at least 1");
    }
    let started = Instant::now();
    let corpus = SyntheticCorpus::new(args.seed);
    let chunks = corpus.chunks(args.chunks, args.words);
    let queries = corpus.queries(&chunks, args.queries, args.seed);
    let corpus_s = started.elapsed().as_secs_f64();
    let corpus_rss_mib = rss_mib("VmRSS");
    events.info(format!(
        "{} synthetic chunks of {} words written in {corpus_s:.1} s",
        chunks.len(),
        args.words
    ));
    let started = Instant::now();
    let embedder: Arc<dyn ragtester_core::Embedder> = Arc::new(HashEmbedder::default());
    let (retriever, graph): (Arc<dyn Retriever>, Option<Arc<DenseIndex>>) = match args.index {
        "bm25" => match args.work {
            Some(dir) => (Arc::new(Bm25Index::build_cached(&chunks, dir)?), None),
            None => (Arc::new(Bm25Index::build(&chunks)?), None),
        },
        "exact" => (Arc::new(DenseIndex::build(&chunks, embedder)?), None),
        "hnsw" => {
            let ann = AnnSettings {
                threshold: 0,
                cache: None,
            };
            let index = Arc::new(DenseIndex::build_with(&chunks, embedder, &ann)?);
            (index.clone(), Some(index))
        }
        spec if spec.starts_with("chroma:") => (
            Arc::new(ragtester_chroma::ChromaStore::open(
                spec,
                &chunks,
                embedder,
                &cx.models().provider_env().http,
            )?),
            None,
        ),
        other => bail!("unknown index `{other}`: expected bm25, exact, hnsw or chroma:URL"),
    };
    let build_s = started.elapsed().as_secs_f64();
    events.info(format!("{} built in {build_s:.1} s", args.index));
    let mut latencies = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    for (target, query) in &queries {
        let t = Instant::now();
        let hits = retriever.retrieve(query, TOP, Scope::ALL)?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        found += usize::from(hits.iter().any(|h| h.chunk == *target));
    }
    let recall_vs_exact_at_10 = match &graph {
        Some(index) => Some(recall_against_exact(index, &queries)?),
        None => None,
    };
    let bench = IndexBench {
        index: args.index.to_string(),
        chunks: chunks.len(),
        words_per_chunk: args.words,
        queries: queries.len(),
        corpus_s,
        build_s,
        query_p50_ms: percentile(&mut latencies, 0.50),
        query_p95_ms: percentile(&mut latencies, 0.95),
        source_at_10: found as f64 / queries.len().max(1) as f64,
        recall_vs_exact_at_10,
        corpus_rss_mib,
        peak_rss_mib: rss_mib("VmHWM"),
    };
    if let Some(path) = args.json {
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&bench)?.as_bytes(),
        )?;
    }
    Ok(bench)
}

/// Recall@10 of the HNSW graph against exact search over the first 100 queries. Many chunks tie on score
/// (those sharing one query word), so a graph hit counts when it scores at least exact search's 10th best.
fn recall_against_exact(index: &DenseIndex, queries: &[(usize, String)]) -> Result<f64> {
    let (mut found, mut total) = (0usize, 0usize);
    for (_, query) in queries.iter().take(100) {
        let exact = index.retrieve_exact(query, TOP)?;
        let Some(last) = exact.last() else {
            continue;
        };
        let approximate = index.retrieve(query, TOP, Scope::ALL)?;
        total += exact.len();
        found += approximate
            .iter()
            .filter(|a| a.score >= last.score - 1e-6)
            .count()
            .min(exact.len());
    }
    Ok(found as f64 / total.max(1) as f64)
}

/// The value at quantile `q` (nearest rank); 0 for no values.
fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

/// A line of /proc/self/status in MiB (`VmRSS` now, `VmHWM` the peak).
fn rss_mib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Pronounceable made-up words drawn by Zipf's law (rank r with weight 1/r), so term frequencies, posting
/// lists and vector sparsity look like natural text's rather than uniform noise's.
struct SyntheticCorpus {
    words: Vec<String>,
    /// Cumulative weights of the ranks, ending at 1.
    cumulative: Vec<f64>,
    seed: u64,
}

impl SyntheticCorpus {
    fn new(seed: u64) -> Self {
        const CONSONANTS: &[u8] = b"bcdfghjklmnprstvz";
        const VOWELS: &[u8] = b"aeiou";
        let syllables: Vec<[u8; 2]> = CONSONANTS
            .iter()
            .flat_map(|c| VOWELS.iter().map(move |v| [*c, *v]))
            .collect();
        let n = syllables.len();
        // Three syllables each (85³ words available): every word distinct and of one length.
        let words = (0..VOCABULARY)
            .map(|i| {
                let digits = [i / (n * n), (i / n) % n, i % n];
                digits
                    .iter()
                    .flat_map(|d| syllables[*d].iter().map(|b| char::from(*b)))
                    .collect()
            })
            .collect();
        let mut cumulative: Vec<f64> = (1..=VOCABULARY)
            .scan(0.0, |sum, rank| {
                *sum += 1.0 / rank as f64;
                Some(*sum)
            })
            .collect();
        let total = *cumulative.last().expect("a vocabulary");
        cumulative.iter_mut().for_each(|c| *c /= total);
        Self {
            words,
            cumulative,
            seed,
        }
    }

    fn rank(&self, rng: &mut fastrand::Rng) -> usize {
        let u = rng.f64();
        self.cumulative
            .partition_point(|c| *c < u)
            .min(VOCABULARY - 1)
    }

    fn chunks(&self, count: usize, words: usize) -> Vec<Chunk> {
        let mut rng = fastrand::Rng::with_seed(self.seed);
        (0..count)
            .map(|i| {
                let mut text = String::with_capacity(words * 7);
                for w in 0..words {
                    if w > 0 {
                        text.push(' ');
                    }
                    text.push_str(&self.words[self.rank(&mut rng)]);
                }
                Chunk {
                    id: format!("c{i}"),
                    document_id: format!("d{}", i / CHUNKS_PER_DOCUMENT),
                    start: 0,
                    end: text.chars().count(),
                    text,
                }
            })
            .collect()
    }

    /// Each query: a random chunk's four rarest words, and that chunk.
    fn queries(&self, chunks: &[Chunk], count: usize, seed: u64) -> Vec<(usize, String)> {
        let rank_of: std::collections::HashMap<&str, usize> = self
            .words
            .iter()
            .enumerate()
            .map(|(r, w)| (w.as_str(), r))
            .collect();
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x9e37_79b9);
        (0..count)
            .map(|_| {
                let target = rng.usize(..chunks.len());
                let mut words: Vec<&str> = chunks[target].text.split(' ').collect();
                words.sort_by_key(|w| std::cmp::Reverse(rank_of[w]));
                words.dedup();
                (target, words[..words.len().min(4)].join(" "))
            })
            .collect()
    }
}

/// The figures as the line `ragtester bench index` prints.
pub fn render(figures: &IndexBench) -> String {
    let mib = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.0} MiB"));
    format!(
        "{}: {} chunks, build {:.1} s, query P50 {:.2} ms, P95 {:.2} ms, source in top 10 {:.3}{}, RSS {} after the corpus, peak {}\n",
        figures.index,
        figures.chunks,
        figures.build_s,
        figures.query_p50_ms,
        figures.query_p95_ms,
        figures.source_at_10,
        figures
            .recall_vs_exact_at_10
            .map_or(String::new(), |r| format!(", recall@10 vs exact {r:.3}")),
        mib(figures.corpus_rss_mib),
        mib(figures.peak_rss_mib),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_words_follow_zipf_and_queries_find_their_chunk() {
        let corpus = SyntheticCorpus::new(7);
        let chunks = corpus.chunks(2_000, 40);
        assert_eq!(chunks, SyntheticCorpus::new(7).chunks(2_000, 40), "seeded");
        let mut counts: std::collections::HashMap<&str, usize> = Default::default();
        for c in &chunks {
            for w in c.text.split(' ') {
                *counts.entry(w).or_default() += 1;
            }
        }
        // Rank 1 has twice rank 2's weight and ten times rank 10's.
        let (first, second, tenth) = (
            counts[corpus.words[0].as_str()] as f64,
            counts[corpus.words[1].as_str()] as f64,
            counts[corpus.words[9].as_str()] as f64,
        );
        assert!((1.7..2.3).contains(&(first / second)), "{first} / {second}");
        assert!((7.0..13.0).contains(&(first / tenth)), "{first} / {tenth}");
        let queries = corpus.queries(&chunks, 50, 7);
        let index = Bm25Index::build(&chunks).unwrap();
        let found = queries
            .iter()
            .filter(|(target, q)| {
                index
                    .retrieve(q, TOP, Scope::ALL)
                    .unwrap()
                    .iter()
                    .any(|h| h.chunk == *target)
            })
            .count();
        assert!(found >= 45, "{found} of 50 queries found their chunk");
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&mut v, 0.5), 10.0);
        assert_eq!(percentile(&mut v, 0.95), 19.0);
        assert_eq!(percentile(&mut [], 0.5), 0.0);
    }
}
