//! Approximate nearest-neighbour search for large corpora: an HNSW graph (hnsw_rs) over the same normalised
//! vectors the exact index holds, persisted under the index cache so a second run loads it instead of
//! rebuilding (building is the expensive part: seconds per ten thousand vectors).
//!
//! The cache key covers the embedder id (with its weights fingerprint), the dimension and every chunk's text
//! in order, so changed documents, chunking or model never load a stale graph.

use anyhow::{Context, Result, bail};
use hnsw_rs::anndists::dist::distances::Distance;
use hnsw_rs::api::AnnT;
use hnsw_rs::hnsw::Hnsw;
use hnsw_rs::hnswio::HnswIo;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Links per node: hnsw_rs exits the process above 256, so this stays a constant well inside.
const MAX_CONNECTIONS: usize = 24;
const EF_CONSTRUCTION: usize = 200;
const MAX_LAYERS: usize = 16;
const BASENAME: &str = "index";

/// `1 - dot` for normalised vectors, floored at 0. The crate's own dot distance asserts `dot <= 1`, which
/// rounding breaks for duplicate texts (identical vectors): that would panic mid-build.
#[derive(Default, Clone, Copy)]
pub struct DotDistance;

impl Distance<f32> for DotDistance {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        (1.0 - a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>()).max(0.0)
    }
}

pub struct AnnIndex {
    graph: Hnsw<'static, f32, DotDistance>,
    /// Whether the graph came from the cache rather than being built.
    pub loaded: bool,
}

impl AnnIndex {
    /// Load the graph for these vectors from `cache`, or build it (and store it there).
    pub fn build_or_load(
        vectors: &[f32],
        dimension: usize,
        key: &str,
        cache: Option<&Path>,
    ) -> Result<Self> {
        let count = vectors.len() / dimension.max(1);
        if let Some(dir) = cache.map(|c| c.join(key))
            && dir.join(format!("{BASENAME}.hnsw.graph")).is_file()
        {
            match load(&dir, count) {
                Ok(graph) => {
                    return Ok(Self {
                        graph,
                        loaded: true,
                    });
                }
                Err(e) => tracing::warn!("HNSW index {} rebuilt: {e:#}", dir.display()),
            }
        }
        let graph = Hnsw::new(
            MAX_CONNECTIONS,
            count.max(1),
            MAX_LAYERS,
            EF_CONSTRUCTION,
            DotDistance,
        );
        let items: Vec<(&[f32], usize)> = vectors.chunks_exact(dimension).zip(0..).collect();
        graph.parallel_insert_slice(&items);
        if let Some(cache) = cache
            && let Err(e) = store(&graph, cache, key)
        {
            // The index works without its copy on disk; the next run builds again.
            tracing::warn!(
                "cannot store the HNSW index under {}: {e:#}",
                cache.display()
            );
        }
        Ok(Self {
            graph,
            loaded: false,
        })
    }

    /// The `k` nearest rows by cosine: (row, similarity), best first.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        let ef = (k * 4).max(64);
        self.graph
            .search(query, k, ef)
            .into_iter()
            .map(|n| (n.d_id, 1.0 - n.distance))
            .collect()
    }
}

/// The cache key of a vector set: embedder, dimension and every text in order.
pub fn index_key<'a>(
    embedder: &str,
    dimension: usize,
    texts: impl Iterator<Item = &'a str>,
) -> String {
    let mut h = Sha256::new();
    h.update(embedder.as_bytes());
    h.update((dimension as u64).to_le_bytes());
    for t in texts {
        h.update(Sha256::digest(t.as_bytes()));
    }
    format!("hnsw-{}", hex::encode(&h.finalize()[..12]))
}

/// The key already covers embedder and dimension, so only a damaged or foreign dump can disagree in size.
fn load(dir: &Path, count: usize) -> Result<Hnsw<'static, f32, DotDistance>> {
    // The loaded graph borrows its loader for its whole life; a loader is a few paths and options, so one is
    // kept per loaded index rather than fighting the borrow.
    let graph = std::panic::catch_unwind(|| {
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
        io.load_hnsw::<f32, DotDistance>()
    })
    .map_err(|_| anyhow::anyhow!("the index files are corrupt"))?
    .context("cannot read the index files")?;
    if graph.get_nb_point() != count {
        bail!(
            "it holds {} vectors, the corpus has {count}",
            graph.get_nb_point()
        );
    }
    Ok(graph)
}

/// Dump into a fresh folder, then move it into place: a reader never sees half a dump.
fn store(graph: &Hnsw<'static, f32, DotDistance>, cache: &Path, key: &str) -> Result<()> {
    let staging: PathBuf = cache.join(format!("{key}.tmp-{}", std::process::id()));
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("cannot create {}", staging.display()))?;
    // hnsw_rs panics when it cannot open its output files: keep that a failed store, not a crash.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        graph.file_dump(&staging, BASENAME)
    }))
    .map_err(|_| anyhow::anyhow!("the dump failed"))??;
    let target = cache.join(key);
    if target.exists() {
        std::fs::remove_dir_all(&target)?;
    }
    std::fs::rename(&staging, &target)?;
    Ok(())
}
