//! `import --answers`: answers that already exist — another tool's dataset with responses, or a team's own
//! logs — become a run directory that `judge`, `report`, `diff` and `export` treat like any other; a run
//! exported and imported back gets the same verdicts from the same judge.

mod common;

use ragtester_core::{Configuration, Verdict, read_jsonl};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

fn ragtester(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(args)
        .env("RAGTESTER_CACHE_DIR", tempfile::tempdir().unwrap().keep())
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> Output {
    let out = ragtester(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The verdicts reports follow, by (case, configuration label): pass, criteria mean, rubric, claims.
fn verdicts_by_label(dir: &Path) -> HashMap<(String, String), Verdict> {
    let configs: Vec<Configuration> = read_jsonl(&dir.join("configs.jsonl")).unwrap();
    let label = |id: &str| {
        let c = configs.iter().find(|c| c.id == id).unwrap();
        c.target
            .as_ref()
            .map_or_else(|| c.id.clone(), |t| t.name.clone())
    };
    let verdicts: Vec<Verdict> = read_jsonl(&dir.join("verdicts.jsonl")).unwrap();
    verdicts
        .into_iter()
        .map(|v| ((v.case_id.clone(), label(&v.config_id)), v))
        .collect()
}

#[test]
fn a_run_exported_and_imported_back_gets_the_same_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = tmp.path().join("demo");
    let d = demo.to_str().unwrap();
    common::demo_copy(&demo);
    ok(&["judge", d]);
    let corpus = demo.join("corpus");
    let configs: Vec<Configuration> = read_jsonl(&demo.join("configs.jsonl")).unwrap();
    assert!(configs.len() >= 2);
    // Each configuration through another file shape of another library.
    let shapes = [
        ("ragas", "jsonl"),
        ("deepeval", "csv"),
        ("deepeval", "json"),
    ];
    let mut files = Vec::new();
    let mut names = Vec::new();
    for (config, (format, ext)) in configs.iter().zip(shapes) {
        let file = tmp.path().join(format!("{}.{ext}", &config.id[..8]));
        ok(&[
            "export",
            d,
            "--format",
            format,
            "--config",
            &config.id,
            "--out",
            file.to_str().unwrap(),
        ]);
        files.push(file);
        names.push(config.id.clone());
    }
    let run = tmp.path().join("imported");
    let mut args = vec!["import", "--answers"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    for name in &names {
        args.extend(["--system", name]);
    }
    args.extend([
        "--docs",
        corpus.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ]);
    ok(&args);
    let r = run.to_str().unwrap();
    ok(&["judge", r]);
    ok(&["report", r]);
    assert!(run.join("report.html").is_file());

    let before = verdicts_by_label(&demo);
    let after = verdicts_by_label(&run);
    let mut compared = 0;
    for ((case, system), v) in &after {
        let original = &before[&(case.clone(), system.clone())];
        let what = format!("case {case} of {system}");
        assert_eq!(v.status, original.status, "{what}");
        assert_eq!(v.passed, original.passed, "{what}");
        assert_eq!(v.criteria_mean, original.criteria_mean, "{what}");
        assert_eq!(v.rubric, original.rubric, "{what}");
        assert_eq!(v.metrics, original.metrics, "{what}");
        assert_eq!(v.claims, original.claims, "{what}");
        assert_eq!(
            v.attribution.as_ref().map(|a| a.cause),
            original.attribution.as_ref().map(|a| a.cause),
            "{what}"
        );
        compared += 1;
    }
    let expected = before
        .keys()
        .filter(|(_, config)| names.contains(config))
        .count();
    assert_eq!(compared, expected, "every exported cell came back");

    // Two imported systems compared answer by answer; the report carries the win rates.
    let out = ok(&["judge", r, "--pairwise", &names[0], &names[1]]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("A's win rate"));
    ok(&["report", r]);
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("<table id=\"pairwise\">"));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        summary["configs"].as_array().map(Vec::len),
        Some(names.len())
    );
    let pairwise = &summary["pairwise"];
    let all = &pairwise["overall"];
    let compared = ["a_wins", "b_wins", "ties"]
        .iter()
        .map(|k| all[k].as_u64().unwrap())
        .sum::<u64>();
    assert!(compared > 0, "{pairwise}");
    assert!(all["a_win_rate"]["low"].as_f64() <= all["a_win_rate"]["high"].as_f64());
    assert_eq!(pairwise["method"], "claims");
    // Every case's outcome survives, not only the totals: pairwise.jsonl, joined into the summary, listed in
    // the report per side.
    let cases: Vec<serde_json::Value> = std::fs::read_to_string(run.join("pairwise.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let count = |side: &str| cases.iter().filter(|c| c["winner"] == side).count() as u64;
    assert_eq!(
        (count("a"), count("b"), count("tie")),
        (
            all["a_wins"].as_u64().unwrap(),
            all["b_wins"].as_u64().unwrap(),
            all["ties"].as_u64().unwrap()
        )
    );
    for c in &cases {
        assert!(c["case_id"].is_string() && c["query"].is_string(), "{c}");
        assert!(
            ["a", "b", "tie"].contains(&c["correctness"].as_str().unwrap()),
            "{c}"
        );
        assert!(c["reason"].as_str().unwrap().contains("precision"), "{c}");
    }
    assert_eq!(
        pairwise["cases"].as_array().map(Vec::len),
        Some(cases.len())
    );
    for side in ["a", "b"] {
        let listed = html.contains(&format!("id=\"pairwise-{side}-won\""));
        assert_eq!(
            listed,
            count(side) > 0,
            "the report's list of the cases {side} won"
        );
    }
    if let Some(decided) = cases.iter().find(|c| c["winner"] != "tie") {
        assert!(html.contains(&format!(
            "data-case=\"{}\"",
            decided["case_id"].as_str().unwrap()
        )));
    }
    let summary_file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("pairwise.json")).unwrap()).unwrap();
    assert!(
        summary_file.get("cases").is_none(),
        "the cases live in pairwise.jsonl"
    );
}

#[test]
fn a_teams_own_logs_are_judged_and_a_bad_row_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/corpus");
    let docs: Vec<ragtester_core::Document> = {
        let dir = tmp.path().join("docs");
        ok(&[
            "ingest",
            corpus.to_str().unwrap(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        read_jsonl(&dir.join("documents.jsonl")).unwrap()
    };
    // A passage of the corpus, quoted as a retriever would return it.
    let passage: String = docs[0].text.chars().take(160).collect();
    let logs = tmp.path().join("logs.jsonl");
    let line = |query: &str, answer: &str, reference: &str| {
        serde_json::json!({
            "query": query, "answer": answer, "contexts": [passage.clone()],
            "reference": reference, "reference_contexts": [passage.clone()],
            "latency_ms": 420.5, "usage": {"prompt_tokens": 300, "completion_tokens": 20}
        })
        .to_string()
    };
    let text = [
        line("What does the first document say?", &passage, &passage),
        "{\"query\": \"cut off".to_string(),
        line("一个问题？", "我不知道。", "资料中没有相关信息。"),
        serde_json::json!({"query": "No answer here", "reference": "x"}).to_string(),
    ]
    .join("\n");
    std::fs::write(&logs, text).unwrap();
    let run = tmp.path().join("run");
    let out = ragtester(&[
        "import",
        "--answers",
        logs.to_str().unwrap(),
        "--docs",
        corpus.to_str().unwrap(),
        "--out",
        run.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "rows were left out: {stderr}");
    assert!(stderr.contains("line 2: not a JSON object"), "{stderr}");
    assert!(stderr.contains("line 4: no answer"), "{stderr}");
    let answers: Vec<ragtester_core::Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0].latency.total_ms, 420.5);
    assert_eq!(answers[0].usage.prompt_tokens, 300);
    assert_eq!(
        answers[0].contexts[0].document_id, docs[0].id,
        "the passage is placed in its document"
    );
    let configs: Vec<Configuration> = read_jsonl(&run.join("configs.jsonl")).unwrap();
    assert_eq!(configs[0].label(), "target logs (imported)");
    let r = run.to_str().unwrap();
    ok(&["judge", r]);
    ok(&["report", r]);
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert_eq!(verdicts.len(), 2);
    assert_eq!(
        verdicts[0].passed,
        Some(true),
        "the passage quoted as the answer to itself: {:?}",
        verdicts[0]
    );
    assert_eq!(
        verdicts[0].metrics.hit,
        Some(true),
        "retrieval metrics work on imported passages"
    );
    // A second import into the same directory is refused, not mixed.
    let again = ragtester(&["import", "--answers", logs.to_str().unwrap(), "--out", r]);
    assert!(!again.status.success());
}

#[test]
fn an_answer_that_failed_loses_the_pair_rather_than_leaving_it() {
    let tmp = tempfile::tempdir().unwrap();
    let row = |q: &str, answer: Option<&str>| {
        let mut r = serde_json::json!({"query": q, "reference": "The valve opens at 4.5 bar."});
        match answer {
            Some(a) => r["answer"] = a.into(),
            None => r["error"] = "HTTP 503 after 3 attempts".into(),
        }
        r.to_string()
    };
    let a = tmp.path().join("a.jsonl");
    let b = tmp.path().join("b.jsonl");
    std::fs::write(
        &a,
        [
            row("When does the valve open?", Some("At 4.5 bar.")),
            row("At what pressure does it open?", Some("4.5 bar.")),
        ]
        .join("\n"),
    )
    .unwrap();
    std::fs::write(
        &b,
        [
            row("When does the valve open?", Some("At 4.5 bar.")),
            row("At what pressure does it open?", None),
        ]
        .join("\n"),
    )
    .unwrap();
    let run = tmp.path().join("run");
    let r = run.to_str().unwrap();
    ok(&[
        "import",
        "--answers",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        r,
    ]);
    ok(&["judge", r, "--pairwise", "a", "b"]);
    let pairwise: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("pairwise.json")).unwrap()).unwrap();
    let all = &pairwise["overall"];
    assert_eq!(all["a_wins"], 1, "b's failed cell is a's win: {pairwise}");
    assert_eq!(all["b_wins"], 0, "{pairwise}");
    assert_eq!(all["ties"], 1, "the same answer ties: {pairwise}");
    assert_eq!(pairwise["errors"], 0);
}
