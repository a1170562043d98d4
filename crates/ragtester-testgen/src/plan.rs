//! Which sections feed which questions: the paper's strategies and the baseline.

use crate::critic::QualityGate;
use crate::options::GenerationOptions;

use crate::sections::{Section, sections_of};
use crate::writer::DocWriter;
use anyhow::Result;
use futures::StreamExt;
use ragtester_core::{
    ChatModel, ConversationKind, Document, Generator, SectionClass, Strategy, TestCase,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// What generation did per document: nothing is silently short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DocumentReport {
    pub document_id: String,
    pub source: String,
    pub generator: Generator,
    pub sections: usize,
    /// Sections whose class can hold a question (prose, code, tables of numbers): what coverage is of.
    #[serde(default)]
    pub askable_sections: usize,
    /// The document's sections by class.
    #[serde(default)]
    pub section_classes: BTreeMap<SectionClass, usize>,
    /// Every section that is not prose: its class and why, and whether it fed a case anyway (code and
    /// tables of numbers may, for coverage and the baseline, once prose is used up).
    #[serde(default)]
    pub not_prose: Vec<NotProse>,
    /// Sections that fed at least one case.
    pub sections_used: usize,
    /// Share of the text of the sections that can hold a question that fed a case.
    pub coverage: f64,
    pub requested: usize,
    /// Single questions produced (turns of conversations are counted apart).
    pub produced: usize,
    /// Conversations asked for and written (each of two or three turns, every turn a case).
    #[serde(default)]
    pub conversations_requested: usize,
    #[serde(default)]
    pub conversations_produced: usize,
    /// Questions the quality gate's critic turned down.
    #[serde(default)]
    pub rejected_by_critic: usize,
    /// Why generation stopped early (the spending cap refused a call); a rerun with a larger cap resumes
    /// from the response cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halted: Option<String>,
    /// Why fewer cases than requested were produced, and what was rejected on the way.
    pub notes: Vec<String>,
}

/// A section passed over for (most) questions, as the suite report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotProse {
    pub section: usize,
    pub class: SectionClass,
    pub reason: String,
    /// The opening of the section, so a reader can check the call.
    pub opening: String,
    pub used: bool,
}

#[derive(Debug, Clone, Default)]
pub struct GenerationReport {
    pub cases: Vec<TestCase>,
    pub documents: Vec<DocumentReport>,
}

/// Generate a suite. `gate`, when given, has a critic check every question before it becomes a case.
/// `targets` overrides the per-document count (used to give the baseline exactly as many cases per document
/// as the ragtester strategies produced, so RQ2 compares like with like).
///
/// Documents are written concurrently (up to `options.concurrency`); within a document the slots run in
/// order, because each one depends on the sections the earlier ones used. Output order is corpus order.
pub async fn generate(
    docs: &[Document],
    options: &GenerationOptions,
    model: &dyn ChatModel,
    gate: Option<&QualityGate<'_>>,
    targets: Option<&HashMap<String, usize>>,
) -> Result<GenerationReport> {
    match options.generator {
        Generator::Imported => {
            anyhow::bail!("imported suites are read with `ragtester import`, not generated")
        }
        Generator::Planted => anyhow::bail!("planted cases come from `planted_cases`"),
        Generator::Ragtester | Generator::Baseline => {}
    }
    let sections: Vec<Vec<Section>> = docs
        .iter()
        .map(|d| sections_of(d, options.section_tokens))
        .collect::<Result<_>>()?;
    let sections = &sections;
    let per_document: Vec<(DocumentReport, Vec<TestCase>)> = futures::stream::iter(0..docs.len())
        .map(|i| {
            let target = targets
                .and_then(|t| t.get(&docs[i].id).copied())
                .unwrap_or(options.n_test);
            generate_document(docs, sections, i, target, options, model, gate)
        })
        .buffered(options.concurrency.max(1))
        .collect()
        .await;
    let mut report = GenerationReport::default();
    for (document, cases) in per_document {
        report.documents.push(document);
        report.cases.extend(cases);
    }
    Ok(report)
}

