//! The forward pass of BERT-family encoders (BERT and XLM-RoBERTa), written for CPU inference of sentence
//! embedders and cross-encoders.
//!
//! candle-transformers' `BertModel` computes the same function, but on a model of MiniLM's size (384 wide,
//! heads of 32) it spends more time outside the matrix products than in them: a scalar `erf` for the exact
//! GELU (15 % of samples in a profile of indexing), a softmax of five passes, zero-filled destinations and a
//! separate bias pass for every product, copies to make query, key and value contiguous per head, and one
//! global element-wise thread pool that concurrent batches queue for. Here every product is one call of
//! `gemm` (the kernel library candle itself uses) writing into a buffer that already holds the bias and the
//! residual, attention reads query, key and value in place through strides, the attention scale is folded
//! into the query weights, and the element-wise steps are loops that `pulp` compiles for the CPU's widest
//! vector unit. docs/benchmarks.md has the measurements; `tests/bert.rs` checks the vectors against
//! sentence-transformers and the scores against transformers.

use candle_core::{DType, Result, Shape};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::HiddenAct;
use gemm::Parallelism;
use rayon::prelude::*;

/// The checkpoint's family: both run this forward pass; they number positions differently, keep a task
/// model's encoder under different prefixes, and the cross-encoder's head differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// BERT: MiniLM, bge, e5, ms-marco cross-encoders.
    Bert,
    /// XLM-RoBERTa: multilingual-e5, bge-m3, bge-reranker.
    XlmRoberta,
}

/// The shape of a checkpoint, read from its `config.json` (both families name these fields alike).
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Architecture {
    #[serde(default = "bert_type")]
    model_type: String,
    #[serde(rename = "hidden_size")]
    hidden: usize,
    #[serde(rename = "num_attention_heads")]
    heads: usize,
    #[serde(rename = "num_hidden_layers")]
    layers: usize,
    #[serde(rename = "intermediate_size")]
    intermediate: usize,
    #[serde(rename = "vocab_size")]
    vocab: usize,
    #[serde(rename = "max_position_embeddings")]
    positions: usize,
    #[serde(rename = "type_vocab_size")]
    token_types: usize,
    #[serde(rename = "layer_norm_eps")]
    eps: f32,
    hidden_act: String,
    pub pad_token_id: u32,
}

fn bert_type() -> String {
    "bert".into()
}

impl Architecture {
    pub fn family(&self) -> anyhow::Result<Family> {
        match self.model_type.as_str() {
            "bert" => Ok(Family::Bert),
            "xlm-roberta" => Ok(Family::XlmRoberta),
            other => anyhow::bail!(
                "a `{other}` model; this build runs BERT (MiniLM, bge, e5) and XLM-RoBERTa \
                 (multilingual-e5, bge-m3) models"
            ),
        }
    }

    fn activation(&self) -> Result<HiddenAct> {
        // transformers' names: `gelu` is the exact (erf) GELU, the other two its tanh approximation.
        match self.hidden_act.as_str() {
            "gelu" => Ok(HiddenAct::Gelu),
            "gelu_new" | "gelu_pytorch_tanh" => Ok(HiddenAct::GeluApproximate),
            "relu" => Ok(HiddenAct::Relu),
            other => candle_core::bail!("activation `{other}` is not one this encoder runs"),
        }
    }

