//! Text logic several stages must agree on: lexical terms, sentence boundaries, language, refusals.
//!
//! Terms for lexical heuristics are lower-cased, Snowball-stemmed Latin words and numbers plus CJK character
//! bigrams. Bigrams
//! are the standard dictionary-free way to match Chinese text (the BM25 index uses jieba words instead; these
//! terms only feed the offline heuristics and keyword checks, where robustness beats linguistic precision).

/// The refusal the answer prompt asks for (paper §3.4), in English and Chinese.
pub const REFUSAL_EN: &str = "The information is not sufficient to answer this question.";
pub const REFUSAL_ZH: &str = "信息不足以回答此问题。";

pub fn refusal_for(language: &str) -> &'static str {
    if language == "zh" {
        REFUSAL_ZH
    } else {
        REFUSAL_EN
    }
}

pub use crate::refusal::is_refusal;

fn stem(word: &str) -> String {
    static STEMMER: std::sync::OnceLock<rust_stemmers::Stemmer> = std::sync::OnceLock::new();
    if !word.chars().all(|c| c.is_ascii_alphabetic()) {
        return word.to_string();
    }
    STEMMER
        .get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English))
        .stem(word)
        .into_owned()
}

pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0xF900..=0xFAFF | 0x3040..=0x30FF)
}

/// A CJK character or CJK punctuation (。，、fullwidth forms): text that is written without spaces, so a
/// space beside it is layout, not a word boundary.
pub fn is_cjk_script(c: char) -> bool {
    is_cjk(c) || matches!(c as u32, 0x2E80..=0x303F | 0xFF00..=0xFFEF)
}

/// Length in words as readers count it: whitespace-separated words plus one per CJK character.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count() + text.chars().filter(|c| is_cjk(*c)).count()
}

const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "can",
    "do",
    "does",
    "for",
    "from",
    "has",
    "have",
    "how",
    "in",
    "is",
    "it",
    "its",
    "of",
    "on",
    "or",
    "that",
    "the",
    "this",
    "to",
    "was",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "with",
    "according",
    "document",
    "say",
    "says",
    "about",
    "there",
    "their",
    "they",
    "than",
    "then",
    "these",
    "those",
    "into",
    "also",
    "been",
    "being",
    "but",
    "not",
    "no",
    "if",
    "so",
    "such",
    "will",
    "would",
    "should",
    "could",
    "may",
    "must",
    "all",
    "any",
    "each",
    "other",
    "more",
    "most",
    "some",
    "only",
    "own",
    "same",
    "very",
    "just",
    "over",
    "under",
];

const CJK_STOP: &[&str] = &[
    "的", "了", "是", "在", "和", "与", "及", "或", "有", "中", "为", "对",
];

pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word) || CJK_STOP.contains(&word)
}

/// Lexical terms of a text: Latin words and numbers (lower-cased, stop words removed) and CJK bigrams.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk_run: Vec<char> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let flush_word = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            let w = word.trim_matches('.').to_string();
            if !w.is_empty() && !is_stop_word(&w) {
                out.push(stem(&w));
            }
            word.clear();
        }
    };
    let flush_cjk = |run: &mut Vec<char>, out: &mut Vec<String>| {
        if run.len() == 1 {
            let s = run[0].to_string();
            if !is_stop_word(&s) {
                out.push(s);
            }
        }
        for pair in run.windows(2) {
            out.push(pair.iter().collect());
        }
        run.clear();
    };
    for (i, &c) in chars.iter().enumerate() {
        if is_cjk(c) {
            flush_word(&mut word, &mut out);
            cjk_run.push(c);
        } else if c.is_alphanumeric() {
            flush_cjk(&mut cjk_run, &mut out);
            // A unit glued to its figure is a word of its own: "5km" has the terms of "5 km".
            if c.is_alphabetic() && word.chars().all(|d| d.is_ascii_digit() || d == '.') {
                flush_word(&mut word, &mut out);
            }
            word.extend(c.to_lowercase());
        } else if (c == '.' || c == ',')
            && !word.is_empty()
            && word.chars().last().is_some_and(|p| p.is_ascii_digit())
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit())
        {
            // Keep 4.5 and 1,200 whole: numbers are the facts detail questions ask about.
            if c == '.' {
                word.push('.');
            }
        } else {
            flush_word(&mut word, &mut out);
            flush_cjk(&mut cjk_run, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_cjk(&mut cjk_run, &mut out);
    out
}

/// Sentence char ranges: ends at `。！？；!?` and at `.` followed by space or end, and at blank lines.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ends = match c {
            '。' | '！' | '？' | '；' | '!' | '?' => true,
            '.' => next.is_none_or(|n| n.is_whitespace()),
            '\n' => next == Some('\n') || next.is_none(),
            _ => false,
        };
        if ends {
            push_trimmed(&chars, start, i + 1, &mut out);
            start = i + 1;
        }
        i += 1;
    }
    push_trimmed(&chars, start, chars.len(), &mut out);
    out
}

