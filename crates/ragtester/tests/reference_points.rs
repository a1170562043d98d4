//! The matrix's reference points as a user runs them: `--retriever oracle` (the case's own passages),
//! `--retriever none` (closed book) and `--retriever full-doc` (the case's whole documents) beside a real
//! retriever, judged and reported — the headroom of each configuration, the closed book's leaky cases and
//! retrieval against long context in summary.json and on the terminal.

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
    for retriever in ["bm25", "oracle", "none", "full-doc"] {
        args.extend(["--retriever".into(), retriever.into()]);
    }
    args.extend(["--top-k", "1", "--top-k", "3"].map(String::from));
    succeeds(bin().args(&args));
    // A reference point has no top-k: one configuration each, beside bm25's two.
    let configs: Vec<Configuration> = read_jsonl(&run.join("configs.jsonl")).unwrap();
    let kinds: Vec<RetrieverKind> = configs.iter().map(|c| c.retriever).collect();
    assert_eq!(kinds.len(), 5, "{kinds:?}");
    let id_of = |kind| {
        configs
            .iter()
            .find(|c| c.retriever == kind)
            .unwrap()
            .id
            .clone()
    };
    let (oracle, closed, full) = (
        id_of(RetrieverKind::Oracle),
        id_of(RetrieverKind::ClosedBook),
        id_of(RetrieverKind::FullDoc),
    );

    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let chunks_of = |document: &str| {
        answers
            .iter()
            .flat_map(|a| &a.contexts)
            .filter(|c| c.document_id == document)
            .map(|c| c.chunk_id.clone())
            .collect::<std::collections::BTreeSet<_>>()
    };
    for a in &answers {
        let case = cases.iter().find(|c| c.id == a.case_id).unwrap();
        if a.config_id == closed {
            assert!(a.contexts.is_empty(), "closed book sees no passage");
        }
        if a.config_id == full {
            // The case's documents whole: every chunk any configuration saw of them, in order, once.
            let document = case
                .source_spans
                .first()
                .map_or(case.document_id.as_str(), |s| s.document_id.as_str());
            let read: std::collections::BTreeSet<String> = a
                .contexts
                .iter()
                .filter(|c| c.document_id == document)
                .map(|c| c.chunk_id.clone())
                .collect();
            assert!(read.is_superset(&chunks_of(document)), "{}", case.id);
            assert!(
                a.contexts
                    .windows(2)
                    .all(|w| w[0].document_id != w[1].document_id || w[0].end <= w[1].start),
                "in document order, without the chunker's overlap"
            );
            assert_eq!(a.context_cut_from, None, "the offline reader has no window");
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
    let out = succeeds(bin().args(["report", r, "--full"]));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("headroom: bm25 k=1"), "{printed}");
    assert!(printed.contains("leaky: offline passes"), "{printed}");
    assert!(printed.contains("long context: bm25 k=1"), "{printed}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let headroom = summary["headroom"].as_array().unwrap();
    // bm25 at both k, the closed book and the whole documents, each against the oracle.
    assert_eq!(headroom.len(), 4, "{headroom:?}");
    let long_context = summary["long_context"].as_array().unwrap();
    assert_eq!(
        long_context.len(),
        2,
        "bm25 at both k against the whole documents"
    );
    for l in long_context {
        assert_eq!(l["full_doc_id"], full.as_str());
        let (rag, whole) = (&l["spend"], &l["full_doc_spend"]);
        // The whole documents cost more prompt tokens than three retrieved chunks.
        assert!(
            whole["prompt_tokens_per_answer"].as_f64() > rag["prompt_tokens_per_answer"].as_f64(),
            "{l}"
        );
    }
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
    // The first screen: one pass-rate row per configuration, labels without the parts all share.
    assert!(html.contains("id=\"glance-pass-rate\""));
    assert_eq!(html.matches("class=\"pass-row\"").count(), configs.len());
    assert!(html.contains("every configuration: offline"));
    assert!(html.contains("<strong>Headroom:</strong>"));
    // The configuration tables group their rows by retriever, one heading row per retriever and table.
    assert_eq!(html.matches("class=\"axis-group\"").count(), 2 * 4);
}

/// `generate --drop-leaky MODEL` as a user runs it, the model a scripted OpenAI-compatible server: the
/// first positive single question gets its own expected answer back with no passage (a model that knows
/// it), the rest a refusal. The first is left out of the suite and listed in its report; negatives and
/// conversation turns are never asked; the rest stay.
#[test]
fn a_case_the_model_answers_closed_book_is_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let flags = [
        "--strategy",
        "ragtester",
        "--n-test",
        "3",
        "--conversations",
        "1",
        "--concurrency",
        "1",
    ];
    let plain = suite_with(tmp.path(), &flags);
    let cases: Vec<TestCase> = read_jsonl(&plain).unwrap();
    let asked: Vec<&TestCase> = cases
        .iter()
        .filter(|c| {
            !c.expects_refusal()
                && c.turn.is_none()
                && c.category != ragtester_core::Category::Safety
        })
        .collect();
    assert!(asked.len() >= 2 && asked.len() < cases.len());
    let server = ragtester_testkit::ScriptedServer::start_in_background();
    server.push(ragtester_testkit::Reply::Content(
        asked[0].expected_answer.clone(),
    ));
    for _ in 1..asked.len() {
        server.push(ragtester_testkit::Reply::Content(
            "I cannot answer that from the documents provided.".into(),
        ));
    }
    let checked = tmp.path().join("checked.jsonl");
    let out = succeeds(
        bin()
            .args(["generate", "--docs", corpus().to_str().unwrap(), "--out"])
            .arg(&checked)
            .args(flags)
            .args(["--drop-leaky", "openai:memorizer"])
            .env("OPENAI_BASE_URL", server.openai_base()),
    );
    let printed = String::from_utf8_lossy(&out.stderr);
    assert!(
        printed.contains(&format!(
            "leak check with openai:memorizer: 1 of {} positive single questions",
            asked.len()
        )),
        "{printed}"
    );
    let kept: Vec<TestCase> = read_jsonl(&checked).unwrap();
    assert_eq!(kept.len(), cases.len() - 1);
    assert!(kept.iter().all(|c| c.id != asked[0].id));
    // Only the positive single questions were asked: one model call each.
    assert_eq!(server.seen().len(), asked.len());
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(checked.with_extension("report.json")).unwrap())
            .unwrap();
    let leaky = &report["leaky"][0];
    assert_eq!(leaky["model"], "openai:memorizer");
    assert_eq!(leaky["checked"], asked.len());
    assert_eq!(leaky["leaky"][0]["case_id"], asked[0].id.as_str());
    assert_eq!(leaky["unchecked"].as_array().unwrap().len(), 0);
    // A model that cannot be reached checks nothing: every case stays, each listed as unchecked.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", dead.local_addr().unwrap());
    drop(dead);
    let unreachable = tmp.path().join("unreachable.jsonl");
    succeeds(
        bin()
            .args(["generate", "--docs", corpus().to_str().unwrap(), "--out"])
            .arg(&unreachable)
            .args(flags)
            .args(["--drop-leaky", "openai:memorizer"])
            .env("OPENAI_BASE_URL", base)
            .env("RAGTESTER_HTTP_ATTEMPTS", "1"),
    );
    assert_eq!(read_jsonl::<TestCase>(&unreachable).unwrap(), cases);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(unreachable.with_extension("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        report["leaky"][0]["unchecked"].as_array().unwrap().len(),
        asked.len()
    );
}