    /// RoBERTa numbers a sequence's tokens from `pad + 1` and gives padding the position `pad` (transformers'
    /// `create_position_ids_from_input_ids`); BERT numbers them from 0.
    fn roberta_pad(&self) -> Option<u32> {
        (self.model_type == "xlm-roberta").then_some(self.pad_token_id)
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// Tokens a sequence may hold: RoBERTa's numbering starts after the padding position.
    pub fn max_tokens(&self) -> usize {
        match self.roberta_pad() {
            Some(pad) => self.positions.saturating_sub(pad as usize + 1),
            None => self.positions,
        }
    }
}

pub struct Bert {
    word: Table,
    position: Table,
    token_type: Table,
    embedding_norm: Norm,
    layers: Vec<Layer>,
    heads: usize,
    hidden: usize,
    activation: HiddenAct,
    roberta_pad: Option<u32>,
}

struct Layer {
    /// Query (scaled by 1/√head size), key and value projections stacked: one product per layer.
    qkv: Dense,
    attention_out: Dense,
    attention_norm: Norm,
    up: Dense,
    down: Dense,
    output_norm: Norm,
}

/// An embedding table: `rows` vectors of the model's width.
struct Table {
    values: Vec<f32>,
    rows: usize,
}

/// A linear layer; `weight` is (outputs × inputs) row-major, as checkpoints store it.
struct Dense {
    weight: Vec<f32>,
    bias: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

struct Norm {
    weight: Vec<f32>,
    bias: Vec<f32>,
    eps: f32,
}

impl Bert {
    pub fn load(vb: VarBuilder, arch: &Architecture) -> Result<Self> {
        // Checkpoints saved from a task model keep the encoder under `bert.` or `roberta.`.
        let task_prefix = match arch.roberta_pad() {
            Some(_) => "roberta",
            None => "bert",
        };
        let vb = if vb.contains_tensor(&format!("{task_prefix}.embeddings.word_embeddings.weight"))
        {
            vb.pp(task_prefix)
        } else {
            vb
        };
        let (h, heads) = (arch.hidden, arch.heads);
        if heads == 0 || !h.is_multiple_of(heads) {
            candle_core::bail!("hidden size {h} is not a multiple of {heads} attention heads");
        }
        let e = vb.pp("embeddings");
        let table = |name: &str, rows: usize| -> Result<Table> {
            Ok(Table {
                values: values(&e.pp(name), (rows, h), "weight")?,
                rows,
            })
        };
        let scale = 1.0 / ((h / heads) as f32).sqrt();
        Ok(Self {
            word: table("word_embeddings", arch.vocab)?,
            position: table("position_embeddings", arch.positions)?,
            token_type: table("token_type_embeddings", arch.token_types)?,
            embedding_norm: Norm::load(&e.pp("LayerNorm"), h, arch.eps)?,
            layers: (0..arch.layers)
                .map(|i| Layer::load(&vb.pp(format!("encoder.layer.{i}")), arch, scale))
                .collect::<Result<Vec<_>>>()?,
            heads,
            hidden: h,
            activation: arch.activation()?,
            roberta_pad: arch.roberta_pad(),
        })
    }

    /// Token ids, token types and attention mask (1 real, 0 padding), each (batch × tokens) row-major →
    /// hidden states (batch × tokens × hidden) row-major.
    pub fn forward(
        &self,
        ids: &[u32],
        type_ids: &[u32],
        mask: &[u32],
        tokens: usize,
    ) -> Result<Vec<f32>> {
        let first_position = self.roberta_pad.map_or(0, |pad| pad as usize + 1);
        if first_position + tokens > self.position.rows {
            candle_core::bail!(
                "{tokens} tokens exceed the model's {} positions",
                self.position.rows - first_position.min(self.position.rows)
            );
        }
        let h = self.hidden;
        let rows = ids.len();
        let mut x = Vec::with_capacity(rows * h);
        // RoBERTa counts a sequence's non-padding tokens (cumsum of `id != pad`), as transformers does.
        let mut counted = 0;
        for (i, (&id, &kind)) in ids.iter().zip(type_ids).enumerate() {
            let (word, kind) = (self.word.row(id)?, self.token_type.row(kind)?);
            if i % tokens == 0 {
                counted = 0;
            }
            let position = match self.roberta_pad {
                Some(pad) if id == pad => pad,
                Some(pad) => {
                    counted += 1;
                    pad + counted
                }
                None => (i % tokens) as u32,
            };
            let position = self.position.row(position)?;
            x.extend((0..h).map(|j| word[j] + kind[j] + position[j]));
        }
        self.embedding_norm.apply(&mut x);
        let mut scratch = Scratch::default();
        for layer in &self.layers {
            self.layer(layer, &mut x, mask, tokens, &mut scratch);
        }
        Ok(x)
    }

