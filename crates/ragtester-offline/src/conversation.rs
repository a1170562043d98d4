//! Conversations, offline: a second question turned into a follow-up of the first (their shared subject
//! becomes a pronoun), and a follow-up rewritten back into a question complete on its own from the history.
//! Both work on jieba pieces, so English and Chinese share one path; neither invents words it was not given.

use ragtester_core::{Message, Role};
use ragtester_text::{is_stop_word, word_pieces};

/// Words a subject phrase never holds: interrogatives, auxiliaries and the asker's pronouns.
const QUESTION_WORDS: &[&str] = &[
    "what",
    "which",
    "who",
    "whom",
    "whose",
    "when",
    "where",
    "why",
    "how",
    "many",
    "much",
    "long",
    "does",
    "did",
    "do",
    "is",
    "are",
    "was",
    "were",
    "can",
    "could",
    "should",
    "would",
    "will",
    "i",
    "we",
    "you",
    "my",
    "our",
    "your",
    "it",
    "its",
    "they",
    "them",
    "their",
    "多少",
    "什么",
    "哪",
    "哪些",
    "哪个",
    "哪一年",
    "谁",
    "怎么",
    "怎样",
    "如何",
    "几",
    "为什么",
    "是否",
    "吗",
    "呢",
    "多久",
    "多长",
    "多大",
    "何时",
];

const DETERMINERS: &[&str] = &["the", "a", "an", "this", "that", "these", "those"];
const PREPOSITIONS: &[&str] = &[
    "of", "for", "in", "on", "to", "with", "about", "from", "by", "at", "into", "under", "over",
];
const ZH_DEMONSTRATIVES: &[&str] = &["这", "该", "此", "这个", "那个"];

fn is_content(piece: &str) -> bool {
    let lower = piece.trim().to_lowercase();
    lower.chars().any(char::is_alphanumeric)
        && !is_stop_word(&lower)
        && !QUESTION_WORDS.contains(&lower.as_str())
}

fn is_space(piece: &str) -> bool {
    !piece.is_empty() && piece.chars().all(char::is_whitespace)
}

/// `question` asked as a follow-up of `previous`: the longest phrase of content words the two share is
/// replaced by a pronoun (`it`, `its`, `they`, `them`; `它`). Empty when they share no such phrase, so the
/// writer tries another pair rather than keep a follow-up that refers to nothing.
pub fn follow_up(previous: &str, question: &str, language: &str) -> String {
    let pieces = word_pieces(question);
    let previous = previous.to_lowercase();
    let Some((start, end)) = shared_phrase(&pieces, &previous, language) else {
        return String::new();
    };
    let rewritten = if language == "zh" {
        zh_pronoun(&pieces, start, end)
    } else {
        en_pronoun(&pieces, start, end)
    };
    if rewritten.trim() == question.trim() {
        String::new()
    } else {
        rewritten
    }
}

/// The longest run of pieces that starts and ends on a content word, holds only content words and
/// the spaces or particles between them, and occurs in `previous` (lower-cased).
fn shared_phrase(pieces: &[&str], previous: &str, language: &str) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize, usize)> = None;
    for start in 0..pieces.len() {
        if !is_content(pieces[start]) {
            continue;
        }
        let mut text = String::new();
        for end in start + 1..=pieces.len().min(start + 9) {
            let piece = pieces[end - 1];
            if !(is_content(piece) || is_space(piece) || (language == "zh" && piece == "的")) {
                break;
            }
            text.push_str(&piece.to_lowercase());
            if !is_content(piece) {
                continue;
            }
            if !previous.contains(text.as_str()) {
                break;
            }
            // Only a whole phrase: "card" of "the Glow card" would leave "the Glow it".
            if !maximal(pieces, start) {
                continue;
            }
            let chars = text.chars().count();
            let long_enough = if language == "zh" {
                chars >= 2
            } else {
                chars >= 3
            };
            if long_enough && best.is_none_or(|(_, _, c)| chars > c) {
                best = Some((start, end, chars));
            }
        }
    }
    best.map(|(s, e, _)| (s, e))
}

/// No content word right before the run: a modifier left behind would read "the Glow it". (After it,
/// a content word is usually the question's verb, which a word list cannot tell from a head noun.)
fn maximal(pieces: &[&str], start: usize) -> bool {
    let left = match start {
        0 => None,
        1 => Some(pieces[0]),
        s if is_space(pieces[s - 1]) => Some(pieces[s - 2]),
        s => Some(pieces[s - 1]),
    };
    !left.is_some_and(is_content)
}

