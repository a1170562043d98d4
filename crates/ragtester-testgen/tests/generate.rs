//! The offline generator against a small two-language corpus: strategies, sections and spans.

use ragtester_core::{Category, Document, DocumentFormat, Generator, Strategy};
use ragtester_offline::OfflineModel;
use ragtester_testgen::{GenerationOptions, generate, sections_of};
use std::collections::{HashMap, HashSet};

const EN_TOPICS: [&str; 12] = [
    "anemometer calibration",
    "rain gauge heating",
    "barometer drift",
    "solar panel cleaning",
    "mast corrosion",
    "data logger firmware",
    "radio uplink outages",
    "snow depth sensors",
    "humidity probe shielding",
    "lightning protection",
    "battery replacement",
    "visitor access rules",
];
const EN_OBJECTS: [&str; 12] = [
    "technicians",
    "contractors",
    "volunteers",
    "engineers",
    "inspectors",
    "students",
    "rangers",
    "pilots",
    "surveyors",
    "auditors",
    "electricians",
    "guards",
];
const ZH_TOPICS: [&str; 12] = [
    "大坝渗流监测",
    "闸门启闭检修",
    "库区水质采样",
    "防汛物资储备",
    "泄洪预警广播",
    "坝顶交通管制",
    "溢洪道清淤",
    "水文数据上报",
    "鱼类增殖放流",
    "白蚁防治",
    "电站机组巡检",
    "库岸滑坡观测",
];

fn corpus() -> Vec<Document> {
    let en: String = (0..12)
        .map(|i| format!(
            "The {} procedure is handled by {} from the northern depot. It takes {} hours and is repeated every {} weeks.\n\n",
            EN_TOPICS[i], EN_OBJECTS[i], i + 2, i * 3 + 4
        ))
        .collect();
    let zh: String = (0..12)
        .map(|i| format!("{}工作由第{}班组负责，每次持续{}小时。该项工作每年开展{}次，结果报送省水利厅。\n\n", ZH_TOPICS[i], i + 1, i + 3, i * 2 + 5))
        .collect();
    vec![
        Document::new(
            "en.md".into(),
            DocumentFormat::Markdown,
            "Wind Stations".into(),
            en,
            None,
        ),
        Document::new(
            "zh.md".into(),
            DocumentFormat::Markdown,
            "水库管理".into(),
            zh,
            None,
        ),
    ]
}

fn options(generator: Generator) -> GenerationOptions {
    GenerationOptions {
        generator,
        n_test: 8,
        n_complex: None,
        conversations: 0,
        section_tokens: 30,
        seed: 7,
        concurrency: 2,
        prompts: Default::default(),
    }
}

#[tokio::test]
async fn ragtester_strategies_use_each_section_at_most_once() {
    let docs = corpus();
    let report = generate(
        &docs,
        &options(Generator::Ragtester),
        &OfflineModel,
        None,
        None,
    )
    .await
    .unwrap();
    assert_eq!(report.cases.len(), 16, "{:#?}", report.documents);
    for doc in &docs {
        let sections = sections_of(doc, 30).unwrap();
        let mut fed: HashMap<usize, usize> = HashMap::new();
        for case in report
            .cases
            .iter()
            .filter(|c| c.document_id == doc.id && c.category != Category::Negative)
        {
            let span = &case.source_spans[0];
            let section = sections
                .iter()
                .position(|s| span.start >= s.start && span.end <= s.end)
                .unwrap();
            *fed.entry(section).or_default() += 1;
            // The span's text is really in the document.
            assert!(!doc.slice(span.start, span.end).is_empty());
        }
        assert!(fed.values().all(|n| *n == 1), "{fed:?}");
    }
    let strategies: HashSet<Strategy> = report.cases.iter().map(|c| c.strategy).collect();
    for s in [
        Strategy::Complex,
        Strategy::NegativeInvented,
        Strategy::NegativeCrossDocument,
        Strategy::Coverage,
        Strategy::CrossLingual,
        Strategy::Injection,
    ] {
        assert!(strategies.contains(&s), "{s:?} missing");
    }
    for case in &report.cases {
        if case.category == Category::Negative {
            assert!(case.source_spans.is_empty());
            assert!(ragtester_text::is_refusal(&case.expected_answer));
            assert_eq!(case.restrict_to, vec![case.document_id.clone()]);
        } else {
            assert!(!case.source_spans.is_empty());
        }
    }
    // The complex cases come from the lowest-readability sections of their document.
    for doc in &docs {
        let mut complex: Vec<f64> = report
            .cases
            .iter()
            .filter(|c| c.document_id == doc.id && c.strategy == Strategy::Complex)
            .map(|c| {
                c.readability
                    .expect("a complex case records its section's readability")
            })
            .collect();
        assert!(!complex.is_empty(), "no complex case for {}", doc.id);
        complex.sort_by(f64::total_cmp);
        // Sections of equal text count once: a second question from the same text is a duplicate, and the
        // writer rightly moves on to the next section.
        let mut seen = HashSet::new();
        let mut all: Vec<f64> = sections_of(doc, 30)
            .unwrap()
            .iter()
            .filter(|s| seen.insert(s.text.clone()))
            .filter_map(|s| s.readability)
            .collect();
        all.sort_by(f64::total_cmp);
        assert!(all.len() > complex.len(), "every section would be complex");
        assert_eq!(
            complex,
            all[..complex.len()],
            "{}: {:#?}",
            doc.id,
            report.documents
        );
    }
    for r in &report.documents {
        assert!(r.coverage > 0.0 && r.coverage <= 1.0);
        assert_eq!(r.produced, 8);
    }
}

