//! Local BERT-family models on the CPU through candle: sentence embedders (MiniLM, bge, e5 — each with its
//! pooling, normalisation and prompts) and a cross-encoder reranker.

mod cross_encoder;
mod encoder;
mod folder;
mod forward;

pub use cross_encoder::CrossEncoder;
pub use folder::{ModelFolder, Pooling, Prompts};

use anyhow::Result;
use candle_core::{D, DType, IndexOp, Tensor};
use encoder::Encoder;
use ragtester_core::{EmbedKind, Embedder, TokenProfile};
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokenizers::Encoding;

/// Texts per forward pass. Texts are sorted by length first, so each batch pads little.
const BATCH: usize = 32;

pub struct BertEmbedder {
    encoder: Encoder,
    folder: ModelFolder,
    dimension: usize,
    warned_truncation: AtomicBool,
    /// Batches embedded at once (`RAGTESTER_EMBED_WORKERS`, as the front end read it); None: one per core.
    workers: Option<usize>,
}

impl BertEmbedder {
    pub fn load(dir: &Path) -> Result<Self> {
        let folder = ModelFolder::open(dir)?;
        let (encoder, _) = Encoder::load(&folder)?;
        let dimension = encoder.hidden_size;
        Ok(Self {
            encoder,
            folder,
            dimension,
            warned_truncation: AtomicBool::new(false),
            workers: None,
        })
    }

    /// The same model embedding `workers` batches at once (None: one per core).
    pub fn with_workers(mut self, workers: Option<usize>) -> Self {
        self.workers = workers.filter(|&n| n > 0);
        self
    }

    pub fn pooling(&self) -> Pooling {
        self.folder.pooling
    }

    pub fn prompts(&self) -> &Prompts {
        &self.folder.prompts
    }

    /// How many tokens the model reads for `text` exactly as given (no prompt added; special tokens
    /// counted; cut at the window).
    pub fn token_count(&self, text: &str) -> Result<usize> {
        let encoding = self
            .encoder
            .tokenizer
            .encode(text, true)
            .map_err(|e| anyhow::anyhow!("cannot tokenise for {}: {e}", self.id()))?;
        Ok(encoding.len())
    }

    /// The most tokens one text may have; longer texts are cut (and a warning says so once).
    pub fn max_tokens(&self) -> usize {
        self.encoder.max_tokens
    }

    /// The passages as the model reads them: tokens mapped to its unknown token, and passages cut at its
    /// window (counted on the untruncated text, with the passage prompt, as `embed` sees it).
    fn profile(&self, texts: &[&str]) -> Result<TokenProfile> {
        let tokenizer = &self.encoder.tokenizer;
        // WordPiece vocabularies (BERT) call it [UNK], SentencePiece ones (XLM-RoBERTa) <unk>.
        let unknown_id = ["[UNK]", "<unk>"]
            .iter()
            .find_map(|t| tokenizer.token_to_id(t));
        let mut profile = TokenProfile {
            texts: texts.len(),
            window: self.encoder.max_tokens,
            ..Default::default()
        };
        for encoding in self.encode(texts, EmbedKind::Passage)? {
            let kept = encoding
                .get_ids()
                .iter()
                .zip(encoding.get_special_tokens_mask())
                .filter(|(_, special)| **special == 0);
            for (id, _) in kept {
                profile.tokens += 1;
                profile.unknown += usize::from(Some(*id) == unknown_id);
            }
            if !encoding.get_overflowing().is_empty() {
                profile.truncated += 1;
            }
        }
        Ok(profile)
    }

    fn encode(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Encoding>> {
        let prompt = match kind {
            EmbedKind::Query => &self.folder.prompts.query,
            EmbedKind::Passage => &self.folder.prompts.passage,
        };
        let inputs: Vec<String> = texts.iter().map(|t| format!("{prompt}{t}")).collect();
        let encodings = self
            .encoder
            .tokenizer
            .encode_batch(inputs, true)
            .map_err(|e| anyhow::anyhow!("cannot tokenise for {}: {e}", self.id()))?;
        let truncated = encodings
            .iter()
            .filter(|e| !e.get_overflowing().is_empty())
            .count();
        if truncated > 0 && !self.warned_truncation.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "{}: {truncated} text(s) longer than the model's {} tokens were truncated (further \
                 truncations are not reported)",
                self.id(),
                self.encoder.max_tokens
            );
        }
        Ok(encodings)
    }
}

