//! An answer that says what its sources say with one fact changed: a sentence of the answer laid over the
//! source sentence it copies (a passage's or the reference's), and what it put in place of the source's words
//! read for a moved figure, a swapped name or a flipped negation; and an answer that gives figures, none of
//! them the reference's, in whatever words.
//!
//! Lexical, and deliberately narrow: it sees an answer that copies or edits a source sentence (what a reader
//! model and a careless summary write most), not a paraphrase. What it reports is a contradiction in the
//! answer's own words, so a rule may fail the answer on it whatever a judge rated.

use crate::facts::{self, Quantity, contractions};
use crate::{is_cjk, negated, sentences, terms};
use std::collections::HashSet;
use std::fmt;

/// What an answer changed in the sentence it copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A figure the source does not give, where the source gives another.
    Figure,
    /// A name in place of the source's: a name (a capitalised word, a Chinese proper noun) or the fact the
    /// reference answers with.
    Name,
    /// A negation put in or taken out.
    Negation,
}

/// A contradiction found: its kind, what the answer says and what its source says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradiction {
    pub kind: ChangeKind,
    /// The answer's words in place of the source's (empty where it only left words out).
    pub said: String,
    /// The source's words the answer replaced or left out (empty where it only added words).
    pub source: String,
    /// The source sentence the answer copies.
    pub sentence: String,
}

impl fmt::Display for Contradiction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (said, source) = (self.said.trim(), self.source.trim());
        match self.kind {
            ChangeKind::Figure => write!(f, "states {said:?} where its source says {source:?}"),
            ChangeKind::Name => write!(f, "names {said:?} where its source names {source:?}"),
            ChangeKind::Negation if said.is_empty() => {
                write!(f, "drops the negation {source:?} of its source")
            }
            ChangeKind::Negation => write!(f, "negates its source with {said:?}"),
        }?;
        write!(f, " (\"{}\")", self.sentence)
    }
}

/// Longest change read as one edit, in chars: more is a different sentence, not an edited one.
const MAX_CHANGE: usize = 40;
/// Share of the longer sentence the two must share around the change.
const MIN_SHARED: f64 = 0.6;

/// The first sentence of `answer` that copies a sentence of `reference` or `passages` with a figure, a name
/// or a negation changed. None when no sentence does (or the answer copies nothing).
///
/// Contractions and typographic apostrophes are spelt out first ("doesn’t" is "does not"), and figures are
/// compared as values (`facts`): "5km" where a source says "5 km" changes nothing.
pub fn contradiction(answer: &str, reference: &str, passages: &[&str]) -> Option<Contradiction> {
    let answer = contractions(answer);
    let reference = contractions(reference);
    let passages: Vec<String> = passages.iter().map(|p| contractions(p)).collect();
    let passages: Vec<&str> = passages.iter().map(String::as_str).collect();
    let grounded = Grounded::of(&reference, &passages);
    // Each source sentence with its length: one that differs from an answer sentence by more than one
    // change's length cannot be its edit, and is passed over without comparing a char (judging reads every
    // retrieved passage of every cell).
    let mut sources: Vec<(&str, usize)> = Vec::new();
    for text in std::iter::once(reference.as_str()).chain(passages.iter().copied()) {
        sources.extend(
            sentence_slices(text)
                .into_iter()
                .map(|s| (s, s.chars().count())),
        );
    }
    let framed = sentence_slices(&answer).into_iter().find_map(|said| {
        let rest = negating_frame(said)?;
        let rest = rest.trim().to_lowercase();
        sources
            .iter()
            .find(|(s, _)| s.trim().to_lowercase() == rest && !negated(s))
            .map(|(s, _)| Contradiction {
                kind: ChangeKind::Negation,
                said: said[..said.len() - rest.len()].trim().to_string(),
                source: String::new(),
                sentence: s.to_string(),
            })
    });
    if framed.is_some() {
        return framed;
    }
    let edited = sentence_slices(&answer).into_iter().find_map(|said| {
        let length = said.chars().count();
        let (edit, source) = sources
            .iter()
            .filter(|(_, n)| n.abs_diff(length) <= MAX_CHANGE)
            .filter_map(|(s, _)| Edit::of(said, s).map(|e| (e, *s)))
            .max_by_key(|(e, _)| e.shared)?;
        edit.contradiction(said, source, &reference, &grounded)
    });
    edited.or_else(|| other_figures(&answer, &reference, &grounded))
}

