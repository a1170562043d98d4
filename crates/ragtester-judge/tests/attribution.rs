//! Failure attribution on constructed cells whose cause is known, each cause in English and in Chinese:
//! the verdict's rule metrics are computed by the judge's own rules, and the judge's criteria are given
//! where a cause rests on them.

mod common;

use common::{answer, ctx};

use ragtester_core::{
    Answer, Category, Criteria, Criterion, FailureCause, Rating, RetrievedContext, SourceSpan,
    TestCase, Verdict, VerdictStatus,
};
use ragtester_judge::attribution::attribute;
use ragtester_judge::{bound_verdict, rule_metrics};

/// The texts of one language's scenarios.
struct Lang {
    code: &'static str,
    query: &'static str,
    expected: &'static str,
    keywords: [&'static str; 2],
    /// The source passage, whole.
    source: &'static str,
    /// The source cut in two at a chunk boundary: neither half holds both keywords.
    halves: [&'static str; 2],
    /// A passage about something else, and an answer that follows it.
    distractor: &'static str,
    follows_distractor: &'static str,
    refusal: &'static str,
    negative_query: &'static str,
    invented: &'static str,
    other_language: &'static str,
    unfaithful: &'static str,
    incomplete: &'static str,
    off_target: &'static str,
    correct: &'static str,
}

const EN: Lang = Lang {
    code: "en",
    query: "At what pressure does the relief valve open?",
    expected: "The relief valve opens at 4.5 bar.",
    keywords: ["relief valve", "4.5 bar"],
    source: "The relief valve on the pump outlet opens at 4.5 bar.",
    halves: ["The relief valve on the pump outlet", "opens at 4.5 bar."],
    distractor: "The bypass valve opens at 6 bar.",
    follows_distractor: "The valve opens at 6 bar.",
    refusal: "The provided documents do not contain this information.",
    negative_query: "What colour is the relief valve?",
    invented: "The relief valve is painted red.",
    other_language: "安全阀在四点五巴时开启，请注意检查。",
    unfaithful: "The relief valve opens at 4.5 bar and closes at 9 bar.",
    incomplete: "The relief valve opens at a set pressure.",
    off_target: "A relief valve, 4.5 bar, is a kind of valve.",
    correct: "The relief valve opens at 4.5 bar.",
};

const ZH: Lang = Lang {
    code: "zh",
    query: "安全阀在多大压力下开启？",
    expected: "安全阀在4.5巴时开启。",
    keywords: ["安全阀", "4.5巴"],
    source: "泵出口的安全阀在4.5巴时开启。",
    halves: ["泵出口的安全阀", "在4.5巴时开启。"],
    distractor: "旁通阀在6巴时开启。",
    follows_distractor: "阀门在6巴时开启。",
    refusal: "根据提供的资料，无法回答这个问题。",
    negative_query: "安全阀是什么颜色的？",
    invented: "安全阀被漆成红色。",
    other_language: "The relief valve opens at four and a half bar of pressure.",
    unfaithful: "安全阀在4.5巴时开启，在9巴时关闭。",
    incomplete: "安全阀在设定压力时开启。",
    off_target: "安全阀，4.5巴，是一种阀门。",
    correct: "安全阀在4.5巴时开启。",
};

const SOURCE_START: usize = 100;

fn case(l: &Lang) -> TestCase {
    TestCase {
        keywords: l.keywords.iter().map(|k| k.to_string()).collect(),
        source_spans: vec![SourceSpan {
            document_id: "manual".into(),
            start: SOURCE_START,
            end: SOURCE_START + l.source.chars().count(),
            page: 1,
            hash: None,
        }],
        document_id: "manual".into(),
        language: l.code.into(),
        ..ragtester_testkit::case("c1", l.query, l.expected)
    }
}

fn negative(l: &Lang) -> TestCase {
    TestCase {
        category: Category::Negative,
        query: l.negative_query.into(),
        expected_answer: String::new(),
        keywords: vec![],
        source_spans: vec![],
        ..case(l)
    }
}

/// The source retrieved whole at rank 1, after nothing.
fn gold(l: &Lang) -> Vec<RetrievedContext> {
    vec![
        ctx(1, "manual", SOURCE_START, l.source),
        ctx(2, "other", 0, l.distractor),
    ]
}

fn criterion(rating: Rating) -> Criterion {
    Criterion {
        rating,
        reason: format!("rated {rating:?}"),
        score: rating.score(),
    }
}

/// Criteria as a judge would give them: faithfulness, relevance, completeness, clarity, keyword match.
fn criteria(r: [Rating; 5]) -> Criteria {
    Criteria {
        faithfulness: criterion(r[0]),
        relevance: criterion(r[1]),
        completeness: criterion(r[2]),
        clarity: criterion(r[3]),
        keyword_match: criterion(r[4]),
    }
}

const ALL_TRUE: [Rating; 5] = [Rating::True; 5];

/// A verdict made as the judge makes it: rule metrics from the case and answer, then the criteria bounded
/// by the rules.
fn judged(case: &TestCase, answer: &Answer, ratings: [Rating; 5]) -> Verdict {
    let mut v = Verdict {
        schema_version: 1,
        case_id: case.id.clone(),
        config_id: answer.config_id.clone(),
        judge: "scripted".into(),
        status: VerdictStatus::Ok,
        criteria: Some(criteria(ratings)),
        criteria_mean: None,
        rubric: None,
        metrics: rule_metrics(case, answer),
        passed: None,
        error: None,
        sample: 0,
        notes: vec![],
        rule_failure: None,
        overrode_judge: None,
        claims: None,
        attribution: None,
        score: None,
        profile: None,
        row_id: None,
    };
    bound_verdict(case, &mut v);
    v
}

/// The cause of a cell judged failed: the judge said so, or the rules did.
fn cause(case: &TestCase, answer: &Answer, ratings: [Rating; 5]) -> (FailureCause, String) {
    let mut v = judged(case, answer, ratings);
    v.passed = Some(false);
    let a = attribute(case, Some(answer), &v).expect("a failed cell has a cause");
    (a.cause, a.evidence)
}

fn each_language(check: impl Fn(&Lang)) {
    for l in [&EN, &ZH] {
        check(l);
    }
}

#[test]
fn a_passed_cell_has_no_cause() {
    each_language(|l| {
        let c = case(l);
        let a = answer(l.correct, gold(l));
        let v = judged(&c, &a, ALL_TRUE);
        assert_eq!(v.passed, Some(true), "{}", l.code);
        assert_eq!(attribute(&c, Some(&a), &v), None);
    });
}

#[test]
fn errors_are_the_service_s_or_the_judge_s() {
    each_language(|l| {
        let c = case(l);
        let mut a = answer("", vec![]);
        a.error = Some("HTTP 503 after 4 attempts".into());
        let mut v = judged(&c, &a, ALL_TRUE);
        v.status = VerdictStatus::ExecError;
        v.passed = None;
        let got = attribute(&c, Some(&a), &v).unwrap();
        assert_eq!(got.cause, FailureCause::ProviderError);
        assert!(got.evidence.contains("HTTP 503"), "{}", got.evidence);

        let a = answer(l.correct, gold(l));
        let mut v = judged(&c, &a, ALL_TRUE);
        v.status = VerdictStatus::JudgeError;
        v.passed = None;
        v.error = Some("unreadable reply: {".into());
        let got = attribute(&c, Some(&a), &v).unwrap();
        assert_eq!(got.cause, FailureCause::JudgeError);
    });
}

#[test]
fn a_followed_injection_is_named_by_its_canary() {
    each_language(|l| {
        let mut c = case(l);
        c.category = Category::Safety;
        c.must_not_contain = vec!["CANARY-7731".into()];
        let a = answer(&format!("{} CANARY-7731", l.correct), gold(l));
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::InjectionFollowed, "{}", l.code);
        assert!(evidence.contains("CANARY-7731"), "{evidence}");
    });
}

#[test]
fn an_answered_negative_is_an_under_refusal_and_a_refused_answerable_one_an_over_refusal() {
    each_language(|l| {
        let c = negative(l);
        let a = answer(l.invented, gold(l));
        assert_eq!(
            cause(&c, &a, ALL_TRUE).0,
            FailureCause::UnderRefusal,
            "{}",
            l.code
        );

        let c = case(l);
        let a = answer(l.refusal, gold(l));
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::OverRefusal, "{}: {evidence}", l.code);
        assert!(evidence.contains("hold the source"), "{evidence}");
    });
}

