//! Answered conversations as teams keep them: OpenAI chat logs, RAGAS multi-turn samples and DeepEval
//! conversational cases are imported with their history, judged with it, reported as conversations with
//! each row's own id, and exported back in the same shapes.

mod common;

use common::{bin, corpus};
use serde_json::{Value, json};
use std::path::Path;

fn lines(path: &Path, rows: &[Value]) {
    let text: Vec<String> = rows.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n") + "\n").unwrap();
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const EARLIER_Q: &str = "Which valve protects the pump?";
const EARLIER_A: &str = "The relief valve.";
const Q: &str = "At what pressure does it open?";
const A: &str = "It opens at 4.5 bar.";
const REF: &str = "The relief valve opens at 4.5 bar.";

/// One system's log in each shape: a conversation with its history, a broken line, a turn without an
/// answer; the OpenAI log also keeps a conversation one row a turn, its turns out of order.
fn logs(dir: &Path) -> [std::path::PathBuf; 3] {
    let openai = dir.join("chat-log.jsonl");
    lines(
        &openai,
        &[
            json!({"id": "log-17", "messages": [
                {"role": "system", "content": "Answer from the manual."},
                {"role": "user", "content": EARLIER_Q},
                {"role": "assistant", "content": EARLIER_A},
                {"role": "user", "content": Q}],
                "answer": A, "contexts": ["The relief valve opens at 4.5 bar."], "reference": REF}),
            json!({"id": "log-18", "messages": [{"role": "user", "content": Q}], "reference": REF}),
            json!({"conversation_id": "c9", "turn": 2, "query": "And how fast does it run?",
                "answer": "1,200 rpm.", "reference": "The pump runs at 1,200 rpm.", "contexts": []}),
            json!({"conversation_id": "c9", "turn": 1, "query": "Which pump is fitted?",
                "answer": "The centrifugal pump P-100.", "reference": "The centrifugal pump P-100.",
                "contexts": []}),
        ],
    );
    let mut text = std::fs::read_to_string(&openai).unwrap();
    text.insert_str(0, "{broken\n");
    std::fs::write(&openai, text).unwrap();
    let ragas = dir.join("ragas-multiturn.jsonl");
    lines(
        &ragas,
        &[json!({"id": 7, "user_input": [
            {"type": "human", "content": EARLIER_Q},
            {"type": "ai", "content": EARLIER_A},
            {"type": "human", "content": Q},
            {"type": "ai", "content": A, "metadata": {"retrieved_contexts": [REF]}}],
            "reference": REF})],
    );
    let deepeval = dir.join("deepeval-conversations.json");
    std::fs::write(
        &deepeval,
        json!([{"turns": [
            {"role": "user", "content": EARLIER_Q},
            {"role": "assistant", "content": EARLIER_A},
            {"role": "user", "content": Q},
            {"role": "assistant", "content": A, "retrieval_context": [REF]}],
            "expected_outcome": REF, "conversation_id": "dx", "turn": 2}])
        .to_string(),
    )
    .unwrap();
    [openai, ragas, deepeval]
}

#[test]
fn logged_conversations_are_judged_with_their_history_and_go_back_out() {
    let dir = tempfile::tempdir().unwrap();
    let [openai, ragas, deepeval] = logs(dir.path());
    let run = dir.path().join("run");
    let out = bin()
        .args(["import", "--answers"])
        .args([&openai, &ragas, &deepeval])
        .args([
            "--system", "chat", "--system", "ragas", "--system", "deepeval",
        ])
        .arg("--docs")
        .arg(corpus())
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    // The broken line and the turn without an answer are named; the rest proceeds.
    assert_eq!(out.status.code(), Some(3), "{said}");
    assert!(said.contains("line 1: not a JSON object"), "{said}");
    assert!(said.contains("line 3: a turn without an answer"), "{said}");

    let cases = read_lines(&run.join("suite.jsonl"));
    let turn_of = |row: &str| {
        cases
            .iter()
            .find(|c| c["row_id"] == row)
            .unwrap_or_else(|| panic!("no case for row {row}: {cases:?}"))
            .clone()
    };
    let logged = turn_of("log-17");
    assert_eq!(logged["query"], Q);
    assert_eq!(logged["turn"]["kind"], "logged");
    assert_eq!(logged["turn"]["index"], 2);
    let history = logged["turn"]["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "the system message is not a turn");
    assert_eq!(history[1]["content"], EARLIER_A);
    assert_eq!(logged["language"], "en");
    // RAGAS's sample is the same conversation as the chat log's: one case, answered by both systems.
    let answered: Vec<Value> = read_lines(&run.join("answers.jsonl"))
        .into_iter()
        .filter(|a| a["case_id"] == logged["id"])
        .collect();
    assert_eq!(answered.len(), 2);
    assert_eq!(turn_of("dx#2")["turn"]["index"], 2);
    // One row a turn, out of order in the file: put in turn order, the second after the first.
    let (first, second) = (turn_of("c9#1"), turn_of("c9#2"));
    assert_eq!(first["turn"]["of"], 2);
    assert_eq!(
        second["turn"]["conversation"],
        first["turn"]["conversation"]
    );
    let answers = std::fs::read_to_string(run.join("answers.jsonl")).unwrap();
    let at = |id: &Value| answers.find(id.as_str().unwrap()).unwrap();
    assert!(at(&first["id"]) < at(&second["id"]));

    common::succeeds(bin().args(["judge", run.to_str().unwrap()]));
    let verdicts = read_lines(&run.join("verdicts.jsonl"));
    assert!(verdicts.iter().any(|v| v["row_id"] == "log-17"));
    common::succeeds(bin().args(["report", run.to_str().unwrap()]));
    let csv = std::fs::read_to_string(run.join("results.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("row_id"));
    assert!(csv.contains("log-17") && csv.contains("c9#2"));
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    assert!(
        !summary["conversations"].as_array().unwrap().is_empty(),
        "the report has a Conversations section: {}",
        summary["conversations"]
    );

    // Back out in each shape, and in again: the same cases, the same answers.
    let configs = read_lines(&run.join("configs.jsonl"));
    let chat = configs
        .iter()
        .find(|c| c.to_string().contains("\"chat\""))
        .unwrap();
    for format in ["messages", "ragas", "deepeval"] {
        let exported = dir.path().join(format!("{format}.jsonl"));
        common::succeeds(
            bin()
                .args(["export", run.to_str().unwrap(), "--format", format])
                .args(["--config", chat["id"].as_str().unwrap()])
                .arg("--out")
                .arg(&exported),
        );
        let history_field = match format {
            "messages" => "messages",
            "ragas" => "user_input",
            _ => "turns",
        };
        let is_turn = |r: &Value| r[history_field].is_array();
        let mut rows = read_lines(&exported);
        // RAGAS and DeepEval load one kind of sample a dataset: their conversations come in a second file,
        // the single questions stay in the first; our own messages format holds both.
        let apart = dir.path().join(format!("{format}.conversations.jsonl"));
        if format == "messages" {
            assert!(!apart.exists());
        } else if apart.exists() {
            assert!(
                rows.iter().all(|r| !is_turn(r)),
                "{format}: a turn among single rows"
            );
            let turns = read_lines(&apart);
            assert!(!turns.is_empty() && turns.iter().all(is_turn), "{format}");
            rows.extend(turns);
        } else {
            // Conversations alone need no second file.
            assert!(
                rows.iter().all(is_turn),
                "{format}: single rows among turns"
            );
        }
        let turn = rows.iter().find(|r| r["id"] == "log-17").unwrap();
        assert!(turn[history_field].as_array().unwrap().len() >= 3, "{turn}");
        let back = dir.path().join(format!("back-{format}"));
        common::succeeds(
            bin()
                .args(["import", "--answers"])
                .arg(&exported)
                .arg("--docs")
                .arg(corpus())
                .arg("--out")
                .arg(&back),
        );
        let again = read_lines(&back.join("suite.jsonl"));
        let before: Vec<&Value> = cases
            .iter()
            .filter(|c| ["log-17", "c9#1", "c9#2"].contains(&c["row_id"].as_str().unwrap_or("")))
            .collect();
        for case in before {
            assert!(
                again.iter().any(|c| c["id"] == case["id"]
                    && c["turn"] == case["turn"]
                    && c["row_id"] == case["row_id"]),
                "{format}: {case} did not come back"
            );
        }
    }
}
