//! `ragtester init` through the binary: the drafted project file names the documents and their languages,
//! refuses to overwrite, and runs as written with `ragtester test`.

use std::path::Path;
use std::process::{Command, Output};

/// The binary with no model server in reach: Ollama and the OpenAI-compatible base point at a loopback port
/// nobody serves, and no key is set.
fn ragtester(args: &[&str], cwd: &Path) -> Output {
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(args)
        .current_dir(cwd)
        .env("OLLAMA_HOST", closed.to_string())
        .env("OPENAI_BASE_URL", format!("http://{closed}/v1"))
        .env_remove("OPENAI_API_KEY")
        .env("RAGTESTER_CACHE_DIR", cwd.join("cache"))
        .output()
        .expect("binary runs")
}

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/corpus")
}

#[test]
fn init_drafts_a_project_file_that_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    for name in ["harbor-pump-manual.md", "qinghe-library-rules.md"] {
        std::fs::copy(corpus().join(name), docs.join(name)).unwrap();
    }
    let out = ragtester(&["init", "docs"], tmp.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("no model server or model file found"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(tmp.path().join("ragtester.toml")).unwrap();
    assert!(text.contains("paths = [\"docs\"]"), "{text}");
    assert!(text.contains("languages: en 1, zh 1"), "{text}");
    assert!(
        text.contains("multilingual"),
        "Chinese documents get embedder advice:\n{text}"
    );

    let again = ragtester(&["init", "docs"], tmp.path());
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert!(
        ragtester(&["init", "docs", "--force"], tmp.path())
            .status
            .success()
    );

    let run = ragtester(
        &[
            "test",
            "--config",
            "ragtester.toml",
            "--out",
            "run1",
            "--quiet",
        ],
        tmp.path(),
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(tmp.path().join("run1/summary.json").is_file());
}
