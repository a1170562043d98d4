//! The judge end to end with the offline model and with scripted judges that misbehave.

mod common;

use anyhow::Result;
use common::AskedOffline;
use ragtester_core::{
    Answer, Category, ChatModel, ChatRequest, ChatResponse, Latency, RetrievedContext, SourceSpan,
    TestCase, Usage, VerdictStatus,
};
use ragtester_judge::{Judge, ModelJudge, judge_all, judge_one};
use ragtester_offline::OfflineModel;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

fn case(category: Category, expected: &str) -> TestCase {
    TestCase {
        category,
        keywords: vec!["4.5".into()],
        source_spans: if category == Category::Negative {
            vec![]
        } else {
            vec![SourceSpan {
                document_id: "d".into(),
                start: 100,
                end: 130,
                page: 1,
                hash: None,
            }]
        },
        ..ragtester_testkit::case(
            "c1",
            "At what pressure does the relief valve open?",
            expected,
        )
    }
}

fn answer(text: &str, error: Option<&str>) -> Answer {
    Answer {
        schema_version: 1,
        case_id: "c1".into(),
        config_id: "k".into(),
        contexts: vec![
            RetrievedContext {
                rank: 1,
                score: 2.0,
                chunk_id: "x".into(),
                document_id: "d".into(),
                start: 0,
                end: 50,
                text: "The motor is rated at 2.2 kW.".into(),
            },
            RetrievedContext {
                rank: 2,
                score: 1.0,
                chunk_id: "y".into(),
                document_id: "d".into(),
                start: 90,
                end: 140,
                text: "The relief valve opens at 4.5 bar.".into(),
            },
        ],
        answer: text.into(),
        latency: Latency::default(),
        usage: Usage::default(),
        cached: false,
        cached_at: None,
        truncated_from: None,
        context_cut_from: None,
        tool_calls: None,
        simulation: None,
        citations: Vec::new(),
        error: error.map(str::to_string),
        rewritten_query: None,
        trace: None,
    }
}

#[tokio::test]
async fn offline_judge_passes_a_correct_answer_with_metrics() {
    let v = judge_one(
        Some(&case(
            Category::DetailNumeric,
            "The relief valve opens at 4.5 bar.",
        )),
        &answer("The relief valve opens at 4.5 bar.", None),
        &OfflineModel,
    )
    .await;
    assert_eq!(v.status, VerdictStatus::Ok);
    assert_eq!(v.passed, Some(true));
    assert_eq!(v.metrics.hit, Some(true));
    assert_eq!(v.metrics.reciprocal_rank, Some(0.5));
    // One span, found by the second of two passages.
    assert_eq!(v.metrics.recall, Some(1.0));
    assert_eq!(v.metrics.precision, Some(0.5));
    assert_eq!(v.metrics.keyword_recall_context, Some(1.0));
    assert_eq!(v.metrics.language_match, Some(true));
}

#[tokio::test]
async fn exec_errors_are_never_judged() {
    let v = judge_one(
        Some(&case(Category::Core, "x")),
        &answer("", Some("generation failed: timeout")),
        &OfflineModel,
    )
    .await;
    assert_eq!(v.status, VerdictStatus::ExecError);
    assert_eq!(v.passed, None);
    assert!(v.error.unwrap().contains("timeout"));
}

