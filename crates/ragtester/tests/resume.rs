//! The binary against a scripted OpenAI-compatible server: a run or a judge killed with SIGKILL resumes
//! with nothing lost and nothing committed twice, and a spent budget stops work that a rerun finishes.

mod common;

use common::*;
use ragtester_core::{Answer, VerdictStatus, read_jsonl};
use ragtester_store::RunStore;
use ragtester_testkit::ScriptedServer;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn killed_run_resumes_to_the_same_records() {
    let server = ScriptedServer::start_in_background();
    server.set_latency(Duration::from_millis(120));
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    // Conversations among the cases: their turns resume in order, each with the history the store holds.
    let cases: Vec<ragtester_core::TestCase> = ragtester_core::read_jsonl(&suite).unwrap();
    assert!(cases.iter().any(|c| c.turn.is_some()));

    let whole = tmp.path().join("whole");
    run_ok(&run_args(&suite, &whole), &server.openai_base());
    let cells = comparable(&whole).len();
    assert!(cells >= 20, "{cells} cells");
    let requests_before = server.seen().len();

    let killed = tmp.path().join("killed");
    let mut child = bin()
        .args(run_args(&suite, &killed))
        .env("OPENAI_BASE_URL", server.openai_base())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let committed = RunStore::open(&killed)
            .ok()
            .and_then(|s| s.count(ragtester_store::Table::Answers).ok())
            .unwrap_or(0);
        if committed >= (cells / 3) as u64 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "run never progressed"
        );
    }
    child.kill().unwrap(); // SIGKILL on Unix: no chance to flush anything.
    child.wait().unwrap();
    let committed = RunStore::open(&killed)
        .unwrap()
        .count(ragtester_store::Table::Answers)
        .unwrap() as usize;
    assert!(committed < cells, "the run finished before it was killed");
    assert!(
        !killed.join("answers.jsonl").exists(),
        "no final file may look complete"
    );

    let mut resume = run_args(&suite, &killed);
    resume.push("--resume".into());
    let out = run_ok(&resume, &server.openai_base());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("{committed} already answered"))
    );
    assert_eq!(comparable(&killed), comparable(&whole));
    // Committed cells were not asked again: only cells in flight at the kill (at most the concurrency) repeat.
    let requests = server.seen().len() - requests_before;
    assert!(
        requests <= cells + 2,
        "{requests} requests for {cells} cells"
    );
}

#[test]
fn a_killed_judge_resumes_without_judging_twice() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let run = tmp.path().join("run");
    run_ok(&run_args(&suite, &run), &server.openai_base());
    let cells = comparable(&run).len();
    server.set_latency(Duration::from_millis(100));
    let judge_args = |quiet: bool| {
        let mut args: Vec<String> = [
            "judge",
            run.to_str().unwrap(),
            "--judge",
            "openai:scripted",
            "--concurrency",
            "1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if quiet {
            args.push("--quiet".into());
        }
        args
    };
    let before = server.seen().len();
    let mut child = bin()
        .args(judge_args(true))
        .env("OPENAI_BASE_URL", server.openai_base())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let judged = || {
        RunStore::open(&run)
            .ok()
            .and_then(|s| s.count(ragtester_store::Table::Judged).ok())
            .unwrap_or(0) as usize
    };
    while judged() < cells / 3 {
        std::thread::sleep(Duration::from_millis(30));
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "judge never progressed"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let committed = judged();
    assert!(committed < cells, "the judge finished before it was killed");

    let out = run_ok(&judge_args(false), &server.openai_base());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("resuming: {committed} of {cells} verdicts")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("wrote {cells} verdicts")),
        "{stderr}"
    );
    let verdicts: Vec<ragtester_core::Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert_eq!(verdicts.len(), cells);
    assert!(verdicts.iter().all(|v| v.status == VerdictStatus::Ok));
    // Only the verdict in flight at the kill was asked twice.
    let requests = server.seen().len() - before;
    assert!(
        requests <= cells + 1,
        "{requests} requests for {cells} verdicts"
    );
}

