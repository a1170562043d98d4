//! The oracle measured against labels (`ragtester bench oracle`), the way the RAG-Tester paper measured its
//! own (precision on reported failures, 80.6 %). Each labelled question — its expected answer, keywords and
//! the passage that holds the answer — gets answers whose verdict is known in advance:
//!
//! - pass: the expected answer verbatim, reworded (a lead-in and the answer's own words), and another
//!   annotator's different answer where the source has several (CMRC 2018: three people answered each
//!   question, often with longer or shorter spans);
//!   the passage's own sentence that states the fact (quoted);
//! - fail: another question's answer, the same read from its own (wrong) passage, a refusal, the answer
//!   cut before its key fact, the answer with its number changed, the passage's sentence with its name
//!   swapped for another question's or its negation flipped, and the fact stated in the other language.
//!
//! Every answer is judged by each judge through the same path as a real run (rule metrics, the judge's
//! criteria, the rules that bound them), and the verdicts are scored against the labels: precision on
//! reported failures, recall of real failures, accuracy, per kind and per language, with Wilson intervals;
//! judge errors are counted apart, never as a pass or a fail.

use crate::stats::wilson;
use ragtester_core::oracle::Interval;
use ragtester_core::{
    Answer, Category, Generator, RetrievedContext, SourceSpan, Strategy, TestCase, Verdict,
    VerdictStatus,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// A question with a known answer and the passage that holds it.
#[derive(Debug, Clone)]
pub struct LabelledQuestion {
    /// Where it comes from (`docgen-planted`, `cmrc2018-dev`).
    pub source: String,
    pub language: String,
    pub question: String,
    pub answer: String,
    pub keywords: Vec<String>,
    pub passage: String,
    /// Other correct answers (other annotators'), when the source has them.
    pub alternatives: Vec<String>,
    /// Right answers in other words, each with how it words the fact (`unit_converted`, `time_format`,
    /// `chinese_numeral`…): what a judge must pass without any rule failing it.
    pub other_words: Vec<(String, String)>,
}

/// The project's own labelled set of right answers in other words (`data/other_words.jsonl`: English and
/// Chinese questions written for it, none from the demo corpus), as questions whose wrong answers are
/// built like every other source's.
pub fn other_words_questions() -> Vec<LabelledQuestion> {
    #[derive(serde::Deserialize)]
    struct Item {
        language: String,
        question: String,
        passage: String,
        reference: String,
        keywords: Vec<String>,
        other_words: Vec<Wording>,
    }
    #[derive(serde::Deserialize)]
    struct Wording {
        wording: String,
        answer: String,
    }
    include_str!("../../data/other_words.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let item: Item = serde_json::from_str(line).expect("data/other_words.jsonl is valid");
            LabelledQuestion {
                source: "other-words".into(),
                language: item.language,
                question: item.question,
                answer: item.reference,
                keywords: item.keywords,
                passage: item.passage,
                alternatives: Vec::new(),
                other_words: item
                    .other_words
                    .into_iter()
                    .map(|w| (w.wording, w.answer))
                    .collect(),
            }
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    Verbatim,
    Reworded,
    OtherAnnotator,
    /// The fact in other words: a figure in another spelling or unit, a date or time in another format,
    /// number words, a name by its part, a contraction (the project's own labelled set).
    OtherWords,
    /// The passage's sentence that states the fact, as a reader that quotes writes it.
    Quoted,
    OtherQuestion,
    /// Another question's answer with that question's passage retrieved: faithful to the wrong passage,
    /// the most common RAG failure.
    OtherPassage,
    Refusal,
    Truncated,
    ChangedNumber,
    /// The quoted sentence with its name (the fact asked for) swapped for another question's.
    SwappedName,
    /// The quoted sentence negated.
    FlippedNegation,
    WrongLanguage,
}

impl AnswerKind {
    /// Whether a correct oracle fails this answer.
    pub fn should_fail(self) -> bool {
        !matches!(
            self,
            AnswerKind::Verbatim
                | AnswerKind::Reworded
                | AnswerKind::OtherAnnotator
                | AnswerKind::OtherWords
                | AnswerKind::Quoted
        )
    }
}

/// One answer of known label to one question.
#[derive(Debug, Clone)]
pub struct LabelledAnswer {
    pub question: usize,
    pub kind: AnswerKind,
    pub text: String,
    /// The question whose passage is retrieved with the answer: its own, but for [`AnswerKind::OtherPassage`].
    pub passage_of: usize,
}

/// The labelled answers of every question: the kinds that can be built from it (a changed number needs a
/// number, a cut needs a keyword after the answer's start).
pub fn labelled_answers(questions: &[LabelledQuestion]) -> Vec<LabelledAnswer> {
    let mut out = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        let zh = q.language == "zh";
        // Each answer with the question whose passage is retrieved with it.
        let mut made: Vec<(AnswerKind, String, usize)> = Vec::new();
        let mut push = |kind, text: String, from: usize| made.push((kind, text, from));
        push(AnswerKind::Verbatim, q.answer.clone(), i);
        push(
            AnswerKind::Reworded,
            if zh {
                format!("根据资料，{}", q.answer)
            } else {
                format!("According to the document, {}", lower_first(&q.answer))
            },
            i,
        );
        if let Some(alternative) = q.alternatives.iter().find(|a| a.trim() != q.answer.trim()) {
            push(AnswerKind::OtherAnnotator, alternative.clone(), i);
        }
        for (_, answer) in &q.other_words {
            push(AnswerKind::OtherWords, answer.clone(), i);
        }
        // The next question of the same language whose answer shares no keyword with this one.
        let unlike = |o: &LabelledQuestion| {
            o.answer != q.answer && !q.keywords.iter().any(|k| o.answer.contains(k.as_str()))
        };
        if let Some((_, other)) = others(questions, i).find(|(_, o)| unlike(o)) {
            push(AnswerKind::OtherQuestion, other.answer.clone(), i);
        }
        if let Some((j, other)) =
            others(questions, i).find(|(_, o)| unlike(o) && o.passage != q.passage)
        {
            push(AnswerKind::OtherPassage, other.answer.clone(), j);
        }
        if let Some(quote) = quote(q) {
            if let Some(swapped) = swapped_name(questions, i, &quote) {
                push(AnswerKind::SwappedName, swapped, i);
            }
            if let Some(negated) = flipped_negation(&quote, zh) {
                push(AnswerKind::FlippedNegation, negated, i);
            }
            push(AnswerKind::Quoted, quote, i);
        }
        push(
            AnswerKind::Refusal,
            ragtester_text::refusal_for(&q.language).to_string(),
            i,
        );
        if let Some(cut) = truncated(q) {
            push(AnswerKind::Truncated, cut, i);
        }
        if let Some(changed) = changed_number(&q.answer) {
            push(AnswerKind::ChangedNumber, changed, i);
        }
        if let Some(number) = first_number(&q.answer) {
            push(
                AnswerKind::WrongLanguage,
                if zh {
                    format!("The figure asked for is {number}, as the document states.")
                } else {
                    format!("文档中给出的数值是{number}。")
                },
                i,
            );
        }
        out.extend(
            made.into_iter()
                .map(|(kind, text, passage_of)| LabelledAnswer {
                    question: i,
                    kind,
                    text,
                    passage_of,
                }),
        );
    }
    out
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_uppercase() && !c.as_str().starts_with(|x: char| x.is_uppercase()) => {
            f.to_lowercase().collect::<String>() + c.as_str()
        }
        _ => s.to_string(),
    }
}