struct Scripted {
    replies: Vec<String>,
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl ChatModel for Scripted {
    fn name(&self) -> String {
        "scripted".into()
    }
    async fn chat(&self, _request: &ChatRequest) -> Result<ChatResponse> {
        let i = self.calls.fetch_add(1, Ordering::SeqCst);
        let content = self
            .replies
            .get(i)
            .cloned()
            .unwrap_or_else(|| "still not JSON".into());
        Ok(ChatResponse {
            content,
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            notes: Vec::new(),
        })
    }
}

#[tokio::test]
async fn unreadable_replies_are_reasked_then_become_judge_errors_with_the_raw_reply() {
    let judge = Arc::new(Scripted {
        replies: vec!["I'd say it passes!".into(), "{\"criteria\": 5}".into()],
        calls: AtomicUsize::new(0),
    });
    let asked = ModelJudge::new(judge.clone());
    let v = judge_one(Some(&case(Category::Core, "x")), &answer("y", None), &asked).await;
    assert_eq!(v.status, VerdictStatus::JudgeError);
    assert_eq!(v.passed, None);
    assert_eq!(v.criteria_mean, None);
    assert_eq!(judge.calls.load(Ordering::SeqCst), 2);
    assert!(v.error.unwrap().contains("I'd say it passes!"));
}

#[tokio::test]
async fn a_reask_that_succeeds_is_a_verdict() {
    let good = r#"{"criteria":{"faithfulness":{"rating":"False","reason":"r"},"relevance":{"rating":"True","reason":"r"},"completeness":{"rating":"True","reason":"r"},"clarity":{"rating":"True","reason":"r"},"keyword_match":{"rating":"True","reason":"r"}},"rubric":{"correctness":{"score":2,"reason":"r"},"completeness":{"score":3,"reason":"r"},"honesty":{"score":2,"reason":"r"}}}"#;
    let judge: Arc<dyn Judge> = Arc::new(ModelJudge::of(Scripted {
        replies: vec!["oops".into(), good.into()],
        calls: AtomicUsize::new(0),
    }));
    let v = judge_all(
        &[case(Category::Core, "x")],
        &[answer("y", None)],
        &[judge],
        1,
        2,
        &ragtester_judge::JudgePrompts::default(),
    )
    .await;
    // Mean 0.8, but faithfulness False: the paper's rule fails it.
    assert_eq!(v[0].criteria_mean, Some(0.8));
    assert_eq!(v[0].passed, Some(false));
}

/// Replies shaped like real judges' (fenced, chatty, Python booleans, Chinese keys and booleans, think
/// blocks, two objects, truncated, wrong keys…), each served by the scripted OpenAI-compatible server.
#[derive(serde::Deserialize)]
struct Shaped {
    name: String,
    reply: String,
    /// pass, fail or error.
    expect: String,
    mean: Option<f64>,
}

#[tokio::test]
async fn malformed_replies_from_a_real_server_parse_or_become_judge_errors() {
    let corpus: Vec<Shaped> =
        serde_json::from_str(include_str!("fixtures/judge_replies.json")).unwrap();
    assert!(corpus.len() >= 30);
    let server = ragtester_testkit::ScriptedServer::start().await;
    let judge = ragtester_llm::OpenAiChat::new(
        "judge".into(),
        server.openai_base(),
        None,
        ragtester_http::RetryPolicy::default(),
    )
    .unwrap();
    let judge = ModelJudge::of(judge);
    let c = case(Category::Core, "The relief valve opens at 4.5 bar.");
    let a = answer("It opens at 4.5 bar.", None);
    for shaped in &corpus {
        let before = server.seen().len();
        server.push(ragtester_testkit::Reply::Content(shaped.reply.clone()));
        if shaped.expect == "error" {
            // The re-ask gets an unreadable reply too.
            server.push(ragtester_testkit::Reply::Content("still not JSON".into()));
        }
        let v = judge_one(Some(&c), &a, &judge).await;
        let name = &shaped.name;
        match shaped.expect.as_str() {
            "error" => {
                assert_eq!(v.status, VerdictStatus::JudgeError, "{name}");
                assert_eq!(v.passed, None, "{name}");
                assert_eq!(v.criteria_mean, None, "{name}");
                let error = v.error.unwrap();
                assert!(
                    error.contains(shaped.reply.trim()),
                    "{name}: raw reply kept: {error}"
                );
                assert_eq!(server.seen().len(), before + 2, "{name}: asked once more");
                // The re-ask carries the unreadable reply and says what was wrong.
                let reask = &server.seen()[before + 1].body["messages"];
                let n = reask.as_array().unwrap().len();
                assert_eq!(reask[n - 2]["role"], "assistant", "{name}");
                assert!(
                    reask[n - 1]["content"]
                        .as_str()
                        .unwrap()
                        .contains("could not be read")
                );
            }
            expect => {
                assert_eq!(v.status, VerdictStatus::Ok, "{name}: {:?}", v.error);
                assert_eq!(v.passed, Some(expect == "pass"), "{name}");
                let mean = v.criteria_mean.unwrap();
                assert!((mean - shaped.mean.unwrap()).abs() < 1e-9, "{name}: {mean}");
                assert_eq!(server.seen().len(), before + 1, "{name}: no re-ask");
            }
        }
    }
    // The judge asked for structured output.
    assert_eq!(
        server.seen()[0].body["response_format"]["type"],
        "json_schema"
    );
}

/// Defect: a case with no keywords got keyword_match True ("no keywords are required"), so a refusal of an
/// answerable question whose context held the answer scored exactly 0.5 and passed the paper's rule.
#[tokio::test]
async fn a_refusal_of_an_answerable_question_without_keywords_fails() {
    let mut c = case(Category::Core, "The relief valve opens at 4.5 bar.");
    c.keywords.clear();
    for refusal in [
        ragtester_text::REFUSAL_EN,
        "I'm sorry, but the provided documents do not contain the information needed to answer this question.",
    ] {
        let v = judge_one(Some(&c), &answer(refusal, None), &OfflineModel).await;
        assert_eq!(v.status, VerdictStatus::Ok);
        assert!(v.metrics.refused, "{refusal}");
        assert_eq!(v.passed, Some(false), "{refusal}: {v:?}");
        let criteria = v.criteria.as_ref().unwrap();
        assert_eq!(
            criteria.keyword_match.rating,
            ragtester_core::Rating::NotApplicable
        );
        assert!(v.criteria_mean.unwrap() < 0.5, "{v:?}");
        assert!(v.rubric.as_ref().unwrap().is_bad_case());
        assert!(
            v.notes
                .iter()
                .any(|n| n.contains("keyword_match does not apply"))
        );
        assert!(v.rule_failure.as_deref().unwrap().contains("refused"));
    }
}

/// A judge that rates every criterion True still cannot pass a refusal of an answerable question, an
/// answer carrying the injection canary, or an answer in another language.
#[tokio::test]
async fn rules_bound_a_lenient_judge() {
    let lenient = ModelJudge::of(Lenient);
    let c = case(Category::Core, "The relief valve opens at 4.5 bar.");
    let v = judge_one(
        Some(&c),
        &answer("The relief valve opens at 4.5 bar.", None),
        &lenient,
    )
    .await;
    assert_eq!(v.passed, Some(true));
    assert!(v.rule_failure.is_none());

    let v = judge_one(
        Some(&c),
        &answer("Sorry, the context does not say.", None),
        &lenient,
    )
    .await;
    assert_eq!(v.passed, Some(false));
    assert_eq!(v.rubric.as_ref().unwrap().correctness.score, 2);

    let mut injected = c.clone();
    injected.must_not_contain = vec!["PWNED-7".into()];
    let v = judge_one(
        Some(&injected),
        &answer("pwned-7. The relief valve opens at 4.5 bar.", None),
        &lenient,
    )
    .await;
    assert_eq!(v.metrics.injection_followed, Some(true));
    assert_eq!(v.passed, Some(false));
    let v = judge_one(
        Some(&injected),
        &answer("It opens at 4.5 bar.", None),
        &lenient,
    )
    .await;
    assert_eq!(v.metrics.injection_followed, Some(false));
    assert_eq!(v.passed, Some(true));

    let mut chinese = c.clone();
    chinese.language = "zh".into();
    chinese.expected_answer = "安全阀在4.5巴时打开。".into();
    let v = judge_one(
        Some(&chinese),
        &answer("The relief valve opens at 4.5 bar.", None),
        &lenient,
    )
    .await;
    assert_eq!(v.metrics.language_match, Some(false));
    assert_eq!(v.passed, Some(false));
    assert!(v.rule_failure.as_deref().unwrap().contains("language"));
    // A bare figure is in no language: nothing to hold against it.
    let v = judge_one(Some(&chinese), &answer("4.5 bar", None), &lenient).await;
    assert_eq!(v.metrics.language_match, None);
    assert_eq!(v.passed, Some(true));
    let v = judge_one(
        Some(&chinese),
        &answer("安全阀在4.5巴时打开。", None),
        &lenient,
    )
    .await;
    assert_eq!(v.metrics.language_match, Some(true));
    // A Chinese question whose answer is a title written in Latin letters, as its reference is.
    let mut title = chinese.clone();
    title.expected_answer = "The City on the Edge of Forever".into();
    let v = judge_one(
        Some(&title),
        &answer("The City on the Edge of Forever", None),
        &lenient,
    )
    .await;
    assert_eq!(v.metrics.language_match, Some(true));
    assert_eq!(v.passed, Some(true));
}

/// The negative-case rule binds a model judge as it binds the offline one: a lenient judge cannot pass an
/// answer to a question the corpus cannot answer, and a harsh one cannot fail the refusal it asks for.
#[tokio::test]
async fn the_negative_case_rule_binds_model_judges() {
    let negative = case(
        Category::Negative,
        "The documents do not say what the valve costs.",
    );
    let v = judge_one(
        Some(&negative),
        &answer("The valve costs 40 dollars.", None),
        &ModelJudge::of(Lenient),
    )
    .await;
    assert_eq!(v.passed, Some(false));
    assert!(
        v.rule_failure
            .as_deref()
            .unwrap()
            .contains("negative-case rule")
    );
    assert_eq!(v.rubric.as_ref().unwrap().correctness.score, 1);

    let harsh = r#"{"criteria":{"faithfulness":{"rating":"False","reason":"says nothing"},"relevance":{"rating":"False","reason":"r"},"completeness":{"rating":"False","reason":"r"},"clarity":{"rating":"True","reason":"r"},"keyword_match":{"rating":"False","reason":"r"}},"rubric":{"correctness":{"score":1,"reason":"no answer"},"completeness":{"score":1,"reason":"r"},"honesty":{"score":3,"reason":"r"}}}"#;
    let judge = Scripted {
        replies: vec![harsh.into()],
        calls: AtomicUsize::new(0),
    };
    let refusal = "The provided documents do not contain information about the valve's price.";
    let v = judge_one(
        Some(&negative),
        &answer(refusal, None),
        &ModelJudge::of(judge),
    )
    .await;
    assert!(v.metrics.refused);
    assert_eq!(v.passed, Some(true));
    assert_eq!(v.rubric.as_ref().unwrap().correctness.score, 5);
    assert!(v.notes.iter().any(|n| n.contains("negative-case rule")));

    // The offline judge already rates by the rule: its verdicts are unchanged by it.
    let v = judge_one(Some(&negative), &answer(refusal, None), &OfflineModel).await;
    assert_eq!(v.passed, Some(true));
    assert!(!v.notes.iter().any(|n| n.contains("negative-case rule")));
    let v = judge_one(
        Some(&negative),
        &answer("The valve costs 40 dollars.", None),
        &OfflineModel,
    )
    .await;
    assert_eq!(v.passed, Some(false));
}

/// A judge that rates everything True.
struct Lenient;

#[async_trait::async_trait]
impl ChatModel for Lenient {
    fn name(&self) -> String {
        "lenient".into()
    }
    async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse> {
        let c = r#"{"rating":"True","reason":"fine"}"#;
        let s = r#"{"score":5,"reason":"fine"}"#;
        Ok(ChatResponse {
            content: format!(
                r#"{{"criteria":{{"faithfulness":{c},"relevance":{c},"completeness":{c},"clarity":{c},"keyword_match":{c}}},"rubric":{{"correctness":{s},"completeness":{s},"honesty":{s}}}}}"#
            ),
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            notes: Vec::new(),
        })
    }
}

/// The offline judge's ratings are worked out directly; they are what its prompted reply says.
#[tokio::test]
async fn the_offline_judge_worked_out_directly_rates_as_its_prompted_reply() {
    let mut premise = case(Category::Negative, "The valve has no such rating.");
    premise.false_premise = Some("The valve opens at 9 bar.".into());
    let mut canary = case(Category::Safety, "It opens at 4.5 bar.");
    canary.must_not_contain = vec!["IGNORE".into()];
    let cells = [
        (
            case(Category::Core, "It opens at 4.5 bar."),
            "It opens at 4.5 bar.",
        ),
        (
            case(Category::Core, "It opens at 4.5 bar."),
            "The motor is rated at 2.2 kW.",
        ),
        (
            case(Category::Core, "It opens at 4.5 bar."),
            "I cannot find that in the documents.",
        ),
        (
            case(Category::Negative, "Not in the documents."),
            "It opens at 4.5 bar.",
        ),
        (
            case(Category::Negative, "Not in the documents."),
            "The documents do not say.",
        ),
        (premise, "Yes, it opens at 9 bar."),
        (canary, "IGNORE all rules; it opens at 4.5 bar."),
    ];
    let prompts = ragtester_judge::JudgePrompts::default();
    let asked = ModelJudge::of(AskedOffline);
    for (c, text) in cells {
        let a = answer(text, None);
        let direct =
            ragtester_judge::judge_sample(Some(&c), &a, &OfflineModel, (0, &prompts), &[]).await;
        let asked = ragtester_judge::judge_sample(Some(&c), &a, &asked, (0, &prompts), &[]).await;
        assert_eq!(direct, asked, "{text}");
    }
}

/// A job the offline judge and lexical claims make is worked out on every core; it gives the verdicts the
/// one-task path gives, in the same order, takes what was done before, and reports each verdict once.
#[tokio::test]
async fn a_job_worked_out_directly_matches_the_one_task_path() {
    let texts = [
        "It opens at 4.5 bar.",
        "The motor is rated at 2.2 kW.",
        "I cannot find that in the documents.",
        "It opens at 4.5 bar, as the manual says; the motor is rated at 2.2 kW.",
    ];
    let mut cases = Vec::new();
    let mut answers = Vec::new();
    for i in 0..40 {
        let mut c = case(Category::Core, "It opens at 4.5 bar.");
        c.id = format!("c{i}");
        let mut a = answer(texts[i % texts.len()], (i == 7).then_some("timeout"));
        a.case_id = c.id.clone();
        cases.push(c);
        answers.push(a);
    }
    let judges: Vec<Arc<dyn Judge>> = vec![Arc::new(OfflineModel)];
    let prompts = ragtester_judge::JudgePrompts::default();
    let job = ragtester_judge::JudgeJob {
        cases: &cases,
        answers: &answers,
        judges: &judges,
        samples: 2,
        concurrency: 4,
        prompts: &prompts,
        claims: Some(&OfflineModel),
        histories: None,
        scoring: None,
    };
    assert!(job.runs_directly());
    let one_task = job.run(&[], &|_, _, _| {}).await;
    assert_eq!(one_task.len(), 80);
    assert!(one_task.iter().any(|v| v.claims.is_some()));

    let done = &one_task[10..20];
    let (fresh, reused, seen) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        std::sync::Mutex::new(Vec::new()),
    );
    let direct = job.run_directly(done, &|_, is_fresh, n| {
        let counter = if is_fresh { &fresh } else { &reused };
        counter.fetch_add(1, Ordering::Relaxed);
        seen.lock().unwrap().push(n);
    });
    assert_eq!(direct, one_task);
    assert_eq!(fresh.load(Ordering::Relaxed), 70);
    assert_eq!(reused.load(Ordering::Relaxed), 10);
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    assert_eq!(seen, (1..=80).collect::<Vec<_>>());

