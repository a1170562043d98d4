//! A forward pass of our own for the `llama` GGUF architecture without experts (Llama, SmolLM2, Mistral),
//! for two things candle's `quantized_llama` cannot do:
//!
//! - keep the attention cache outside the weights, so a prompt-prefix cache can keep a copy of it and
//!   resume from there (see `prefix_cache`);
//! - process a prompt's tokens as one f32 matrix product per weight (gemm) instead of quantized dot
//!   products row by row: on SmolLM2 that took a 214-token prompt from 2.3 s to under 1 s, which is what
//!   kept the runner behind llama.cpp (docs/benchmarks.md). Decoding, one token at a time, keeps the
//!   quantized weights: there the f32 copies' larger reads make them slower.
//!
//! Otherwise the arithmetic is `quantized_llama`'s (interleaved rotary embedding, grouped-query attention,
//! SwiGLU), and a test holds the logits to it.

use candle_core::quantized::{QMatMul, QTensor, gguf_file};
use candle_core::{DType, Device, IndexOp, Module, Result, Tensor};
use candle_nn::Embedding;
use candle_transformers::quantized_nn::RmsNorm;
use std::io::{Read, Seek};
use std::sync::Arc;

/// Prompts of at least this many tokens go through the f32 copies of the weights.
const DENSE_ROWS: usize = 8;

/// f32 copies of the weights are kept only while they take at most this much memory (SmolLM2-135M: about
/// 0.5 GiB); larger models process prompts with the quantized weights.
const DENSE_LIMIT_BYTES: usize = 1 << 30;

/// Positions the rotary tables cover, as `quantized_llama`.
const MAX_SEQ_LEN: usize = 4096;

struct Linear {
    quantized: QMatMul,
    /// The same weights dequantized, `(out, in)`.
    dense: Option<Tensor>,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (batch, rows, _) = x.dims3()?;
        match &self.dense {
            Some(w) if rows >= DENSE_ROWS => x.matmul(&w.broadcast_left(batch)?.t()?),
            _ => self.quantized.forward(x),
        }
    }
}

struct Layer {
    wq: Linear,
    wk: Linear,
    wv: Linear,
    wo: Linear,
    gate: Linear,
    down: Linear,
    up: Linear,
    attention_norm: RmsNorm,
    ffn_norm: RmsNorm,
}

struct Weights {
    embeddings: Embedding,
    layers: Vec<Layer>,
    norm: RmsNorm,
    output: QMatMul,
    n_head: usize,
    n_kv_head: usize,
    head_dim: usize,
    cos: Tensor,
    sin: Tensor,
    neg_inf: Tensor,
}

/// The model and one sequence's attention cache. Cloning is cheap (the weights are shared) and the clone's
/// cache is its own: later passes concatenate new tensors rather than writing into these.
#[derive(Clone)]
pub(crate) struct Llama {
    weights: Arc<Weights>,
    /// Per layer, keys and values of every position fed so far.
    cache: Vec<Option<(Tensor, Tensor)>>,
}

/// Whether this file is one the own forward pass runs (no mixture of experts).
pub(crate) fn supports(content: &gguf_file::Content) -> bool {
    content
        .metadata
        .get("llama.expert_count")
        .and_then(|v| v.to_u32().ok())
        .unwrap_or(0)
        <= 1
}

