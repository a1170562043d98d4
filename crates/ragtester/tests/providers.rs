//! The binary against a scripted OpenAI-compatible server: provider failures become recorded errors,
//! external targets, replayed answers, latency, settings reaching the provider, judge panels.

mod common;

use common::*;
use ragtester_core::{Answer, VerdictStatus, read_jsonl};
use ragtester_testkit::ScriptedServer;
use std::process::Command;
use std::time::Duration;

#[test]
fn provider_failures_are_recorded_errors_not_lost_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = small_suite(tmp.path());
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead); // Nothing listens there now: every connection is refused.
    let run = tmp.path().join("run");
    let out = bin()
        .args(run_args(&suite, &run))
        .env("OPENAI_BASE_URL", &base)
        .env("RAGTESTER_HTTP_ATTEMPTS", "2")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers = comparable(&run);
    assert!(!answers.is_empty());
    assert!(
        answers.iter().all(|a| a
            .4
            .as_deref()
            .is_some_and(|e| e.contains("gave up after 2 attempts"))),
        "{:?}",
        answers[0]
    );
    let out = bin()
        .args(["judge", run.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let verdicts: Vec<ragtester_core::Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert!(
        verdicts
            .iter()
            .all(|v| v.status == VerdictStatus::ExecError && v.passed.is_none())
    );
    let out = bin()
        .args(["report", run.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    for c in summary["configs"].as_array().unwrap() {
        assert_eq!(c["errors"], c["cases"]);
        assert_eq!(c["passed"], 0);
        assert!(c["fail_rate"].is_null());
    }
}

#[test]
fn external_targets_over_http_and_command() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    // The command target answers with one sentence of the corpus, so retrieval metrics can be computed.
    let config = format!(
        r#"
[corpus]
paths = ["{corpus}"]

[generation]
strategies = ["ragtester"]
n_test = 2

[[target]]
name = "svc"
type = "http"
url = "{url}"
headers = {{ Authorization = "Bearer ${{RAGTESTER_TEST_SVC_TOKEN}}" }}
body = '{{"question": "{{{{query}}}}", "k": 3}}'
answer_pointer = "/result/answer"
contexts_pointer = "/result/contexts"
context_text_pointer = "/text"

[[target]]
name = "cli"
type = "command"
command = ["sh", "-c", "cat > /dev/null; printf '%s' '{{\"answer\": \"36 months\", \"contexts\": [\"Harbor Marine Systems warrants the HX-40 against defects in materials and workmanship for 36 months from the date of purchase.\"]}}'"]
answer_pointer = "/answer"
contexts_pointer = "/contexts"
"#,
        corpus = corpus().display(),
        url = server.rag_url(),
    );
    let path = tmp.path().join("targets.toml");
    std::fs::write(&path, config).unwrap();
    let run = tmp.path().join("run");
    let out = bin()
        .args([
            "test",
            "--config",
            path.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
        ])
        .env("RAGTESTER_TEST_SVC_TOKEN", "tok")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&run.join("configs.jsonl")).unwrap();
    assert_eq!(
        configs.iter().map(|c| c.label()).collect::<Vec<_>>(),
        vec!["target svc (http)", "target cli (command)"]
    );
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let cases: Vec<ragtester_core::TestCase> = read_jsonl(&run.join("suite.jsonl")).unwrap();
    // Negatives checked as unanswerable within one document are not put to a service that searches its
    // whole corpus: each is skipped for each target, with the reason.
    // Those the critic also found unanswered by the whole corpus are asked.
    let scoped = cases
        .iter()
        .filter(|c| {
            c.expects_refusal()
                && !c.restrict_to.is_empty()
                && c.unanswerable_in_corpus != Some(true)
        })
        .count();
    assert!(
        cases
            .iter()
            .any(|c| c.expects_refusal() && c.unanswerable_in_corpus == Some(true)),
        "the critic cleared some negatives corpus-wide: they are asked"
    );
    let skipped: Vec<ragtester_core::SkippedCell> = read_jsonl(&run.join("skipped.jsonl")).unwrap();
    assert_eq!(skipped.len(), 2 * scoped);
    assert!(skipped.iter().all(|s| s.reason.contains("whole corpus")));
    assert_eq!(answers.len(), 2 * (cases.len() - scoped));
    let seen = server.seen();
    assert_eq!(seen.len(), cases.len() - scoped);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["configs"][0]["skipped"], scoped);
    if scoped > 0 {
        assert_eq!(summary["skipped"][0]["count"], 2 * scoped);
    }
    assert_eq!(seen[0].headers["authorization"], "Bearer tok");
    assert_eq!(seen[0].body["k"], 3);
    let svc = answers
        .iter()
        .find(|a| a.config_id == configs[0].id)
        .unwrap();
    assert!(
        svc.answer.starts_with("echo: ") && svc.error.is_none(),
        "{svc:?}"
    );
    let cli = answers
        .iter()
        .find(|a| a.config_id == configs[1].id)
        .unwrap();
    assert_eq!(cli.answer, "36 months");
    assert!(
        !cli.contexts[0].document_id.is_empty(),
        "the context was located in the corpus"
    );
    let verdicts: Vec<ragtester_core::Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert!(
        verdicts
            .iter()
            .any(|v| v.config_id == configs[1].id && v.metrics.hit.is_some())
    );
}

