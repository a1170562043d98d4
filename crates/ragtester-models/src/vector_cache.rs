//! A persistent embedding cache: vectors keyed by (embedder id, query-or-passage, text hash), so a second run,
//! or another configuration with the same embedder, embeds nothing it has embedded before — whatever the
//! chunking, since identical chunk texts share a key.
//!
//! One append-only file per embedder: a header naming the embedder and dimension, then fixed-size records
//! (32-byte key, then the vector as little-endian f32). A run killed mid-write leaves at most one partial
//! record, which is cut off on the next open; a header for another embedder or dimension means the file is
//! rebuilt with a warning, never read.

use anyhow::{Context, Result, bail};
use ragtester_core::{EmbedKind, Embedder};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 8] = b"RTVEC01\n";
type Key = [u8; 32];

pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    id: String,
    dimension: usize,
    state: Mutex<State>,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

struct State {
    vectors: HashMap<Key, Vec<f32>>,
    file: BufWriter<File>,
}

impl CachedEmbedder {
    /// Open (or create) the cache of `inner` under `dir`.
    pub fn open(inner: Arc<dyn Embedder>, dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create embedding cache {}", dir.display()))?;
        let id = inner.id();
        let dimension = inner.dimension();
        let path = cache_file(dir, &id);
        let vectors = match read_cache(&path, &id, dimension) {
            Ok(Some(v)) => v,
            outcome => {
                // A first use starts a cache quietly; an unreadable or foreign one is replaced, and said.
                if let Err(e) = outcome {
                    tracing::warn!("embedding cache {} rebuilt: {e:#}", path.display());
                }
                let mut f = File::create(&path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                f.write_all(&header(&id, dimension))?;
                HashMap::new()
            }
        };
        let file = OpenOptions::new()
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Self {
            inner,
            id,
            dimension,
            state: Mutex::new(State {
                vectors,
                file: BufWriter::new(file),
            }),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        })
    }

    /// (texts served from the cache, texts embedded) since opening.
    pub fn stats(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }
}

impl Embedder for CachedEmbedder {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn token_profile(&self, texts: &[&str]) -> Option<Result<ragtester_core::TokenProfile>> {
        self.inner.token_profile(texts)
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        let keys: Vec<Key> = texts.iter().map(|t| key(kind, t)).collect();
        let mut out: Vec<Option<Vec<f32>>> = {
            let state = self.state.lock().expect("embedding cache lock");
            keys.iter().map(|k| state.vectors.get(k).cloned()).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| out[i].is_none()).collect();
        self.hits
            .fetch_add(texts.len() - missing.len(), Ordering::Relaxed);
        self.misses.fetch_add(missing.len(), Ordering::Relaxed);
        if !missing.is_empty() {
            let batch: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            // The model runs outside the lock: other callers keep reading the cache meanwhile.
            let fresh = self.inner.embed(&batch, kind)?;
            if fresh.len() != batch.len() || fresh.iter().any(|v| v.len() != self.dimension) {
                bail!(
                    "embedder {} returned {} vectors of the wrong count or dimension",
                    self.id,
                    fresh.len()
                );
            }
            let mut state = self.state.lock().expect("embedding cache lock");
            for (&i, v) in missing.iter().zip(fresh) {
                if !state.vectors.contains_key(&keys[i]) {
                    state.file.write_all(&keys[i])?;
                    for x in &v {
                        state.file.write_all(&x.to_le_bytes())?;
                    }
                    state.vectors.insert(keys[i], v.clone());
                }
                out[i] = Some(v);
            }
            state
                .file
                .flush()
                .context("cannot write the embedding cache")?;
        }
        Ok(out.into_iter().map(|v| v.unwrap_or_default()).collect())
    }
}

fn key(kind: EmbedKind, text: &str) -> Key {
    let mut h = Sha256::new();
    h.update(match kind {
        EmbedKind::Query => b"q",
        EmbedKind::Passage => b"p",
    });
    h.update(text.as_bytes());
    h.finalize().into()
}

fn cache_file(dir: &Path, id: &str) -> PathBuf {
    let digest = Sha256::digest(id.as_bytes());
    dir.join(format!("{}.vec", hex::encode(&digest[..10])))
}

fn header(id: &str, dimension: usize) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend((dimension as u32).to_le_bytes());
    h.extend((id.len() as u32).to_le_bytes());
    h.extend(id.as_bytes());
    h
}

