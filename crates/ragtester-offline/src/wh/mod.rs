//! Questions a user would ask, written offline from a sentence's structure: "What is X?" for a definition,
//! "How many …", "At what pressure …", "When was …" for a quantity, "Why …" for a cause, "How do you …"
//! for a procedure. English questions move the auxiliary to the front; Chinese ones keep the sentence's
//! order and put the question word where the answer stands (多少, 哪一年, 什么), as Chinese does. A sentence
//! whose structure is not recognised gives none, and the writer falls back to a labelled cloze.

use ragtester_text::is_cjk;

mod chinese;
mod english;

use chinese::chinese;
use english::{english, lower_first, split_at_auxiliary, split_at_present_verb};

/// A question and what a correct answer must contain.
#[derive(Debug, Clone, PartialEq)]
pub struct Wh {
    pub question: String,
    /// `definition`, `quantity`, `time`, `cause`, `procedure` or `detail`.
    pub form: &'static str,
    pub keywords: Vec<String>,
}

/// The subject of an English sentence, when its structure shows one ("the alpha motor").
pub fn subject_of(sentence: &str) -> Option<String> {
    if sentence.chars().any(is_cjk) {
        return None;
    }
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    if tokens.len() < 3 {
        return None;
    }
    let subject = split_at_auxiliary(&tokens)
        .map(|(_, subject, _)| subject)
        .or_else(|| split_at_present_verb(&tokens).map(|(subject, _, _)| subject))?;
    Some(lower_first(&subject))
}

/// The question a sentence answers, in the sentence's language.
pub fn question_for(sentence: &str) -> Option<Wh> {
    if sentence.chars().any(is_cjk) {
        return chinese(sentence);
    }
    // A sentence surely in another language gets none (the writer's grammar is English and Chinese): it
    // falls back to a labelled cloze rather than English grammar applied to German. A short English
    // sentence whatlang is unsure about stays English.
    match ragtester_text::confident_language(sentence) {
        Some("en") | None => english(sentence),
        Some(_) => None,
    }
}

#[cfg(test)]
pub(crate) mod testing {
    pub fn q(sentence: &str) -> Option<(String, &'static str)> {
        super::question_for(sentence).map(|w| (w.question, w.form))
    }

    pub fn asked(sentence: &str) -> String {
        q(sentence).map(|(q, _)| q).unwrap_or_default()
    }
}
