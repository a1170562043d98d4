//! Generation on a real manual (pages of the R FAQ, see `fixtures/README.md`) with the offline writer:
//! sections are classified before they feed a case, the questions are ones a reader would ask, and the
//! suite's question-quality figure says so.

use ragtester_core::{Generator, SectionClass};
use ragtester_offline::OfflineModel;
use ragtester_testgen::{GenerationOptions, SuiteQuality, generate, sections_of};
use std::path::Path;

fn r_faq() -> ragtester_core::Document {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/r-faq-pages.pdf");
    ragtester_ingest::load_file(&path).unwrap()
}

fn options(generator: Generator) -> GenerationOptions {
    GenerationOptions {
        generator,
        n_test: 12,
        n_complex: None,
        conversations: 0,
        section_tokens: 96,
        seed: 0,
        concurrency: 1,
        prompts: Default::default(),
    }
}

#[test]
fn the_contents_pages_and_title_are_not_prose() {
    let doc = r_faq();
    let sections = sections_of(&doc, 96).unwrap();
    let class_of = |needle: &str| {
        sections
            .iter()
            .find(|s| s.text.contains(needle))
            .unwrap_or_else(|| panic!("no section holds {needle:?}"))
            .class
    };
    assert_eq!(
        class_of("Lexical scoping . . ."),
        SectionClass::TableOfContents
    );
    assert_eq!(
        class_of("What is R-Forge? . ."),
        SectionClass::TableOfContents
    );
    assert_eq!(
        class_of("Kurt Hornik and the R Core Team"),
        SectionClass::FrontMatter
    );
    assert_eq!(
        class_of("R is a system for statistical computation and graphics"),
        SectionClass::Prose
    );
    assert_eq!(class_of("cube <- function(n)"), SectionClass::Code);
    assert_eq!(
        class_of("Simulation and Inference for Stochastic"),
        SectionClass::References
    );
    assert_eq!(class_of("2021–2022 R Core Team"), SectionClass::FrontMatter);
    let contents = sections
        .iter()
        .filter(|s| s.class == SectionClass::TableOfContents)
        .count();
    assert!(contents >= 10, "{contents} contents sections");
}

#[tokio::test]
async fn questions_come_from_prose_in_a_readers_words() {
    let docs = vec![r_faq()];
    let ours = generate(
        &docs,
        &options(Generator::Ragtester),
        &OfflineModel,
        None,
        None,
    )
    .await
    .unwrap();
    let base = generate(
        &docs,
        &options(Generator::Baseline),
        &OfflineModel,
        None,
        None,
    )
    .await
    .unwrap();
    let cases: Vec<_> = ours.cases.iter().chain(&base.cases).cloned().collect();
    let reports: Vec<_> = ours
        .documents
        .iter()
        .chain(&base.documents)
        .cloned()
        .collect();
    assert_eq!(cases.len(), 24, "{:#?}", reports[0].notes);
    for case in &cases {
        assert_eq!(
            case.section_class,
            Some(SectionClass::Prose),
            "{}",
            case.query
        );
        assert!(!case.query.contains(". . ."), "{}", case.query);
    }
    // Questions a reader asks: nearly all open with a question word (the rest are "In S, who …" forms
    // and the one cross-lingual blank the offline writer cannot translate).
    let wh = [
        "What",
        "How",
        "Why",
        "When",
        "Who",
        "Where",
        "Which",
        "In ",
        "According",
    ];
    let asked = cases
        .iter()
        .filter(|c| wh.iter().any(|w| c.query.starts_with(w)))
        .count();
    assert!(
        asked * 10 >= cases.len() * 8,
        "{:#?}",
        cases.iter().map(|c| &c.query).collect::<Vec<_>>()
    );
    let quality = SuiteQuality::measure(&cases, &reports);
    assert_eq!(quality.positive_in_prose, 1.0);
    assert!(quality.cloze <= 0.05, "{}", quality.summary());
    assert_eq!(
        quality.heading_or_number_answers,
        0.0,
        "{}",
        quality.summary()
    );
    assert!(
        quality.sections[&SectionClass::TableOfContents] >= 10,
        "{:?}",
        quality.sections
    );
    // Every section passed over is listed with its class and why.
    let listed = &reports[0].not_prose;
    assert!(
        listed
            .iter()
            .all(|n| !n.reason.is_empty() && !n.used || n.class.can_hold_a_question())
    );
    assert!(
        listed
            .iter()
            .any(|n| n.class == SectionClass::TableOfContents)
    );
}

/// Conversations from a real PDF: every kind the manual yields is written from prose, its follow-ups refer
/// back by a pronoun, and every turn with a source is located in the manual.
#[tokio::test]
async fn conversations_are_written_from_a_real_manual() {
    let docs = vec![r_faq()];
    let mut options = options(Generator::Ragtester);
    options.conversations = 5;
    let report = generate(&docs, &options, &OfflineModel, None, None)
        .await
        .unwrap();
    let turns: Vec<&ragtester_core::TestCase> =
        report.cases.iter().filter(|c| c.turn.is_some()).collect();
    let conversations: std::collections::HashSet<&str> =
        turns.iter().filter_map(|c| c.conversation()).collect();
    assert!(
        conversations.len() >= 3,
        "{} conversations: {:?}",
        conversations.len(),
        report.documents[0].notes
    );
    for case in &turns {
        assert_eq!(
            case.section_class,
            Some(SectionClass::Prose),
            "{}",
            case.query
        );
        for span in &case.source_spans {
            assert!(!docs[0].slice(span.start, span.end).trim().is_empty());
        }
        let turn = case.turn.as_ref().unwrap();
        if turn.step == ragtester_core::TurnStep::FollowUp {
            let pieces = ragtester_text::word_pieces(&case.query.to_lowercase())
                .into_iter()
                .map(str::to_string)
                .collect::<Vec<_>>();
            assert!(
                ["it", "its", "they", "them", "their"]
                    .iter()
                    .any(|p| pieces.iter().any(|w| w == p)),
                "{}",
                case.query
            );
        }
    }
}
