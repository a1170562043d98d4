//! The tokenizer of a GGUF file whose vocabulary is SentencePiece's (`tokenizer.ggml.model = "llama"`: Gemma,
//! Llama 2, Mistral), which candle builds only for GPT-2 style vocabularies. SentencePiece's BPE merges the
//! adjacent pair whose joined piece scores highest; that is a BPE model whose merge ranks follow the joined
//! pieces' scores — the conversion Hugging Face's own converter makes — with byte fallback for characters
//! outside the vocabulary and spaces written as `▁`.

use anyhow::{Context, Result, anyhow, bail};
use candle_core::quantized::gguf_file;
use std::collections::HashMap;
use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence;
use tokenizers::models::bpe::BPE;
use tokenizers::normalizers::Replace;
use tokenizers::{AddedToken, DecoderWrapper, Tokenizer};

/// GGUF token types (llama.cpp's `llama_token_type`).
const NORMAL: i32 = 1;
const UNKNOWN: i32 = 2;
const BYTE: i32 = 6;

pub(crate) fn sentencepiece_from_gguf(content: &gguf_file::Content) -> Result<Tokenizer> {
    let model = content
        .metadata
        .get("tokenizer.ggml.model")
        .and_then(|v| v.to_string().ok())
        .context("no tokenizer.ggml.model")?;
    if model != "llama" {
        bail!("tokenizer model `{model}` is not SentencePiece");
    }
    let array = |key: &str| -> Result<&Vec<gguf_file::Value>> {
        content
            .metadata
            .get(key)
            .and_then(|v| v.to_vec().ok())
            .with_context(|| format!("no {key}"))
    };
    let pieces: Vec<String> = array("tokenizer.ggml.tokens")?
        .iter()
        .map(|v| v.to_string().cloned().map_err(|e| anyhow!("{e}")))
        .collect::<Result<_>>()?;
    let scores: Vec<f32> = match array("tokenizer.ggml.scores") {
        Ok(values) => values.iter().map(|v| v.to_f32().unwrap_or(0.0)).collect(),
        Err(_) => vec![0.0; pieces.len()],
    };
    let types: Vec<i32> = match array("tokenizer.ggml.token_type") {
        Ok(values) => values
            .iter()
            .map(|v| v.to_i32().unwrap_or(NORMAL))
            .collect(),
        Err(_) => vec![NORMAL; pieces.len()],
    };
    let vocab: HashMap<String, u32> = pieces
        .iter()
        .enumerate()
        .map(|(id, p)| (p.clone(), id as u32))
        .collect();
    let merges = merges_by_score(&pieces, &scores, &types, &vocab);
    let unk = types
        .iter()
        .position(|t| *t == UNKNOWN)
        .map(|id| pieces[id].clone());
    let mut builder = BPE::builder()
        .vocab_and_merges(
            vocab
                .into_iter()
                .collect::<tokenizers::models::bpe::Vocab>(),
            merges,
        )
        .byte_fallback(true);
    if let Some(unk) = unk {
        builder = builder.unk_token(unk);
    }
    let bpe = builder
        .build()
        .map_err(|e| anyhow!("cannot build the BPE model: {e}"))?;
    let mut tokenizer = Tokenizer::new(bpe);
    tokenizer
        .with_normalizer(Some(Replace::new(" ", "▁").map_err(|e| anyhow!("{e}"))?))
        .map_err(|e| anyhow!("{e}"))?;
    tokenizer.with_decoder(Some(Sequence::new(vec![
        DecoderWrapper::Replace(Replace::new("▁", " ").map_err(|e| anyhow!("{e}"))?),
        DecoderWrapper::ByteFallback(ByteFallback::new()),
        DecoderWrapper::Fuse(Fuse::new()),
    ])));
    // Control and user-defined pieces (<start_of_turn>, <eos>) are matched whole, before the model runs.
    let special: Vec<AddedToken> = pieces
        .iter()
        .zip(&types)
        .filter(|(_, t)| ![NORMAL, BYTE].contains(t))
        .map(|(p, _)| AddedToken::from(p.clone(), true))
        .collect();
    tokenizer
        .add_special_tokens(special)
        .map_err(|e| anyhow!("{e}"))?;
    Ok(tokenizer)
}

/// Every split of a normal piece into two pieces of the vocabulary is a merge, ranked by the joined piece's
/// score (highest first; ties by id).
fn merges_by_score(
    pieces: &[String],
    scores: &[f32],
    types: &[i32],
    vocab: &HashMap<String, u32>,
) -> Vec<(String, String)> {
    let mut ranked: Vec<(f32, u32, String, String)> = Vec::new();
    for (id, piece) in pieces.iter().enumerate() {
        if types.get(id).copied().unwrap_or(NORMAL) != NORMAL {
            continue;
        }
        for (cut, _) in piece.char_indices().skip(1) {
            let (left, right) = piece.split_at(cut);
            if vocab.contains_key(left) && vocab.contains_key(right) {
                ranked.push((
                    scores.get(id).copied().unwrap_or(0.0),
                    id as u32,
                    left.to_string(),
                    right.to_string(),
                ));
            }
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().map(|(_, _, l, r)| (l, r)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_follow_the_joined_pieces_scores() {
        let pieces: Vec<String> = ["▁", "a", "b", "ab", "▁a", "▁ab"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let scores = [0.0, 0.0, 0.0, -1.0, -2.0, -0.5];
        let types = [NORMAL; 6];
        let vocab = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i as u32))
            .collect();
        let merges = merges_by_score(&pieces, &scores, &types, &vocab);
        assert_eq!(
            merges,
            vec![
                ("▁".to_string(), "ab".to_string()),
                ("▁a".to_string(), "b".to_string()),
                ("a".to_string(), "b".to_string()),
                ("▁".to_string(), "a".to_string()),
            ]
        );
    }
}
