//! Claim-level metrics on constructed answers whose claims are known, with the lexical checker (the offline
//! model) in English and Chinese, and with a scripted model that replies in the asked JSON shape or cannot.

mod common;

use common::{AskedOffline, Scripted, answer, ctx};

use ragtester_core::{Category, SourceSpan, TaskHint, TestCase};
use ragtester_judge::ModelJudge;
use ragtester_judge::claims::claim_metrics;
use ragtester_offline::OfflineModel;

fn case(language: &str, expected: &str, source_len: usize) -> TestCase {
    TestCase {
        source_spans: vec![SourceSpan {
            document_id: "manual".into(),
            start: 0,
            end: source_len,
            page: 1,
            hash: None,
        }],
        document_id: "manual".into(),
        language: language.into(),
        ..ragtester_testkit::case("c1", "q?", expected)
    }
}

/// Source: the valve's pressure; noise: another valve's. The answer states the source's fact and the noise's
/// wrong one, and one fact found nowhere.
#[tokio::test]
async fn lexical_claims_separate_correct_noisy_and_invented_claims_in_both_languages() {
    for (lang, source, noise, expected, said) in [
        (
            "en",
            "The relief valve opens at 4.5 bar.",
            "The bypass valve opens at 6 bar.",
            "The relief valve opens at 4.5 bar. It is fitted on the pump outlet.",
            "The relief valve opens at 4.5 bar. The bypass valve opens at 6 bar. Penguins guard the pump room.",
        ),
        (
            "zh",
            "安全阀在4.5巴时开启。",
            "旁通阀在6巴时开启。",
            "安全阀在4.5巴时开启。它安装在泵的出口。",
            "安全阀在4.5巴时开启。旁通阀在6巴时开启。企鹅看守着泵房。",
        ),
    ] {
        let c = case(lang, expected, source.chars().count());
        let a = answer(
            said,
            vec![ctx(1, "manual", 0, source), ctx(2, "other", 0, noise)],
        );
        let m = claim_metrics(&OfflineModel, &c, &a).await.unwrap();
        assert_eq!(m.method, "lexical");
        assert_eq!(m.error, None);
        assert_eq!(
            (m.expected_claims, m.answer_claims),
            (2, 3),
            "{lang}: {m:?}"
        );
        // One of two expected claims stated; one of three answer claims correct.
        assert_eq!(m.claim_recall, Some(0.5), "{lang}");
        assert_eq!(m.claim_precision, Some(1.0 / 3.0), "{lang}");
        // Two answer claims come from the passages; the penguins from nowhere; the bypass valve from noise.
        assert_eq!(m.faithfulness, Some(2.0 / 3.0), "{lang}");
        assert_eq!(m.hallucination, Some(1.0 / 3.0), "{lang}");
        assert_eq!(m.noise_sensitivity, Some(1.0 / 3.0), "{lang}");
        // The passages hold one expected claim, which the answer states; only the source passage holds one.
        assert_eq!(m.context_claim_recall, Some(0.5), "{lang}");
        assert_eq!(m.context_utilization, Some(1.0), "{lang}");
        assert_eq!(m.context_precision, Some(0.5), "{lang}");
    }
}

#[tokio::test]
async fn refusals_errors_and_negative_cases_have_no_claim_metrics() {
    let c = case("en", "The relief valve opens at 4.5 bar.", 10);
    let refusal = answer(
        "The provided documents do not contain this information.",
        vec![],
    );
    assert_eq!(claim_metrics(&OfflineModel, &c, &refusal).await, None);
    let mut failed = answer("", vec![]);
    failed.error = Some("timeout".into());
    assert_eq!(claim_metrics(&OfflineModel, &c, &failed).await, None);
    let mut negative = c.clone();
    negative.category = Category::Negative;
    let a = answer("It opens at 4.5 bar.", vec![]);
    assert_eq!(claim_metrics(&OfflineModel, &negative, &a).await, None);
}

/// A model that answers the claim tasks from a function of the request.
fn scripted(reply: fn(&TaskHint) -> String) -> Scripted {
    Scripted {
        name: "scripted:claims",
        reply,
    }
}

