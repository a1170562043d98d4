//! Secrets stay secret: a whole run made with a sentinel API key, a `${ENV}` bearer token and key in a
//! target's URL, a key typed into the project file, a server that echoes the key in its error and a command
//! that prints its environment — then judged, reported, exported and browsed in the UI. The sentinel values
//! must reach the services that need them and appear in no run file, log line, web response or export.

mod common;
mod ui;

use common::*;
use ragtester_testkit::{Reply, ScriptedServer};
use std::path::Path;

const SENTINEL: &str = "sk-SENTINEL-7f3a9c1e5b2d4086";
const LITERAL: &str = "literal-SENTINEL-in-project-file-42";

fn every_file(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            every_file(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in [SENTINEL, LITERAL] {
        assert!(!text.contains(secret), "{what} holds a secret: …{}…", {
            let at = text.find(secret).unwrap();
            &text[at.saturating_sub(120)..(at + secret.len() + 40).min(text.len())]
        });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_artifact_of_a_run_holds_a_key() {
    let server = ScriptedServer::start_in_background();
    // The first model call meets a server that echoes the key it was sent, as some providers do.
    server.push(Reply::status(
        401,
        &format!(r#"{{"error": {{"message": "Incorrect API key provided: {SENTINEL}"}}}}"#),
    ));
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let config = format!(
        r#"
[corpus]
paths = ["{corpus}"]

[generation]
n_test = 2

[matrix]
llm = ["openai:scripted"]
retriever = ["bm25"]
top_k = [2]

[[target]]
name = "svc"
type = "http"
url = "{url}?key=${{RAGTESTER_SENTINEL}}"
headers = {{ Authorization = "Bearer ${{RAGTESTER_SENTINEL}}", X-Api-Key = "{LITERAL}" }}
body = '{{"question": "{{{{query}}}}"}}'
answer_pointer = "/result/answer"

[[target]]
name = "leaky"
type = "command"
command = ["sh", "-c", "cat > /dev/null; echo \"my key is $RAGTESTER_SENTINEL\" >&2; exit 1"]
answer_pointer = "/answer"
"#,
        corpus = corpus().display(),
        url = server.rag_url(),
    );
    // The project file holds the literal key by the user's choice; it is not an artifact of the run.
    let config_path = tmp.path().join("project.toml");
    std::fs::write(&config_path, config).unwrap();
    let run = work.join("run");
    let mut outputs = Vec::new();
    let env = |c: &mut std::process::Command| {
        c.env("OPENAI_BASE_URL", server.openai_base())
            .env("OPENAI_API_KEY", SENTINEL)
            .env("RAGTESTER_SENTINEL", SENTINEL)
            .env("RAGTESTER_HTTP_ATTEMPTS", "2")
            .env("RAGTESTER_LOG", "debug")
            // The response cache is searched too.
            .env("RAGTESTER_CACHE_DIR", work.join("cache"));
    };
    let mut test = bin();
    test.args(["test", "--config"])
        .arg(&config_path)
        .arg("--out")
        .arg(&run);
    env(&mut test);
    outputs.push(("test", test.output().unwrap()));
    assert!(
        run.join("answers.jsonl").is_file(),
        "{}",
        String::from_utf8_lossy(&outputs[0].1.stderr)
    );

    let configs: Vec<ragtester_core::Configuration> =
        ragtester_core::read_jsonl(&run.join("configs.jsonl")).unwrap();
    for (format, config) in [("ragas", &configs[0]), ("deepeval", &configs[1])] {
        let mut export = bin();
        export
            .args([
                "export", "--format", format, "--config", &config.id, "--out",
            ])
            .arg(work.join(format!("{format}.jsonl")))
            .arg(&run);
        env(&mut export);
        outputs.push(("export", export.output().unwrap()));
    }

    // The keys reached the services that need them.
    let seen = server.seen();
    assert!(
        seen.iter().any(|s| s
            .headers
            .get("authorization")
            .is_some_and(|v| v == &*format!("Bearer {SENTINEL}"))),
        "the target and the model were sent the real key"
    );
    // The errors are recorded, with the key redacted.
    let answers: Vec<ragtester_core::Answer> =
        ragtester_core::read_jsonl(&run.join("answers.jsonl")).unwrap();
    let errors: Vec<&str> = answers.iter().filter_map(|a| a.error.as_deref()).collect();
    assert!(
        errors.iter().any(|e| e.contains("my key is [redacted]")),
        "the command's stderr is recorded, redacted: {errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Incorrect API key provided: [redacted]")),
        "the echoing server's error is recorded, redacted: {errors:?}"
    );

    // The web UI over the run: its API and report.
    let ui = ui::serve(&work.join("ws"), &[&run]);
    let client = ui.client().await;
    for path in [
        "/api/workspace",
        "/api/runs/run",
        "/api/runs/run/results?per_page=500",
        "/api/runs/run/report",
    ] {
        let body = client
            .get(format!("{}{path}", ui.base))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_clean(&format!("GET {path}"), &body);
    }
    drop(ui);

    for (what, out) in &outputs {
        assert_clean(&format!("{what}'s standard output"), &out.stdout);
        assert_clean(&format!("{what}'s standard error"), &out.stderr);
    }
    let mut files = Vec::new();
    every_file(&work, &mut files);
    assert!(files.len() > 8, "{files:?}");
    for file in files {
        assert_clean(&file.display().to_string(), &std::fs::read(&file).unwrap());
    }
}
