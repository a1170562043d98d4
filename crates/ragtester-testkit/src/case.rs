//! The one way tests make a test case: a positive core question of the ragtester strategies, in English,
//! about document `d`, with no spans or keywords. A test changes what it is about with struct update
//! syntax (`TestCase { category: Category::Negative, ..case("c1", "…", "…") }`), so a field added to
//! `TestCase` is added here once.

use ragtester_core::{Category, Generator, Strategy, TestCase};

pub fn case(id: &str, query: &str, expected_answer: &str) -> TestCase {
    TestCase {
        schema_version: ragtester_core::SCHEMA_VERSION,
        id: id.into(),
        category: Category::Core,
        strategy: Strategy::Coverage,
        generator: Generator::Ragtester,
        query: query.into(),
        expected_answer: expected_answer.into(),
        keywords: Vec::new(),
        source_spans: Vec::new(),
        document_id: "d".into(),
        restrict_to: Vec::new(),
        must_not_contain: Vec::new(),
        language: "en".into(),
        readability: None,
        readability_measure: None,
        generator_model: "offline".into(),
        prompt_version: "question-v1".into(),
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
    }
}