#[tokio::test]
async fn a_model_s_replies_are_read_and_an_unreadable_one_is_an_error_not_a_number() {
    let c = case("en", "The valve opens at 4.5 bar.", 10);
    let a = answer(
        "The valve opens at 4.5 bar.",
        vec![ctx(1, "manual", 0, "The valve opens at 4.5 bar.")],
    );
    // A model that wraps its JSON in prose and a code fence, and calls every claim entailed.
    let fenced = scripted(|hint| match hint {
        TaskHint::Claims { text, .. } => {
            format!(
                "Here you go:\n```json\n{{\"claims\": [\"{}\"]}}\n```",
                text.trim()
            )
        }
        TaskHint::Entailment { claims, .. } => {
            let v: Vec<&str> = claims.iter().map(|_| "entailed").collect();
            format!("{{\"verdicts\": {v:?}}}")
        }
        _ => unreachable!(),
    });
    let m = claim_metrics(&ModelJudge::of(fenced), &c, &a)
        .await
        .unwrap();
    assert_eq!(m.method, "scripted:claims");
    assert_eq!(m.claim_recall, Some(1.0));
    assert_eq!(m.faithfulness, Some(1.0));
    assert_eq!(m.noise_sensitivity, Some(0.0));

    // Verdicts that do not match the claims, every time: an error after the re-ask, with no shares.
    let miscounted = scripted(|hint| match hint {
        TaskHint::Claims { .. } => "{\"claims\": [\"a\", \"b\"]}".into(),
        TaskHint::Entailment { .. } => "{\"verdicts\": [\"entailed\"]}".into(),
        _ => unreachable!(),
    });
    let m = claim_metrics(&ModelJudge::of(miscounted), &c, &a)
        .await
        .unwrap();
    let error = m.error.expect("an unreadable reply is an error");
    assert!(error.contains("1 verdicts for 2 claims"), "{error}");
    assert_eq!(m.claim_recall, None);
    assert_eq!(m.faithfulness, None);
}

/// The lexical checker works its judgements out directly; they are what asking it prompt by prompt gives.
#[tokio::test]
async fn the_direct_lexical_path_gives_what_asking_the_offline_model_gives() {
    let cells = [
        (
            "en",
            "The relief valve opens at 4.5 bar. It is fitted on the pump outlet; it is brass.",
            "The relief valve opens at 6 bar. It is fitted on the pump outlet. Penguins guard it.",
            vec![
                ctx(1, "manual", 0, "The relief valve opens at 4.5 bar."),
                ctx(
                    2,
                    "other",
                    0,
                    "The bypass valve opens at 6 bar on the pump.",
                ),
                ctx(3, "manual", 10, "It is fitted on the pump outlet."),
            ],
        ),
        (
            "zh",
            "安全阀在4.5巴时开启。它安装在泵的出口。",
            "安全阀在6巴时开启。旁通阀在6巴时开启。",
            vec![
                ctx(1, "other", 0, "旁通阀在6巴时开启。"),
                ctx(2, "manual", 0, "安全阀在4.5巴时开启。"),
            ],
        ),
        (
            "en",
            "The pump runs at 1450 rpm.",
            "It runs at 1450 rpm.",
            vec![ctx(1, "manual", 0, "The pump runs at 1450 rpm.")],
        ),
    ];
    for (lang, expected, said, contexts) in cells {
        let c = case(lang, expected, 40);
        let a = answer(said, contexts);
        let direct = claim_metrics(&OfflineModel, &c, &a).await.unwrap();
        let asked = claim_metrics(&ModelJudge::of(AskedOffline), &c, &a)
            .await
            .unwrap();
        assert_eq!(direct.method, "lexical");
        assert_eq!(asked.method, "offline");
        let unnamed = |m: ragtester_core::ClaimMetrics| ragtester_core::ClaimMetrics {
            method: String::new(),
            ..m
        };
        assert_eq!(
            unnamed(direct),
            unnamed(asked),
            "{lang}: {expected} / {said}"
        );
    }
}