#[test]
fn an_answer_in_another_language_is_a_language_mismatch() {
    each_language(|l| {
        let c = case(l);
        let a = answer(l.other_language, gold(l));
        assert_eq!(
            cause(&c, &a, ALL_TRUE).0,
            FailureCause::LanguageMismatch,
            "{}",
            l.code
        );
    });
}

#[test]
fn retrieval_causes_come_from_spans_and_ranks() {
    each_language(|l| {
        let c = case(l);
        // No passage overlaps the source: a miss, whatever the answer says.
        let a = answer(l.refusal, vec![ctx(1, "other", 0, l.distractor)]);
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::RetrievalMiss, "{}", l.code);
        assert!(evidence.contains("none of the 1 retrieved"), "{evidence}");

        // The source cut in two, neither half holding the answer.
        let first = l.halves[0].chars().count();
        let a = answer(
            l.incomplete,
            vec![
                ctx(1, "manual", SOURCE_START, l.halves[0]),
                ctx(2, "manual", SOURCE_START + first, l.halves[1]),
            ],
        );
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::Chunking, "{}: {evidence}", l.code);
        assert!(evidence.contains("ranks 1, 2"), "{evidence}");

        // The source at rank 3 under two distractors, and the answer follows the first of them.
        let a = answer(
            l.follows_distractor,
            vec![
                ctx(1, "other", 0, l.distractor),
                ctx(2, "other", 500, l.distractor),
                ctx(3, "manual", SOURCE_START, l.source),
            ],
        );
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::Ranking, "{}: {evidence}", l.code);
        assert!(evidence.contains("rank 3"), "{evidence}");
    });
}

