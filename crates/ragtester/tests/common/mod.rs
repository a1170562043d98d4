//! Helpers the binary's tests share: the sample corpus, the binary, a suite and a run's arguments against the
//! scripted server, answers compared without their timings, and one demo run for the tests that read one.
#![allow(dead_code)] // each test file uses its own subset

use ragtester_core::{Answer, read_jsonl};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::UNIX_EPOCH;

pub fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/corpus")
}

/// The binary with a response cache of its own, so runs of one test never answer from another's.
pub fn bin() -> Command {
    let cache = tempfile::tempdir().unwrap().keep();
    let mut command = Command::new(env!("CARGO_BIN_EXE_ragtester"));
    command.env("RAGTESTER_CACHE_DIR", cache);
    command
}

/// Run the binary against an OpenAI-compatible base URL and insist that it succeeds.
pub fn run_ok(args: &[String], base: &str) -> std::process::Output {
    succeeds(bin().args(args).env("OPENAI_BASE_URL", base))
}

/// Run a command and insist that it succeeds, showing its standard error when it does not.
pub fn succeeds(command: &mut Command) -> std::process::Output {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A suite of the sample corpus with every category and one conversation per document (48 cases): big
/// enough for a run to be killed part-way, small enough that a run against a slow server stays short.
pub fn suite(dir: &Path) -> PathBuf {
    suite_with(dir, &["--n-test", "1", "--conversations", "1"])
}

/// One single question per sample document (eight): for tests whose cells wait (latency, retries),
/// where every cell costs wall time.
pub fn small_suite(dir: &Path) -> PathBuf {
    suite_with(
        dir,
        &[
            "--strategy",
            "ragtester",
            "--n-test",
            "1",
            "--conversations",
            "0",
        ],
    )
}

/// A suite of the sample corpus with these `generate` flags (`--n-test`, `--conversations 0` for single
/// questions only, …).
pub fn suite_with(dir: &Path, flags: &[&str]) -> PathBuf {
    let suite = dir.join("suite.jsonl");
    succeeds(
        bin()
            .args([
                "generate",
                "--docs",
                corpus().to_str().unwrap(),
                "--out",
                suite.to_str().unwrap(),
            ])
            .args(flags),
    );
    suite
}

pub fn run_args(suite: &Path, out: &Path) -> Vec<String> {
    [
        "run",
        "--docs",
        corpus().to_str().unwrap(),
        "--suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--llm",
        "openai:scripted",
        "--retriever",
        "bm25",
        "--retriever",
        "hybrid",
        "--top-k",
        "2",
        "--concurrency",
        "2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// (case, configuration, answer, retrieved chunk ids, error).
pub type Cell = (String, String, String, Vec<String>, Option<String>);

/// Answers without their timings, sorted: what must be equal between runs.
pub fn comparable(dir: &Path) -> Vec<Cell> {
    let answers: Vec<Answer> = read_jsonl(&dir.join("answers.jsonl")).unwrap();
    let mut v: Vec<_> = answers
        .into_iter()
        .map(|a| {
            (
                a.case_id,
                a.config_id,
                a.answer,
                a.contexts.into_iter().map(|c| c.chunk_id).collect(),
                a.error,
            )
        })
        .collect();
    v.sort();
    v
}

/// Run the demo into `dir` and insist that it succeeds.
pub fn run_demo(dir: &Path) {
    succeeds(bin().args(["demo", "--out", dir.to_str().unwrap()]));
}

/// The demo's run directory, made once per build of the binary and shared by every test that reads a demo
/// run: the demo is the slowest thing these tests do (about half a minute in the debug binary), and its
/// records are the same run after run (`configuration_ids_and_suites_are_stable_across_runs` holds it to
/// that against a fresh demo). A test that writes into a run works on a copy (`demo_copy`). The test
/// processes (nextest runs each test in its own) take turns through a lock file; a directory is used
/// only once its demo finished, and one left by an older binary is removed.
pub fn shared_demo() -> PathBuf {
    let exe = Path::new(env!("CARGO_BIN_EXE_ragtester"));
    let meta = fs::metadata(exe).unwrap();
    let built = meta.modified().unwrap().duration_since(UNIX_EPOCH).unwrap();
    let stamp = format!("{}-{}", meta.len(), built.as_nanos());
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-demo");
    fs::create_dir_all(&root).unwrap();
    let lock = fs::File::create(root.join("lock")).unwrap();
    lock.lock().unwrap();
    let dir = root.join(&stamp);
    if !dir.join("finished").exists() {
        for entry in fs::read_dir(&root).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                fs::remove_dir_all(&path).unwrap();
            }
        }
        run_demo(&dir);
        fs::write(dir.join("finished"), "").unwrap();
    }
    dir
}

/// A copy of the shared demo run at `dest`, for a test that judges, audits or reports into it. The
/// documents' sources still name the shared run's corpus, which no test writes to.
pub fn demo_copy(dest: &Path) {
    copy_tree(&shared_demo(), dest);
    fs::remove_file(dest.join("finished")).unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}