impl Llama {
    pub(crate) fn from_gguf<R: Read + Seek>(
        content: gguf_file::Content,
        reader: &mut R,
        device: &Device,
    ) -> Result<Self> {
        let number = |key: &str| -> Result<&gguf_file::Value> {
            content
                .metadata
                .get(key)
                .ok_or_else(|| candle_core::Error::Msg(format!("cannot find {key} in metadata")))
        };
        let n_head = number("llama.attention.head_count")?.to_u32()? as usize;
        let n_kv_head = number("llama.attention.head_count_kv")?.to_u32()? as usize;
        let n_layer = number("llama.block_count")?.to_u32()? as usize;
        let hidden = number("llama.embedding_length")?.to_u32()? as usize;
        let rope_dim = number("llama.rope.dimension_count")?.to_u32()? as usize;
        let eps = f64::from(number("llama.attention.layer_norm_rms_epsilon")?.to_f32()?);
        let rope_base = number("llama.rope.freq_base")
            .and_then(|v| v.to_f32())
            .unwrap_or(10_000.0);
        let dense_bytes: usize = content
            .tensor_infos
            .iter()
            .filter(|(name, _)| name.starts_with("blk."))
            .map(|(_, info)| info.shape.elem_count() * 4)
            .sum();
        let keep_dense = dense_bytes <= DENSE_LIMIT_BYTES;
        let mut load = |name: &str| content.tensor(reader, name, device);
        let linear = |q: QTensor| -> Result<Linear> {
            let dense = if keep_dense {
                Some(q.dequantize(device)?)
            } else {
                None
            };
            Ok(Linear {
                quantized: QMatMul::from_qtensor(q)?,
                dense,
            })
        };
        let norm = |q: QTensor| RmsNorm::from_qtensor(q, eps);
        let mut layers = Vec::with_capacity(n_layer);
        for i in 0..n_layer {
            let p = format!("blk.{i}");
            layers.push(Layer {
                wq: linear(load(&format!("{p}.attn_q.weight"))?)?,
                wk: linear(load(&format!("{p}.attn_k.weight"))?)?,
                wv: linear(load(&format!("{p}.attn_v.weight"))?)?,
                wo: linear(load(&format!("{p}.attn_output.weight"))?)?,
                gate: linear(load(&format!("{p}.ffn_gate.weight"))?)?,
                down: linear(load(&format!("{p}.ffn_down.weight"))?)?,
                up: linear(load(&format!("{p}.ffn_up.weight"))?)?,
                attention_norm: norm(load(&format!("{p}.attn_norm.weight"))?)?,
                ffn_norm: norm(load(&format!("{p}.ffn_norm.weight"))?)?,
            });
        }
        let embeddings_q = load("token_embd.weight")?;
        let embeddings = Embedding::new(embeddings_q.dequantize(device)?, hidden);
        let final_norm = norm(load("output_norm.weight")?)?;
        // Files with tied embeddings have no output matrix of their own.
        let output = match load("output.weight") {
            Ok(t) => t,
            Err(_) => embeddings_q,
        };
        let (cos, sin) = rotary_tables(rope_dim, rope_base, device)?;
        Ok(Self {
            weights: Arc::new(Weights {
                embeddings,
                layers,
                norm: final_norm,
                output: QMatMul::from_qtensor(output)?,
                n_head,
                n_kv_head,
                head_dim: hidden / n_head,
                cos,
                sin,
                neg_inf: Tensor::new(f32::NEG_INFINITY, device)?,
            }),
            cache: vec![None; n_layer],
        })
    }

    /// Logits of the last position after feeding `input` (`(1, tokens)`) at `index_pos`, which must be the
    /// number of positions already fed; 0 starts a new sequence.
    pub(crate) fn forward(&mut self, input: &Tensor, index_pos: usize) -> Result<Tensor> {
        if index_pos == 0 {
            self.cache.iter_mut().for_each(|c| *c = None);
        }
        let cached = self.cache[0]
            .as_ref()
            .map_or(0, |(k, _)| k.dim(2).unwrap_or(0));
        if cached != index_pos {
            candle_core::bail!("fed at position {index_pos} with {cached} positions cached");
        }
        let w = self.weights.clone();
        let (_, seq_len) = input.dims2()?;
        let mask = if seq_len == 1 {
            None
        } else {
            Some(candle_transformers::utils::build_causal_mask(
                seq_len,
                index_pos,
                input.device(),
            )?)
        };
        let mut x = w.embeddings.forward(input)?;
        for (layer, cache) in w.layers.iter().zip(self.cache.iter_mut()) {
            let attention = attend(
                &w,
                layer,
                cache,
                &layer.attention_norm.forward(&x)?,
                mask.as_ref(),
                index_pos,
            )?;
            let x1 = attention.add(&x)?;
            let h = layer.ffn_norm.forward(&x1)?;
            let swiglu =
                candle_nn::ops::silu(&layer.gate.forward(&h)?)?.mul(&layer.up.forward(&h)?)?;
            x = layer.down.forward(&swiglu)?.add(&x1)?;
        }
        let x = w.norm.forward(&x)?;
        w.output.forward(&x.i((.., seq_len - 1, ..))?)
    }
}

fn attend(
    w: &Weights,
    layer: &Layer,
    cache: &mut Option<(Tensor, Tensor)>,
    x: &Tensor,
    mask: Option<&Tensor>,
    index_pos: usize,
) -> Result<Tensor> {
    let (batch, seq_len, hidden) = x.dims3()?;
    let heads = |t: Tensor, n: usize| {
        t.reshape((batch, seq_len, n, w.head_dim))?
            .transpose(1, 2)?
            .contiguous()
    };
    let q = heads(layer.wq.forward(x)?, w.n_head)?;
    let k = heads(layer.wk.forward(x)?, w.n_kv_head)?;
    let v = heads(layer.wv.forward(x)?, w.n_kv_head)?;
    let cos = w.cos.narrow(0, index_pos, seq_len)?;
    let sin = w.sin.narrow(0, index_pos, seq_len)?;
    let q = candle_nn::rotary_emb::rope_i(&q, &cos, &sin)?;
    let k = candle_nn::rotary_emb::rope_i(&k, &cos, &sin)?;
    let (k, v) = match cache.as_ref() {
        Some((k0, v0)) => (Tensor::cat(&[k0, &k], 2)?, Tensor::cat(&[v0, &v], 2)?),
        None => (k, v),
    };
    *cache = Some((k.clone(), v.clone()));
    let groups = w.n_head / w.n_kv_head;
    let k = candle_transformers::utils::repeat_kv(k, groups)?;
    let v = candle_transformers::utils::repeat_kv(v, groups)?;
    let scores = (q.matmul(&k.t()?)? / (w.head_dim as f64).sqrt())?;
    let scores = match mask {
        Some(mask) => {
            let mask = mask.broadcast_as(scores.shape())?;
            mask.where_cond(&w.neg_inf.broadcast_as(scores.shape())?, &scores)?
        }
        None => scores,
    };
    let attention = candle_nn::ops::softmax_last_dim(&scores)?.matmul(&v.contiguous()?)?;
    let attention = attention
        .transpose(1, 2)?
        .reshape((batch, seq_len, hidden))?;
    layer.wo.forward(&attention)
}