/// The system under test is asked afresh every run unless replaying is asked for; a replay is keyed on the
/// endpoint, so another server behind the same model name is asked, never answered from the first one's
/// replies; and the report counts what was replayed.
#[test]
fn answers_are_replayed_only_when_asked_and_only_from_the_same_endpoint() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let cache = tmp.path().join("cache");
    let run = |name: &str, base: &str, extra: &[&str]| {
        let out_dir = tmp.path().join(name);
        let mut args = run_args(&suite, &out_dir);
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(&args)
            .env("OPENAI_BASE_URL", base)
            .env("RAGTESTER_CACHE_DIR", &cache)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        read_jsonl::<Answer>(&out_dir.join("answers.jsonl")).unwrap()
    };
    let first = run("first", &server.openai_base(), &[]);
    let n = first.len();
    assert_eq!(server.seen().len(), n, "every cell asks the system");
    assert!(first.iter().all(|a| !a.cached));

    let second = run("second", &server.openai_base(), &[]);
    assert_eq!(server.seen().len(), 2 * n, "a rerun asks the system again");
    assert!(second.iter().all(|a| !a.cached));

    let replayed = run("replayed", &server.openai_base(), &["--replay-answers"]);
    assert_eq!(server.seen().len(), 2 * n, "a replay asks nothing");
    assert!(replayed.iter().all(|a| a.cached && a.cached_at.is_some()));
    let texts = |v: &[Answer]| v.iter().map(|a| a.answer.clone()).collect::<Vec<_>>();
    assert_eq!(texts(&first), texts(&replayed));
    let judged = bin()
        .args(["judge", tmp.path().join("replayed").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(judged.status.success());
    let report = bin()
        .args([
            "report",
            tmp.path().join("replayed").to_str().unwrap(),
            "--full",
        ])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(
        table.contains("were replayed from the response cache: no latency was measured"),
        "{table}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("replayed/summary.json")).unwrap())
            .unwrap();
    let config = &summary["configs"][0];
    assert_eq!(config["replayed_answers"], config["cases"]);
    assert_eq!(config["live_answers"], 0);
    assert!(config["latency_p50_ms"].is_null());
    assert!(
        config["replayed_since_utc"]
            .as_str()
            .is_some_and(|t| t.starts_with("20") && t.ends_with('Z')),
        "{config}"
    );

    // Another server serving the same model name: asked, not answered from the first server's replies.
    // (Within the run, configurations that send the same prompt replay the other server's own reply.)
    let other = ScriptedServer::start_in_background();
    let elsewhere = run("elsewhere", &other.openai_base(), &["--replay-answers"]);
    let replayed_here = elsewhere.iter().filter(|a| a.cached).count();
    assert!(other.seen().len() > n / 2, "the other server is asked");
    assert_eq!(other.seen().len() + replayed_here, n);

    let uncached = run(
        "uncached",
        &server.openai_base(),
        &["--replay-answers", "--no-cache"],
    );
    assert_eq!(server.seen().len(), 3 * n);
    assert!(uncached.iter().all(|a| !a.cached));
}

/// A server that answers in exactly 200 ms: the reported latency is the system's (about 200 ms) at every
/// concurrency, not the time a cell queued behind our own call slots.
#[test]
fn latency_is_the_systems_whatever_the_concurrency() {
    let server = ScriptedServer::start_in_background();
    server.set_latency(Duration::from_millis(200));
    let tmp = tempfile::tempdir().unwrap();
    let suite = small_suite(tmp.path());
    for concurrency in ["1", "8"] {
        let out_dir = tmp.path().join(format!("c{concurrency}"));
        let mut args = run_args(&suite, &out_dir);
        let k = args.iter().position(|a| a == "--concurrency").unwrap();
        args[k + 1] = concurrency.to_string();
        run_ok(&args, &server.openai_base());
        let answers: Vec<Answer> = read_jsonl(&out_dir.join("answers.jsonl")).unwrap();
        let mut generation: Vec<f64> = answers.iter().map(|a| a.latency.generation_ms).collect();
        generation.sort_by(f64::total_cmp);
        let median = generation[generation.len() / 2];
        assert!(
            (195.0..300.0).contains(&median),
            "concurrency {concurrency}: median generation {median} ms"
        );
        for a in &answers {
            let sum = a.latency.retrieval_ms + a.latency.generation_ms;
            assert!((a.latency.total_ms - sum).abs() < 1e-6, "{:?}", a.latency);
        }
        if concurrency == "8" {
            assert!(
                answers.iter().any(|a| a.latency.queue_ms > 100.0),
                "with 16 cells retrieving ahead of 8 slots some must queue"
            );
        }
        // The report's P50 is the system's too.
        let dir = out_dir.to_str().unwrap();
        run_ok(
            &["judge".to_string(), dir.to_string()],
            &server.openai_base(),
        );
        run_ok(
            &["report".to_string(), dir.to_string()],
            &server.openai_base(),
        );
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out_dir.join("summary.json")).unwrap()).unwrap();
        for c in summary["configs"].as_array().unwrap() {
            let p50 = c["latency_p50_ms"].as_f64().unwrap();
            assert!(
                (195.0..300.0).contains(&p50),
                "concurrency {concurrency}: P50 {p50} ms"
            );
            assert_eq!(c["live_answers"], c["cases"]);
        }
    }
}