async fn generate_document<'a>(
    docs: &'a [Document],
    sections: &'a [Vec<Section>],
    i: usize,
    target: usize,
    options: &'a GenerationOptions,
    model: &'a dyn ChatModel,
    gate: Option<&'a QualityGate<'a>>,
) -> (DocumentReport, Vec<TestCase>) {
    let doc = &docs[i];
    let mut writer = DocWriter::new(doc, &sections[i], options, model, gate);
    let slots = match options.generator {
        Generator::Ragtester => ragtester_slots(target, options.n_complex, docs.len() > 1),
        Generator::Baseline => vec![Strategy::Baseline; target],
        Generator::Imported | Generator::Planted => {
            unreachable!("refused at the start of generate")
        }
    };
    // The kinds take turns across each language's documents, so a few conversations per document still
    // cover them all in both languages (taking turns across the corpus, a corpus whose languages alternate
    // gave every follow-up to one language).
    let nth_of_its_language = docs[..i]
        .iter()
        .filter(|d| d.language == doc.language)
        .count();
    let mut written = 0;
    for k in 0..options.conversations {
        let turn = nth_of_its_language * options.conversations + k;
        let kind = ConversationKind::ALL[turn % ConversationKind::ALL.len()];
        written += usize::from(writer.conversation(kind).await);
    }
    for slot in slots {
        let other = (docs.len() > 1).then(|| {
            let j = (i + 1 + writer.rng.below(docs.len() - 1)) % docs.len();
            (&docs[j], sections[j].as_slice())
        });
        writer.fill(slot, other).await;
    }
    document_report(doc, &sections[i], options, (target, written), writer)
}

/// What generation made of one document: its sections by class, those that are not prose, coverage of the
/// sections that can hold a question, the cases and every shortfall.
fn document_report(
    doc: &Document,
    sections: &[Section],
    options: &GenerationOptions,
    (target, conversations): (usize, usize),
    mut writer: DocWriter<'_>,
) -> (DocumentReport, Vec<TestCase>) {
    let singles = writer.cases.iter().filter(|c| c.turn.is_none()).count();
    let askable: Vec<&Section> = sections
        .iter()
        .filter(|s| s.class.can_hold_a_question())
        .collect();
    let used_chars: usize = askable
        .iter()
        .filter(|s| writer.used.contains(&s.index))
        .map(|s| s.end - s.start)
        .sum();
    let total_chars: usize = askable.iter().map(|s| s.end - s.start).sum();
    if conversations < options.conversations {
        writer.notes.insert(
            0,
            format!(
                "shortfall: {conversations} of {} conversations written",
                options.conversations
            ),
        );
    }
    if singles < target {
        writer.notes.insert(
            0,
            format!(
                "shortfall: {} of {} cases produced{}",
                singles,
                target,
                writer
                    .halted
                    .as_ref()
                    .or(writer.gave_up.as_ref())
                    .map(|why| format!(" (stopped: {why})"))
                    .unwrap_or_default()
            ),
        );
    }
    let report = DocumentReport {
        document_id: doc.id.clone(),
        source: doc.source.clone(),
        generator: options.generator,
        sections: sections.len(),
        askable_sections: askable.len(),
        section_classes: sections.iter().fold(BTreeMap::new(), |mut m, s| {
            *m.entry(s.class).or_default() += 1;
            m
        }),
        not_prose: sections
            .iter()
            .filter(|s| s.class != SectionClass::Prose)
            .map(|s| NotProse {
                section: s.index,
                class: s.class,
                reason: s.class_reason.clone(),
                opening: s.text.chars().take(80).collect(),
                used: writer.used.contains(&s.index),
            })
            .collect(),
        sections_used: writer.used.len(),
        coverage: if total_chars == 0 {
            0.0
        } else {
            used_chars as f64 / total_chars as f64
        },
        requested: target,
        produced: singles,
        conversations_requested: options.conversations,
        conversations_produced: conversations,
        rejected_by_critic: writer.rejected_by_critic,
        halted: writer.halted,
        notes: writer.notes,
    };
    (report, writer.cases)
}