    /// One encoder layer: `x` is replaced by its output.
    fn layer(
        &self,
        layer: &Layer,
        x: &mut Vec<f32>,
        mask: &[u32],
        tokens: usize,
        scratch: &mut Scratch,
    ) {
        let rows = x.len() / self.hidden;
        layer.qkv.apply(x, rows, None, &mut scratch.qkv);
        self.attention(
            &scratch.qkv,
            mask,
            tokens,
            &mut scratch.context,
            &mut scratch.scores,
        );
        let attended = &mut scratch.attended;
        layer
            .attention_out
            .apply(&scratch.context, rows, Some(x), attended);
        layer.attention_norm.apply(attended);
        layer.up.apply(attended, rows, None, &mut scratch.up);
        Elementwise::Activation(&mut scratch.up, self.activation).run();
        // The output is written over the layer's input, which is no longer needed.
        layer.down.apply(&scratch.up, rows, Some(attended), x);
        layer.output_norm.apply(x);
    }

    /// Scaled dot-product attention of every head of every sequence, read in place from the stacked
    /// projections (rows of query | key | value) and written into `context` (rows of heads side by side).
    fn attention(
        &self,
        qkv: &[f32],
        mask: &[u32],
        tokens: usize,
        context: &mut Vec<f32>,
        scores: &mut Vec<f32>,
    ) {
        let h = self.hidden;
        let d = h / self.heads;
        let stride = 3 * h;
        let batch = mask.len() / tokens;
        context.clear();
        context.resize(batch * tokens * h, 0.0);
        scores.clear();
        scores.resize(tokens * tokens, 0.0);
        let mut sums = vec![0.0; tokens];
        for b in 0..batch {
            let real = &mask[b * tokens..(b + 1) * tokens];
            let padded = real.contains(&0);
            for head in 0..self.heads {
                let q = &qkv[b * tokens * stride + head * d..];
                let (k, v) = (&q[h..], &q[2 * h..]);
                // SAFETY: q, k and v hold `tokens` rows of `stride` from their start (the last row only its first
                // `d` values are read, which lie inside qkv); scores is tokens × tokens; the context block starts
                // at row b·tokens, column head·d, and spans `tokens` rows of width h.
                unsafe {
                    // scores (tokens × tokens) = q (tokens × d) · kᵀ (d × tokens)
                    product(
                        (tokens, tokens, d),
                        (scores.as_mut_ptr(), tokens, false),
                        (q.as_ptr(), stride, 1),
                        (k.as_ptr(), 1, stride),
                        Parallelism::None,
                    );
                }
                Elementwise::Softmax {
                    scores,
                    real,
                    padded,
                    sums: &mut sums,
                }
                .run();
                let out = &mut context[b * tokens * h + head * d..];
                // SAFETY: as above; v (tokens × d) is read with row stride `stride`.
                unsafe {
                    // context block (tokens × d) = weights (tokens × tokens) · v (tokens × d)
                    product(
                        (tokens, d, tokens),
                        (out.as_mut_ptr(), h, false),
                        (scores.as_ptr(), tokens, 1),
                        (v.as_ptr(), stride, 1),
                        Parallelism::None,
                    );
                }
                // The weights were left unnormalised: dividing the tokens × d result by each row's sum is
                // cheaper than dividing tokens × tokens weights.
                for (row, sum) in out.chunks_mut(h).zip(&sums) {
                    let inverse = 1.0 / sum;
                    row[..d].iter_mut().for_each(|v| *v *= inverse);
                }
            }
        }
    }
}

/// Buffers reused by every layer of one forward pass.
#[derive(Default)]
struct Scratch {
    qkv: Vec<f32>,
    context: Vec<f32>,
    scores: Vec<f32>,
    attended: Vec<f32>,
    up: Vec<f32>,
}

impl Layer {
    fn load(vb: &VarBuilder, arch: &Architecture, scale: f32) -> Result<Self> {
        let (h, i, eps) = (arch.hidden, arch.intermediate, arch.eps);
        let attention = vb.pp("attention");
        let mut weight = Vec::with_capacity(3 * h * h);
        let mut bias = Vec::with_capacity(3 * h);
        for (name, factor) in [("query", scale), ("key", 1.0), ("value", 1.0)] {
            let p = attention.pp("self").pp(name);
            weight.extend(
                values(&p, (h, h), "weight")?
                    .into_iter()
                    .map(|w| w * factor),
            );
            bias.extend(values(&p, h, "bias")?.into_iter().map(|b| b * factor));
        }
        Ok(Self {
            qkv: Dense {
                weight,
                bias,
                inputs: h,
                outputs: 3 * h,
            },
            attention_out: Dense::load(&attention.pp("output.dense"), h, h)?,
            attention_norm: Norm::load(&attention.pp("output.LayerNorm"), h, eps)?,
            up: Dense::load(&vb.pp("intermediate.dense"), h, i)?,
            down: Dense::load(&vb.pp("output.dense"), i, h)?,
            output_norm: Norm::load(&vb.pp("output.LayerNorm"), h, eps)?,
        })
    }
}

impl Table {
    fn row(&self, index: u32) -> Result<&[f32]> {
        let index = index as usize;
        if index >= self.rows {
            candle_core::bail!("index {index} is outside a table of {} rows", self.rows);
        }
        let width = self.values.len() / self.rows;
        Ok(&self.values[index * width..(index + 1) * width])
    }
}

impl Dense {
    fn load(vb: &VarBuilder, inputs: usize, outputs: usize) -> Result<Self> {
        Ok(Self {
            weight: values(vb, (outputs, inputs), "weight")?,
            bias: values(vb, outputs, "bias")?,
            inputs,
            outputs,
        })
    }