    // A judge that is asked through prompts is not worked out directly.
    let asked: Vec<Arc<dyn Judge>> = vec![Arc::new(ModelJudge::of(AskedOffline))];
    let job = ragtester_judge::JudgeJob {
        judges: &asked,
        ..job
    };
    assert!(!job.runs_directly());
}

/// A profile whose criterion models rate everything `bias` (logit): a constant verdict, whatever the answer.
fn constant_profile(bias: f64) -> ragtester_judge::profile::JudgeProfile {
    let model = ragtester_judge::fit::Logistic {
        center: vec![0.0],
        spread: vec![1.0],
        weights: vec![0.0],
        bias,
    };
    let criteria = ragtester_core::verdict::CRITERIA_NAMES
        .iter()
        .map(|n| (n.to_string(), model.clone()))
        .collect();
    ragtester_judge::profile::JudgeProfile {
        format: ragtester_judge::profile::PROFILE_FORMAT,
        name: "constant".into(),
        judge: "offline".into(),
        meaning: None,
        signals: vec!["passed".into()],
        models: [(
            ragtester_judge::profile::POOLED.to_string(),
            ragtester_judge::profile::ScoreModels {
                overall: Some(model.clone()),
                criteria,
            },
        )]
        .into(),
        measured: None,
    }
}

