//! The matrix's reference points as a user runs them: `--retriever oracle` (the case's own passages) and
//! `--retriever none` (closed book) beside a real retriever, judged and reported — the headroom of each
//! configuration and the closed book's leaky cases in summary.json and on the terminal.

mod common;

use common::*;
use ragtester_core::{Answer, Configuration, RetrieverKind, TestCase, read_jsonl};

#[test]
fn oracle_and_closed_book_runs_give_headroom_and_leaky_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite_with(tmp.path(), &["--n-test", "4", "--conversations", "0"]);
    let run = tmp.path().join("run");
    let r = run.to_str().unwrap();
    let mut args: Vec<String> = [
        "run",
        "--docs",
        corpus().to_str().unwrap(),
        "--suite",
        suite.to_str().unwrap(),
        "--out",
        r,
    ]
    .map(String::from)
    .to_vec();
    for retriever in ["bm25", "oracle", "none"] {
        args.extend(["--retriever".into(), retriever.into()]);
    }
    args.extend(["--top-k", "1", "--top-k", "3"].map(String::from));
    succeeds(bin().args(&args));
    // A reference point has no top-k: one configuration each, beside bm25's two.
    let configs: Vec<Configuration> = read_jsonl(&run.join("configs.jsonl")).unwrap();
    let kinds: Vec<RetrieverKind> = configs.iter().map(|c| c.retriever).collect();
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    let id_of = |kind| {
        configs
            .iter()
            .find(|c| c.retriever == kind)
            .unwrap()
            .id
            .clone()
    };
    let (oracle, closed) = (
        id_of(RetrieverKind::Oracle),
        id_of(RetrieverKind::ClosedBook),
    );
    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    for a in &answers {
        let case = cases.iter().find(|c| c.id == a.case_id).unwrap();
        if a.config_id == closed {
            assert!(a.contexts.is_empty(), "closed book sees no passage");
        }
        if a.config_id == oracle {
            // Exactly the chunks holding the case's sources, in document order.
            assert_eq!(
                a.contexts.is_empty(),
                case.source_spans.is_empty(),
                "{}",
                case.id
            );
            for c in &a.contexts {
                assert!(
                    case.source_spans
                        .iter()
                        .any(|s| s.document_id == c.document_id
                            && s.start < c.end
                            && c.start < s.end)
                );
            }
        }
    }
    succeeds(bin().args(["judge", r]));
    let out = succeeds(bin().args(["report", r]));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("headroom: bm25 k=1"), "{printed}");
    assert!(printed.contains("leaky: offline passes"), "{printed}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let headroom = summary["headroom"].as_array().unwrap();
    // bm25 at both k and the closed book, each against the oracle.
    assert_eq!(headroom.len(), 3, "{headroom:?}");
    let closed_row = headroom
        .iter()
        .find(|h| h["config_id"] == closed.as_str())
        .unwrap();
    // The offline reader refuses without passages: nothing answerable passes closed book, so every
    // case the oracle passes is a failure it fixes, and no case is leaky.
    assert_eq!(closed_row["pass_rate"], 0.0);
    assert!(closed_row["headroom"].as_f64().unwrap() > 0.5);
    for h in headroom {
        let (p, q) = (
            h["pass_rate"].as_f64().unwrap(),
            h["oracle_pass_rate"].as_f64().unwrap(),
        );
        assert!((h["headroom"].as_f64().unwrap() - (q - p)).abs() < 1e-9);
        assert!(h["fixed_by_oracle"].as_u64() <= h["failures"].as_u64());
    }
    let leaky = summary["leaky"].as_array().unwrap();
    assert_eq!(leaky.len(), 1);
    assert_eq!(leaky[0]["leaky"].as_array().unwrap().len(), 0);
    assert!(leaky[0]["cases"].as_u64().unwrap() > 0);
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("id=\"retrieval-worth\""));
}