/// The answer cut just before its first keyword (so the key fact is missing), when that leaves a start;
/// otherwise (the answer is its keyword, as in span-extraction sets) its first half, when it has four
/// characters or more.
fn truncated(q: &LabelledQuestion) -> Option<String> {
    let at = q
        .keywords
        .iter()
        .filter_map(|k| q.answer.find(k.as_str()))
        .min();
    if let Some(at) = at {
        let head = q.answer[..at].trim_end();
        if head.chars().count() >= 4 {
            return Some(head.to_string());
        }
    }
    // Only where the cut takes part of the key fact away: "630 cubic metres" of "630 cubic metres per
    // hour" still states the figure asked for.
    let chars: Vec<char> = q.answer.trim().chars().collect();
    if chars.len() < 4 {
        return None;
    }
    let mut head: String = chars[..chars.len() / 2].iter().collect();
    if !head.chars().any(ragtester_text::is_cjk) {
        // Latin text is cut between words.
        head.truncate(head.rfind(' ')?);
    }
    let head = head.trim_end().to_string();
    let keeps_a_keyword = q.keywords.iter().any(|k| head.contains(k.as_str()));
    (!head.is_empty() && !keeps_a_keyword).then_some(head)
}

/// The first run of digits (with a decimal part) in `text`, and its byte range.
fn number_span(text: &str) -> Option<(usize, usize)> {
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let len = text[start..]
        .char_indices()
        .take_while(|(i, c)| {
            c.is_ascii_digit()
                || (*c == '.' && text[start + i + 1..].starts_with(|n: char| n.is_ascii_digit()))
        })
        .map(|(i, c)| i + c.len_utf8())
        .last()?;
    Some((start, start + len))
}