#[test]
fn judge_errors_are_asked_again_when_the_judge_is_run_again() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    // Single questions. Every judge call of the first pass meets an outage (503 at once: stalls or 429s
    // would cut the judge's concurrency to one and make the test wait minutes on timeouts).
    let suite = suite_with(tmp.path(), &["--n-test", "4", "--conversations", "0"]);
    let run = tmp.path().join("run");
    run_ok(&run_args(&suite, &run), &server.openai_base());
    let cache = tempfile::tempdir().unwrap();
    // The same judge at the same endpoint both times: one judging session, so only the judge-error rule
    // decides what is asked again.
    let judge = |attempts: &str| {
        Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args([
                "judge",
                run.to_str().unwrap(),
                "--judge",
                "openai:scripted",
                "--quiet",
            ])
            .env("RAGTESTER_CACHE_DIR", cache.path())
            .env("OPENAI_BASE_URL", server.openai_base())
            .env("RAGTESTER_HTTP_ATTEMPTS", attempts)
            .env("RAGTESTER_HTTP_TIMEOUT_S", "2")
            .output()
            .unwrap()
    };
    server.set_outage(true);
    let out = judge("1");
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts: Vec<ragtester_core::Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert!(
        verdicts
            .iter()
            .all(|v| v.status == VerdictStatus::JudgeError)
    );

    server.set_outage(false);
    let out = judge("3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts: Vec<ragtester_core::Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert!(
        verdicts.iter().all(|v| v.status == VerdictStatus::Ok),
        "{verdicts:?}"
    );
}

#[test]
fn a_spent_budget_stops_the_run_and_resume_finishes_it() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let out_dir = tmp.path().join("run");
    let cases: Vec<ragtester_core::TestCase> = read_jsonl(&suite).unwrap();
    let cells = cases.len() * 2;
    // Every scripted reply uses 18 tokens: a 180-token cap allows ten calls, plus the two in flight.
    let mut args = run_args(&suite, &out_dir);
    args.extend(["--no-cache", "--budget-tokens", "180"].map(String::from));
    let out = bin()
        .args(&args)
        .env("OPENAI_BASE_URL", server.openai_base())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("cells were not run"), "{stderr}");
    let first = read_jsonl::<Answer>(&out_dir.join("answers.jsonl")).unwrap();
    let calls = server.seen().len();
    assert!((10..=12).contains(&calls), "{calls} calls");
    assert_eq!(first.len(), calls, "every call made is a recorded answer");
    assert!(
        first.iter().all(|a| a.error.is_none()),
        "no budget refusal is recorded as an answer"
    );

    let mut args = run_args(&suite, &out_dir);
    args.extend(["--no-cache", "--resume", "--budget-tokens", "100000"].map(String::from));
    run_ok(&args, &server.openai_base());
    let all = read_jsonl::<Answer>(&out_dir.join("answers.jsonl")).unwrap();
    assert_eq!(all.len(), cells);
    assert_eq!(server.seen().len(), cells, "no cell was asked twice");
}