fn push_trimmed(chars: &[char], mut start: usize, mut end: usize, out: &mut Vec<(usize, usize)>) {
    while start < end && chars[start].is_whitespace() {
        start += 1;
    }
    while end > start && chars[end - 1].is_whitespace() {
        end -= 1;
    }
    if end > start && chars[start..end].iter().any(|c| c.is_alphanumeric()) {
        out.push((start, end));
    }
}

/// A heading line rather than a sentence: no closing punctuation and only a few words.
pub fn is_heading(s: &str) -> bool {
    let closed = s
        .trim_end()
        .ends_with(['.', '!', '?', '。', '！', '？', '；', ':', '：']);
    !closed && s.split_whitespace().count() <= 8 && s.chars().count() <= 60
}

/// A sentence a question could be written about: four words or eight CJK characters, whole (not opening
/// in lower case), closed by sentence punctuation, not itself a question, and not a numbered heading or a contents entry.
pub fn is_askable_sentence(sentence: &str) -> bool {
    let t = sentence.trim();
    let closed = t.ends_with(['.', '!', '。', '！', '；', ';', ':', '：']);
    let long_enough = if t.chars().any(is_cjk) {
        t.chars().filter(|c| is_cjk(*c)).count() >= 8
    } else {
        t.split_whitespace()
            .filter(|w| w.chars().any(char::is_alphabetic))
            .count()
            >= 4
    };
    // A sentence starts with a capital, a digit, a quote or CJK; a lower-case start is the tail of a
    // sentence a page or section break cut.
    let starts_whole = t.chars().next().is_some_and(|c| {
        c.is_uppercase() || c.is_ascii_digit() || is_cjk(c) || "“\"‘'(《「".contains(c)
    });
    // Legal boilerplate is shouted; a reader does not ask about it.
    let letters = t.chars().filter(|c| c.is_alphabetic() && !is_cjk(*c));
    let (upper, all) = letters.fold((0, 0), |(u, a), c| {
        (u + usize::from(c.is_uppercase()), a + 1)
    });
    let shouted = all >= 20 && upper * 2 > all;
    closed
        && long_enough
        && starts_whole
        && !shouted
        && count_leaders(t) == 0
        && !starts_with_numbering(t)
        && contents_entries(t) == 0
}

/// Contents entries without dot leaders: a page number, then a section number and a title ("… 3 2.1
/// People around Debian 3 2.2 …").
pub fn contents_entries(text: &str) -> usize {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let page = |t: &str| t.len() <= 4 && t.chars().all(|c| c.is_ascii_digit());
    let section = |t: &str| {
        t.contains('.')
            && t.trim_end_matches('.')
                .split('.')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    };
    tokens
        .windows(3)
        .filter(|w| {
            page(w[0])
                && section(w[1])
                && w[2]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_uppercase() || is_cjk(c))
        })
        .count()
}

/// `2.3 `, `3.3.1 `, `6 2.2 ` (a page number before an entry): the opening of a contents entry or a
/// numbered heading, which a sentence does not start with.
pub fn starts_with_numbering(text: &str) -> bool {
    let mut tokens = text.split_whitespace();
    let Some(first) = tokens.next() else {
        return false;
    };
    let numbered = |t: &str| {
        !t.is_empty()
            && t.split('.').filter(|p| !p.is_empty()).count() >= 1
            && t.chars().all(|c| c.is_ascii_digit() || c == '.')
            && t.chars().any(|c| c.is_ascii_digit())
    };
    numbered(first)
        && (first.contains('.')
            || tokens
                .next()
                .is_some_and(|t| numbered(t) && t.contains('.')))
}

/// Runs of four or more dots (spaced or not, or ellipses): the leaders of a contents entry.
pub fn count_leaders(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let (mut count, mut i) = (0, 0);
    while i < chars.len() {
        if chars[i] != '.' && chars[i] != '…' {
            i += 1;
            continue;
        }
        // A run of dots, each at most one space from the next.
        let (mut dots, mut j) = (0, i);
        while j < chars.len() {
            match chars[j] {
                '.' => dots += 1,
                '…' => dots += 3,
                ' ' if chars.get(j + 1).is_some_and(|c| *c == '.' || *c == '…') => {}
                _ => break,
            }
            j += 1;
        }
        if dots >= 4 {
            count += 1;
        }
        i = j.max(i + 1);
    }
    count
}