    /// out (rows × outputs) = x (rows × inputs) · weightᵀ + bias [+ residual]: the bias and residual are
    /// written first and the product accumulates onto them.
    fn apply(&self, x: &[f32], rows: usize, residual: Option<&[f32]>, out: &mut Vec<f32>) {
        let (k, n) = (self.inputs, self.outputs);
        assert_eq!(x.len(), rows * k, "input of the wrong size");
        out.clear();
        out.reserve(rows * n);
        match residual {
            Some(residual) => {
                assert_eq!(residual.len(), rows * n, "residual of the wrong size");
                for row in residual.chunks_exact(n) {
                    out.extend(row.iter().zip(&self.bias).map(|(r, b)| r + b));
                }
            }
            None => (0..rows).for_each(|_| out.extend_from_slice(&self.bias)),
        }
        if rows <= FEW_ROWS {
            self.add_few_rows(x, rows, out);
            return;
        }
        // SAFETY: out is rows × n, x is rows × k, weight is n × k, each row-major: read as its transpose.
        unsafe {
            product(
                (rows, n, k),
                (out.as_mut_ptr(), n, true),
                (x.as_ptr(), k, 1),
                (self.weight.as_ptr(), 1, k),
                parallelism(),
            );
        }
    }

    /// out += x · weightᵀ for a handful of rows (one query): the output columns are split between the pool's
    /// threads, each running a single-threaded product over its share of the weights. `gemm`'s own threading
    /// splits the rows, so at this size every thread packs the whole weight matrix (measured on CMRC questions
    /// one at a time, two cores: 12.2 ms each that way, 9.5 ms on one thread; docs/benchmarks.md).
    fn add_few_rows(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        let (k, n) = (self.inputs, self.outputs);
        let threads = rayon::current_num_threads().max(1);
        let columns_each = n.div_ceil(threads).max(1);
        let blocks: Vec<(usize, Vec<f32>)> = (0..n)
            .step_by(columns_each)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|start| {
                let width = columns_each.min(n - start);
                let mut block = vec![0.0; rows * width];
                // SAFETY: block is rows × width; x is rows × k; weight rows start..start + width exist.
                unsafe {
                    product(
                        (rows, width, k),
                        (block.as_mut_ptr(), width, false),
                        (x.as_ptr(), k, 1),
                        (self.weight[start * k..].as_ptr(), 1, k),
                        Parallelism::None,
                    );
                }
                (start, block)
            })
            .collect();
        for (start, block) in blocks {
            let width = block.len() / rows;
            for (r, values) in block.chunks_exact(width).enumerate() {
                let row = &mut out[r * n + start..r * n + start + width];
                row.iter_mut().zip(values).for_each(|(o, v)| *o += v);
            }
        }
    }
}

/// Up to this many rows a product goes through `Dense::add_few_rows` rather than `gemm`.
const FEW_ROWS: usize = 64;

impl Norm {
    fn load(vb: &VarBuilder, size: usize, eps: f32) -> Result<Self> {
        Ok(Self {
            weight: values(vb, size, "weight")?,
            bias: values(vb, size, "bias")?,
            eps,
        })
    }

