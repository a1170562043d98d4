//! A BERT cross-encoder reranker (ms-marco MiniLM, bge-reranker-base of the BERT kind): query and passage
//! read together, scored by the pooler and classifier head that `BertForSequenceClassification` adds.

use super::encoder::{Backbone, Encoder};
use super::folder::ModelFolder;
use crate::Reranker;
use anyhow::{Context, Result, anyhow, bail};
use candle_core::{D, IndexOp, Module};
use candle_nn::{Linear, linear};
use std::path::Path;

pub struct CrossEncoder {
    encoder: Encoder,
    pooler: Linear,
    classifier: Linear,
    labels: usize,
    name: String,
}

impl CrossEncoder {
    pub fn load(dir: &Path) -> Result<Self> {
        let folder = ModelFolder::open(dir)?;
        let (encoder, vb) = Encoder::load(&folder)?;
        if !matches!(encoder.model, Backbone::Bert(_)) {
            bail!(
                "{}: cross-encoders run on BERT models only in this build (XLM-RoBERTa rerankers such as \
                 bge-reranker are not supported yet)",
                dir.display()
            );
        }
        let hidden = encoder.hidden_size;
        let head = |name: &str| {
            if vb.contains_tensor(&format!("bert.{name}.weight")) {
                vb.pp(format!("bert.{name}"))
            } else {
                vb.pp(name)
            }
        };
        let pooler = linear(hidden, hidden, head("pooler.dense"))
            .with_context(|| format!("{} has no pooler: not a cross-encoder", dir.display()))?;
        let labels = ["classifier.weight", "bert.classifier.weight"]
            .iter()
            .find(|n| vb.contains_tensor(n))
            .map(|n| vb.get_unchecked(n).map(|t| t.dims()[0]))
            .transpose()?
            .with_context(|| {
                format!(
                    "{} has no classifier head: not a cross-encoder",
                    dir.display()
                )
            })?;
        let classifier = linear(hidden, labels, head("classifier"))?;
        Ok(Self {
            encoder,
            pooler,
            classifier,
            labels,
            name: folder.name,
        })
    }
}

impl Reranker for CrossEncoder {
    fn id(&self) -> String {
        format!("cross-encoder:{}@{}", self.name, self.encoder.fingerprint)
    }

    /// One relevance in [0, 1] per passage: the sigmoid of a single logit, or the positive class's
    /// probability for a two-label head.
    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(passages.len());
        for group in passages.chunks(16) {
            let pairs: Vec<(String, String)> = group
                .iter()
                .map(|p| (query.to_string(), p.to_string()))
                .collect();
            let encodings = self
                .encoder
                .tokenizer
                .encode_batch(pairs, true)
                .map_err(|e| anyhow!("cannot tokenise for {}: {e}", self.id()))?;
            let refs: Vec<&tokenizers::Encoding> = encodings.iter().collect();
            let (hidden, _) = self.encoder.forward(&refs)?;
            let cls = hidden.i((.., 0))?;
            let pooled = self.pooler.forward(&cls)?.tanh()?;
            let logits = self.classifier.forward(&pooled)?;
            let scores = if self.labels == 1 {
                candle_nn::ops::sigmoid(&logits)?.squeeze(D::Minus1)?
            } else {
                candle_nn::ops::softmax(&logits, D::Minus1)?.i((.., self.labels - 1))?
            };
            out.extend(scores.to_vec1::<f32>()?.into_iter().map(f64::from));
        }
        Ok(out)
    }
}