/// A dollar budget, priced by the project's [prices]: the run stops at it (exit 5), a resume with a larger
/// one finishes, and the report's cost per configuration is its answers' tokens at those prices.
#[test]
fn a_dollar_budget_stops_the_run_and_the_report_prices_each_configuration() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let out_dir = tmp.path().join("run");
    let project = tmp.path().join("ragtester.toml");
    // A dollar a thousand prompt tokens and two a thousand reply tokens.
    std::fs::write(
        &project,
        "[prices]\n\"openai:scripted\" = { input_per_million = 1000.0, output_per_million = 2000.0 }\n",
    )
    .unwrap();
    let with = |extra: &[&str]| {
        let mut args = run_args(&suite, &out_dir);
        args.extend(["--config", project.to_str().unwrap(), "--no-cache"].map(String::from));
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let out = bin()
        .args(with(&["--budget-usd", "0.01"]))
        .env("OPENAI_BASE_URL", server.openai_base())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    let first = read_jsonl::<Answer>(&out_dir.join("answers.jsonl")).unwrap();
    let cases: Vec<ragtester_core::TestCase> = read_jsonl(&suite).unwrap();
    assert!(
        !first.is_empty() && first.len() < cases.len() * 2,
        "{} of {} cells answered under a cent",
        first.len(),
        cases.len() * 2
    );
    run_ok(
        &with(&["--resume", "--budget-usd", "1000"]),
        &server.openai_base(),
    );
    let answers = read_jsonl::<Answer>(&out_dir.join("answers.jsonl")).unwrap();
    assert_eq!(answers.len(), cases.len() * 2);
    // The offline judge and the report, as a user runs them after the run.
    let r = out_dir.to_str().unwrap();
    succeeds(bin().args(["judge", r]));
    succeeds(bin().args(["report", r]));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("summary.json")).unwrap()).unwrap();
    let configurations = summary["configs"].as_array().unwrap();
    assert_eq!(configurations.len(), 2);
    for c in configurations {
        let id = c["id"].as_str().unwrap();
        let expected: f64 = answers
            .iter()
            .filter(|a| a.config_id == id && !a.cached)
            .map(|a| {
                a.usage.prompt_tokens as f64 / 1000.0
                    + 2.0 * a.usage.completion_tokens as f64 / 1000.0
            })
            .sum();
        let cost = c["cost_usd"]
            .as_f64()
            .expect("a priced configuration has a cost");
        assert!(expected > 0.0);
        assert!(
            (cost - expected).abs() < 1e-9,
            "{id}: {cost} against {expected}"
        );
    }
}

/// Generation through a real HTTP writer and critic: a token budget stops it (exit 5) with the suite it
/// had and the reason in its report; run again with the same cache, it finishes, paying only for the calls
/// it had not made, and the suite equals one generated in a single go.
#[test]
fn generation_stopped_by_its_budget_finishes_from_the_cache() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let doc = corpus().join("harbor-pump-manual.md");
    let generate = |out: &Path, cache: &Path, budget: Option<&str>| {
        let mut args = vec![
            "generate".to_string(),
            "--docs".into(),
            doc.to_str().unwrap().into(),
            "--out".into(),
            out.to_str().unwrap().into(),
            "--llm".into(),
            "openai:writer".into(),
            "--n-test".into(),
            "3".into(),
            "--strategy".into(),
            "ragtester".into(),
        ];
        if let Some(tokens) = budget {
            args.extend(["--budget-tokens".into(), tokens.into()]);
        }
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(&args)
            .env("OPENAI_BASE_URL", server.openai_base())
            .env("RAGTESTER_CACHE_DIR", cache)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let cache = tmp.path().join("cache");
    let partial = tmp.path().join("partial.jsonl");
    // One token: the first call is admitted (nothing spent yet), every later one refused.
    let (code, stderr) = generate(&partial, &cache, Some("1"));
    assert_eq!(code, Some(5), "{stderr}");
    assert!(stderr.contains("budget spent"), "{stderr}");
    assert_eq!(server.seen().len(), 1);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(partial.with_extension("report.json")).unwrap())
            .unwrap();
    assert!(
        report["documents"][0]["halted"]
            .as_str()
            .unwrap()
            .contains("budget spent")
    );
    assert!(
        report["documents"][0]["notes"][0]
            .as_str()
            .unwrap()
            .contains("stopped: budget spent")
    );

    let (code, stderr) = generate(&tmp.path().join("resumed.jsonl"), &cache, None);
    assert_eq!(code, Some(0), "{stderr}");
    let resumed_calls = server.seen().len() - 1;
    let (code, stderr) = generate(
        &tmp.path().join("fresh.jsonl"),
        &tmp.path().join("fresh-cache"),
        None,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let fresh_calls = server.seen().len() - 1 - resumed_calls;
    assert_eq!(
        resumed_calls + 1,
        fresh_calls,
        "the paid-for call came from the cache"
    );
    let read = |name: &str| -> Vec<ragtester_core::TestCase> {
        read_jsonl(&tmp.path().join(name)).unwrap()
    };
    assert_eq!(read("resumed.jsonl"), read("fresh.jsonl"));
    assert_eq!(read("fresh.jsonl").len(), 3);
    assert!(
        read("fresh.jsonl")
            .iter()
            .all(|c| c.critic.as_deref() == Some("openai:writer"))
    );
}