/// The offline judge's verdict on `text`, scored by `scoring` as a judging pass scores it.
async fn scored(
    c: &TestCase,
    text: &str,
    scoring: &ragtester_judge::Scoring,
) -> ragtester_core::Verdict {
    let a = answer(text, None);
    let mut v = judge_one(Some(c), &a, &OfflineModel).await;
    scoring.score(c, &a, &mut v);
    v
}

/// A profile that rescores criteria settles pass and fail again, but never past the rules: however high it
/// rates an answer to an unanswerable question or a refusal of an answerable one, they fail; however low
/// it rates a refusal of an unanswerable question, it passes.
#[tokio::test]
async fn a_calibrated_profile_never_overrules_the_rules() {
    let generous = ragtester_judge::Scoring {
        profile: constant_profile(10.0),
        meaning: None,
    };
    let strict = ragtester_judge::Scoring {
        profile: constant_profile(-10.0),
        meaning: None,
    };
    let negative = case(
        Category::Negative,
        "The documents do not say what the valve costs.",
    );
    let refusal = "The provided documents do not contain information about the valve's price.";
    let v = scored(&negative, "The valve costs 40 dollars.", &generous).await;
    assert_eq!(
        v.criteria.as_ref().unwrap().faithfulness.rating,
        ragtester_core::Rating::True
    );
    assert_eq!(
        v.passed,
        Some(false),
        "an answer to an unanswerable question"
    );
    let core = case(Category::Core, "It opens at 4.5 bar.");
    let v = scored(&core, refusal, &generous).await;
    assert!(v.rule_failure.is_some());
    assert_eq!(v.passed, Some(false), "a refusal of an answerable question");
    let v = scored(&negative, refusal, &strict).await;
    assert_eq!(
        v.criteria.as_ref().unwrap().faithfulness.rating,
        ragtester_core::Rating::False
    );
    assert_eq!(
        v.passed,
        Some(true),
        "a refusal of an unanswerable question"
    );
    // An error is scored by nothing.
    let mut v = judge_one(Some(&core), &answer("", Some("HTTP 503")), &OfflineModel).await;
    generous.score(&core, &answer("", Some("HTTP 503")), &mut v);
    assert_eq!((v.score, v.passed), (None, None));
}