#[tokio::test]
async fn baseline_matches_counts_and_marks_its_strategy() {
    let docs = corpus();
    let ours = generate(
        &docs,
        &options(Generator::Ragtester),
        &OfflineModel,
        None,
        None,
    )
    .await
    .unwrap();
    let targets: HashMap<String, usize> = ours
        .documents
        .iter()
        .map(|d| (d.document_id.clone(), d.produced))
        .collect();
    let base = generate(
        &docs,
        &options(Generator::Baseline),
        &OfflineModel,
        None,
        Some(&targets),
    )
    .await
    .unwrap();
    assert_eq!(base.cases.len(), ours.cases.len());
    assert!(
        base.cases
            .iter()
            .all(|c| c.strategy == Strategy::Baseline && c.generator == Generator::Baseline)
    );
    // Same seed, same suite.
    let again = generate(
        &docs,
        &options(Generator::Baseline),
        &OfflineModel,
        None,
        Some(&targets),
    )
    .await
    .unwrap();
    assert_eq!(base.cases, again.cases);
}

#[tokio::test]
async fn too_small_a_document_reports_a_shortfall() {
    let docs = vec![Document::new(
        "s.md".into(),
        DocumentFormat::Markdown,
        "S".into(),
        "The only sentence of this document is here.".into(),
        None,
    )];
    let report = generate(
        &docs,
        &options(Generator::Ragtester),
        &OfflineModel,
        None,
        None,
    )
    .await
    .unwrap();
    let d = &report.documents[0];
    assert!(d.produced < 8);
    assert!(d.notes[0].starts_with("shortfall"), "{:?}", d.notes);
}

/// A section the offline writer can only ask as a fill-in-the-blank: the question is kept as the last
/// resort, and the suite report says which section and why.
#[tokio::test]
async fn a_fill_in_the_blank_is_reported_with_its_reason() {
    let docs = vec![Document::new(
        "filters.md".into(),
        DocumentFormat::Markdown,
        "Filters".into(),
        "Please keep at least 2 spare filters in stock at all times.".into(),
        None,
    )];
    let mut opts = options(Generator::Baseline);
    opts.n_test = 1;
    let report = generate(&docs, &opts, &OfflineModel, None, None)
        .await
        .unwrap();
    let d = &report.documents[0];
    assert_eq!(d.produced, 1, "{:?}", d.notes);
    assert!(
        report.cases[0].query.contains("____"),
        "{:?}",
        report.cases[0]
    );
    let note = d
        .notes
        .iter()
        .find(|n| n.contains("asked as a fill-in-the-blank"))
        .unwrap_or_else(|| panic!("{:?}", d.notes));
    assert!(
        note.contains("has a structure the offline writer turns into a question"),
        "{note}"
    );
}

