//! The guide as a reader follows it: every `sh` block of each page of `docs/guide/` (and of the README's
//! tour) runs as written, in order, with the binary under test on the path, in a folder holding `docs/` (a
//! copy of the sample corpus) and `examples/`; every `ragtester` command of a `text` block — one that needs a
//! model server, a model file or the reader's own files — must parse (it is run with `--help`, which the
//! command line reads only once every flag and value before it was accepted). So no page drifts from the
//! binary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The fenced blocks of a Markdown text: (language, body).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => open = Some((lang.trim().to_string(), String::new())),
            (Some(_), Some(_)) => out.push(open.take().expect("open block")),
            (Some((_, body)), None) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// A reader's folder: empty but for the checkout's examples, as the repository's root is to a reader
/// (each page copies the documents it runs on into a folder of their own first).
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("examples"), dir.path().join("examples")).unwrap();
    dir
}

/// Run a script in the reader's folder; `strict` stops at the first failing command or unset variable (the
/// guide's own blocks), off for a lone command checked to parse (whose variables a CI system would set).
fn shell(dir: &Path, script: &str, strict: bool) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_ragtester"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(if strict {
            vec!["-euo", "pipefail", "-c", script]
        } else {
            vec!["-c", script]
        })
        .current_dir(dir)
        .env("PATH", path)
        .env("RAGTESTER_CACHE_DIR", dir.join(".cache"))
        .output()
        .expect("bash runs")
}

/// The `ragtester` commands of a text block, each alone: continuation lines joined, comments dropped, a
/// chain split at `&&`, a CI expression (`${{ matrix.shard }}`, which GitHub fills in before the shell
/// sees the line) given the value 1.
fn commands(body: &str) -> Vec<String> {
    let mut joined = body.replace("\\\n", " ");
    while let Some(at) = joined.find("${{") {
        let end = joined[at..].find("}}").map_or(joined.len(), |e| at + e + 2);
        joined.replace_range(at..end, "1");
    }
    joined
        .lines()
        .map(|l| l.split(" # ").next().unwrap_or(l).trim())
        .flat_map(|l| l.split("&&").map(str::trim).collect::<Vec<_>>())
        .filter(|c| c.starts_with("ragtester "))
        .map(str::to_string)
        .collect()
}

/// Run a page's `sh` blocks in order and parse-check its `text` blocks' commands.
fn follow(name: &str, text: &str) -> tempfile::TempDir {
    let dir = workspace();
    let mut ran = 0;
    for (lang, body) in blocks(text) {
        match lang.as_str() {
            "sh" => {
                let out = shell(dir.path(), &body, true);
                assert!(
                    out.status.success(),
                    "{name}: this block failed ({:?}):\n{body}\nstdout:\n{}\nstderr:\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
            "text" => {
                for command in commands(&body) {
                    let out = shell(dir.path(), &format!("{command} --help"), false);
                    assert!(
                        out.status.success(),
                        "{name}: `{command}` does not parse:\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            }
            _ => {}
        }
    }
    assert!(
        ran > 0 || name == "security.md",
        "{name} has no block to run"
    );
    dir
}

fn page(name: &str) {
    let text = std::fs::read_to_string(repo().join("docs/guide").join(name)).unwrap();
    let _ = follow(name, &text);
}

#[test]
fn getting_started_runs_as_written() {
    page("getting-started.md");
}

#[test]
fn the_suite_page_runs_as_written() {
    page("suite.md");
}

#[test]
fn the_matrix_page_runs_as_written() {
    page("matrix-and-targets.md");
}

#[test]
fn the_judge_page_runs_as_written() {
    page("judge.md");
}

#[test]
fn the_conversations_page_runs_as_written() {
    page("conversations.md");
}

#[test]
fn the_agents_and_simulated_users_page_runs_as_written() {
    page("agents-and-simulated-users.md");
}

#[test]
fn the_ci_page_runs_as_written() {
    page("ci.md");
}

#[test]
fn the_security_page_parses() {
    page("security.md");
}

/// The Python page's blocks are Python: `python/tests/test_guide.py` runs each in the wheel's environment
/// (scripts/install-test.sh); here, that the page has no shell block left unrun and that the test reads it.
#[test]
fn the_python_page_is_run_by_the_python_tests() {
    python_page("python.md");
}

fn python_page(name: &str) {
    let text = std::fs::read_to_string(repo().join("docs/guide").join(name)).unwrap();
    let langs: Vec<String> = blocks(&text).into_iter().map(|(lang, _)| lang).collect();
    assert!(
        !langs.iter().any(|l| l == "sh"),
        "{name}: a sh block here is run by nothing"
    );
    assert!(langs.iter().filter(|l| *l == "python").count() >= 5);
    let test = std::fs::read_to_string(repo().join("python/tests/test_guide.py")).unwrap();
    assert!(test.contains(&format!("\"guide\" / \"{name}\"")));
}

/// The README's tour (not its two set-up commands, which CI runs itself).
#[test]
fn the_readme_tour_runs_as_written() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let tour = readme
        .split("## A five-minute tour")
        .nth(1)
        .and_then(|t| t.split("\n## ").next())
        .expect("the README has a tour");
    let dir = follow("README.md", tour);
    // The tour's diff compares like with like and finds what the change did: fixes and a regression.
    let comparison = std::fs::read_to_string(dir.path().join("comparison.md")).unwrap();
    let heading = comparison.lines().next().unwrap_or_default();
    assert!(
        heading.contains("cells compared")
            && !heading.contains(" 0 fixes")
            && !heading.contains("✅"),
        "{heading}"
    );
}

#[test]
fn every_page_of_the_guide_is_followed_here() {
    let source = std::fs::read_to_string(repo().join("crates/ragtester/tests/guide.rs")).unwrap();
    for entry in std::fs::read_dir(repo().join("docs/guide")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            source.contains(&format!("page(\"{name}\")")),
            "{name} is not followed by a test"
        );
    }
}