#[test]
fn config_settings_reach_the_provider() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let config = tmp.path().join("ragtester.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[matrix]
llm = ["openai:scripted"]
retriever = ["bm25"]
top_k = [2]

[run]
concurrency = 2
sampling = {{ temperature = 0.3, seed = 11, max_tokens = 40 }}

[models."openai:scripted"]
base_url = "{}"
api_key_env = "RAGTESTER_TEST_SCRIPTED_KEY"
requests_per_minute = 6000
"#,
            server.openai_base()
        ),
    )
    .unwrap();
    let out_dir = tmp.path().join("run");
    let out = bin()
        .args([
            "run",
            "--docs",
            corpus().to_str().unwrap(),
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--no-cache",
        ])
        // The config's base URL wins over the environment's, which points nowhere.
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .env("RAGTESTER_TEST_SCRIPTED_KEY", "sk-from-config")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = server.seen();
    assert!(!seen.is_empty());
    for request in &seen {
        assert_eq!(request.headers["authorization"], "Bearer sk-from-config");
        assert!((request.body["temperature"].as_f64().unwrap() - 0.3).abs() < 1e-6);
        assert_eq!(request.body["seed"], 11);
        assert_eq!(request.body["max_tokens"], 40);
    }
    // A flag overrides the role's setting.
    let before = server.seen().len();
    let out = bin()
        .args([
            "--temperature",
            "0.9",
            "run",
            "--docs",
            corpus().to_str().unwrap(),
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            tmp.path().join("run2").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--no-cache",
        ])
        .env("RAGTESTER_TEST_SCRIPTED_KEY", "sk-from-config")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = server.seen();
    assert!(
        seen[before..].iter().all(
            |r| (r.body["temperature"].as_f64().unwrap() - 0.9).abs() < 1e-6
                && r.body["seed"] == 11
        )
    );
    // A key variable that is not set is named.
    let out = bin()
        .args([
            "run",
            "--docs",
            corpus().to_str().unwrap(),
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            tmp.path().join("run3").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ])
        .env_remove("RAGTESTER_TEST_SCRIPTED_KEY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("RAGTESTER_TEST_SCRIPTED_KEY"),
        "{stderr}"
    );
}