#[tokio::test]
async fn every_kind_beyond_the_paper_is_generated_with_its_ground_truth() {
    let docs = corpus();
    let mut opts = options(Generator::Ragtester);
    opts.n_test = 14;
    opts.section_tokens = 30;
    let report = generate(&docs, &opts, &OfflineModel, None, None)
        .await
        .unwrap();
    for d in &report.documents {
        assert_eq!(d.produced, 14, "{:#?}", d.notes);
    }
    let of = |s: Strategy| -> Vec<&ragtester_core::TestCase> {
        report.cases.iter().filter(|c| c.strategy == s).collect()
    };
    let doc_of = |id: &str| docs.iter().find(|d| d.id == id).unwrap();
    // Near misses and false premises are negatives; a near miss has no span, a false premise has the
    // span of the sentence that corrects it.
    for case in of(Strategy::NegativeNearMiss) {
        assert!(case.expects_refusal() && case.source_spans.is_empty());
    }
    let premises = of(Strategy::NegativeFalsePremise);
    assert_eq!(premises.len(), 2);
    for case in premises {
        assert!(case.expects_refusal());
        let claim = case.false_premise.as_deref().unwrap();
        let span = &case.source_spans[0];
        let source = doc_of(&span.document_id).slice(span.start, span.end);
        assert!(
            source.contains(&case.keywords[0]),
            "{source} / {:?}",
            case.keywords
        );
        assert!(
            !source.contains(claim),
            "the source states the claim: {claim}"
        );
        assert!(case.restrict_to.is_empty());
    }
    // Multi-passage: spans in two sections of one document; multi-document: spans in two documents.
    for case in of(Strategy::MultiPassage) {
        assert_eq!(case.category, Category::Inference);
        let sections = sections_of(doc_of(&case.document_id), 30).unwrap();
        let fed: HashSet<usize> = case
            .source_spans
            .iter()
            .map(|s| {
                sections
                    .iter()
                    .position(|x| s.start >= x.start && s.end <= x.end)
                    .unwrap()
            })
            .collect();
        assert!(fed.len() >= 2, "{:?}", case.source_spans);
    }
    let multi_doc = of(Strategy::MultiDocument);
    assert_eq!(multi_doc.len(), 2);
    for case in multi_doc {
        let documents: HashSet<&str> = case
            .source_spans
            .iter()
            .map(|s| s.document_id.as_str())
            .collect();
        assert_eq!(documents.len(), 2, "{:?}", case.source_spans);
    }
    // Poisoned: the case carries its copy, retrieves from it alone, and its span points into the copy.
    for case in of(Strategy::PoisonedDocument) {
        assert_eq!(case.category, Category::Safety);
        let copy = &case.injected_documents[0];
        assert_eq!(
            copy.origin,
            ragtester_core::document::DocumentOrigin::Poisoned
        );
        assert_eq!(case.restrict_to, vec![copy.id.clone()]);
        assert!(copy.text.contains(&case.must_not_contain[0]));
        let span = &case.source_spans[0];
        assert_eq!(span.document_id, copy.id);
        let answer_in_copy = copy.slice(span.start, span.end);
        assert!(
            case.expected_answer.contains(&answer_in_copy),
            "{answer_in_copy}"
        );
    }
}

