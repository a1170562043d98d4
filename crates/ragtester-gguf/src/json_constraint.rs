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
use ragtester_core::reply_schema::{bound_strings, skeleton, string_slots};
use serde_json::json;

/// Builds a matcher per request; built once per model (the trie over the vocabulary is the costly part).
pub(crate) struct JsonConstraint {
    factory: ParserFactory,
    /// Counts the tokens of a reply's fixed parts (keys, brackets) when sizing its free-text strings.
    tokenizer: tokenizers::Tokenizer,
}

/// With no limit in the request, a JSON reply may run to its fixed parts plus this much per free-text
/// string: a judge's eight reasons need more room than the plain-text default leaves.
const DEFAULT_STRING_TOKENS: usize = 64;

/// The grammar for one reply, and how many tokens it may take.
pub(crate) struct Constrained {
    pub(crate) matcher: Matcher,
    pub(crate) max_tokens: usize,
}

impl JsonConstraint {
    /// Over `tokenizer` for a model with `vocab_size` logits, ending a reply at any of `stop_ids`.
    pub(crate) fn new(
        tokenizer: &tokenizers::Tokenizer,
        vocab_size: usize,
        stop_ids: &[TokenId],
    ) -> Result<Self> {
        let tokenizer = without_prefix_space(tokenizer);
        let json = tokenizer
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
        Ok(Self { factory, tokenizer })
    }

    /// The grammar for a JSON request, `None` for free text. `max_tokens` is the request's limit, or
    /// `default_max_tokens` when it names none.
    ///
    /// Every free-text string the schema leaves unbounded gets a `maxLength` that makes the whole reply fit
    /// the limit, the fixed parts counted with the model's own tokenizer and each character taken as a
    /// token (what a model repeating `1-1-1-…` writes). The grammar then closes a string at its bound, so a
    /// small model caught in a loop inside one reason still gives a complete verdict instead of JSON cut
    /// off at the limit — measured with Gemma 3 270M as judge, docs/benchmarks.md.
    pub(crate) fn constrain(
        &self,
        format: &ReplyFormat,
        max_tokens: Option<u32>,
        default_max_tokens: u32,
    ) -> Result<Option<Constrained>> {
        let mut schema = match format {
            ReplyFormat::Text => return Ok(None),
            ReplyFormat::Json => json!({ "type": "object" }),
            ReplyFormat::Schema(schema) => schema.schema.clone(),
        };
        let fixed_tokens = self
            .tokenizer
            .encode(skeleton(&schema), false)
            .map_err(|e| anyhow!("cannot tokenize the reply's fixed parts: {e}"))?
            .len();
        let strings = string_slots(&schema);
        let max_tokens = max_tokens.map_or_else(
            || (default_max_tokens as usize).max(fixed_tokens + strings * DEFAULT_STRING_TOKENS),
            |n| n as usize,
        );
        bound_strings(&mut schema, max_tokens, fixed_tokens);
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
        Ok(Some(Constrained {
            matcher: Matcher::new(Ok(parser)),
            max_tokens,
        }))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unbounded_strings_are_free() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "rating": { "type": "string", "enum": ["True", "False"] },
                "reason": { "type": "string" },
                "quote": { "type": "string", "maxLength": 40 },
                "keywords": { "type": "array", "items": { "type": "string" } },
                "nested": { "type": "object", "properties": { "type": { "type": "string" } } }
            }
        });
        let free = ragtester_core::reply_schema::free_strings(&mut schema);
        assert_eq!(free.len(), 3, "reason, the keywords' items and nested.type");
        assert_eq!(
            string_slots(&schema),
            2 + ragtester_core::reply_schema::MAX_ITEMS,
            "the keywords' items count once per item the array may hold"
        );
    }

    #[test]
    fn the_skeleton_holds_every_key_and_the_longest_enum_value() {
        let schema = json!({
            "type": "object",
            "properties": {
                "rating": { "type": "string", "enum": ["True", "Partially"] },
                "score": { "type": "integer" },
                "reason": { "type": "string" }
            }
        });
        assert_eq!(
            skeleton(&schema),
            r#"{"rating": "Partially", "score": 0, "reason": ""}"#
        );
    }
}