    /// Layer normalisation of each row in place.
    fn apply(&self, x: &mut [f32]) {
        Elementwise::Norm(x, self).run();
    }

    #[inline(always)]
    fn normalise(&self, x: &mut [f32]) {
        let n = self.weight.len();
        for row in x.chunks_exact_mut(n) {
            let mean = fold_lanes(row, 0.0, |v| v, |a, b| a + b) / n as f32;
            let variance =
                fold_lanes(row, 0.0, |v| (v - mean) * (v - mean), |a, b| a + b) / n as f32;
            let inverse = 1.0 / (variance + self.eps).sqrt();
            for ((v, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
                *v = (*v - mean) * inverse * w + b;
            }
        }
    }
}

/// The element-wise steps, compiled inside pulp's dispatch for the widest vector unit the CPU has (AVX-512,
/// AVX2, else the baseline). They are a method marked `#[inline(always)]` rather than closures because a
/// closure too large to inline is compiled on its own, without those features (measured: the softmax ran
/// scalar that way).
enum Elementwise<'a> {
    Activation(&'a mut [f32], HiddenAct),
    /// Rows of attention scores over one sequence, whose mask is `real`, replaced by unnormalised softmax
    /// weights; each row's sum goes into `sums`.
    Softmax {
        scores: &'a mut [f32],
        real: &'a [u32],
        padded: bool,
        sums: &'a mut [f32],
    },
    Norm(&'a mut [f32], &'a Norm),
}

impl Elementwise<'_> {
    fn run(self) {
        pulp::Arch::new().dispatch(self)
    }
}

impl pulp::WithSimd for Elementwise<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        match self {
            Elementwise::Activation(xs, HiddenAct::Gelu) => {
                xs.iter_mut().for_each(|v| *v = gelu_erf(*v))
            }
            Elementwise::Activation(xs, HiddenAct::GeluApproximate) => {
                xs.iter_mut().for_each(|v| *v = gelu_tanh(*v))
            }
            Elementwise::Activation(xs, HiddenAct::Relu) => {
                xs.iter_mut().for_each(|v| *v = v.max(0.0))
            }
            Elementwise::Softmax {
                scores,
                real,
                padded,
                sums,
            } => {
                for (row, sum) in scores.chunks_exact_mut(real.len()).zip(sums) {
                    *sum = softmax_unnormalised(row, real, padded);
                }
            }
            Elementwise::Norm(x, norm) => norm.normalise(x),
        }
    }
}

fn values(vb: &VarBuilder, shape: impl Into<Shape>, name: &str) -> Result<Vec<f32>> {
    vb.get(shape, name)?
        .to_dtype(DType::F32)?
        .flatten_all()?
        .to_vec1::<f32>()
}