#[test]
fn a_panel_of_judges_reports_agreement_and_samples_report_intervals() {
    let server = ScriptedServer::start_in_background();
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite(tmp.path());
    let run_dir = tmp.path().join("run");
    let out = bin()
        .args([
            "run",
            "--docs",
            corpus().to_str().unwrap(),
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            run_dir.to_str().unwrap(),
            "--retriever",
            "bm25",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cells = read_jsonl::<Answer>(&run_dir.join("answers.jsonl"))
        .unwrap()
        .len();
    let dir = run_dir.to_str().unwrap().to_string();
    let judge = |extra: &[&str]| {
        let mut args = vec!["judge".to_string(), dir.clone()];
        args.extend(extra.iter().map(|s| s.to_string()));
        run_ok(&args, &server.openai_base());
        let verdicts: Vec<ragtester_core::Verdict> =
            read_jsonl(&run_dir.join("verdicts.jsonl")).unwrap();
        let oracle: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run_dir.join("oracle.json")).unwrap()).unwrap();
        (verdicts, oracle)
    };

    // One call at a time: answers are judged 16 to a batch, so this run takes several.
    let (verdicts, oracle) = judge(&[
        "--judge",
        "offline",
        "--judge",
        "openai:scripted",
        "--concurrency",
        "1",
    ]);
    assert!(cells > 2 * 16, "{cells} cells: too few to span batches");
    assert_eq!(
        verdicts.len(),
        cells * 3,
        "panel verdicts, then each judge's"
    );
    assert!(
        verdicts[..cells]
            .iter()
            .all(|v| v.judge == "panel:majority")
    );
    let answers = read_jsonl::<Answer>(&run_dir.join("answers.jsonl")).unwrap();
    let cell = |case: &str, config: &str| (case.to_string(), config.to_string());
    let answered: Vec<_> = answers
        .iter()
        .map(|a| cell(&a.case_id, &a.config_id))
        .collect();
    let panel_cells: Vec<_> = verdicts[..cells]
        .iter()
        .map(|v| cell(&v.case_id, &v.config_id))
        .collect();
    assert_eq!(
        panel_cells, answered,
        "the panel's verdicts in answer order"
    );
    let each_judge: Vec<_> = verdicts[cells..]
        .iter()
        .map(|v| (cell(&v.case_id, &v.config_id), v.judge.clone()))
        .collect();
    let expected: Vec<_> = answered
        .iter()
        .flat_map(|c| ["offline", "openai:scripted"].map(|j| (c.clone(), j.to_string())))
        .collect();
    assert_eq!(each_judge, expected, "then every judge's, answer by answer");
    assert_eq!(oracle["judges"].as_array().unwrap().len(), 2);
    let pair = &oracle["agreement"]["pairs"][0];
    assert_eq!(pair["items"].as_u64().unwrap() as usize, cells);
    assert!(pair["percent"].as_f64().unwrap() > 0.0);
    let report = bin().args(["report", &dir, "--full"]).output().unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(
        table.contains("Cohen's κ") && table.contains("Fleiss' κ"),
        "{table}"
    );
    let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(html.contains("oracle-agreement"));

    let (verdicts, oracle) = judge(&[
        "--judge",
        "openai:scripted",
        "--samples",
        "3",
        "--panel",
        "mean",
    ]);
    assert_eq!(verdicts.len(), cells * 4);
    assert!(verdicts[..cells].iter().all(|v| v.judge == "panel:mean"));
    let samples: std::collections::BTreeSet<u32> =
        verdicts[cells..].iter().map(|v| v.sample).collect();
    assert_eq!(samples.into_iter().collect::<Vec<_>>(), [0, 1, 2]);
    assert!(
        oracle["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["method"] == "t" && i["n"] == 3)
    );
}

#[test]
fn an_external_target_cannot_be_given_a_poisoned_copy_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[corpus]
paths = ["{corpus}"]

[generation]
strategies = ["ragtester"]
n_test = 11
section_tokens = 48

[[target]]
name = "cli"
type = "command"
command = ["sh", "-c", "cat > /dev/null; printf '%s' '{{\"answer\": \"36 months\", \"contexts\": []}}'"]
answer_pointer = "/answer"
contexts_pointer = "/contexts"
"#,
        corpus = corpus().join("harbor-pump-manual.md").display(),
    );
    let path = tmp.path().join("target.toml");
    std::fs::write(&path, config).unwrap();
    let run = tmp.path().join("run");
    let out = bin()
        .args([
            "test",
            "--config",
            path.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    // The cell recorded as an error makes the run partial (exit 3), never a silent pass.
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cases: Vec<ragtester_core::TestCase> = read_jsonl(&run.join("suite.jsonl")).unwrap();
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let poisoned: Vec<&str> = cases
        .iter()
        .filter(|c| !c.injected_documents.is_empty())
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(poisoned.len(), 1);
    for a in &answers {
        if poisoned.contains(&a.case_id.as_str()) {
            let error = a.error.as_deref().unwrap();
            assert!(
                error.contains("poisoned document") && error.contains("built-in"),
                "{error}"
            );
        } else {
            assert!(a.error.is_none(), "{:?}", a.error);
        }
    }
}

#[test]
fn a_bad_setting_in_the_environment_stops_before_any_stage() {
    for (name, value) in [
        ("RAGTESTER_HTTP_ATTEMPTS", "0"),
        ("RAGTESTER_HTTP_TIMEOUT_S", "soon"),
        ("RAGTESTER_ANN_THRESHOLD", "-1"),
        ("RAGTESTER_EMBED_WORKERS", "many"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let out = bin()
            .arg("ingest")
            .arg(corpus())
            .arg("--out")
            .arg(tmp.path().join("docs.jsonl"))
            .env(name, value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}={value}: {stderr}");
        assert!(stderr.contains(name) && stderr.contains(value), "{stderr}");
        assert!(
            !tmp.path().join("docs.jsonl").exists(),
            "{name}: ingest ran"
        );
    }
}