/// Conversations of every kind, in both languages: turns numbered in order, each a case located in its
/// document, follow-ups that refer back by a pronoun and carry the question they stand for, refusals
/// pressed again still expecting a refusal, and a turn in the other language.
#[tokio::test]
async fn conversations_of_every_kind_in_both_languages() {
    // Sections that say several things about one subject, as handbooks do.
    let en: String = (0..12)
        .map(|i| format!(
            "The {topic} procedure is handled by {} from the northern depot. The {topic} procedure requires a \
             signed permit from the station manager. The {topic} procedure is repeated every {} weeks.\n\n",
            EN_OBJECTS[i], i * 3 + 4, topic = EN_TOPICS[i]
        ))
        .collect();
    let zh: String = (0..12)
        .map(|i| format!(
            "{topic}工作由第{}班组负责。{topic}工作每次持续{}小时。{topic}工作的结果报送省水利厅。\n\n",
            i + 1, i + 3, topic = ZH_TOPICS[i]
        ))
        .collect();
    let docs = vec![
        Document::new(
            "en.md".into(),
            DocumentFormat::Markdown,
            "Wind Stations".into(),
            en,
            None,
        ),
        Document::new(
            "zh.md".into(),
            DocumentFormat::Markdown,
            "水库管理".into(),
            zh,
            None,
        ),
    ];
    let mut options = options(Generator::Ragtester);
    options.conversations = 6;
    options.n_test = 4;
    options.section_tokens = 60;
    let report = generate(&docs, &options, &OfflineModel, None, None)
        .await
        .unwrap();
    let turns: Vec<&ragtester_core::TestCase> =
        report.cases.iter().filter(|c| c.turn.is_some()).collect();
    for doc in &report.documents {
        assert_eq!(doc.conversations_produced, 6, "{doc:#?}");
        assert_eq!(doc.produced, 4, "single questions are counted apart");
    }
    let mut conversations: HashMap<&str, Vec<&ragtester_core::TestCase>> = HashMap::new();
    for case in &turns {
        conversations
            .entry(case.conversation().unwrap())
            .or_default()
            .push(case);
    }
    assert_eq!(conversations.len(), 12);
    let mut kinds = HashSet::new();
    for (_, turns) in conversations {
        let first = turns[0].turn.as_ref().unwrap();
        kinds.insert((first.kind, turns[0].language.clone()));
        assert!((2..=6).contains(&turns.len()));
        for (i, case) in turns.iter().enumerate() {
            let turn = case.turn.as_ref().unwrap();
            assert_eq!((turn.index, turn.of), (i + 1, turns.len()));
            assert_eq!(case.strategy, Strategy::Conversation);
            let doc = docs.iter().find(|d| d.id == case.document_id).unwrap();
            for span in &case.source_spans {
                assert!(!doc.slice(span.start, span.end).is_empty());
            }
            match turn.step {
                ragtester_core::TurnStep::FollowUp => {
                    let standalone = turn.standalone.as_deref().unwrap();
                    assert_ne!(standalone, case.query);
                    // By a pronoun, or by ellipsis: "What about the night tour?", "那夜间观星活动呢？".
                    let query = case.query.to_lowercase();
                    let pronoun = ["it", "its", "they", "them", "their", "它"]
                        .iter()
                        .any(|p| ragtester_text::word_pieces(&query).contains(p));
                    let ellipsis = query.starts_with("what about ")
                        || (query.starts_with('那') && query.ends_with("呢？"));
                    assert!(pronoun || ellipsis, "{} (for {standalone})", case.query);
                }
                ragtester_core::TurnStep::OutOfScope | ragtester_core::TurnStep::PressedAgain => {
                    assert_eq!(case.category, Category::Negative, "{}", case.query);
                    assert!(case.source_spans.is_empty());
                }
                ragtester_core::TurnStep::OtherLanguage => {
                    assert_ne!(case.language, turns[0].language);
                    assert_eq!(case.category, Category::Multilingual);
                }
                _ => assert!(!case.source_spans.is_empty(), "{}", case.query),
            }
        }
        if first.kind == ragtester_core::ConversationKind::Comparison {
            // Which of two figures is larger, worked out from the two answers it cites.
            let compare = turns[2];
            assert!(
                compare.expected_answer.contains(" is larger than ")
                    || compare.expected_answer.contains("大于"),
                "{}",
                compare.expected_answer
            );
            assert!(compare.source_spans.len() >= 2);
            assert_eq!(compare.category, Category::Inference);
        }
        if first.kind == ragtester_core::ConversationKind::RefusalKept {
            assert_eq!(
                turns[2].turn.as_ref().unwrap().standalone.as_deref(),
                Some(turns[0].query.as_str())
            );
        }
    }
    for kind in ragtester_core::ConversationKind::ALL {
        for language in ["en", "zh"] {
            assert!(
                kinds.contains(&(kind, language.to_string())),
                "no {} conversation in {language}",
                kind.as_str()
            );
        }
    }
}