/// The reference gives figures and the answer gives figures, none of them the reference's and at least
/// one held by no source at all: "opens at 11.5 bar" against "4.5 bar", in any words ("2016年" where the
/// reference says 2009, however the answer puts it). A figure the passages give is read, not invented.
fn other_figures(answer: &str, reference: &str, grounded: &Grounded) -> Option<Contradiction> {
    let (said, wanted) = (facts::quantities(answer), facts::quantities(reference));
    if said.is_empty() || wanted.is_empty() || said.iter().any(|q| q.held_by(&wanted)) {
        return None;
    }
    let invented: Vec<&Quantity> = said
        .iter()
        .filter(|q| !q.held_by(&grounded.quantities))
        .collect();
    (!invented.is_empty()).then(|| Contradiction {
        kind: ChangeKind::Figure,
        said: texts(invented.iter().copied()),
        source: texts(wanted.iter()),
        sentence: reference.trim().to_string(),
    })
}

fn texts<'a>(quantities: impl Iterator<Item = &'a Quantity>) -> String {
    let mut out: Vec<&str> = quantities.map(|q| q.text.as_str()).collect();
    out.dedup();
    out.join(", ")
}

/// What a sentence says after a frame that negates all of it ("It is not true that …", 并非…), if it
/// opens with one: a short sentence under a long frame is no edit the char-by-char comparison can see.
fn negating_frame(sentence: &str) -> Option<&str> {
    const FRAMES: &[&str] = &[
        "it is not true that ",
        "it is false that ",
        "it is not the case that ",
        "并非",
        "并不是",
    ];
    let lower = sentence.trim_start().to_lowercase();
    let start = sentence.len() - sentence.trim_start().len();
    FRAMES.iter().find_map(|f| {
        // The frames are ASCII or CJK: their lower-cased byte length is the original's.
        lower.starts_with(f).then(|| &sentence[start + f.len()..])
    })
}

fn sentence_slices(text: &str) -> Vec<&str> {
    let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let byte = |c: usize| starts.get(c).copied().unwrap_or(text.len());
    sentences(text)
        .into_iter()
        .map(|(a, b)| text[byte(a)..byte(b)].trim_end_matches(['.', '。', '!', '！', '?', '？']))
        .filter(|s| !s.trim().is_empty())
        .collect()
}

/// What every source holds: its text lower-cased, to ask whether the answer's new words occur anywhere in
/// them, and its quantities, to ask whether a figure does.
struct Grounded {
    text: String,
    quantities: Vec<Quantity>,
}

impl Grounded {
    fn of(reference: &str, passages: &[&str]) -> Self {
        let mut text = reference.to_lowercase();
        for p in passages {
            text.push('\n');
            text.push_str(&p.to_lowercase());
        }
        let quantities =
            facts::quantities_of(std::iter::once(reference).chain(passages.iter().copied()));
        Self { text, quantities }
    }

    fn holds(&self, words: &str) -> bool {
        let w = words.trim().to_lowercase();
        w.is_empty() || self.text.contains(&w)
    }
}

/// One sentence of the answer over one source sentence: the common start and end, and what differs between.
#[derive(Debug)]
struct Edit<'a> {
    inserted: &'a str,
    removed: &'a str,
    /// Chars the two share around the change.
    shared: usize,
}