/// ISO 639-1 language of a text: `zh` when CJK characters dominate, otherwise whatlang's guess.
pub fn detect_language(text: &str) -> &'static str {
    let sample: String = text.chars().take(4000).collect();
    let (mut cjk, mut letters) = (0usize, 0usize);
    for c in sample.chars() {
        if is_cjk(c) {
            cjk += 1;
            letters += 1;
        } else if c.is_alphabetic() {
            letters += 1;
        }
    }
    if letters == 0 {
        return "und";
    }
    // A CJK character carries about a word's worth of meaning: a fifth of the letters is a Chinese text.
    if cjk * 5 >= letters {
        return "zh";
    }
    match whatlang::detect_lang(&sample) {
        Some(whatlang::Lang::Eng) => "en",
        Some(whatlang::Lang::Fra) => "fr",
        Some(whatlang::Lang::Deu) => "de",
        Some(whatlang::Lang::Spa) => "es",
        Some(whatlang::Lang::Cmn) => "zh",
        Some(_) | None => "en",
    }
}

/// The language of a text when it can be told with confidence: `zh` by script, otherwise whatlang's guess
/// only where whatlang calls it reliable (`other` for a language we do not name); None when unsure, as for
/// a short phrase like "610 passengers per hour", which whatlang may take for German.
pub fn confident_language(text: &str) -> Option<&'static str> {
    match detect_language(text) {
        "zh" => return Some("zh"),
        "und" => return None,
        _ => {}
    }
    let info = whatlang::detect(text).filter(|i| i.is_reliable())?;
    Some(match info.lang() {
        whatlang::Lang::Eng => "en",
        whatlang::Lang::Fra => "fr",
        whatlang::Lang::Deu => "de",
        whatlang::Lang::Spa => "es",
        whatlang::Lang::Cmn => "zh",
        _ => "other",
    })
}

/// The language of a question given with its reference answer (an imported or labelled case): a short
/// question alone misleads a detector ("At what pressure does it open?" reads as French), so both are read
/// together, and a language other than English (or Chinese, told by script) only when the guess is sure.
pub fn question_language(question: &str, reference: &str) -> &'static str {
    confident_language(&format!("{question} {reference}")).unwrap_or("en")
}

/// Convert a byte offset of `text` to a char offset.
pub fn byte_to_char(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].chars().count()
}

/// Share of `keywords` found in `haystack` (case-insensitive); None when there are no keywords.
pub fn keyword_recall(keywords: &[String], haystack: &str) -> Option<f64> {
    if keywords.is_empty() {
        return None;
    }
    let lower = haystack.to_lowercase();
    let mut facts_said = None;
    let found = keywords
        .iter()
        .filter(|k| {
            lower.contains(&k.to_lowercase())
                || crate::contradiction::names_the_same(k, haystack)
                || {
                    // A keyword that is a figure is found as a value: "5 km" in "5,000 metres", 3年 in 三年.
                    let wanted = crate::facts::quantities(k);
                    let said = facts_said.get_or_insert_with(|| crate::facts::quantities(haystack));
                    !wanted.is_empty() && wanted.iter().all(|q| q.covered_by(said))
                }
        })
        .count();
    Some(found as f64 / keywords.len() as f64)
}

/// Whether a text states a negation: `not`, `no`, `never`, `cannot`, `n't`… or 不, 没, 无, 未, 非. Two
/// statements of one fact that differ here contradict each other more often than not ("I have no nationality"
/// against "I am Chinese"); term overlap cannot see it.
pub fn negated(text: &str) -> bool {
    const ENGLISH: &[&str] = &[
        "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "cannot", "without",
    ];
    const CHINESE: &[char] = &['不', '没', '无', '未', '非', '否'];
    // "doesn’t" negates as "doesn't" does.
    let lower = text.to_lowercase().replace(['\u{2019}', '\u{02BC}'], "'");
    lower.contains("n't")
        || word_pieces(&lower).iter().any(|w| ENGLISH.contains(w))
        || (lower.chars().any(|c| CHINESE.contains(&c))
            && without_words_that_negate_nothing(&lower)
                .chars()
                .any(|c| CHINESE.contains(&c)))
}

