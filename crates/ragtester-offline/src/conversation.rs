//! Conversations, offline: a second question turned into a follow-up of the first (their shared subject
//! becomes a pronoun), and a follow-up rewritten back into a question complete on its own from the history.
//! Both work on jieba pieces, so English and Chinese share one path; neither invents words it was not given.

use ragtester_core::{Message, Role};
use ragtester_text::{is_stop_word, tagged_pieces, word_pieces};

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
/// Words joining two nouns or verbs (jieba tags `可以` a conjunction too, so the tag cannot tell them).
const ZH_COORDINATORS: &[&str] = &["或", "或者", "和", "与", "及", "以及", "跟", "同"];

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
    let asked_before = previous
        .split_inclusive(['?', '？'])
        .next()
        .unwrap_or(previous);
    let previous = referable(previous, asked_before);
    // Each piece's part of speech, for Chinese (jieba's tags): a subject ends on a noun and is followed by
    // none ("夜间" of "夜间活动" modifies it).
    let tags: Vec<&str> = if language == "zh" {
        tagged_pieces(question)
            .into_iter()
            .map(|(_, tag)| tag)
            .collect()
    } else {
        Vec::new()
    };
    let Some((start, end)) = shared_phrase(&pieces, &previous, language, &tags) else {
        return elliptical(asked_before, question, language).unwrap_or_default();
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

/// What a pronoun in the next question can point at, lower-cased and with words bounded by spaces (so
/// "day" is not found in "Monday"): the previous question, and the head of its answer (where the answer
/// names its subject: "The GS-7 measures …") — not a noun its answer mentions in passing.
fn referable(previous: &str, asked_before: &str) -> String {
    let answer = previous[asked_before.len()..].trim();
    let head: String = word_pieces(answer)
        .into_iter()
        .filter(|p| !is_space(p))
        .take(ANSWER_HEAD_WORDS)
        .collect::<Vec<_>>()
        .join(" ");
    let text = format!("{asked_before} {head}").to_lowercase();
    let spaced: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                ' '
            }
        })
        .collect();
    format!(
        " {} ",
        spaced.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// Words of the previous answer's opening where its subject stands.
const ANSWER_HEAD_WORDS: usize = 4;

/// Most pieces the part that differs may hold in an elliptical follow-up ("What about a day pass?").
const ELLIPSIS_PIECES: usize = 7;

/// `question` asked by ellipsis after `previous` when the two share their frame and differ in one short
/// part: "How many euros does a single ticket cost?" then "How many euros does a day pass cost?" → "What
/// about a day pass?"; "白天参观门票每人多少元？" then "夜间观星活动每人多少元？" → "那夜间观星活动呢？".
fn elliptical(previous: &str, question: &str, language: &str) -> Option<String> {
    let before = word_pieces(previous);
    let now = word_pieces(question);
    let same = |a: &&str, b: &&str| a.trim().eq_ignore_ascii_case(b.trim());
    let prefix = before
        .iter()
        .zip(&now)
        .take_while(|(a, b)| same(a, b))
        .count();
    let suffix = before
        .iter()
        .rev()
        .zip(now.iter().rev())
        .take_while(|(a, b)| same(a, b))
        .count();
    if prefix + suffix >= now.len().min(before.len()) {
        return None;
    }
    // "does a single ticket" / "does a day pass": the article belongs to the part that differs.
    let mut prefix = prefix;
    while prefix > 0
        && (is_space(now[prefix - 1])
            || DETERMINERS.contains(&now[prefix - 1].to_lowercase().as_str()))
    {
        prefix -= 1;
    }
    let differs = &now[prefix..now.len() - suffix];
    let shared_frame = now[..prefix]
        .iter()
        .chain(&now[now.len() - suffix..])
        .filter(|p| is_content(p) || QUESTION_WORDS.contains(&p.trim().to_lowercase().as_str()))
        .count();
    let own = differs.iter().filter(|p| is_content(p)).count();
    // The part must sit inside the frame: with nothing shared after it, "What happens if the fuse blows?"
    // would become "What about the fuse blows?".
    let closed = now[now.len() - suffix..]
        .iter()
        .any(|p| p.chars().any(char::is_alphanumeric));
    if !closed {
        return None;
    }
    if shared_frame < 2
        || own == 0
        || differs.len() > ELLIPSIS_PIECES
        || prefix >= before.len() - suffix
    {
        return None;
    }
    let part = differs.concat();
    let part = part.trim();
    Some(if language == "zh" {
        format!("那{part}呢？")
    } else {
        format!("What about {part}?")
    })
}

/// The longest run of pieces that starts and ends on a content word, holds only content words and
/// the spaces or particles between them, and occurs in `previous` (lower-cased).
fn shared_phrase(
    pieces: &[&str],
    previous: &str,
    language: &str,
    tags: &[&str],
) -> Option<(usize, usize)> {
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
            // Whole words in English (`previous` is space-bounded); Chinese has no spaces to bound by.
            let found = if language == "zh" {
                previous.replace(' ', "").contains(text.as_str())
            } else {
                previous.contains(&format!(
                    " {} ",
                    text.split_whitespace().collect::<Vec<_>>().join(" ")
                ))
            };
            if !found {
                break;
            }
            // Only a whole phrase: "card" of "the Glow card" would leave "the Glow it".
            // In Chinese the run ends on a noun and no noun follows it: "免费" (free) of "免费使用什么"
            // names nothing, "夜间" of "夜间活动" only modifies.
            let modifies_next = tags
                .get(end)
                .is_some_and(|t| t.starts_with('n') || *t == "vn");
            let ends_on_a_noun =
                tags.is_empty() || tags.get(end - 1).is_some_and(|t| t.starts_with('n'));
            // Half of a coordination ("遗失或严重损坏图书") is no subject: "它或…" reads as nothing.
            let coordinated =
                language == "zh" && pieces.get(end).is_some_and(|p| ZH_COORDINATORS.contains(p));
            if !maximal(pieces, start)
                || !names_a_subject(pieces, start, language)
                || modifies_next
                || coordinated
                || !ends_on_a_noun
            {
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

/// Whether the run from `start` is what the question is about, so a pronoun can stand for it: in English a
/// noun phrase after a determiner ("the pump", not "euros" of "how many euros" nor the verb "runs"); in
/// Chinese the sentence's topic, which opens it ("电池可以充电多少次", not "充至约多少%电量").
fn names_a_subject(pieces: &[&str], start: usize, language: &str) -> bool {
    if language == "zh" {
        return start == 0 || (start == 1 && ZH_DEMONSTRATIVES.contains(&pieces[0]));
    }
    let before = (0..start).rev().find(|&i| !is_space(pieces[i]));
    let Some(determiner) = before.map(|i| pieces[i].to_lowercase()) else {
        return false;
    };
    // "a Lumen university": after "a", a name is a modifier of the noun that follows, not the subject.
    let named = pieces[start].starts_with(char::is_uppercase);
    DETERMINERS.contains(&determiner.as_str())
        && !(named && matches!(determiner.as_str(), "a" | "an"))
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
/// Openings of a follow-up that leaves its frame to the last question ("What about a day pass?").
const EN_ELLIPSIS: &[&str] = &["what about", "how about", "and "];
const ZH_ELLIPSIS_OPEN: &str = "那";
const ZH_ELLIPSIS_CLOSE: &str = "呢";
/// Cues that a turn goes back to an earlier topic than the last one.
const EN_BACK: &[&str] = &["back to", "earlier", "first question", "before that"];
const ZH_BACK: &[&str] = &["回到", "前面", "刚才", "最开始"];
/// Cues before a colon that only say the user asks something else now ("我想问的是：…"); they refer to
/// nothing earlier.
const STEERING: &[&str] = &[
    "meant to ask",
    "i meant",
    "my question is",
    "想问的是",
    "我的问题是",
];

/// The last turn rewritten to stand alone: a turn that refers back (a pronoun, or a cue that it returns
/// to an earlier topic) gets the question it refers to beside it — the last user turn, or the first one
/// when it says it goes back. A turn complete on its own comes back unchanged. Retrieval then finds what
/// the referent names; a reader of the rewritten question sees what "it" was.
pub fn rewrite(history: &[Message], query: &str) -> String {
    let Some(referent) = referent(history, query) else {
        return query.to_string();
    };
    if ragtester_text::detect_language(query) == "zh" {
        format!("{query}{ZH_REFERRING}{referent}）")
    } else {
        format!("{query}{EN_REFERRING}{referent})")
    }
}

/// How [`rewrite`] sets the referent beside the turn.
const EN_REFERRING: &str = " (referring to: ";
const ZH_REFERRING: &str = "（指的是：";

/// A turn [`rewrite`] wrote, read back as the turn and the question it refers to; any other text is the
/// turn itself. The reader then asks what the turn asks, about what the referent names — not what the
/// earlier question asked (its words would outnumber the turn's own).
pub fn split_rewritten(query: &str) -> (&str, Option<&str>) {
    for (open, close) in [(EN_REFERRING, ')'), (ZH_REFERRING, '）')] {
        if let Some(at) = query.rfind(open)
            && let Some(inner) = query[at + open.len()..].strip_suffix(close)
        {
            return (&query[..at], Some(inner));
        }
    }
    (query, None)
}

/// The turn without the words that only steer the conversation ("Going back to the first topic: …",
/// "回到最开始的话题：…", "不好意思，我问错了。我想问的是：…"), which name nothing a passage holds and
/// outweigh, in a short passage, the few words the question shares with it.
pub fn without_cue(query: &str) -> &str {
    let lower = query.to_lowercase();
    let Some(at) = lower.find([':', '：']) else {
        return query;
    };
    let cue = &lower[..at];
    if EN_BACK
        .iter()
        .chain(ZH_BACK)
        .chain(STEERING)
        .any(|c| cue.contains(c))
    {
        query[at..].trim_start_matches([':', '：']).trim()
    } else {
        query
    }
}

/// The earlier question a turn refers back to: the last user turn for a pronoun, the first for a cue that
/// it goes back; None for a turn complete on its own or with no history.
pub fn referent<'h>(history: &'h [Message], query: &str) -> Option<&'h str> {
    let mut asked = history
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str());
    let first = asked.next()?;
    let last = asked.next_back().unwrap_or(first);
    let lower = query.to_lowercase();
    let refers = word_pieces(&lower)
        .into_iter()
        .map(str::trim)
        .any(|p| EN_REFERENCES.contains(&p) || ZH_REFERENCES.contains(&p));
    let back = EN_BACK.iter().chain(ZH_BACK).any(|cue| lower.contains(cue));
    let trimmed = lower.trim_end_matches(['?', '？']);
    let elliptical = EN_ELLIPSIS.iter().any(|cue| lower.starts_with(cue))
        || (lower.starts_with(ZH_ELLIPSIS_OPEN) && trimmed.ends_with(ZH_ELLIPSIS_CLOSE));
    if back {
        Some(first)
    } else if refers || elliptical {
        Some(last)
    } else {
        None
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
    fn only_the_subject_becomes_a_pronoun() {
        // A shared unit, a shared verb or a shared word that is not the topic is no referent (the
        // fares' "How many euros does … cost?" makes an elliptical follow-up instead: see below).
        assert_eq!(
            follow_up(
                "How many euros does a single ticket cost?",
                "How many euros does a day pass cost?",
                "en"
            ),
            "What about a day pass?"
        );
        assert_eq!(
            follow_up(
                "What happens if the pump hums but moves no water?",
                "What happens if the fuse blows repeatedly?",
                "en"
            ),
            ""
        );
        assert_eq!(
            follow_up(
                "电量低于多少%时应及时充电？",
                "车辆超过一个月不使用时，应将电池充至约多少%电量后取下？",
                "zh"
            ),
            ""
        );
    }

    #[test]
    fn a_chinese_modifier_is_no_subject() {
        // "夜间" shared with "夜间观星活动" only modifies "活动" here: "它活动期间…" would refer to nothing.
        assert_eq!(
            follow_up(
                "夜间观星活动仅在周五和周六举行，每场限多少人？",
                "夜间活动期间禁止使用什么？",
                "zh"
            ),
            ""
        );
        assert_eq!(
            follow_up("电池组的保修期是多久？", "电池组可以充电多少次？", "zh"),
            "它可以充电多少次？"
        );
        // "免费" (free of charge) is no subject a pronoun could stand for.
        assert_eq!(follow_up("免费开放哪些区域？", "免费使用什么？", "zh"), "");
        // Nor half of a coordination ("遗失或严重损坏图书": losing or badly damaging a book).
        assert_eq!(
            follow_up(
                "读者证遗失后补办需缴纳工本费多少元？",
                "遗失或严重损坏图书，须按原书定价的多少倍赔偿？",
                "zh"
            ),
            ""
        );
    }

    #[test]
    fn questions_sharing_their_frame_make_an_elliptical_follow_up() {
        assert_eq!(
            follow_up(
                "How many euros does a single ticket cost? A single ticket costs 2.40 euros.",
                "How many euros does a day pass cost?",
                "en"
            ),
            "What about a day pass?"
        );
        assert_eq!(
            follow_up("白天参观门票每人多少元？", "夜间观星活动每人多少元？", "zh"),
            "那夜间观星活动呢？"
        );
        let history = [Message::user("How many euros does a single ticket cost?")];
        assert_eq!(
            referent(&history, "What about a day pass?"),
            Some("How many euros does a single ticket cost?")
        );
        assert_eq!(
            referent(
                &[Message::user("白天参观门票每人多少元？")],
                "那夜间观星活动呢？"
            ),
            Some("白天参观门票每人多少元？")
        );
        assert_eq!(
            follow_up(
                "What happens if the pump hums?",
                "What happens if the fuse blows repeatedly?",
                "en"
            ),
            ""
        );
        // Frames that share only a question word are different questions.
        assert_eq!(
            follow_up("What opens at nine?", "What dogs travel free?", "en"),
            ""
        );
    }

    #[test]
    fn a_pronoun_points_at_what_was_asked_not_at_a_passing_word() {
        // "pump" is only mentioned in passing by the answer: "it" would be read as the warranty.
        assert_eq!(
            follow_up(
                "What does not cover impellers? The warranty does not cover damage caused by running the pump dry.",
                "On what number of volt does the pump run?",
                "en"
            ),
            ""
        );
        // "day" of "Monday" is no shared word.
        assert_eq!(
            follow_up(
                "What opens Monday to Friday? The office opens Monday to Friday.",
                "How many euros does a day pass cost?",
                "en"
            ),
            ""
        );
        assert_eq!(
            follow_up(
                "Who is Lumen City Transit run by?",
                "What do students at a Lumen university pay?",
                "en"
            ),
            ""
        );
        assert_eq!(
            follow_up(
                "What measures air temperature? The GS-7 measures air temperature and humidity.",
                "How often does the GS-7 report?",
                "en"
            ),
            "How often does it report?"
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
            without_cue("Going back to the first question: what does it exclude?"),
            "what does it exclude?"
        );
        // The reader reads its own rewrite back as the turn and its referent.
        let written = rewrite(&history[..2], "What does it exclude?");
        assert_eq!(
            split_rewritten(&written),
            (
                "What does it exclude?",
                Some("How long is the battery warranty?")
            )
        );
        let zh = vec![Message::user("电池组的保修期是多久？")];
        assert_eq!(
            split_rewritten(&rewrite(&zh, "它可以充电多少次？")),
            ("它可以充电多少次？", Some("电池组的保修期是多久？"))
        );
        assert_eq!(split_rewritten("Why (really)?"), ("Why (really)?", None));
        assert_eq!(without_cue("回到最开始的问题：它多重？"), "它多重？");
        // The writer's topic switches go back to a topic, with a question of their own.
        assert_eq!(without_cue("回到最开始的话题：它多重？"), "它多重？");
        assert_eq!(
            without_cue("Going back to the first topic: what does it weigh?"),
            "what does it weigh?"
        );
        assert_eq!(without_cue("Why: the valve?"), "Why: the valve?");
        assert_eq!(
            without_cue("不好意思，我问错了。我想问的是：该站点由谁负责运营？"),
            "该站点由谁负责运营？"
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