impl<'a> Edit<'a> {
    /// The edit turning `source` into `said`, when they share most of their text around one short change.
    fn of(said: &'a str, source: &'a str) -> Option<Self> {
        let a: Vec<(usize, char)> = said.char_indices().collect();
        let b: Vec<(usize, char)> = source.char_indices().collect();
        let same = |x: char, y: char| x.to_lowercase().eq(y.to_lowercase());
        let prefix = a
            .iter()
            .zip(&b)
            .take_while(|((_, x), (_, y))| same(*x, *y))
            .count();
        let max_suffix = a.len().min(b.len()) - prefix;
        let suffix = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(max_suffix)
            .take_while(|((_, x), (_, y))| same(*x, *y))
            .count();
        let shared = prefix + suffix;
        let longer = a.len().max(b.len());
        if shared == a.len() && shared == b.len() {
            return None;
        }
        let (ins, rem) = (a.len() - shared, b.len() - shared);
        if (shared as f64) < MIN_SHARED * longer as f64 || ins > MAX_CHANGE || rem > MAX_CHANGE {
            return None;
        }
        let cut = |s: &'a str, v: &[(usize, char)], from: usize, to: usize| {
            let at = |i: usize| v.get(i).map_or(s.len(), |(b, _)| *b);
            &s[at(from)..at(to)]
        };
        // Widen a change that starts or ends inside a word to the whole word, so "11.5" against "4.5" reads
        // as figures, not "11" against "4". Both sides agree outside the change, so one side's chars decide.
        let word = |c: char| c.is_alphanumeric() && !is_cjk(c);
        let inside = |v: &[(usize, char)], from: usize, to: usize, i: usize| {
            (from..to).contains(&i) && word(v[i].1)
        };
        let joins = |c: char| word(c) || is_figure_char(c);
        let (mut from, mut to_a, mut to_b) = (prefix, a.len() - suffix, b.len() - suffix);
        while from > 0
            && (word(a[from - 1].1)
                || (is_figure_char(a[from - 1].1) && from >= 2 && a[from - 2].1.is_ascii_digit()))
            && (inside(&a, from, to_a, from) || inside(&b, from, to_b, from))
        {
            from -= 1;
        }
        while to_a < a.len()
            && (word(a[to_a].1)
                || (is_figure_char(a[to_a].1)
                    && a.get(to_a + 1).is_some_and(|(_, c)| c.is_ascii_digit())))
            && ((to_a > from && joins(a[to_a - 1].1)) || (to_b > from && joins(b[to_b - 1].1)))
        {
            to_a += 1;
            to_b += 1;
        }
        Some(Self {
            inserted: cut(said, &a, from, to_a),
            removed: cut(source, &b, from, to_b.min(b.len())),
            shared,
        })
    }

    /// The contradiction this edit makes of `source` in the answer's sentence `said`, if any.
    fn contradiction(
        &self,
        said: &str,
        source: &str,
        reference: &str,
        grounded: &Grounded,
    ) -> Option<Contradiction> {
        let (ins, rem) = (self.inserted.trim(), self.removed.trim());
        let found = |kind, said: String, was: String| Contradiction {
            kind,
            said,
            source: was,
            sentence: source.to_string(),
        };
        // A negation put in or taken out, and nothing else: "is not" for "is", "needs" for "does not need".
        let same_words = || terms(ins) == terms(rem);
        if negated(ins) != negated(rem)
            && (only_negation(ins) || only_negation(rem) || same_words())
        {
            return Some(found(
                ChangeKind::Negation,
                ins.to_string(),
                rem.to_string(),
            ));
        }
        if ins.is_empty() || rem.is_empty() {
            return None;
        }
        // A figure is changed only where the answer's sentence states a value that no source holds, in
        // whatever spelling ("5km", "5,000 metres", 三年) and wherever the edit's edges fell.
        if touches_a_figure(ins) || touches_a_figure(rem) {
            let said_figures = facts::quantities(said);
            let invented: Vec<&Quantity> = said_figures
                .iter()
                .filter(|q| !q.held_by(&grounded.quantities))
                .collect();
            let replaced = facts::quantities(source);
            let replaced: Vec<&Quantity> = replaced
                .iter()
                .filter(|q| !q.held_by(&said_figures))
                .collect();
            // A figure put where the source gave none ("第二版" for "再版") is added, not changed: the
            // judge weighs an invented figure; the rule fails only a figure stated in place of another.
            return (!invented.is_empty() && !replaced.is_empty()).then(|| {
                found(
                    ChangeKind::Figure,
                    texts(invented.into_iter()),
                    texts(replaced.into_iter()),
                )
            });
        }
        // A name in place of a source's name or of the fact the reference gives ("Tomas Reyes" where it
        // says "Priya Castell"), held by no source. Titles and a name's own parts are not names of their
        // own ("Ms Castell", 张馆长 for 张伟); a capitalised word the sources use in lower case is a common
        // noun at a sentence's start. A vaguer phrase in place of the fact ("a set pressure" for "4.5
        // bar") leaves it out, which is incompleteness, not a contradiction.
        let new_name = name_words(ins, grounded);
        if new_name.is_empty() || !is_name(&new_name) || grounded.holds(&new_name) {
            return None;
        }
        let replaced_the_fact = rem.chars().count() >= 2
            && reference.to_lowercase().contains(&rem.to_lowercase())
            && !reference.trim().eq_ignore_ascii_case(source.trim());
        let old_name = without_titles(rem);
        (replaced_the_fact || (!old_name.is_empty() && is_name(&old_name)))
            .then(|| found(ChangeKind::Name, ins.to_string(), rem.to_string()))
    }
}