fn first_number(text: &str) -> Option<&str> {
    number_span(text).map(|(a, b)| &text[a..b])
}

/// The answer with its first number changed (whole part plus 7): a wrong figure in the right words.
fn changed_number(answer: &str) -> Option<String> {
    let (a, b) = number_span(answer)?;
    let number = &answer[a..b];
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let changed = whole.parse::<u64>().ok()?.checked_add(7)?;
    let changed = if fraction.is_empty() {
        changed.to_string()
    } else {
        format!("{changed}.{fraction}")
    };
    Some(format!("{}{changed}{}", &answer[..a], &answer[b..]))
}

/// The other questions of `i`'s language, from the next one on, with their indices.
fn others(
    questions: &[LabelledQuestion],
    i: usize,
) -> impl Iterator<Item = (usize, &LabelledQuestion)> {
    let language = &questions[i].language;
    (1..questions.len())
        .map(move |k| (i + k) % questions.len())
        .map(move |j| (j, &questions[j]))
        .filter(move |(_, o)| &o.language == language)
}

/// The sentence of the question's passage that states its answer (or its first keyword found there).
fn quote(q: &LabelledQuestion) -> Option<String> {
    let lower = |s: &str| s.to_lowercase();
    let marks: Vec<String> = std::iter::once(q.answer.as_str())
        .chain(q.keywords.iter().map(String::as_str))
        .map(lower)
        .filter(|m| !m.trim().is_empty())
        .collect();
    let chars: Vec<char> = q.passage.chars().collect();
    ragtester_text::sentences(&q.passage)
        .into_iter()
        .map(|(a, b)| chars[a..b].iter().collect::<String>())
        .find(|s| marks.iter().any(|m| lower(s).contains(m.as_str())))
}

/// The name a question asks for, as the passage writes it: its first keyword that is a name, else its
/// answer when that is one (a span answer).
fn named_fact(q: &LabelledQuestion) -> Option<&str> {
    // A name is short: a span answer that merely holds one ("大莱龙铁路于1997年…") is no name to swap.
    let name = |s: &str| {
        s.chars().count() <= 24
            && !s.chars().any(|c| c.is_ascii_digit())
            && ragtester_text::contradiction::is_name(s)
    };
    q.keywords
        .iter()
        .map(String::as_str)
        .find(|k| name(k))
        .or_else(|| (q.keywords.is_empty() && name(&q.answer)).then_some(q.answer.as_str()))
        .filter(|f| q.passage.contains(f))
}

/// The quote with the fact it states swapped for another question's fact of the same language, one its
/// own passage does not hold.
fn swapped_name(questions: &[LabelledQuestion], i: usize, quote: &str) -> Option<String> {
    let q = &questions[i];
    let fact = named_fact(q).filter(|f| quote.contains(f))?;
    let (_, other) = others(questions, i)
        .filter_map(|(j, o)| named_fact(o).map(|f| (j, f)))
        .find(|(_, f)| !q.passage.contains(f) && !f.contains(fact) && !fact.contains(f))?;
    Some(quote.replacen(fact, other, 1))
}

/// The quote negated: "not" after its first auxiliary (不 or 没 before its verb in Chinese), or "It is not
/// true that …" (并非…) where it has none. None for a sentence that already negates.
fn flipped_negation(quote: &str, zh: bool) -> Option<String> {
    if ragtester_text::negated(quote) {
        return None;
    }
    if zh {
        const SWAPS: [(&str, &str); 7] = [
            ("必须", "无须"),
            ("可以", "不可以"),
            ("是", "不是"),
            ("由", "不由"),
            ("有", "没有"),
            ("会", "不会"),
            ("能", "不能"),
        ];
        return Some(
            SWAPS
                .iter()
                .find(|(from, _)| quote.contains(from))
                .map_or_else(
                    || format!("并非{quote}"),
                    |(from, to)| quote.replacen(from, to, 1),
                ),
        );
    }
    const AUXILIARIES: [&str; 11] = [
        "is", "are", "was", "were", "must", "can", "will", "should", "may", "has", "have",
    ];
    let words: Vec<&str> = quote.split(' ').collect();
    match words.iter().position(|w| AUXILIARIES.contains(w)) {
        Some(at) => {
            let mut negated: Vec<&str> = words.clone();
            negated.insert(at + 1, "not");
            Some(negated.join(" "))
        }
        None => Some(format!("It is not true that {}", lower_first(quote))),
    }
}

