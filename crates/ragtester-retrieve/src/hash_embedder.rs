//! The lexical fallback for dense retrieval when no embedding model is configured: feature hashing of words,
//! numbers, CJK bigrams and Latin character trigrams into a fixed-size, L2-normalised vector.
//!
//! It is not semantic: it matches surface forms (trigrams make `valve` and `valves` close). Reports label it
//! as a fallback. Its value here is a dense code path with its own, different ranking from BM25.

use anyhow::Result;
use ragtester_core::{EmbedKind, Embedder};
use ragtester_text::terms;

pub struct HashEmbedder {
    dimension: usize,
}

impl Default for HashEmbedder {
    fn default() -> Self {
        Self { dimension: 384 }
    }
}

/// FNV-1a: tiny and, unlike std's hasher, fixed across Rust versions, so vectors are reproducible.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

impl HashEmbedder {
    fn features(text: &str) -> Vec<(String, f32)> {
        let mut out = Vec::new();
        for term in terms(text) {
            let chars: Vec<char> = term.chars().collect();
            if chars.iter().all(|c| c.is_ascii_alphabetic()) && chars.len() > 3 {
                let padded: Vec<char> = std::iter::once('<')
                    .chain(chars)
                    .chain(std::iter::once('>'))
                    .collect();
                for tri in padded.windows(3) {
                    out.push((tri.iter().collect(), 0.5));
                }
            }
            out.push((term, 1.0));
        }
        out
    }

    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dimension];
        for (feature, weight) in Self::features(text) {
            let h = fnv1a(feature.as_bytes());
            let slot = (h % self.dimension as u64) as usize;
            // The sign bit spreads collisions around zero instead of piling them up.
            let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
            v[slot] += sign * weight;
        }
        for x in &mut v {
            // Sublinear term frequency, as in tf-idf variants: repetition counts, but less and less.
            *x = x.signum() * (1.0 + x.abs()).ln();
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

impl Embedder for HashEmbedder {
    fn id(&self) -> String {
        format!("hash-lexical-v1-d{}", self.dimension)
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str], _kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn normalised_deterministic_and_lexically_sensible() {
        let e = HashEmbedder::default();
        let v = e
            .embed(
                &[
                    "relief valves open",
                    "the relief valve opens",
                    "保修期二十四个月",
                ],
                EmbedKind::Passage,
            )
            .unwrap();
        assert!((cos(&v[0], &v[0]) - 1.0).abs() < 1e-5);
        assert!(cos(&v[0], &v[1]) > 0.4, "{}", cos(&v[0], &v[1]));
        assert!(cos(&v[0], &v[2]).abs() < 0.2);
        assert_eq!(
            v[0],
            e.embed(&["relief valves open"], EmbedKind::Query).unwrap()[0]
        );
        assert!(
            e.embed(&[""], EmbedKind::Query).unwrap()[0]
                .iter()
                .all(|x| *x == 0.0)
        );
    }
}