fn touches_a_figure(text: &str) -> bool {
    text.chars().any(|c| c.is_ascii_digit()) || !facts::quantities(text).is_empty()
}

/// Titles and forms of address: part of how a name is written, never a name of their own.
const TITLES: &[&str] = &[
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "dr",
    "prof",
    "professor",
    "sir",
    "madam",
    "dame",
    "lord",
    "lady",
    "director",
    "manager",
    "chief",
    "head",
    "captain",
    "dean",
    "chair",
    "chairman",
    "chairwoman",
    "president",
    "minister",
    "officer",
    "engineer",
    "inspector",
    "supervisor",
    "coordinator",
    "curator",
];
const CHINESE_TITLES: &[&str] = &[
    "馆长",
    "先生",
    "女士",
    "小姐",
    "老师",
    "经理",
    "主任",
    "教授",
    "博士",
    "院长",
    "校长",
    "局长",
    "部长",
    "总监",
    "工程师",
    "医生",
    "主席",
    "书记",
    "处长",
    "科长",
    "队长",
    "站长",
    "所长",
    "厂长",
    "董事长",
    "总经理",
    "同志",
];

fn without_titles(words: &str) -> String {
    let mut s = words.to_string();
    for t in CHINESE_TITLES {
        s = s.replace(t, " ");
    }
    s.split(|c: char| c.is_whitespace() || c == ',' || c == '.')
        .filter(|w| !w.is_empty() && !TITLES.contains(&w.to_lowercase().as_str()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether `text` names whoever the name `name` names, by a part of it: "Castell" or "Ms Castell" for
/// "Priya Castell", 王馆长 for 王建国 (a surname with a title). False where `name` is no name.
pub fn names_the_same(name: &str, text: &str) -> bool {
    if !is_name(name) {
        return false;
    }
    let lower = text.to_lowercase();
    // The family name stands for the person ("Castell", "Ms Castell"); a given name alone does not
    // ("Priya" is part of the answer, not all of it).
    let family = name.split(|c: char| !c.is_alphanumeric()).rfind(|w| {
        w.chars().count() >= 3
            && w.starts_with(|c: char| c.is_uppercase())
            && !TITLES.contains(&w.to_lowercase().as_str())
    });
    let latin_part = family.is_some_and(|w| {
        lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|t| t == w.to_lowercase())
    });
    let surname = name
        .chars()
        .next()
        .filter(|c| is_cjk(*c))
        .is_some_and(|first| {
            CHINESE_TITLES
                .iter()
                .any(|t| text.contains(&format!("{first}{t}")))
        });
    latin_part || surname
}

/// The words of a change that could name someone new: without titles, and without the words the sources
/// already use (a name's own parts, or a common noun capitalised at a sentence's start).
fn name_words(words: &str, grounded: &Grounded) -> String {
    without_titles(words)
        .split(' ')
        .filter(|w| !w.is_empty() && !grounded.holds(w) && !facts::is_unit_word(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How much of its reference an answer gives, both read with one spelling of every figure (`facts`): the
/// share of the reference's terms it holds, whether one text is a span of the other, and whether it states
/// a figure of the reference's as a value ("5,000 metres" for "5 km"). None when the reference has no terms.
struct Given {
    share: f64,
    spans: bool,
    figure: bool,
}

impl Given {
    fn of(answer: &str, reference: &str) -> Option<Self> {
        Self::beyond(answer, reference, "")
    }

    /// As `of`, counting only the reference's terms `known` does not already hold: what the user said
    /// themselves is no answer when an assistant says it back.
    fn beyond(answer: &str, reference: &str, known: &str) -> Option<Self> {
        let (said, whole) = (facts::normalise(answer), facts::normalise(reference));
        let all: HashSet<String> = terms(&whole).into_iter().collect();
        if all.is_empty() {
            return None;
        }
        let known: HashSet<String> = terms(&facts::normalise(known)).into_iter().collect();
        let new: HashSet<String> = all.difference(&known).cloned().collect();
        let wanted = if new.is_empty() { all } else { new };
        let (said, whole) = (said.trim().to_lowercase(), whole.trim().to_lowercase());
        let given: HashSet<String> = terms(&said).into_iter().collect();
        let share =
            wanted.iter().filter(|t| given.contains(*t)).count() as f64 / wanted.len() as f64;
        let spans = said.chars().count() >= 2
            && (whole.contains(&said) || said.contains(&whole))
            && (known.is_empty() || share > 0.0);
        let expected = facts::quantities(reference);
        let figure = !expected.is_empty()
            && facts::quantities(answer)
                .iter()
                .any(|q| q.dimension != facts::Dimension::Count && q.held_by(&expected));
        Some(Self {
            share,
            spans,
            figure,
        })
    }
}

/// Whether an answer gives any of its reference: a fifth of the reference's terms, or a span of it ("1655年"
/// of "顺治十二年（1655年）"), or the reference whole within a longer answer, or one of its figures with its
/// unit in any spelling. None when the reference has no terms to compare with.
pub fn gives_reference(answer: &str, reference: &str) -> Option<bool> {
    Given::of(answer, reference).map(|g| g.spans || g.share >= 0.2 || g.figure)
}

/// Whether an answer settles what its reference says: it holds half the reference's terms (or the
/// reference whole, or is a span of it), and contradicts it in no figure, name or negation. What a
/// simulated user takes as its goal met, and the judge as a goal reached.
pub fn settles(answer: &str, reference: &str) -> bool {
    settles_beyond(answer, reference, "")
}

/// Whether an answer settles its reference by what it adds to `known` (the user's own messages): an
/// assistant that says the user's question back settles nothing, however many of the reference's words
/// the question held.
pub fn settles_beyond(answer: &str, reference: &str, known: &str) -> bool {
    if crate::is_refusal(answer) {
        return false;
    }
    Given::beyond(answer, reference, known).is_some_and(|g| g.share >= 0.5 || g.spans)
        && contradiction(answer, reference, &[]).is_none()
}

fn is_figure_char(c: char) -> bool {
    c.is_ascii_digit() || c == '.' || c == ','
}

/// Whether a change is a negation and little else: "not", "n't", "never", 不, 没, "It is not true that"…
fn only_negation(s: &str) -> bool {
    const FILLER: &[&str] = &[
        "not", "no", "never", "n't", "it", "is", "was", "true", "that", "the", "case", "do",
        "does", "did", "can", "cannot", "don't", "doesn't", "didn't", "isn't", "wasn't", "aren't",
        "weren't", "won't", "can't",
    ];
    const ZH: &[char] = &['不', '没', '未', '无', '非', '并', '须', '有', '是', '必'];
    let s = s.trim().to_lowercase();
    if s.is_empty() {
        return false;
    }
    s.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .all(|w| {
            FILLER.contains(&w) || (w.chars().all(is_cjk) && w.chars().all(|c| ZH.contains(&c)))
        })
}

/// Whether words name something: a capitalised word that is no function word ("Priya Castell", "Debian"),
/// or a Chinese proper noun by jieba's tags (person, place, organisation, other proper noun).
pub fn is_name(words: &str) -> bool {
    let latin = words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
        .any(|w| {
            w.starts_with(|c: char| c.is_uppercase())
                && !crate::is_stop_word(&w.to_lowercase())
                && w.chars().all(|c| c.is_alphabetic() && !is_cjk(c))
        });
    latin
        || crate::tagged_pieces(words).into_iter().any(|(w, tag)| {
            w.chars().count() >= 2 && matches!(tag, "nr" | "ns" | "nt" | "nz" | "nrt")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSAGE: &str = "It is operated by Priya Castell, who leads a team of 12 technicians. \
        Filters are replaced every 30 days.";

    fn found(answer: &str, reference: &str) -> Option<ChangeKind> {
        contradiction(answer, reference, &[PASSAGE]).map(|c| c.kind)
    }

    #[test]
    fn a_copied_sentence_with_one_fact_changed_contradicts_its_source() {
        let name = "It is operated by Tomas Reyes, who leads a team of 12 technicians.";
        assert_eq!(found(name, "Priya Castell"), Some(ChangeKind::Name));
        // In any words: the reference's figure is not the answer's.
        assert_eq!(
            found("They change them monthly, every 31 days.", "Every 30 days"),
            Some(ChangeKind::Figure)
        );
        assert_eq!(
            found("They change them monthly, every 30 days.", "Every 30 days"),
            None
        );
        let figure = "Filters are replaced every 37 days.";
        assert_eq!(found(figure, "Every 30 days"), Some(ChangeKind::Figure));
        // Something vaguer in place of the fact leaves it out: incomplete, not contradictory.
        let vague = "It is operated by a supervisor, who leads a team of 12 technicians.";
        assert_eq!(found(vague, "Priya Castell"), None);
        let negation = "Filters are not replaced every 30 days.";
        assert_eq!(found(negation, "Every 30 days"), Some(ChangeKind::Negation));
        let it_is_not = "It is not true that filters are replaced every 30 days.";
        assert_eq!(
            found(it_is_not, "Every 30 days"),
            Some(ChangeKind::Negation)
        );
        let c = contradiction(name, "Priya Castell", &[PASSAGE]).unwrap();
        assert_eq!(
            (c.said.as_str(), c.source.as_str()),
            ("Tomas Reyes", "Priya Castell")
        );
        assert!(c.to_string().contains("Tomas Reyes"), "{c}");
    }

    #[test]
    fn chinese_edits_are_read_the_same_way() {
        let passage = "该站点由王建国负责运营，带领一支12名技术员的团队。过滤器每30天更换一次。";
        let of = |answer: &str, reference: &str| {
            contradiction(answer, reference, &[passage]).map(|c| c.kind)
        };
        assert_eq!(
            of("该站点由李明负责运营，带领一支12名技术员的团队。", "王建国"),
            Some(ChangeKind::Name)
        );
        assert_eq!(
            of("过滤器每37天更换一次。", "每30天"),
            Some(ChangeKind::Figure)
        );
        assert_eq!(
            of("过滤器并非每30天更换一次。", "每30天"),
            Some(ChangeKind::Negation)
        );
        assert_eq!(of("过滤器每30天更换一次。", "每30天"), None);
    }

    #[test]
    fn faithful_answers_are_no_contradiction() {
        for answer in [
            "It is operated by Priya Castell, who leads a team of 12 technicians.",
            "It is operated by Priya Castell.",
            "Priya Castell operates it.",
            "Filters are replaced every 30 days, according to the handbook.",
            "Yes. Filters are replaced every 30 days.",
            "The filters are replaced every 30 days.",
            "Pumps are painted blue.",
        ] {
            assert_eq!(found(answer, "Priya Castell"), None, "{answer}");
        }
        // Leaving out a clause that held a negation negates nothing.
        let source = "The pump does not need priming and runs 24 hours a day.";
        assert_eq!(
            contradiction("The pump runs 24 hours a day.", "24 hours", &[source]),
            None
        );
    }

    #[test]
    fn right_answers_in_other_words_are_no_contradiction() {
        let passage = "The trail is 5 km long and opens at 10:30. The valve opens at 4.5 bar. \
            It is run by Priya Castell and Elena Park. Three technicians work there, each on an 8-hour \
            shift. The pump does not need priming. The office closes at 6 p.m. Signed on 15 March 2021.";
        for (answer, reference) in [
            ("It is 5km long.", "5 km"),
            ("The trail is 5,000 metres long.", "5 km"),
            ("The valve opens at 4.50 bar.", "4.5 bar"),
            ("The trail opens at 10.30 am.", "10:30"),
            ("It was signed on the 15th of March.", "15 March 2021"),
            (
                "Three technicians, each on an 8-hour shift.",
                "Three technicians",
            ),
            ("The pump doesn’t need priming.", "It does not need priming"),
            ("The office closes at 18:00.", "6 p.m."),
            ("It is run by Ms Castell and Elena Park.", "Priya Castell"),
            ("It is run by Priya Castell and Park.", "Priya Castell"),
            (
                "Filters are never mentioned; the trail is 5 km long.",
                "5 km",
            ),
        ] {
            assert_eq!(
                contradiction(answer, reference, &[passage]),
                None,
                "{answer}"
            );
        }
        let zh = "该馆由张伟馆长负责，保修期为3年，合格率为92%，无需预约。";
        for (answer, reference) in [
            ("该馆由张馆长负责。", "张伟"),
            ("保修期为三年。", "3年"),
            ("合格率为百分之九十二。", "92%"),
            ("不用预约。", "无需预约"),
        ] {
            assert_eq!(contradiction(answer, reference, &[zh]), None, "{answer}");
        }
        // A figure the passages give is read, not invented, even where the reference gives another.
        let decade = "Built in the 1970s, it has 176 rooms.";
        assert_eq!(
            contradiction("It has 176 rooms.", "the 1970s", &[decade]),
            None
        );
        assert!(contradiction("It has 180 rooms.", "the 1970s", &[decade]).is_some());
    }

    #[test]
    fn a_changed_value_in_any_spelling_still_contradicts() {
        let passage =
            "The trail is 5 km long. The valve opens at 4.5 bar. The pump does not need priming.";
        for answer in [
            "The trail is 7 km long.",
            "The trail is 5 miles long.",
            "The valve opens at 11.5 bar.",
            "The pump does need priming.",
        ] {
            assert!(
                contradiction(answer, "5 km", &[passage]).is_some(),
                "{answer}"
            );
        }
    }

    #[test]
    fn an_answer_gives_its_reference_by_its_terms_or_as_a_span() {
        assert_eq!(gives_reference("It is 5,000 metres.", "5 km"), Some(true));
        assert!(settles("保修三年。", "3年"));
        assert_eq!(
            gives_reference("1655年", "顺治十二年（1655年）"),
            Some(true)
        );
        assert_eq!(
            gives_reference("It opens at 4.5 bar.", "4.5 bar"),
            Some(true)
        );
        assert_eq!(
            gives_reference("Every 30 days", "Priya Castell"),
            Some(false)
        );
        assert_eq!(gives_reference("anything", ""), None);
    }

    #[test]
    fn names_are_capitalised_words_or_chinese_proper_nouns() {
        assert!(is_name("Priya Castell"));
        assert!(is_name("Debian"));
        assert!(!is_name("the pump"));
        assert!(!is_name("The"));
        assert!(is_name("北京") && is_name("陈墨") && is_name("王建国"));
        assert!(!is_name("更换"));
    }
}