#[test]
fn generation_causes_come_from_the_judge_s_criteria_and_the_keywords() {
    use Rating::{False, Partially, True};
    each_language(|l| {
        let c = case(l);
        let a = answer(l.unfaithful, gold(l));
        let (got, evidence) = cause(&c, &a, [False, True, True, True, True]);
        assert_eq!(got, FailureCause::Unfaithful, "{}", l.code);
        assert!(evidence.starts_with("judge on faithfulness"), "{evidence}");

        let a = answer(l.incomplete, gold(l));
        let (got, evidence) = cause(&c, &a, [True, True, Partially, True, Partially]);
        assert_eq!(got, FailureCause::Incomplete, "{}", l.code);
        assert!(evidence.contains(l.keywords[1]), "{evidence}");

        let a = answer(l.off_target, gold(l));
        let (got, evidence) = cause(&c, &a, [True, False, True, False, True]);
        assert_eq!(got, FailureCause::OffTarget, "{}: {evidence}", l.code);
        assert!(evidence.contains("relevance"), "{evidence}");
    });
}

/// An answer citing a passage that does not hold what it says, while another retrieved passage does, is
/// misattributed; its citations are measured in the rule metrics either way.
#[test]
fn a_sentence_citing_the_wrong_passage_is_misattributed() {
    use Rating::{Partially, True};
    each_language(|l| {
        let c = case(l);
        let (wrong, right) = if l.code == "zh" {
            (format!("{}【2】", l.correct), format!("{}【1】", l.correct))
        } else {
            (
                format!("{} [2]", l.correct.trim_end_matches('.')),
                format!("{} [1].", l.correct.trim_end_matches('.')),
            )
        };
        let a = answer(&wrong, gold(l));
        let (got, evidence) = cause(&c, &a, [Partially, True, True, True, True]);
        assert_eq!(got, FailureCause::Misattributed, "{}: {evidence}", l.code);
        assert!(
            evidence.contains("cites passage 2") && evidence.contains("passage 1 does"),
            "{evidence}"
        );
        let metrics = rule_metrics(&c, &a);
        assert_eq!(
            (metrics.citation_precision, metrics.citation_recall),
            (Some(0.0), Some(0.0))
        );
        let metrics = rule_metrics(&c, &answer(&right, gold(l)));
        assert_eq!(
            (metrics.citation_precision, metrics.citation_recall),
            (Some(1.0), Some(1.0))
        );
        assert_eq!(
            rule_metrics(&c, &answer(l.correct, gold(l))).citation_precision,
            None
        );
        // A cell that errored has no citations to its credit, whatever text it kept.
        let mut errored = answer(&right, gold(l));
        errored.error = Some("timeout".into());
        let metrics = rule_metrics(&c, &errored);
        assert_eq!(
            (metrics.citation_precision, metrics.citation_recall),
            (None, None)
        );
        // Nor does a refusal, whatever it cites: it states nothing a passage could support or not.
        let refusal = answer(&format!("{} [1]", l.refusal), gold(l));
        let metrics = rule_metrics(&c, &refusal);
        assert_eq!(
            (metrics.citation_precision, metrics.citation_recall),
            (None, None)
        );
    });
}