/// dst (m × n) [+]= lhs (m × k) · rhs (k × n); each matrix as (pointer, row stride, column stride), dst's column
/// stride 1 and a flag to accumulate onto what it holds.
///
/// # Safety
/// Every pointer must be valid for the elements its dimensions and strides reach.
unsafe fn product(
    (m, n, k): (usize, usize, usize),
    (dst, dst_rs, accumulate): (*mut f32, usize, bool),
    (lhs, lhs_rs, lhs_cs): (*const f32, usize, usize),
    (rhs, rhs_rs, rhs_cs): (*const f32, usize, usize),
    parallelism: Parallelism,
) {
    // SAFETY: forwarded from the caller.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            dst_rs as isize,
            accumulate,
            lhs,
            lhs_cs as isize,
            lhs_rs as isize,
            rhs,
            rhs_cs as isize,
            rhs_rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// Large products use the threads of the rayon pool they run in: every core for a lone batch, one each for
/// embedding workers that run a batch per core (see `WorkerPlan`).
fn parallelism() -> Parallelism {
    match rayon::current_num_threads() {
        0 | 1 => Parallelism::None,
        n => Parallelism::Rayon(n),
    }
}

/// Softmax of one row of scores over the real tokens, without the final division: the row becomes
/// exp(score − max) and the sum is returned. Padding gets weight 0, as transformers' additive mask of the most
/// negative float gives. `padded` says whether the sequence has any padding at all (most batches, sorted by
/// length, have little).
#[inline(always)]
fn softmax_unnormalised(row: &mut [f32], real: &[u32], padded: bool) -> f32 {
    if padded {
        for (v, r) in row.iter_mut().zip(real) {
            if *r == 0 {
                *v = f32::NEG_INFINITY;
            }
        }
    }
    let max = fold_lanes(row, f32::NEG_INFINITY, |v| v, f32::max);
    row.iter_mut().for_each(|v| *v = exp_non_positive(*v - max));
    if padded {
        for (v, r) in row.iter_mut().zip(real) {
            if *r == 0 {
                *v = 0.0;
            }
        }
    }
    fold_lanes(row, 0.0, |v| v, |a, b| a + b)
}

/// A reduction over `f(x)` in sixteen independent lanes, combined at the end, so that it vectorises (a plain
/// float fold is one long dependency chain). Sums differ from a left-to-right sum by rounding only.
#[inline(always)]
fn fold_lanes(
    xs: &[f32],
    init: f32,
    f: impl Fn(f32) -> f32,
    combine: impl Fn(f32, f32) -> f32,
) -> f32 {
    const LANES: usize = 16;
    let mut lanes = [init; LANES];
    let chunks = xs.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, x) in lanes.iter_mut().zip(chunk) {
            *lane = combine(*lane, f(*x));
        }
    }
    let tail = rest.iter().fold(init, |a, x| combine(a, f(*x)));
    lanes.into_iter().fold(tail, &combine)
}

/// x·Φ(x) = x/2·(1 + erf(x/√2)), the exact GELU BERT uses.
#[inline(always)]
pub fn gelu_erf(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The tanh approximation of GELU, for models configured with `gelu_new`/`gelu_approximate`.
#[inline(always)]
fn gelu_tanh(x: f32) -> f32 {
    // tanh(u) = 1 − 2/(e^{2u} + 1), computed from e^{−2|u|} so the exponent stays non-positive.
    let u = (2.0 / std::f32::consts::PI).sqrt() * (x + 0.044_715 * x * x * x);
    let e = exp_non_positive(-2.0 * u.abs());
    let tanh = ((1.0 - e) / (1.0 + e)).copysign(u);
    0.5 * x * (1.0 + tanh)
}

/// erf by Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5·10⁻⁷, below f32's resolution of GELU's output).
#[inline(always)]
fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    // The handbook's digits as published; they round to the same f32 values.
    #[allow(clippy::excessive_precision)]
    const A: [f32; 5] = [
        0.254_829_592,
        -0.284_496_736,
        1.421_413_741,
        -1.453_152_027,
        1.061_405_429,
    ];
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    (1.0 - poly * exp_non_positive(-a * a)).copysign(x)
}