/// Chinese words that hold a negating character but deny nothing: 非常 ("very"), 无论 ("whatever"), 未来
/// ("future"), 不仅 ("not only … but")… 不同 ("not alike") stays: "口味不同" denies one answer as 不一样 does.
fn without_words_that_negate_nothing(text: &str) -> String {
    const WORDS: &[&str] = &[
        "非常", "无论", "不论", "未来", "不仅", "不但", "不过", "否则", "不断", "非洲", "除非",
        "无数", "不少", "无限", "莫非",
    ];
    let mut t = text.to_string();
    for w in WORDS {
        if t.contains(w) {
            t = t.replace(w, "");
        }
    }
    t
}

/// Whether `later` contradicts `earlier`, two statements by one speaker: about the same thing (most of
/// their words shared) but one negated and the other not, or giving different numbers. A lexical signal —
/// it sees "24 months" against "12 months" and "is covered" against "is not covered", not paraphrase.
pub fn contradicts(earlier: &str, later: &str) -> bool {
    let numbers = |t: &str| -> std::collections::BTreeSet<String> {
        terms(t)
            .into_iter()
            .filter(|w| {
                w.chars().all(|c| c.is_ascii_digit() || c == '.')
                    && w.chars().any(|c| c.is_ascii_digit())
            })
            .collect()
    };
    let words = |t: &str| -> String {
        terms(t)
            .into_iter()
            .filter(|w| !w.chars().any(|c| c.is_ascii_digit()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let Some(same_words) = term_f1(&words(earlier), &words(later)) else {
        return false;
    };
    if same_words < 0.6 {
        return false;
    }
    let (a, b) = (numbers(earlier), numbers(later));
    (negated(earlier) != negated(later)) || (!a.is_empty() && !b.is_empty() && a.is_disjoint(&b))
}

/// F1 of two texts' [`terms`] (stemmed words, CJK bigrams), counted with multiplicity; None when either has
/// no term.
pub fn term_f1(a: &str, b: &str) -> Option<f64> {
    let count = |t: &str| {
        let mut m: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        for term in terms(t) {
            *m.entry(term).or_default() += 1;
        }
        m
    };
    let (ca, cb) = (count(a), count(b));
    let (na, nb) = (ca.values().sum::<usize>(), cb.values().sum::<usize>());
    if na == 0 || nb == 0 {
        return None;
    }
    let common: usize = ca
        .iter()
        .map(|(t, n)| (*n).min(cb.get(t).copied().unwrap_or(0)))
        .sum();
    if common == 0 {
        return Some(0.0);
    }
    let (p, r) = (common as f64 / na as f64, common as f64 / nb as f64);
    Some(2.0 * p * r / (p + r))
}

#[cfg(test)]
mod tests {
    #[test]
    fn negation_and_term_overlap() {
        assert!(negated("I have no nationality."));
        assert!(negated("The valve doesn't open."));
        assert!(negated("我没有国籍。"));
        assert!(!negated("我是中国人。"));
        assert!(negated("The valve doesn’t open."));
        assert!(!negated("这个问题非常重要，未来也一样。"));
        assert!(negated("这个问题非常重要，但不能回答。"));
        assert!(!negated("The valve opens at 4.5 bar; notably early."));
        assert_eq!(term_f1("valve opens", "valve opens"), Some(1.0));
        assert_eq!(term_f1("", "valve"), None);
        let f = term_f1("左慈字孔明", "字元放。左慈").unwrap();
        assert!(f > 0.0 && f < 1.0, "{f}");
    }

    use super::*;

    #[test]
    fn terms_mix_latin_numbers_and_cjk_bigrams() {
        assert_eq!(
            terms("The pump runs at 4.5 bar, 1,200 rpm."),
            vec!["pump", "run", "4.5", "bar", "1200", "rpm"]
        );
        assert_eq!(terms("额定电压"), vec!["额定", "定电", "电压"]);
        assert_eq!(terms("Qwen模型"), vec!["qwen", "模型"]);
    }

    #[test]
    fn sentences_split_english_and_chinese_but_not_decimals() {
        let t = "Pressure is 4.5 bar. Next one! 第一句。第二句？";
        let s: Vec<String> = sentences(t)
            .into_iter()
            .map(|(a, b)| t.chars().skip(a).take(b - a).collect())
            .collect();
        assert_eq!(
            s,
            vec!["Pressure is 4.5 bar.", "Next one!", "第一句。", "第二句？"]
        );
    }

    #[test]
    fn refusals_detected_in_both_languages() {
        assert!(is_refusal(REFUSAL_EN));
        assert!(is_refusal(REFUSAL_ZH));
        assert!(is_refusal("Sorry, I don’t know."));
        assert!(is_refusal("文档中未提及该信息"));
        assert!(is_refusal("文档中没有提供这一信息。"));
        assert!(!is_refusal("The warranty lasts 24 months."));
    }

    #[test]
    fn language_detection() {
        assert_eq!(
            detect_language("The quick brown fox jumps over the lazy dog."),
            "en"
        );
        assert_eq!(detect_language("本产品的额定电压为二百二十伏。"), "zh");
        assert_eq!(detect_language("1234 !!"), "und");
    }

    #[test]
    fn keyword_recall_counts_and_handles_empty() {
        let k = vec!["Alpha".to_string(), "beta".to_string()];
        assert_eq!(keyword_recall(&k, "alpha only"), Some(0.5));
        assert_eq!(keyword_recall(&[], "x"), None);
    }
}

/// The text cut into jieba pieces (words, spaces, punctuation), which concatenate back to the text: the
/// places between pieces are the places a Chinese or English text may be cut without splitting a word.
pub fn word_pieces(text: &str) -> Vec<&str> {
    jieba()
        .cut(text, true)
        .into_iter()
        .map(|t| t.word)
        .collect()
}

/// The pieces of [`word_pieces`] with jieba's part-of-speech tag each (`n` noun, `vn` verbal noun, `v`
/// verb, `t` time word, `x` punctuation or space…), for the few places where whether a Chinese word is a
/// noun decides something (a modifier left before a noun is no subject).
pub fn tagged_pieces(text: &str) -> Vec<(&str, &str)> {
    jieba()
        .tag(text, true)
        .into_iter()
        .map(|t| (t.word, t.tag))
        .collect()
}

/// One dictionary for the process: loading it takes ~100 ms.
fn jieba() -> &'static jieba_rs::Jieba {
    static JIEBA: std::sync::OnceLock<jieba_rs::Jieba> = std::sync::OnceLock::new();
    JIEBA.get_or_init(jieba_rs::Jieba::new)
}

#[cfg(test)]
mod tag_tests {
    #[test]
    fn tagged_pieces_are_the_word_pieces() {
        for text in [
            "夜间活动期间禁止使用什么？",
            "How many euros does a day pass cost?",
            "电池组可以充电多少次？",
        ] {
            let tagged: Vec<&str> = super::tagged_pieces(text)
                .into_iter()
                .map(|(w, _)| w)
                .collect();
            assert_eq!(tagged, super::word_pieces(text));
        }
        let tags: Vec<&str> = super::tagged_pieces("夜间活动期间禁止使用什么？")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(tags[..2], ["t", "vn"]);
    }
}

/// Content words in order: jieba segmentation for Chinese (it passes Latin words through), lower-cased,
/// stop words and punctuation dropped. Used where whole words matter (keywords), not bigram matching.
pub fn words(text: &str) -> Vec<String> {
    word_pieces(text)
        .into_iter()
        .map(|w| w.trim().to_lowercase())
        .filter(|w| w.chars().any(char::is_alphanumeric) && !is_stop_word(w))
        .collect()
}

#[cfg(test)]
mod contradiction_tests {
    use super::contradicts;

    #[test]
    fn a_changed_number_or_a_negation_of_the_same_statement_contradicts() {
        assert!(contradicts(
            "The battery is covered for 24 months.",
            "The battery is covered for 12 months."
        ));
        assert!(contradicts(
            "Water damage is covered by the warranty.",
            "Water damage is not covered by the warranty."
        ));
        assert!(contradicts("电池保修期为24个月。", "电池保修期为12个月。"));
        assert!(!contradicts(
            "The battery is covered for 24 months.",
            "The charger is sold separately in every shop."
        ));
        assert!(!contradicts(
            "The battery is covered for 24 months.",
            "Yes, the battery is covered for 24 months."
        ));
    }
}

#[cfg(test)]
mod word_tests {
    #[test]
    fn words_segment_chinese_and_keep_latin() {
        let w = super::words("The pump 额定电压为220伏");
        assert!(w.contains(&"pump".to_string()), "{w:?}");
        assert!(
            w.contains(&"额定电压".to_string()) || w.contains(&"额定".to_string()),
            "{w:?}"
        );
        assert!(!w.contains(&"the".to_string()));
    }
}

#[cfg(test)]
mod question_language_tests {
    use super::question_language;

    #[test]
    fn a_short_question_is_read_with_its_reference() {
        assert_eq!(
            question_language(
                "At what pressure does it open?",
                "The relief valve opens at 4.5 bar."
            ),
            "en"
        );
        assert_eq!(
            question_language("满载电流呢？", "满载电流为 3.2 安培。"),
            "zh"
        );
    }
}
