//! Cases from the facts `ragtester docgen` planted in the documents it wrote offline: the question, answer
//! and keywords are the generator's own, and the spans are where the stating sentences are found in the
//! ingested text — so ground truth is exact and no model is asked.

use crate::plan::{DocumentReport, GenerationReport};
use ragtester_core::generated::PlantedFact;
use ragtester_core::ids::stable_id;
use ragtester_core::{Category, Document, Generator, SourceSpan, Strategy, TestCase};
use std::collections::BTreeMap;

pub const PLANTED_VERSION: &str = "planted-v1";

/// Up to `n_test` cases per document, taken from the categories in turn so a short suite still has
/// negatives and inferences. `facts_of` gives a document's planted facts (`None`: not a planted document).
pub fn planted_cases(
    docs: &[Document],
    n_test: usize,
    facts_of: &dyn Fn(&Document) -> Option<Vec<PlantedFact>>,
) -> GenerationReport {
    let mut report = GenerationReport::default();
    for doc in docs {
        let mut notes = Vec::new();
        let facts = facts_of(doc).unwrap_or_default();
        if facts.is_empty() {
            notes
                .push("not a planted-fact document (written by `ragtester docgen` offline)".into());
        }
        let mut cases = Vec::new();
        for fact in round_robin(&facts).into_iter().take(n_test) {
            match case_of(doc, fact) {
                Ok(case) => cases.push(case),
                Err(missing) => notes.push(format!(
                    "skipped `{}`: its sentence was not found in the ingested text: {missing}",
                    fact.question
                )),
            }
        }
        report.documents.push(DocumentReport {
            document_id: doc.id.clone(),
            source: doc.source.clone(),
            generator: Generator::Planted,
            sections: 0,
            askable_sections: 0,
            section_classes: Default::default(),
            not_prose: Vec::new(),
            sections_used: 0,
            coverage: 0.0,
            requested: n_test.min(facts.len()),
            produced: cases.len(),
            conversations_requested: 0,
            conversations_produced: 0,
            rejected_by_critic: 0,
            halted: None,
            notes,
        });
        report.cases.extend(cases);
    }
    report
}

fn round_robin(facts: &[PlantedFact]) -> Vec<&PlantedFact> {
    let mut by_category: BTreeMap<Category, Vec<&PlantedFact>> = BTreeMap::new();
    for f in facts {
        by_category.entry(f.category).or_default().push(f);
    }
    let mut out = Vec::with_capacity(facts.len());
    for round in 0.. {
        let before = out.len();
        for list in by_category.values() {
            if let Some(f) = list.get(round) {
                out.push(*f);
            }
        }
        if out.len() == before {
            break;
        }
    }
    out
}

fn case_of(doc: &Document, fact: &PlantedFact) -> Result<TestCase, String> {
    let mut spans = Vec::new();
    for sentence in &fact.evidence {
        let (_, start, end) =
            ragtester_core::document::find_text(std::slice::from_ref(doc), sentence)
                .ok_or_else(|| sentence.clone())?;
        spans.push(SourceSpan::in_document(doc, start, end));
    }
    Ok(TestCase {
        schema_version: ragtester_core::SCHEMA_VERSION,
        id: stable_id("planted-case", &(&doc.id, &fact.question)),
        category: fact.category,
        strategy: Strategy::Planted,
        generator: Generator::Planted,
        query: fact.question.clone(),
        expected_answer: fact.answer.clone(),
        keywords: fact.keywords.clone(),
        source_spans: spans,
        document_id: doc.id.clone(),
        restrict_to: Vec::new(),
        must_not_contain: Vec::new(),
        language: doc.language.clone(),
        readability: None,
        readability_measure: None,
        generator_model: "planted".into(),
        prompt_version: PLANTED_VERSION.into(),
        false_premise: None,
        injected_documents: Vec::new(),
        critic: None,
        unanswerable_in_corpus: None,
        section_class: None,
        turn: None,
        row_id: None,
        conflict: fact.conflict.clone(),
        lineage: None,
        stale: None,
        expected_tools: Vec::new(),
        tools_in_order: false,
        goal: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;

    fn fact(category: Category, q: &str, evidence: &[&str]) -> PlantedFact {
        PlantedFact {
            category,
            question: q.into(),
            answer: "a".into(),
            keywords: vec!["a".into()],
            evidence: evidence.iter().map(|s| s.to_string()).collect(),
            conflict: None,
        }
    }

    #[test]
    fn facts_become_cases_with_located_spans_and_categories_take_turns() {
        let doc = Document::new(
            "d.md".into(),
            DocumentFormat::Markdown,
            "D".into(),
            "Intro.\nThe pump   runs 12 hours a day. It holds 40 litres.".into(),
            None,
        );
        let facts = vec![
            fact(Category::Core, "q1", &["The pump runs 12 hours a day."]),
            fact(Category::Core, "q2", &["It holds 40 litres."]),
            fact(Category::Negative, "q3", &[]),
            fact(Category::Core, "q4", &["Not in the text."]),
        ];
        let report = planted_cases(std::slice::from_ref(&doc), 10, &|_| Some(facts.clone()));
        let q: Vec<&str> = report.cases.iter().map(|c| c.query.as_str()).collect();
        assert_eq!(q, ["q1", "q3", "q2"]);
        let span = &report.cases[0].source_spans[0];
        let text: String = doc
            .text
            .chars()
            .skip(span.start)
            .take(span.end - span.start)
            .collect();
        assert_eq!(text, "The pump   runs 12 hours a day.");
        assert!(report.cases[1].source_spans.is_empty() && report.cases[1].expects_refusal());
        assert_eq!(report.documents[0].produced, 3);
        assert!(report.documents[0].notes[0].contains("q4"));
        let two = planted_cases(std::slice::from_ref(&doc), 2, &|_| Some(facts.clone()));
        assert_eq!(two.cases.len(), 2);
        let none = planted_cases(std::slice::from_ref(&doc), 2, &|_| None);
        assert!(none.cases.is_empty() && none.documents[0].notes[0].contains("not a planted"));
    }
}