/// The paper's order: complex passages first, then negatives, then coverage of what is left; the kinds
/// beyond the paper come before coverage (they need unused sections, two for a multi-passage question),
/// each joining once the suite is large enough to keep at least one coverage case.
pub(crate) fn ragtester_slots(
    n: usize,
    n_complex: Option<usize>,
    several_documents: bool,
) -> Vec<Strategy> {
    // About a quarter negatives: the paper's two methods first, then near misses and false premises.
    let negatives = match n {
        0 | 1 => 0,
        2..=4 => 1,
        5..=8 => 2,
        9..=11 => 3,
        _ => (n / 4).max(4),
    };
    let mut negative_kinds = vec![Strategy::NegativeInvented];
    if several_documents {
        negative_kinds.push(Strategy::NegativeCrossDocument);
    }
    negative_kinds.extend([Strategy::NegativeNearMiss, Strategy::NegativeFalsePremise]);
    let positives = n - negatives;
    let complex = n_complex.unwrap_or(n.div_ceil(4)).min(positives);
    let mut slots = vec![Strategy::Complex; complex];
    slots.extend((0..negatives).map(|k| negative_kinds[k % negative_kinds.len()]));
    // (smallest suite, kind, possible): beyond the paper, in the order they join.
    let beyond = [
        (5, Strategy::CrossLingual, true),
        (7, Strategy::Injection, true),
        (8, Strategy::MultiPassage, true),
        (10, Strategy::PoisonedDocument, true),
        (11, Strategy::MultiDocument, several_documents),
    ];
    let mut left = positives - complex;
    let mut extras = Vec::new();
    for (smallest, kind, possible) in beyond {
        if possible && n >= smallest && left > 1 {
            extras.push(kind);
            left -= 1;
        }
    }
    // The extra kinds take their sections before plain coverage spreads over what is left.
    slots.extend(extras);
    slots.extend(std::iter::repeat_n(Strategy::Coverage, left));
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(slots: &[Strategy], kind: Strategy) -> usize {
        slots.iter().filter(|s| **s == kind).count()
    }

    #[test]
    fn slot_plan_for_eight() {
        let s = ragtester_slots(8, None, true);
        assert_eq!(s.len(), 8);
        assert_eq!(count(&s, Strategy::Complex), 2);
        assert_eq!(count(&s, Strategy::NegativeInvented), 1);
        assert_eq!(count(&s, Strategy::NegativeCrossDocument), 1);
        assert_eq!(count(&s, Strategy::Coverage), 1);
        for kind in [
            Strategy::CrossLingual,
            Strategy::Injection,
            Strategy::MultiPassage,
        ] {
            assert_eq!(count(&s, kind), 1, "{kind:?}");
        }
        assert!(
            ragtester_slots(1, None, false)
                .iter()
                .all(|x| *x == Strategy::Complex)
        );
    }

    #[test]
    fn a_larger_suite_holds_every_kind_and_one_document_no_cross_document_kind() {
        let s = ragtester_slots(14, None, true);
        assert_eq!(s.len(), 14);
        for kind in [
            Strategy::Complex,
            Strategy::NegativeInvented,
            Strategy::NegativeCrossDocument,
            Strategy::NegativeNearMiss,
            Strategy::NegativeFalsePremise,
            Strategy::Coverage,
            Strategy::CrossLingual,
            Strategy::Injection,
            Strategy::MultiPassage,
            Strategy::MultiDocument,
            Strategy::PoisonedDocument,
        ] {
            assert!(count(&s, kind) >= 1, "{kind:?} missing from {s:?}");
        }
        let single = ragtester_slots(14, None, false);
        assert_eq!(single.len(), 14);
        assert_eq!(count(&single, Strategy::NegativeCrossDocument), 0);
        assert_eq!(count(&single, Strategy::MultiDocument), 0);
        assert!(count(&single, Strategy::Coverage) >= 1);
    }
}
