//! How good a suite's questions are, measured the same way for every writer and written with every suite:
//! a tester whose questions no user would ask measures nothing, so these figures say whether they would.

use crate::plan::DocumentReport;
use crate::reply::{is_cloze, near_duplicate};
use ragtester_core::{Generator, SectionClass, Strategy, TestCase, TurnStep};
use ragtester_text::{is_cjk, is_heading, terms};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};

/// The question-quality figure of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteQuality {
    pub cases: usize,
    /// Cases a correct system answers (not negatives).
    pub positive_cases: usize,
    /// Share of positive cases written from a prose section, of those written from one section.
    pub positive_in_prose: f64,
    /// Share of questions that are fill-in-the-blank (cloze): the offline writer's last resort.
    pub cloze: f64,
    /// Share of questions that near-duplicate an earlier question of the same generator.
    pub duplicates: f64,
    /// Mean question length in words (a CJK character counts as a word).
    pub mean_question_words: f64,
    /// Share of positive cases whose expected answer is only a heading or a number.
    pub heading_or_number_answers: f64,
    /// Of the out-of-scope questions that quote their document's title, the share that ask about
    /// neither what the title names nor the document itself ("the retail price of the technicians").
    #[serde(default)]
    pub out_of_scope_off_subject: f64,
    /// The corpus's sections by class (each document counted once).
    pub sections: BTreeMap<SectionClass, usize>,
}

impl SuiteQuality {
    /// The figure over the cases written from documents (the strategies and the baseline); planted and
    /// imported cases, whose questions come from elsewhere, are left out.
    pub fn measure(all: &[TestCase], documents: &[DocumentReport]) -> Self {
        let written: Vec<TestCase> = all
            .iter()
            .filter(|c| matches!(c.generator, Generator::Ragtester | Generator::Baseline))
            .cloned()
            .collect();
        let cases = written.as_slice();
        let positives: Vec<&TestCase> = cases.iter().filter(|c| !c.expects_refusal()).collect();
        let anchored: Vec<&&TestCase> = positives
            .iter()
            .filter(|c| c.section_class.is_some())
            .collect();
        let in_prose = anchored
            .iter()
            .filter(|c| c.section_class == Some(SectionClass::Prose))
            .count();
        let cloze = cases.iter().filter(|c| is_cloze(&c.query)).count();
        let bare_answers = positives
            .iter()
            .filter(|c| is_heading_or_number(&c.expected_answer))
            .count();
        let words: usize = cases.iter().map(|c| word_count(&c.query)).sum();
        let quoting: Vec<bool> = cases
            .iter()
            .filter(|c| {
                c.strategy == Strategy::NegativeInvented
                    || c.turn
                        .as_ref()
                        .is_some_and(|t| t.step == TurnStep::OutOfScope)
            })
            .filter_map(|c| asks_about_its_title(&c.query))
            .collect();
        let off_subject = quoting.iter().filter(|on| !**on).count();
        let mut seen = HashSet::new();
        let mut sections = BTreeMap::new();
        for d in documents
            .iter()
            .filter(|d| d.sections > 0 && seen.insert(&d.document_id))
        {
            for (class, n) in &d.section_classes {
                *sections.entry(*class).or_default() += n;
            }
        }
        SuiteQuality {
            cases: cases.len(),
            positive_cases: positives.len(),
            positive_in_prose: share(in_prose, anchored.len()),
            cloze: share(cloze, cases.len()),
            duplicates: share(duplicates(cases), cases.len()),
            mean_question_words: if cases.is_empty() {
                0.0
            } else {
                words as f64 / cases.len() as f64
            },
            heading_or_number_answers: share(bare_answers, positives.len()),
            out_of_scope_off_subject: share(off_subject, quoting.len()),
            sections,
        }
    }

    /// One line for a person: the figures that say whether the questions are a user's.
    pub fn summary(&self) -> String {
        format!(
            "question quality: {:.0}% from prose, {:.0}% cloze, {:.0}% near-duplicates, {:.1} words \
             each, {:.0}% answered by a heading or number, {:.0}% off-subject",
            self.positive_in_prose * 100.0,
            self.cloze * 100.0,
            self.duplicates * 100.0,
            self.mean_question_words,
            self.heading_or_number_answers * 100.0,
            self.out_of_scope_off_subject * 100.0
        )
    }
}

fn share(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

fn is_heading_or_number(answer: &str) -> bool {
    let t = answer.trim();
    t.chars()
        .all(|c| c.is_ascii_digit() || c.is_whitespace() || ".,:;%-–".contains(c))
        || is_heading(t)
}

/// For a question quoting a title (`"…"` or `《…》`): whether the rest of it names something the title
/// names, or the document itself. None for a question quoting no title.
fn asks_about_its_title(question: &str) -> Option<bool> {
    let (open, close) = if question.contains('《') {
        ('《', '》')
    } else {
        ('"', '"')
    };
    let start = question.find(open)? + open.len_utf8();
    let end = start + question[start..].find(close)?;
    let title: HashSet<String> = terms(&question[start..end]).into_iter().collect();
    let rest = format!(
        "{} {}",
        &question[..start],
        &question[end + close.len_utf8()..]
    );
    let lower = rest.to_lowercase();
    Some(
        lower.contains("this document")
            || rest.contains("这份文件")
            || terms(&rest).iter().any(|t| title.contains(t)),
    )
}

fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|w| {
            let cjk = w.chars().filter(|c| is_cjk(*c)).count();
            if cjk > 0 { cjk } else { 1 }
        })
        .sum()
}

/// Cases whose question near-duplicates an earlier one of the same generator (the baseline asks about the
/// same documents as the strategies on purpose, so the two are not compared with each other).
fn duplicates(cases: &[TestCase]) -> usize {
    let mut by_generator: BTreeMap<Generator, Vec<&str>> = BTreeMap::new();
    let mut count = 0;
    for c in cases {
        let earlier = by_generator.entry(c.generator).or_default();
        if near_duplicate(&c.query, earlier.iter().copied()) {
            count += 1;
        }
        earlier.push(&c.query);
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_out_of_scope_question_is_about_its_titles_subject() {
        assert_eq!(
            asks_about_its_title(
                "According to \"Harbor HX-40 Bilge Pump Manual\", what is the retail price of the Harbor HX-40 Bilge Pump?"
            ),
            Some(true)
        );
        assert_eq!(
            asks_about_its_title(
                "According to \"Harbor HX-40 Bilge Pump Manual\", what is the retail price of the technicians?"
            ),
            Some(false)
        );
        assert_eq!(
            asks_about_its_title("根据《云岭天文台参观指南》，同一的最大工作海拔是什么？"),
            Some(false)
        );
        assert_eq!(
            asks_about_its_title("根据《冷藏运输操作规范》，这份文件的作者是谁？"),
            Some(true)
        );
        assert_eq!(asks_about_its_title("Who founded the company?"), None);
    }

    #[test]
    fn blanks_bare_answers_and_lengths_are_measured() {
        assert!(is_cloze(
            "What figure fills the blank in: \"The valve opens at ____ bar.\"?"
        ));
        assert!(is_cloze("下面这句话中空缺的数值是多少：“____”"));
        assert!(!is_cloze("At what pressure does the relief valve open?"));
        assert!(is_heading_or_number("4.5"));
        assert!(is_heading_or_number("3.3.1 Lexical scoping"));
        assert!(!is_heading_or_number("The relief valve opens at 4.5 bar."));
        assert_eq!(word_count("水泵每分钟输送多少升水？"), 11);
        assert_eq!(word_count("What is R?"), 3);
    }
}