impl Embedder for BertEmbedder {
    fn id(&self) -> String {
        // Vectors are cached by this id: how tokens are pooled and the prompts put before the text change
        // them as much as the weights do, so a folder whose pooling or prompts were edited is a new model.
        let mut id = format!("bert:{}@{}", self.folder.name, self.encoder.fingerprint);
        match self.folder.pooling {
            Pooling::Mean => {}
            Pooling::Cls => id.push_str("+cls"),
            Pooling::Max => id.push_str("+max"),
        }
        let prompts = &self.folder.prompts;
        if !(prompts.query.is_empty() && prompts.passage.is_empty()) {
            let both = format!("{}\u{0}{}", prompts.query, prompts.passage);
            id.push_str("+prompts:");
            id.push_str(&ragtester_core::ids::content_id(both.as_bytes())[..8]);
        }
        id
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn token_profile(&self, texts: &[&str]) -> Option<Result<TokenProfile>> {
        Some(self.profile(texts))
    }

    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        let encodings = self.encode(texts, kind)?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let batches: Vec<&[usize]> = order.chunks(BATCH).collect();
        let plan = WorkerPlan::for_batches(batches.len(), self.workers);
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(usize, Vec<f32>)>> = Mutex::default();
        let work = || -> Result<()> {
            loop {
                let Some(batch) = batches.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    return Ok(());
                };
                let group: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
                let (hidden, mask) = self.encoder.forward(&group)?;
                let pooled = normalise(&pool(&hidden, &mask, self.folder.pooling)?)?;
                let rows = pooled.to_vec2::<f32>()?;
                results
                    .lock()
                    .expect("embedding results lock")
                    .extend(batch.iter().copied().zip(rows));
            }
        };
        if plan.workers == 1 {
            // One batch (a query): candle spreads its products over every core of the global pool.
            work()?;
        } else {
            std::thread::scope(|s| {
                let handles: Vec<_> = (0..plan.workers)
                    .map(|_| s.spawn(|| plan.pool()?.install(work)))
                    .collect();
                handles.into_iter().try_for_each(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("an embedding worker panicked")))
                })
            })?;
        }
        let mut out = vec![Vec::new(); encodings.len()];
        for (i, row) in results.into_inner().expect("embedding results lock") {
            out[i] = row;
        }
        Ok(out)
    }
}

/// How many batches are embedded at once, and on how many threads each. Several batches in flight, each on its
/// own small thread pool, keep the cores busy through the element-wise steps and the small attention products
/// that one batch spread over every core leaves idle, and they never wait on each other's matrix products
/// (docs/benchmarks.md: +15 % for two batches sharing the global pool, more with a pool each).
struct WorkerPlan {
    workers: usize,
    threads_each: usize,
}

impl WorkerPlan {
    /// `wanted` batches at once if set, else one per core (never more than there are batches).
    fn for_batches(batches: usize, wanted: Option<usize>) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let wanted = wanted.unwrap_or(cores);
        let workers = wanted.min(batches).max(1);
        Self {
            workers,
            threads_each: (cores / workers).max(1),
        }
    }

    /// The worker's own pool: candle's products and element-wise steps run inside the installed pool.
    fn pool(&self) -> Result<rayon::ThreadPool> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads_each)
            .thread_name(|i| format!("embed-{i}"))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot start an embedding thread pool: {e}"))
    }
}

/// (batch, tokens, hidden) → (batch, hidden), ignoring padding.
pub(crate) fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> Result<Tensor> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
    Ok(match pooling {
        Pooling::Cls => hidden.i((.., 0))?,
        Pooling::Mean => {
            let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
            let count = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            sum.broadcast_div(&count)?
        }
        Pooling::Max => {
            // Padding gets a large negative value so it never wins the maximum.
            let penalty = ((mask.ones_like()? - &mask)? * -1e9f64)?;
            hidden.broadcast_add(&penalty)?.max(1)?
        }
    })
}

fn normalise(v: &Tensor) -> Result<Tensor> {
    let norm = v
        .sqr()?
        .sum_keepdim(D::Minus1)?
        .sqrt()?
        .clamp(1e-12f32, f32::MAX)?;
    Ok(v.broadcast_div(&norm)?)
}
