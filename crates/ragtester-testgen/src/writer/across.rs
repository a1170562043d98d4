//! Questions across sections: method (b)'s question written from another document, and questions that need
//! two passages, of one document or of two.

use super::{DocWriter, Draft, Other, suits};
use crate::critic::Task;
use crate::locate::locate_in;
use crate::sections::Section;
use ragtester_core::chat::{CriticCheck, QuestionKind};
use ragtester_core::{Category, Document, Strategy};

/// Sections of another document tried for a cross-document negative before giving up on it.
const CROSS_DOCUMENT_TRIES: usize = 8;

impl<'a> DocWriter<'a> {
    /// Method (b): a question written from another document, asked of this one.
    pub(super) async fn cross_document(
        &mut self,
        (other, sections): (&'a Document, &'a [Section]),
    ) -> bool {
        let slot = Strategy::NegativeCrossDocument;
        let sections: Vec<&Section> = sections.iter().filter(|s| suits(slot, s.class)).collect();
        if sections.is_empty() {
            return false;
        }
        let start = self.rng.below(sections.len());
        for k in 0..sections.len().min(CROSS_DOCUMENT_TRIES) {
            if self.stopped() {
                return false;
            }
            let section = sections[(start + k) % sections.len()];
            let label = slot.as_str();
            let reply = match self
                .ask(
                    other,
                    section,
                    &[],
                    QuestionKind::Answerable,
                    &other.language,
                )
                .await
            {
                Ok(r) => r,
                Err(reason) => {
                    self.notes.push(format!("{label}: {reason}"));
                    continue;
                }
            };
            if !self
                .unanswered(&reply.question, &other.language, label)
                .await
            {
                continue;
            }
            let corpus_wide = self
                .unanswered_in_corpus(&reply.question, &other.language)
                .await;
            let mut draft = self.negative(reply.question, slot, &other.language, section);
            draft.unanswerable_in_corpus = corpus_wide;
            self.push(draft);
            return true;
        }
        false
    }

    /// The sections a question starting at section `a` may pair it with: up to three fitting sections of
    /// `other` from a random start, or this document's two unused sections farthest from `a`. None when
    /// `other` has no section that fits the slot.
    fn partners(
        &mut self,
        other: Other<'a>,
        slot: Strategy,
        firsts: &[usize],
        a: usize,
    ) -> Option<Vec<(&'a Document, &'a Section, Option<usize>)>> {
        let sections = self.sections;
        Some(match other {
            Some((doc, theirs)) if theirs.iter().any(|t| suits(slot, t.class)) => {
                let fitting: Vec<&Section> =
                    theirs.iter().filter(|t| suits(slot, t.class)).collect();
                let start = self.rng.below(fitting.len());
                (0..fitting.len().min(3))
                    .map(|k| (doc, fitting[(start + k) % fitting.len()], None))
                    .collect()
            }
            Some(_) => return None,
            None => {
                let mut rest: Vec<usize> = firsts.iter().copied().filter(|&b| b != a).collect();
                rest.sort_by_key(|&b| std::cmp::Reverse(b.abs_diff(a)));
                rest.into_iter()
                    .take(2)
                    .map(|b| (self.doc, &sections[b], Some(b)))
                    .collect()
            }
        })
    }

    /// A question needing two passages: two distant unused sections of this document, or one of this
    /// document and one of `other`. Its answer must draw on both.
    pub(super) async fn multi(&mut self, other: Other<'a>, slot: Strategy) -> bool {
        let sections = self.sections;
        let firsts = self.candidates(slot);
        if firsts.len() < 2 - usize::from(other.is_some()) {
            self.note(slot, "not enough unused sections left");
            return false;
        }
        let language = self.doc.language.clone();
        for &a in firsts.iter().take(3) {
            let Some(partners) = self.partners(other, slot, &firsts, a) else {
                return false;
            };
            for (their_doc, their_section, their_index) in partners {
                if self.stopped() {
                    return false;
                }
                let label = format!("{} (section {a})", slot.as_str());
                let passages = vec![sections[a].text.clone(), their_section.text.clone()];
                let reply = match self
                    .ask(
                        self.doc,
                        &sections[a],
                        &passages,
                        QuestionKind::MultiPassage,
                        &language,
                    )
                    .await
                {
                    Ok(r) => r,
                    Err(reason) => {
                        self.notes.push(format!("{label}: {reason}"));
                        continue;
                    }
                };
                let parts = [(self.doc, &sections[a]), (their_doc, their_section)];
                let Some(found) = locate_in(&parts, &reply.answer) else {
                    self.notes.push(format!(
                        "{label}: expected answer not found in the passages"
                    ));
                    continue;
                };
                if found.iter().any(Vec::is_empty) {
                    self.notes.push(format!(
                        "{label}: the expected answer does not draw on every passage"
                    ));
                    continue;
                }
                let task = Task {
                    check: CriticCheck::Supported,
                    question: &reply.question,
                    expected_answer: &reply.answer,
                    premise: None,
                    evidence: passages,
                    language: &language,
                };
                if !self.passes(task, &label).await {
                    continue;
                }
                let mut draft = Draft::new(reply, slot, &language, &sections[a]);
                draft.category = Category::Inference;
                draft.spans = found.concat();
                self.used.insert(a);
                if let Some(b) = their_index {
                    self.used.insert(b);
                }
                self.push(draft);
                return true;
            }
        }
        false
    }
}
