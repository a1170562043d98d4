//! Readability scores used to rank sections by difficulty (the paper's N_complex selection).
//!
//! English: Flesch reading ease, 206.835 − 1.015·(words/sentences) − 84.6·(syllables/words); 0–100, lower is
//! harder. Chinese has no syllable-based Flesch; we use `zh-asl-v1`, documented here and named in every
//! record: 100 − 1.6·ASL − 80·T, clamped to 0–100, where ASL is the mean sentence length in characters and T the
//! share of characters that are digits or Latin letters (technical density). Long sentences and dense
//! figures and terms make Chinese text harder, as in Flesch for English; the scale is tuned so ordinary prose
//! lands around 40–70 like Flesch does.

use crate::{is_cjk, sentences};

pub const FLESCH: &str = "flesch";
pub const ZH_ASL_V1: &str = "zh-asl-v1";

/// The score and the measure's name for a text in the given language.
pub fn readability(text: &str, language: &str) -> Option<(f64, &'static str)> {
    if language == "zh" {
        chinese_readability(text).map(|s| (s, ZH_ASL_V1))
    } else {
        flesch_reading_ease(text).map(|s| (s, FLESCH))
    }
}

pub fn flesch_reading_ease(text: &str) -> Option<f64> {
    let sentence_count = sentences(text).len().max(1);
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| w.chars().any(|c| c.is_alphabetic()))
        .collect();
    if words.is_empty() {
        return None;
    }
    let syllables: usize = words.iter().map(|w| count_syllables(w)).sum();
    let wps = words.len() as f64 / sentence_count as f64;
    let spw = syllables as f64 / words.len() as f64;
    Some(206.835 - 1.015 * wps - 84.6 * spw)
}

/// English syllables by vowel groups, with the usual corrections for silent final `e`, `-le`, `-ed` and
/// `-es` endings; at least one per word.
pub fn count_syllables(word: &str) -> usize {
    let w: Vec<char> = word
        .to_lowercase()
        .chars()
        .filter(|c| c.is_ascii_alphabetic())
        .collect();
    if w.is_empty() {
        return 0;
    }
    if w.len() <= 3 {
        return 1;
    }
    let is_vowel = |c: char| matches!(c, 'a' | 'e' | 'i' | 'o' | 'u' | 'y');
    let mut count = 0;
    let mut prev_vowel = false;
    for &c in &w {
        let v = is_vowel(c);
        if v && !prev_vowel {
            count += 1;
        }
        prev_vowel = v;
    }
    let n = w.len();
    let ends = |s: &str| w.iter().collect::<String>().ends_with(s);
    let silent_e = w[n - 1] == 'e' && !ends("le") && !ends("ee") && !ends("ye");
    let silent_ending = (ends("ed") || ends("es"))
        && !matches!(w[n - 3], 't' | 'd' | 's' | 'x' | 'z' | 'c' | 'g' | 'h');
    if (silent_e || silent_ending) && count > 1 {
        count -= 1;
    }
    count.max(1)
}

pub fn chinese_readability(text: &str) -> Option<f64> {
    let spans = sentences(text);
    let mut total_chars = 0usize;
    let mut technical = 0usize;
    for c in text.chars() {
        if is_cjk(c) {
            total_chars += 1;
        } else if c.is_ascii_alphanumeric() {
            total_chars += 1;
            technical += 1;
        }
    }
    if total_chars == 0 || spans.is_empty() {
        return None;
    }
    let asl = total_chars as f64 / spans.len() as f64;
    let t = technical as f64 / total_chars as f64;
    Some((100.0 - 1.6 * asl - 80.0 * t).clamp(0.0, 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syllables_of_common_words() {
        for (w, n) in [
            ("cat", 1),
            ("table", 2),
            ("readability", 5),
            ("make", 1),
            ("wanted", 2),
            ("jumped", 1),
            ("beautiful", 3),
            ("the", 1),
            ("agree", 2),
        ] {
            assert_eq!(count_syllables(w), n, "{w}");
        }
    }

    #[test]
    fn flesch_matches_hand_computation() {
        // "The cat sat on the mat." 6 words, 6 syllables, 1 sentence: 206.835 − 6.09 − 84.6 = 116.145.
        let s = flesch_reading_ease("The cat sat on the mat.").unwrap();
        assert!((s - 116.145).abs() < 1e-9, "{s}");
        let hard = flesch_reading_ease(
            "Notwithstanding considerable methodological heterogeneity, the investigators \
             characterised the pharmacokinetic variability comprehensively.",
        )
        .unwrap();
        assert!(hard < 0.0, "{hard}");
    }

    /// Published example (Wikipedia, "Flesch–Kincaid readability tests"): "The Australian platypus is
    /// seemingly a hybrid of a mammal and reptilian creature" has 24 syllables and 13 words, grade level 11.3.
    #[test]
    fn published_platypus_example() {
        let sentence =
            "The Australian platypus is seemingly a hybrid of a mammal and reptilian creature.";
        let words: Vec<&str> = sentence
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| !w.is_empty())
            .collect();
        let syllables: usize = words.iter().map(|w| count_syllables(w)).sum();
        assert_eq!((words.len(), syllables), (13, 24));
        let grade = 0.39 * 13.0 + 11.8 * (24.0 / 13.0) - 15.59;
        assert_eq!(format!("{grade:.1}"), "11.3");
        let ease = flesch_reading_ease(sentence).unwrap();
        assert!((ease - (206.835 - 1.015 * 13.0 - 84.6 * 24.0 / 13.0)).abs() < 1e-9);
    }

    #[test]
    fn chinese_measure_orders_hard_below_easy() {
        let easy = chinese_readability("我们去公园。天气很好。").unwrap();
        let hard = chinese_readability(
            "依据GB/T 2887-2011第4.3条规定的温湿度条件在机房内部署的UPS系统须保证不间断供电时长不低于15分钟并配置冗余电池组。",
        )
        .unwrap();
        assert!(easy > hard, "{easy} {hard}");
        assert!(readability("我们去公园。", "zh").unwrap().1 == ZH_ASL_V1);
    }
}