fn en_pronoun(pieces: &[&str], start: usize, end: usize) -> String {
    // "the warranty" as a whole becomes the pronoun; "the" left behind would dangle.
    let mut from = start;
    let before = |i: usize| (i >= 2 && is_space(pieces[i - 1])).then(|| pieces[i - 2]);
    if let Some(d) = before(from)
        && DETERMINERS.contains(&d.to_lowercase().as_str())
    {
        from -= 2;
    }
    let mut to = end;
    let possessive = matches!(pieces.get(to), Some(&"'s") | Some(&"’s"))
        || (pieces.get(to).is_some_and(|p| *p == "'" || *p == "’")
            && pieces.get(to + 1) == Some(&"s"));
    let last = pieces[end - 1].to_lowercase();
    let plural = last.len() > 3 && last.ends_with('s') && !last.ends_with("ss");
    let after_preposition =
        before(from).is_some_and(|w| PREPOSITIONS.contains(&w.to_lowercase().as_str()));
    let pronoun = if possessive {
        to += if pieces[to].len() > 1 { 1 } else { 2 };
        if plural { "their" } else { "its" }
    } else if plural {
        if after_preposition { "them" } else { "they" }
    } else {
        "it"
    };
    let head: String = pieces[..from].concat();
    let pronoun = if head.trim().is_empty() {
        let mut c = pronoun.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect())
            .unwrap_or_default()
    } else {
        pronoun.to_string()
    };
    format!("{head}{pronoun}{}", pieces[to..].concat())
}

fn zh_pronoun(pieces: &[&str], start: usize, end: usize) -> String {
    let from = if start > 0 && ZH_DEMONSTRATIVES.contains(&pieces[start - 1]) {
        start - 1
    } else {
        start
    };
    format!("{}它{}", pieces[..from].concat(), pieces[end..].concat())
}

/// Pronouns and demonstratives a follow-up refers back with.
const EN_REFERENCES: &[&str] = &["it", "its", "they", "them", "their", "theirs"];
const ZH_REFERENCES: &[&str] = &["它", "它们", "其", "这个", "那个", "该"];
/// Cues that a turn goes back to an earlier topic than the last one.
const EN_BACK: &[&str] = &["back to", "earlier", "first question", "before that"];
const ZH_BACK: &[&str] = &["回到", "前面", "刚才", "最开始"];

/// The last turn rewritten to stand alone: a turn that refers back (a pronoun, or a cue that it returns
/// to an earlier topic) gets the question it refers to beside it — the last user turn, or the first one
/// when it says it goes back. A turn complete on its own comes back unchanged. Retrieval then finds what
/// the referent names; a reader of the rewritten question sees what "it" was.
pub fn rewrite(history: &[Message], query: &str) -> String {
    let asked: Vec<&str> = history
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    let (Some(first), Some(last)) = (asked.first(), asked.last()) else {
        return query.to_string();
    };
    let lower = query.to_lowercase();
    let pieces: Vec<String> = word_pieces(&lower)
        .into_iter()
        .map(|p| p.trim().to_string())
        .collect();
    let refers = pieces
        .iter()
        .any(|p| EN_REFERENCES.contains(&p.as_str()) || ZH_REFERENCES.contains(&p.as_str()));
    let back = EN_BACK.iter().chain(ZH_BACK).any(|cue| lower.contains(cue));
    if !refers && !back {
        return query.to_string();
    }
    let referent = if back { first } else { last };
    if ragtester_text::detect_language(query) == "zh" {
        format!("{query}（指的是：{referent}）")
    } else {
        format!("{query} (referring to: {referent})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_subject_becomes_a_pronoun() {
        assert_eq!(
            follow_up(
                "How long is the battery warranty?",
                "What does the battery warranty exclude?",
                "en"
            ),
            "What does it exclude?"
        );
        assert_eq!(
            follow_up(
                "Which charger comes with the pumps?",
                "How much water do the pumps move per hour?",
                "en"
            ),
            "How much water do they move per hour?"
        );
        assert_eq!(
            follow_up(
                "What voltage does the pump need?",
                "What is the capacity of the pump's tank?",
                "en"
            ),
            "What is the capacity of its tank?"
        );
        assert_eq!(
            follow_up("电池的保修期是多久？", "电池可以充电多少次？", "zh"),
            "它可以充电多少次？"
        );
    }

    #[test]
    fn only_a_whole_phrase_becomes_a_pronoun() {
        assert_eq!(
            follow_up(
                "Where is the card sold?",
                "What are loaded onto the Glow card?",
                "en"
            ),
            ""
        );
    }

    #[test]
    fn questions_sharing_no_subject_make_no_follow_up() {
        assert_eq!(
            follow_up("When was the plant built?", "Who wrote the manual?", "en"),
            ""
        );
        assert_eq!(follow_up("工厂哪一年建成？", "手册由谁编写？", "zh"), "");
    }

    #[test]
    fn a_follow_up_is_rewritten_with_what_it_refers_to() {
        let history = vec![
            Message::user("How long is the battery warranty?"),
            Message {
                role: Role::Assistant,
                content: "24 months.".into(),
            },
            Message::user("Who makes the charger?"),
        ];
        assert_eq!(
            rewrite(&history[..2], "What does it exclude?"),
            "What does it exclude? (referring to: How long is the battery warranty?)"
        );
        assert!(
            rewrite(
                &history,
                "Back to the first question: what does it exclude?"
            )
            .ends_with("(referring to: How long is the battery warranty?)")
        );
        assert_eq!(
            rewrite(&history, "Who repairs the charger?"),
            "Who repairs the charger?"
        );
        assert_eq!(
            rewrite(&[], "What does it exclude?"),
            "What does it exclude?"
        );
        let zh = vec![Message::user("电池的保修期是多久？")];
        assert_eq!(
            rewrite(&zh, "它可以充电多少次？"),
            "它可以充电多少次？（指的是：电池的保修期是多久？）"
        );
    }
}