fn rotary_tables(dim: usize, base: f32, device: &Device) -> Result<(Tensor, Tensor)> {
    let theta: Vec<f32> = (0..dim)
        .step_by(2)
        .map(|i| 1.0 / base.powf(i as f32 / dim as f32))
        .collect();
    let theta = Tensor::new(theta.as_slice(), device)?;
    let positions = Tensor::arange(0, MAX_SEQ_LEN as u32, device)?
        .to_dtype(DType::F32)?
        .reshape((MAX_SEQ_LEN, 1))?;
    let angles = positions.matmul(&theta.reshape((1, theta.elem_count()))?)?;
    Ok((angles.cos()?, angles.sin()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_transformers::models::quantized_llama;

    fn load_both() -> (Llama, quantized_llama::ModelWeights, Vec<u32>) {
        let path = ragtester_testkit::smollm2_gguf();
        let device = Device::Cpu;
        let read = || {
            let mut file = std::fs::File::open(&path).unwrap();
            let content = gguf_file::Content::read(&mut file).unwrap();
            (content, file)
        };
        let (content, mut file) = read();
        let tokenizer =
            candle_core::quantized::tokenizer::TokenizerFromGguf::from_gguf(&content).unwrap();
        let tokenizer: tokenizers::Tokenizer = tokenizer;
        let ids = tokenizer
            .encode(
                "The pump in the basement runs at 4.5 bar; the filter is changed every ninety days. How often is",
                false,
            )
            .unwrap()
            .get_ids()
            .to_vec();
        let ours = Llama::from_gguf(content, &mut file, &device).unwrap();
        let (content, mut file) = read();
        let theirs = quantized_llama::ModelWeights::from_gguf(content, &mut file, &device).unwrap();
        (ours, theirs, ids)
    }

    fn values(logits: Tensor) -> Vec<f32> {
        logits.flatten_all().unwrap().to_vec1().unwrap()
    }

    fn top(v: &[f32]) -> usize {
        (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap()
    }

    /// The same next token as candle's `quantized_llama` after a prompt (ours in f32, theirs quantized),
    /// logits close; then, one token at a time on both, the same greedy continuation.
    #[test]
    fn logits_follow_quantized_llama() {
        let (mut ours, mut theirs, ids) = load_both();
        assert!(ids.len() >= DENSE_ROWS, "the prompt takes the f32 path");
        let input = Tensor::new(ids.as_slice(), &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let a = values(ours.forward(&input, 0).unwrap());
        let b = values(theirs.forward(&input, 0).unwrap());
        assert_eq!(top(&a), top(&b));
        let spread =
            b.iter().fold(f32::MIN, |m, &x| m.max(x)) - b.iter().fold(f32::MAX, |m, &x| m.min(x));
        let mean = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum::<f32>() / a.len() as f32;
        assert!(
            mean < 0.02 * spread,
            "mean difference {mean}, spread {spread}"
        );
        let (mut next_a, mut next_b) = (top(&a) as u32, top(&b) as u32);
        for pos in ids.len()..ids.len() + 8 {
            assert_eq!(next_a, next_b);
            let step = |t: u32| {
                Tensor::new(&[t], &Device::Cpu)
                    .unwrap()
                    .unsqueeze(0)
                    .unwrap()
            };
            next_a = top(&values(ours.forward(&step(next_a), pos).unwrap())) as u32;
            next_b = top(&values(theirs.forward(&step(next_b), pos).unwrap())) as u32;
        }
    }

    /// A clone taken after a prefix goes on from there exactly as the original does, and feeding at the
    /// wrong position is an error rather than a silently wrong answer.
    #[test]
    fn a_clone_resumes_where_its_cache_ends() {
        let (mut model, _, ids) = load_both();
        let device = Device::Cpu;
        let (head, tail) = ids.split_at(ids.len() - 3);
        let tensor = |t: &[u32]| Tensor::new(t, &device).unwrap().unsqueeze(0).unwrap();
        model.forward(&tensor(head), 0).unwrap();
        let mut clone = model.clone();
        let a = values(model.forward(&tensor(tail), head.len()).unwrap());
        let b = values(clone.forward(&tensor(tail), head.len()).unwrap());
        assert_eq!(a, b);
        assert!(clone.forward(&tensor(tail), 1).is_err());
    }
}
