//! Constrained decoding for in-process models: a request's JSON schema (or "any JSON object") becomes a mask
//! over the vocabulary at every step, so a local judge, critic or question writer can only write JSON the
//! schema accepts. The grammar engine is llguidance — what llama.cpp itself uses — over a token trie built
//! from the model's own tokenizer.
//!
//! `toktrie_hf_tokenizers` reads the tokenizer through its own `tokenizers` release, so ours is handed over
//! as its JSON serialisation.

use anyhow::{Context, Result, anyhow};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{SimpleVob, TokEnv, TokenId};
use llguidance::{Matcher, ParserFactory};
use ragtester_core::ReplyFormat;
use serde_json::json;

/// Builds a matcher per request; built once per model (the trie over the vocabulary is the costly part).
pub(crate) struct JsonConstraint {
    factory: ParserFactory,
}

impl JsonConstraint {
    /// Over `tokenizer` for a model with `vocab_size` logits, ending a reply at any of `stop_ids`.
    pub(crate) fn new(
        tokenizer: &tokenizers::Tokenizer,
        vocab_size: usize,
        stop_ids: &[TokenId],
    ) -> Result<Self> {
        let json = without_prefix_space(tokenizer)
            .to_string(false)
            .map_err(|e| anyhow!("cannot serialise the tokenizer: {e}"))?;
        let mut bytes = toktrie_hf_tokenizers::ByteTokenizer::from_json_bytes(json.as_bytes())
            .context("the tokenizer cannot be read as bytes per token")?;
        if !stop_ids.is_empty() {
            bytes.set_eos_tokens(stop_ids);
        }
        let env: TokEnv = bytes
            .into_tok_env(Some(vocab_size.max(tokenizer.get_vocab_size(true))))
            .context("cannot build the token trie")?;
        let mut factory = ParserFactory::new_simple(&env)?;
        factory.quiet();
        Ok(Self { factory })
    }

    /// A matcher for a JSON request; `None` for free text.
    pub(crate) fn matcher(&self, format: &ReplyFormat) -> Result<Option<Matcher>> {
        let mut schema = match format {
            ReplyFormat::Text => return Ok(None),
            ReplyFormat::Json => json!({ "type": "object" }),
            ReplyFormat::Schema(schema) => schema.schema.clone(),
        };
        // One space after separators and nowhere else: a small model allowed free whitespace can spend its
        // whole reply on newlines.
        if let Some(root) = schema.as_object_mut() {
            root.insert(
                "x-guidance".into(),
                json!({
                    "whitespace_flexible": false,
                    "item_separator": ", ",
                    "key_separator": ": ",
                    "lenient": true,
                }),
            );
        }
        let grammar = TopLevelGrammar::from_json_schema(schema);
        let parser = self
            .factory
            .create_parser(grammar)
            .context("the reply's JSON schema cannot be compiled to a grammar")?;
        Ok(Some(Matcher::new(Ok(parser))))
    }
}

/// The tokenizer with byte-level pre-tokenizers that add no leading space. The grammar tokenizes the bytes
/// it forces (`{"verdict": "`) in the middle of a reply; a tokenizer that prefixes a space there (candle
/// builds GGUF tokenizers that way) makes tokens the grammar then refuses.
fn without_prefix_space(tokenizer: &tokenizers::Tokenizer) -> tokenizers::Tokenizer {
    use tokenizers::PreTokenizerWrapper;
    fn fix(p: &PreTokenizerWrapper) -> PreTokenizerWrapper {
        match p {
            PreTokenizerWrapper::ByteLevel(b) => {
                PreTokenizerWrapper::ByteLevel((*b).add_prefix_space(false))
            }
            PreTokenizerWrapper::Sequence(s) => {
                PreTokenizerWrapper::Sequence(tokenizers::pre_tokenizers::sequence::Sequence::new(
                    s.as_ref().iter().map(fix).collect(),
                ))
            }
            other => other.clone(),
        }
    }
    let mut out = tokenizer.clone();
    if let Some(p) = tokenizer.get_pre_tokenizer() {
        out.with_pre_tokenizer(Some(fix(p)));
    }
    out
}

/// Logits with every token the mask forbids set to −∞.
pub(crate) fn masked(logits: &mut [f32], mask: &SimpleVob) {
    for (id, logit) in logits.iter_mut().enumerate() {
        // Logits past the tokenizer's vocabulary (padding rows) are never allowed.
        if id >= mask.len() || !mask.is_allowed(id as TokenId) {
            *logit = f32::NEG_INFINITY;
        }
    }
}