/// The cached vectors, after cutting off a partial last record; None when there is no cache yet. Errors
/// mean "rebuild".
fn read_cache(path: &Path, id: &str, dimension: usize) -> Result<Option<HashMap<Key, Vec<f32>>>> {
    let mut bytes = Vec::new();
    match File::open(path) {
        Ok(mut f) => f.read_to_end(&mut bytes)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let expected = header(id, dimension);
    if !bytes.starts_with(MAGIC) {
        bail!("not an embedding cache file");
    }
    if !bytes.starts_with(&expected) {
        let cached_dim = bytes
            .get(8..12)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
        bail!(
            "written for another embedder or dimension (cached {cached_dim:?}, now {dimension} for {id})"
        );
    }
    let record = 32 + 4 * dimension;
    let body = &bytes[expected.len()..];
    let whole = body.len() / record * record;
    if whole < body.len() {
        tracing::warn!(
            "embedding cache {}: dropped a partial record (an interrupted write)",
            path.display()
        );
        OpenOptions::new()
            .write(true)
            .open(path)?
            .set_len((expected.len() + whole) as u64)?;
    }
    Ok(Some(
        body[..whole]
            .chunks_exact(record)
            .map(|r| {
                let key: Key = r[..32].try_into().expect("32-byte key");
                let v = r[32..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .collect();
                (key, v)
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_retrieve::HashEmbedder;

    /// Counts how many texts reach the model.
    struct Counting(HashEmbedder, AtomicUsize, usize);
    impl Embedder for Counting {
        fn id(&self) -> String {
            format!("counting-{}", self.2)
        }
        fn dimension(&self) -> usize {
            self.2
        }
        fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
            self.1.fetch_add(texts.len(), Ordering::Relaxed);
            Ok(self
                .0
                .embed(texts, kind)?
                .into_iter()
                .map(|mut v| {
                    v.truncate(self.2);
                    v
                })
                .collect())
        }
    }

    fn counting(dimension: usize) -> Arc<Counting> {
        Arc::new(Counting(
            HashEmbedder::default(),
            AtomicUsize::new(0),
            dimension,
        ))
    }

    #[test]
    fn second_open_embeds_nothing_twice_and_keeps_order() {
        let dir = tempfile::tempdir().unwrap();
        let model = counting(16);
        let cache = CachedEmbedder::open(model.clone(), dir.path()).unwrap();
        let first = cache
            .embed(&["valve", "pump", "valve"], EmbedKind::Passage)
            .unwrap();
        assert_eq!(first[0], first[2]);
        drop(cache);
        let reopened = CachedEmbedder::open(model.clone(), dir.path()).unwrap();
        let calls_before = model.1.load(Ordering::Relaxed);
        let again = reopened
            .embed(&["pump", "valve", "motor"], EmbedKind::Passage)
            .unwrap();
        assert_eq!(again[0], first[1]);
        assert_eq!(again[1], first[0]);
        // Only "motor" reached the model.
        assert_eq!(model.1.load(Ordering::Relaxed) - calls_before, 1);
        assert_eq!(reopened.stats(), (2, 1));
        // Queries and passages are cached apart (prompted models embed them differently).
        reopened.embed(&["pump"], EmbedKind::Query).unwrap();
        assert_eq!(reopened.stats(), (2, 2));
    }

    #[test]
    fn partial_records_are_cut_and_other_dimensions_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let model = counting(8);
        let cache = CachedEmbedder::open(model.clone(), dir.path()).unwrap();
        cache.embed(&["a", "b"], EmbedKind::Passage).unwrap();
        drop(cache);
        let file = cache_file(dir.path(), &model.id());
        let len = std::fs::metadata(&file).unwrap().len();
        // A write cut short: half of a third record.
        let mut f = OpenOptions::new().append(true).open(&file).unwrap();
        f.write_all(&[7u8; 20]).unwrap();
        drop(f);
        let cache = CachedEmbedder::open(model.clone(), dir.path()).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().len(), len);
        cache.embed(&["a", "b"], EmbedKind::Passage).unwrap();
        assert_eq!(cache.stats(), (2, 0));
        drop(cache);
        // Same id, another dimension: the file is not trusted.
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[8..12].copy_from_slice(&4u32.to_le_bytes());
        std::fs::write(&file, bytes).unwrap();
        let cache = CachedEmbedder::open(model, dir.path()).unwrap();
        cache.embed(&["a"], EmbedKind::Passage).unwrap();
        assert_eq!(cache.stats(), (0, 1));
    }
}
