//! Whether an answer is in its question's language, told as the rules and a simulated conversation's
//! judgement both need it.

use ragtester_text::{confident_language, detect_language, is_cjk};

/// Whether an answer is in the question's language, when there is enough text to tell — four Chinese
/// characters, or three words of letters; a bare figure ("4.5 bar", "X2 和 X3") is in no language. Chinese
/// against the Latin-script languages is told by script; between Latin-script languages only a reliable
/// detection counts, so a short English phrase is never called German.
pub(crate) fn in_language(answer: &str, question_language: &str) -> Option<bool> {
    let cjk = answer.chars().filter(|c| is_cjk(*c)).count();
    let words = answer
        .split(|c: char| !c.is_alphabetic() || is_cjk(c))
        .filter(|w| w.chars().count() >= 2)
        .count();
    if cjk < 4 && words < 3 {
        return None;
    }
    let guess = detect_language(answer);
    let chinese = guess == "zh";
    if question_language == "zh" || chinese {
        return Some(chinese == (question_language == "zh"));
    }
    if guess == question_language {
        return Some(true);
    }
    // Only a confident detection of another language is a mismatch.
    confident_language(answer).map(|lang| lang == question_language)
}
