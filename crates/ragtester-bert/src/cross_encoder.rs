//! A cross-encoder reranker: query and passage read together and scored from the first token by the head
//! of the model's sequence-classification class — `BertForSequenceClassification` (pooler dense + tanh,
//! then a linear classifier; ms-marco MiniLM) or `XLMRobertaForSequenceClassification` (classifier dense +
//! tanh, then out_proj; bge-reranker-base/large, multilingual rerankers).

use super::encoder::{Encoder, Family};
use super::folder::ModelFolder;
use anyhow::{Context, Result, anyhow};
use candle_core::{D, IndexOp, Module};
use candle_nn::{Linear, linear};
use ragtester_core::Reranker;
use std::path::Path;

/// The classification head over the first token's hidden state.
enum Head {
    Bert { pooler: Linear, classifier: Linear },
    Roberta { dense: Linear, out_proj: Linear },
}

impl Head {
    fn logits(&self, first: &candle_core::Tensor) -> Result<candle_core::Tensor> {
        let (inner, outer) = match self {
            Head::Bert { pooler, classifier } => (pooler, classifier),
            Head::Roberta { dense, out_proj } => (dense, out_proj),
        };
        Ok(outer.forward(&inner.forward(first)?.tanh()?)?)
    }
}

pub struct CrossEncoder {
    encoder: Encoder,
    head: Head,
    labels: usize,
    name: String,
}

impl CrossEncoder {
    pub fn load(dir: &Path) -> Result<Self> {
        let folder = ModelFolder::open(dir)?;
        let (encoder, vb) = Encoder::load(&folder)?;
        let hidden = encoder.hidden_size;
        let labels_of = |names: &[&str]| -> Result<usize> {
            names
                .iter()
                .find(|n| vb.contains_tensor(n))
                .map(|n| vb.get_unchecked(n).map(|t| t.dims()[0]))
                .transpose()?
                .with_context(|| {
                    format!(
                        "{} has no classifier head: not a cross-encoder",
                        dir.display()
                    )
                })
        };
        let (head, labels) = match encoder.family {
            Family::Bert => {
                let prefixed = |name: &str| {
                    if vb.contains_tensor(&format!("bert.{name}.weight")) {
                        vb.pp(format!("bert.{name}"))
                    } else {
                        vb.pp(name)
                    }
                };
                let labels = labels_of(&["classifier.weight", "bert.classifier.weight"])?;
                let pooler =
                    linear(hidden, hidden, prefixed("pooler.dense")).with_context(|| {
                        format!("{} has no pooler: not a cross-encoder", dir.display())
                    })?;
                let classifier = linear(hidden, labels, prefixed("classifier"))?;
                (Head::Bert { pooler, classifier }, labels)
            }
            Family::XlmRoberta => {
                let labels = labels_of(&["classifier.out_proj.weight"])?;
                let dense =
                    linear(hidden, hidden, vb.pp("classifier.dense")).with_context(|| {
                        format!(
                            "{} has no classifier.dense: not a cross-encoder",
                            dir.display()
                        )
                    })?;
                let out_proj = linear(hidden, labels, vb.pp("classifier.out_proj"))?;
                (Head::Roberta { dense, out_proj }, labels)
            }
        };
        Ok(Self {
            encoder,
            head,
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
            let first = hidden.i((.., 0))?.contiguous()?;
            let logits = self.head.logits(&first)?;
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