/// eˣ for x ≤ 0 (Cody–Waite reduction to |r| ≤ ln2/2, then a degree-6 Taylor polynomial: relative error about
/// 1.2·10⁻⁷), without branches or calls so that loops over it vectorise. Inputs below −87 give about e⁻⁸⁷.
#[inline(always)]
fn exp_non_positive(x: f32) -> f32 {
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and subtracting 1.5·2²³ rounds to the nearest integer without a rounding instruction.
    const ROUND: f32 = 12_582_912.0;
    let x = x.max(-87.0);
    let n = (x * std::f32::consts::LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r / 720.0)))));
    let two_to_n = f32::from_bits(((n as i32 + 127) as u32) << 23);
    p * two_to_n
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Tensor};

    fn reference(xs: &[f32], f: impl Fn(&Tensor) -> candle_core::Result<Tensor>) -> Vec<f32> {
        f(&Tensor::new(xs, &Device::Cpu).unwrap())
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
    }

    #[test]
    fn gelus_match_candles_everywhere() {
        let xs: Vec<f32> = (-20_000..=20_000).map(|i| i as f32 / 1000.0).collect();
        for (name, ours, theirs) in [
            (
                "erf",
                gelu_erf as fn(f32) -> f32,
                reference(&xs, Tensor::gelu_erf),
            ),
            (
                "tanh",
                gelu_tanh as fn(f32) -> f32,
                reference(&xs, Tensor::gelu),
            ),
        ] {
            for (x, expected) in xs.iter().zip(theirs) {
                let got = ours(*x);
                assert!(
                    (got - expected).abs() <= 5e-7 * x.abs().max(1.0),
                    "gelu_{name}({x}): {got} vs {expected}"
                );
            }
        }
        for x in [f32::MIN, -1e4, -90.0, -0.0, 0.0, 90.0, 1e4, f32::MAX] {
            let expected = if x > 0.0 { x } else { 0.0 };
            assert_eq!(gelu_erf(x), expected, "gelu({x})");
        }
    }

    #[test]
    fn exp_is_accurate_over_the_range_erf_uses() {
        for i in 0..=16_000 {
            let x = -(i as f32) / 1000.0;
            let (ours, exact) = (exp_non_positive(x), x.exp());
            assert!(
                (ours - exact).abs() <= 3e-7 * exact,
                "exp({x}): {ours} vs {exact}"
            );
        }
        assert!(exp_non_positive(-200.0) < 1e-37);
    }

    #[test]
    fn softmax_ignores_padding_and_sums_to_one() {
        let mut row = [1.0, 2.0, 3.0, 50.0];
        let sum = softmax_unnormalised(&mut row, &[1, 1, 1, 0], true);
        row.iter_mut().for_each(|v| *v /= sum);
        let e: Vec<f32> = [1.0f32, 2.0, 3.0].iter().map(|v| v.exp()).collect();
        let sum: f32 = e.iter().sum();
        for (got, e) in row.iter().zip(&e) {
            assert!((got - e / sum).abs() < 1e-6);
        }
        assert_eq!(row[3], 0.0);
        let long: Vec<f32> = (0..37).map(|i| i as f32 / 7.0).collect();
        let mut row = long.clone();
        let sum = softmax_unnormalised(&mut row, &[1; 37], false);
        row.iter_mut().for_each(|v| *v /= sum);
        let total: f32 = long.iter().map(|v| (v - long[36]).exp()).sum();
        for (got, v) in row.iter().zip(&long) {
            assert!((got - (v - long[36]).exp() / total).abs() < 1e-6);
        }
    }

    #[test]
    fn products_use_the_strides_they_are_given() {
        // A 2×3 matrix stored row-major, multiplied by the transpose of a 2×3 weight plus a bias.
        let dense = Dense {
            weight: vec![1.0, 0.0, 2.0, 0.0, 1.0, -1.0],
            bias: vec![0.5, -0.5],
            inputs: 3,
            outputs: 2,
        };
        let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut out = Vec::new();
        dense.apply(&x, 2, Some(&[10.0, 20.0, 30.0, 40.0]), &mut out);
        assert_eq!(out, vec![17.5, 18.5, 46.5, 38.5]);
        // Above FEW_ROWS the product goes through gemm; both paths give the same numbers.
        let (k, n) = (40, 24);
        let dense = Dense {
            weight: (0..n * k)
                .map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0)
                .collect(),
            bias: (0..n).map(|i| i as f32 / 10.0).collect(),
            inputs: k,
            outputs: n,
        };
        let rows = FEW_ROWS + 6;
        let x: Vec<f32> = (0..rows * k)
            .map(|i| ((i * 104_729) % 97) as f32 / 48.0 - 1.0)
            .collect();
        let (mut all, mut few) = (Vec::new(), Vec::new());
        dense.apply(&x, rows, None, &mut all);
        for r in 0..rows {
            dense.apply(&x[r * k..(r + 1) * k], 1, None, &mut few);
            for (a, b) in all[r * n..(r + 1) * n].iter().zip(&few) {
                assert!((a - b).abs() < 1e-4, "row {r}: {a} vs {b}");
            }
        }
    }
}