/// What the run's records would hold for one labelled answer: a case and an answer whose single context is
/// the question's passage.
pub fn as_records(
    questions: &[LabelledQuestion],
    a: &LabelledAnswer,
    id: usize,
) -> (TestCase, Answer) {
    let q = &questions[a.question];
    let retrieved = &questions[a.passage_of].passage;
    let case = TestCase {
        schema_version: ragtester_core::SCHEMA_VERSION,
        id: format!("bench-{id}"),
        category: Category::Core,
        strategy: Strategy::Coverage,
        generator: Generator::Planted,
        query: q.question.clone(),
        expected_answer: q.answer.clone(),
        keywords: q.keywords.clone(),
        source_spans: vec![SourceSpan {
            document_id: format!("passage-{}", a.question),
            start: 0,
            end: q.passage.chars().count(),
            page: 1,
            hash: None,
        }],
        document_id: format!("passage-{}", a.question),
        restrict_to: Vec::new(),
        must_not_contain: Vec::new(),
        language: q.language.clone(),
        readability: None,
        readability_measure: None,
        generator_model: q.source.clone(),
        prompt_version: String::new(),
        false_premise: None,
        injected_documents: Vec::new(),
        critic: None,
        unanswerable_in_corpus: None,
        section_class: None,
        turn: None,
        row_id: None,
        conflict: None,
        lineage: None,
        stale: None,
        expected_tools: Vec::new(),
        tools_in_order: false,
        goal: None,
    };
    let answer = Answer {
        schema_version: ragtester_core::SCHEMA_VERSION,
        case_id: case.id.clone(),
        config_id: "bench-oracle".into(),
        contexts: vec![RetrievedContext {
            rank: 1,
            score: 1.0,
            chunk_id: format!("passage-{}", a.passage_of),
            document_id: format!("passage-{}", a.passage_of),
            start: 0,
            end: retrieved.chars().count(),
            text: retrieved.clone(),
        }],
        answer: a.text.clone(),
        latency: Default::default(),
        usage: Default::default(),
        cached: false,
        cached_at: None,
        truncated_from: None,
        context_cut_from: None,
        tool_calls: None,
        simulation: None,
        citations: Vec::new(),
        error: None,
        rewritten_query: None,
        trace: None,
    };
    (case, answer)
}

/// Counts of one slice (a judge overall, a kind, a language), failure being the positive class.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Confusion {
    /// Labelled fail, judged fail.
    pub true_failures: usize,
    /// Labelled pass, judged fail: a false alarm.
    pub false_failures: usize,
    /// Labelled fail, judged pass: a missed failure.
    pub missed_failures: usize,
    /// Labelled pass, judged pass.
    pub true_passes: usize,
    pub judge_errors: usize,
}

impl Confusion {
    pub(crate) fn add(&mut self, should_fail: bool, verdict: Option<bool>) {
        match (should_fail, verdict) {
            (_, None) => self.judge_errors += 1,
            (true, Some(false)) => self.true_failures += 1,
            (false, Some(false)) => self.false_failures += 1,
            (true, Some(true)) => self.missed_failures += 1,
            (false, Some(true)) => self.true_passes += 1,
        }
    }

    /// Precision on reported failures (the paper's figure).
    pub fn precision(&self) -> Option<Interval> {
        wilson(
            self.true_failures,
            self.true_failures + self.false_failures,
            0.95,
        )
    }

    /// Share of real failures reported.
    pub fn recall(&self) -> Option<Interval> {
        wilson(
            self.true_failures,
            self.true_failures + self.missed_failures,
            0.95,
        )
    }

    pub fn accuracy(&self) -> Option<Interval> {
        let right = self.true_failures + self.true_passes;
        wilson(
            right,
            right + self.false_failures + self.missed_failures,
            0.95,
        )
    }

    pub fn judge_error_rate(&self) -> Option<f64> {
        let n = self.true_failures
            + self.false_failures
            + self.missed_failures
            + self.true_passes
            + self.judge_errors;
        (n > 0).then(|| self.judge_errors as f64 / n as f64)
    }
}

