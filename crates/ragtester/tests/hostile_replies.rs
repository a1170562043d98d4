//! What a target sends back is bounded: a 10 MB answer is cut at `answer_kb` (as the command sets it) and
//! the cut noted on the answer; a command printing more than `reply_mb`, or JSON nested past `json_depth`,
//! is an error recorded on the cell with the limit named — the run goes on and every cell is kept.

mod common;

use common::*;
use ragtester_core::{Answer, read_jsonl};
use ragtester_testkit::{Reply, ScriptedServer};

#[test]
fn oversized_and_nested_target_replies_are_bounded_and_recorded() {
    let server = ScriptedServer::start_in_background();
    let ten_mb = 10 * 1024 * 1024;
    let big = serde_json::json!({"result": {"answer": "é".repeat(ten_mb / 2)}}).to_string();
    for _ in 0..64 {
        server.push(Reply::status(200, &big));
    }
    let tmp = tempfile::tempdir().unwrap();
    let config = format!(
        r#"
[corpus]
paths = ["{corpus}"]

[generation]
n_test = 1
conversations = 0

[[target]]
name = "verbose"
type = "http"
url = "{url}"
body = '{{"question": "{{{{query}}}}"}}'
answer_pointer = "/result/answer"

[[target]]
name = "flood"
type = "command"
command = ["sh", "-c", "cat > /dev/null; head -c 13000000 /dev/zero | tr '\\0' 'a'"]
answer_pointer = "/answer"

[[target]]
name = "nested"
type = "command"
command = ["sh", "-c", "cat > /dev/null; for i in $(seq 500); do printf '['; done; for i in $(seq 500); do printf ']'; done"]
answer_pointer = "/answer"
"#,
        corpus = corpus().display(),
        url = server.rag_url(),
    );
    let path = tmp.path().join("targets.toml");
    std::fs::write(&path, config).unwrap();
    let run = tmp.path().join("run");
    let out = bin()
        // The answer limit lowered from its 256 KB: the command's own limit reaches the engine.
        .args([
            "test",
            "--limit",
            "reply_mb=12",
            "--limit",
            "answer_kb=128",
            "--config",
        ])
        .arg(&path)
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    assert!(
        run.join("answers.jsonl").is_file(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&run.join("configs.jsonl")).unwrap();
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let of = |name: &str| -> Vec<&Answer> {
        let id = &configs
            .iter()
            .find(|c| c.label().contains(name))
            .unwrap()
            .id;
        answers.iter().filter(|a| &a.config_id == id).collect()
    };
    let verbose = of("verbose");
    assert!(!verbose.is_empty());
    for a in &verbose {
        assert!(a.error.is_none(), "{:?}", a.error);
        assert!(
            a.answer.len() <= 128 * 1024 && a.answer.len() > 127 * 1024,
            "{}",
            a.answer.len()
        );
        assert_eq!(a.truncated_from, Some(ten_mb as u64));
    }
    for a in of("flood") {
        let error = a.error.as_deref().unwrap_or_default();
        assert!(error.contains("limit reply_mb = 12 exceeded"), "{error}");
    }
    for a in of("nested") {
        let error = a.error.as_deref().unwrap_or_default();
        assert!(error.contains("limit json_depth = 64 exceeded"), "{error}");
    }
    assert_eq!(answers.len(), 3 * verbose.len(), "every cell is kept");
}