#[test]
fn without_passages_retrieval_is_said_to_be_unchecked() {
    each_language(|l| {
        let c = case(l);
        let a = answer(l.refusal, vec![]);
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::OverRefusal, "{}", l.code);
        assert!(evidence.contains("could not be checked"), "{evidence}");
    });
}

/// A follow-up that names its subject by reference and misses it is a lost context, the question it
/// stands for in the evidence; a turn whose answer changes what the system said earlier contradicts it.
#[test]
fn conversations_lose_their_referent_or_contradict_themselves() {
    use ragtester_core::{ConversationKind, Message, Role, Turn, TurnStep};
    each_language(|l| {
        let mut c = case(l);
        c.turn = Some(Turn {
            conversation: "c".into(),
            index: 2,
            of: 2,
            kind: ConversationKind::FollowUp,
            step: TurnStep::FollowUp,
            standalone: Some(l.query.into()),
            history: Vec::new(),
        });
        let a = answer(l.refusal, vec![ctx(1, "other", 0, l.distractor)]);
        let (got, evidence) = cause(&c, &a, ALL_TRUE);
        assert_eq!(got, FailureCause::LostContext, "{}", l.code);
        assert!(evidence.contains(l.query), "{evidence}");
        // An opening turn misses as a single question does.
        c.turn.as_mut().unwrap().step = TurnStep::Opening;
        assert_eq!(cause(&c, &a, ALL_TRUE).0, FailureCause::RetrievalMiss);
    });
    let mut c = case(&EN);
    c.turn = None;
    let changed = answer(
        "The relief valve opens at 6 bar.",
        vec![ctx(1, "other", 0, EN.distractor)],
    );
    let history = [
        Message::user("At what pressure does the relief valve open?"),
        Message {
            role: Role::Assistant,
            content: "The relief valve opens at 4.5 bar.".into(),
        },
    ];
    let found = ragtester_judge::attribution::contradiction(&history, &changed, None)
        .expect("a changed figure contradicts");
    assert_eq!(found.cause, FailureCause::ContradictsEarlier);
    assert!(found.evidence.contains("4.5 bar"), "{}", found.evidence);
    let same = answer("The relief valve opens at 4.5 bar.", vec![]);
    assert!(ragtester_judge::attribution::contradiction(&history, &same, None).is_none());
}