/// One judge's figures on the benchmark.
#[derive(Debug, Clone, Serialize)]
pub struct JudgeScore {
    pub judge: String,
    pub overall: Confusion,
    pub by_language: BTreeMap<String, Confusion>,
    pub by_kind: BTreeMap<String, Confusion>,
    /// Per kind and language (`other_words/zh`): where a language's figures hide in the whole.
    pub by_kind_language: BTreeMap<String, Confusion>,
    /// Per language: right answers a rule failed (whatever the judge's criteria said).
    pub right_failed_by_rule: BTreeMap<String, usize>,
    /// Up to five answers of each kind the judge got wrong, with what it said.
    pub mistakes: Vec<Mistake>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Mistake {
    pub kind: AnswerKind,
    pub language: String,
    pub question: String,
    pub answer: String,
    pub should_fail: bool,
    pub verdict: Option<bool>,
    pub why: String,
}

/// Every labelled answer judged by `judge`, in the answers' order, through the same path as a run.
pub async fn judge_answers(
    judge: &dyn crate::Judge,
    questions: &[LabelledQuestion],
    answers: &[LabelledAnswer],
    concurrency: usize,
) -> Vec<Verdict> {
    use futures::StreamExt;
    let prompts = crate::JudgePrompts::default();
    futures::stream::iter(answers.iter().enumerate())
        .map(|(id, a)| {
            let (case, answer) = as_records(questions, a, id);
            let prompts = &prompts;
            async move { crate::judge_sample(Some(&case), &answer, judge, (0, prompts), &[]).await }
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// The panel's verdicts over several judges' (each in the answers' order), in the answers' order.
pub fn panel_verdicts(per_judge: &[Vec<Verdict>], method: crate::PanelMethod) -> Vec<Verdict> {
    let all: Vec<Verdict> = per_judge.iter().flatten().cloned().collect();
    // Every labelled answer is its own cell (its own case id), so the panel keeps the answers' order.
    crate::consensus(&all, method)
}

/// Score verdicts (one per labelled answer, in order) against the labels.
pub fn score(
    judge: String,
    questions: &[LabelledQuestion],
    answers: &[LabelledAnswer],
    verdicts: &[Verdict],
) -> JudgeScore {
    let mut score = JudgeScore {
        judge,
        overall: Confusion::default(),
        by_language: BTreeMap::new(),
        by_kind: BTreeMap::new(),
        by_kind_language: BTreeMap::new(),
        right_failed_by_rule: BTreeMap::new(),
        mistakes: Vec::new(),
    };
    for (a, v) in answers.iter().zip(verdicts) {
        let q = &questions[a.question];
        let should_fail = a.kind.should_fail();
        let verdict = (v.status == VerdictStatus::Ok)
            .then_some(v.passed)
            .flatten();
        score.overall.add(should_fail, verdict);
        score
            .by_language
            .entry(q.language.clone())
            .or_default()
            .add(should_fail, verdict);
        let kind = serde_json::to_value(a.kind)
            .ok()
            .and_then(|k| k.as_str().map(str::to_string))
            .unwrap_or_default();
        score
            .by_kind_language
            .entry(format!("{kind}/{}", q.language))
            .or_default()
            .add(should_fail, verdict);
        score
            .by_kind
            .entry(kind)
            .or_default()
            .add(should_fail, verdict);
        if !should_fail && verdict == Some(false) && v.rule_failure.is_some() {
            *score
                .right_failed_by_rule
                .entry(q.language.clone())
                .or_default() += 1;
        }
        let shown = score
            .mistakes
            .iter()
            .filter(|m| m.kind == a.kind && m.language == q.language)
            .count();
        // False alarms on right answers tell most: up to 20 of them per kind and language are kept.
        let cap = if should_fail { 5 } else { 20 };
        if verdict != Some(!should_fail) && shown < cap {
            score.mistakes.push(Mistake {
                kind: a.kind,
                language: q.language.clone(),
                question: q.question.clone(),
                answer: a.text.clone(),
                should_fail,
                verdict,
                why: explain(v),
            });
        }
    }
    score
}

/// What a verdict says for itself: the error, or the rule failure and every criterion's rating and reason.
fn explain(v: &Verdict) -> String {
    v.error.clone().unwrap_or_else(|| {
        let ratings = v.criteria.as_ref().map(|c| {
            c.all()
                .iter()
                .map(|r| format!("{:?} ({})", r.rating, r.reason))
                .collect::<Vec<_>>()
                .join("; ")
        });
        [v.rule_failure.clone(), ratings]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" | ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(answer: &str, keywords: &[&str]) -> LabelledQuestion {
        LabelledQuestion {
            source: "t".into(),
            language: "en".into(),
            question: "At what pressure does the relief valve open?".into(),
            answer: answer.into(),
            keywords: keywords.iter().map(|k| k.to_string()).collect(),
            passage: answer.into(),
            alternatives: Vec::new(),
            other_words: Vec::new(),
        }
    }

    #[test]
    fn every_kind_is_built_where_the_answer_allows_it() {
        let qs = vec![
            q("The relief valve opens at 4.5 bar.", &["4.5 bar"]),
            q("The pump is made by Harbor Works.", &["Harbor Works"]),
        ];
        let answers = labelled_answers(&qs);
        let of = |i: usize, kind: AnswerKind| {
            answers
                .iter()
                .find(|a| a.question == i && a.kind == kind)
                .map(|a| a.text.as_str())
        };
        assert_eq!(
            of(0, AnswerKind::ChangedNumber),
            Some("The relief valve opens at 11.5 bar.")
        );
        assert_eq!(
            of(0, AnswerKind::Truncated),
            Some("The relief valve opens at")
        );
        assert_eq!(
            of(0, AnswerKind::OtherQuestion),
            Some("The pump is made by Harbor Works.")
        );
        assert_eq!(
            of(0, AnswerKind::WrongLanguage),
            Some("文档中给出的数值是4.5。")
        );
        assert_eq!(
            of(1, AnswerKind::Reworded),
            Some("According to the document, the pump is made by Harbor Works.")
        );
        assert_eq!(
            of(1, AnswerKind::ChangedNumber),
            None,
            "no number to change"
        );
        assert!(!AnswerKind::Reworded.should_fail() && AnswerKind::Truncated.should_fail());
    }

    #[test]
    fn quotes_are_swapped_negated_and_read_from_the_wrong_passage() {
        let mut qs = vec![
            q("Priya Castell", &["Priya Castell"]),
            q("Tomas Reyes", &["Tomas Reyes"]),
        ];
        qs[0].passage =
            "It is operated by Priya Castell, who leads a team of 12 technicians.".into();
        qs[1].passage = "The depot is run by Tomas Reyes.".into();
        let answers = labelled_answers(&qs);
        let of = |kind: AnswerKind| {
            answers
                .iter()
                .find(|a| a.question == 0 && a.kind == kind)
                .unwrap_or_else(|| panic!("no {kind:?}"))
        };
        assert_eq!(of(AnswerKind::Quoted).text, qs[0].passage);
        assert_eq!(
            of(AnswerKind::SwappedName).text,
            "It is operated by Tomas Reyes, who leads a team of 12 technicians."
        );
        assert_eq!(
            of(AnswerKind::FlippedNegation).text,
            "It is not operated by Priya Castell, who leads a team of 12 technicians."
        );
        let wrong = of(AnswerKind::OtherPassage);
        assert_eq!((wrong.text.as_str(), wrong.passage_of), ("Tomas Reyes", 1));
        let (_, answer) = as_records(&qs, wrong, 0);
        assert_eq!(answer.contexts[0].text, qs[1].passage);
        assert_eq!(
            flipped_negation("过滤器每30天更换一次。", true).as_deref(),
            Some("并非过滤器每30天更换一次。")
        );
        assert_eq!(
            flipped_negation("进水温度超过40°C时必须停止运行。", true).as_deref(),
            Some("进水温度超过40°C时无须停止运行。")
        );
    }

    #[test]
    fn precision_and_recall_count_failures_as_positives() {
        let mut c = Confusion::default();
        for (should_fail, verdict) in [
            (true, Some(false)),
            (true, Some(false)),
            (true, Some(true)),
            (false, Some(false)),
            (false, Some(true)),
            (false, None),
        ] {
            c.add(should_fail, verdict);
        }
        assert!((c.precision().unwrap().estimate - 2.0 / 3.0).abs() < 1e-12);
        assert!((c.recall().unwrap().estimate - 2.0 / 3.0).abs() < 1e-12);
        assert!((c.accuracy().unwrap().estimate - 0.6).abs() < 1e-12);
        assert!((c.judge_error_rate().unwrap() - 1.0 / 6.0).abs() < 1e-12);
    }
}
