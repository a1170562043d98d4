//! The command line's edges as a shell meets them: usage errors exit 2, a reader that stops early ends
//! the command quietly, a reference point has one name everywhere, and browsing a run writes nothing.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unknown_retriever_or_chunker_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let suite = common::small_suite(dir.path());
    for (flag, value) in [("--retriever", "bm42"), ("--chunker", "sentences")] {
        let out = common::bin()
            .args(["run", "--docs"])
            .arg(common::corpus())
            .arg("--suite")
            .arg(&suite)
            .arg("--out")
            .arg(dir.path().join("run"))
            .args([flag, value])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flag} {value}: {}",
            stderr(&out)
        );
        assert!(stderr(&out).contains(value), "{}", stderr(&out));
    }
}

#[test]
fn closed_book_is_one_retriever_under_both_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let suite = common::small_suite(dir.path());
    let project = dir.path().join("ragtester.toml");
    for (n, (flag, file)) in [("closed-book", "none"), ("none", "closed-book")]
        .into_iter()
        .enumerate()
    {
        let run = |extra: &[&str], out: &str| {
            common::succeeds(
                common::bin()
                    .args(["run", "--dry-run", "--docs"])
                    .arg(common::corpus())
                    .arg("--suite")
                    .arg(&suite)
                    .arg("--out")
                    .arg(dir.path().join(format!("{out}{n}")))
                    .args(extra),
            )
        };
        run(&["--retriever", flag], "flag");
        std::fs::write(
            &project,
            format!("[matrix]\nretriever = [\"{file}\"]\nllm = [\"offline\"]\n"),
        )
        .unwrap();
        run(&["--config", project.to_str().unwrap()], "file");
    }
}

#[cfg(unix)]
#[test]
fn a_reader_that_stops_early_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let demo = common::shared_demo();
    let mut child = common::bin()
        .arg("report")
        .arg(&demo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away before the report is printed, as `| head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success() || out.status.signal() == Some(libc_sigpipe()),
        "{:?}: {}",
        out.status,
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Broken pipe"), "{}", stderr(&out));
}

/// SIGPIPE's number on Linux and the BSDs.
#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

#[test]
fn browsing_a_run_writes_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let demo = common::shared_demo();
    let mut child = common::bin()
        .current_dir(dir.path())
        .args(["serve", "--addr", "127.0.0.1:0", "--run"])
        .arg(&demo)
        .env_remove("RAGTESTER_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.starts_with("ragtester UI on "), "{line:?}");
    let written: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        written.is_empty(),
        "serve --run wrote {:?} in its folder",
        written.iter().map(|e| e.file_name()).collect::<Vec<_>>()
    );
}

/// stdout and stderr of a finished command, as a log holds them.
fn log_of(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

#[test]
fn the_demo_fits_one_screen_off_a_terminal_and_ends_with_the_next_step() {
    // COLUMNS unset reads as 100; 80 is the narrowest common terminal; at 60 (a split pane) the summary
    // keeps to its essentials and says the report has the rest.
    for columns in [None, Some(80), Some(60)] {
        let width = columns.unwrap_or(100);
        let dir = tempfile::tempdir().unwrap();
        let mut command = common::bin();
        command.current_dir(dir.path()).env_remove("COLUMNS");
        if let Some(c) = columns {
            command.env("COLUMNS", c.to_string());
        }
        let out = common::succeeds(command.args(["demo", "--out", "out"]));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let log = log_of(&out);
        let lines: Vec<&str> = log.lines().collect();
        assert!(
            lines.len() <= 45,
            "{} lines at {width}:\n{log}",
            lines.len()
        );
        assert!(
            lines.iter().all(|l| l.chars().count() <= width),
            "a line wider than {width}:\n{log}"
        );
        assert!(
            !log.contains('\u{1b}'),
            "colour codes off a terminal:\n{log}"
        );
        let mut seen = std::collections::HashSet::new();
        for line in lines.iter().filter(|l| !l.trim().is_empty()) {
            assert!(seen.insert(*line), "said twice: {line}\n{log}");
        }
        // The last line, or the one it folds from.
        assert!(
            stdout
                .trim_end()
                .lines()
                .rev()
                .find(|l| !l.starts_with(' '))
                .unwrap()
                .starts_with("next: "),
            "{stdout}"
        );
        assert_eq!(
            log.contains("in report.html: what to change"),
            width < 80,
            "{log}"
        );
    }
}

#[test]
fn every_line_is_folded_to_the_terminals_columns() {
    let demo = common::shared_demo();
    let out = common::succeeds(common::bin().env("COLUMNS", "80").arg("report").arg(&demo));
    let log = log_of(&out);
    assert!(
        log.lines().all(|l| l.chars().count() <= 80),
        "a line wider than 80:\n{log}"
    );
    assert!(log.contains("TRUST: "), "{log}");
    // Cut to fit, no two rows read alike.
    let rows: Vec<&str> = log
        .lines()
        .filter(|l| l.starts_with("best") || l.starts_with("worst"))
        .collect();
    let distinct: std::collections::HashSet<&&str> = rows.iter().collect();
    assert!(rows.len() >= 2 && distinct.len() == rows.len(), "{log}");
}

/// `docs/` under `dir`, holding a PDF cut off in its first object (its parser warns as it reconstructs it).
fn folder_with_a_broken_pdf(dir: &std::path::Path) -> std::path::PathBuf {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(
        docs.join("broken.pdf"),
        b"%PDF-1.7\n1 0 obj <</Type /Catalog",
    )
    .unwrap();
    docs
}

#[test]
fn a_broken_file_is_named_without_library_noise() {
    let dir = tempfile::tempdir().unwrap();
    let docs = folder_with_a_broken_pdf(dir.path());
    std::fs::copy(
        common::corpus().join("harbor-pump-manual.md"),
        docs.join("pump.md"),
    )
    .unwrap();
    // The PDF library logs this one as an error of its own ("XRef reconstruction also failed").
    std::fs::write(docs.join("garbage.pdf"), b"%PDF-1.7 not really a PDF").unwrap();
    let out = common::bin()
        .args(["generate", "--docs"])
        .arg(&docs)
        .arg("--out")
        .arg(dir.path().join("suite.jsonl"))
        .output()
        .unwrap();
    let log = log_of(&out);
    assert!(
        log.contains("broken.pdf") && log.contains("garbage.pdf"),
        "{log}"
    );
    assert!(
        !log.contains('\u{1b}'),
        "colour codes off a terminal:\n{log}"
    );
    assert!(
        !log.contains("WARN") && !log.contains("ERROR") && !log.contains("XRef"),
        "a library's own log line:\n{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.starts_with("next: ragtester run --docs")),
        "{log}"
    );
}

#[test]
fn dash_v_lets_the_libraries_speak() {
    let dir = tempfile::tempdir().unwrap();
    let docs = folder_with_a_broken_pdf(dir.path());
    let ingest = |flags: &[&str]| {
        let out = common::bin()
            .args(flags)
            .arg("ingest")
            .arg(&docs)
            .arg("--out")
            .arg(dir.path().join("documents"))
            .env_remove("RAGTESTER_LOG")
            .output()
            .unwrap();
        log_of(&out)
    };
    let (quiet, verbose, very) = (ingest(&[]), ingest(&["-v"]), ingest(&["-vv"]));
    assert!(!quiet.contains("WARN"), "{quiet}");
    assert!(
        verbose.contains("WARN") && !verbose.contains("INFO"),
        "{verbose}"
    );
    assert!(very.contains("INFO"), "{very}");
    // Every one still names the file that failed.
    for log in [&quiet, &verbose, &very] {
        assert!(log.contains("broken.pdf"), "{log}");
    }
}

#[test]
fn a_folder_of_many_broken_files_is_summed_up_on_one_screen_and_listed_in_full() {
    let dir = tempfile::tempdir().unwrap();
    let docs = folder_with_a_broken_pdf(dir.path());
    for i in 0..60 {
        std::fs::write(docs.join(format!("b{i:02}.pdf")), b"%PDF-1.7 junk").unwrap();
    }
    std::fs::copy(
        common::corpus().join("harbor-pump-manual.md"),
        docs.join("pump.md"),
    )
    .unwrap();
    let out = dir.path().join("documents");
    let run = common::bin()
        .env("COLUMNS", "80")
        .arg("ingest")
        .arg(&docs)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(3), "some files failed");
    let log = log_of(&run);
    assert!(log.lines().count() <= 45, "{log}");
    assert!(log.lines().all(|l| l.chars().count() <= 80), "{log}");
    assert!(log.contains("more files cannot be read"), "{log}");
    assert!(log.contains("ingested 1 documents (61 failed)"), "{log}");
    // The last line (with what it folds onto) says what to run next.
    let last = log.lines().rfind(|l| !l.starts_with(' ')).unwrap();
    assert!(last.starts_with("next: ragtester generate"), "{log}");
    let failed = std::fs::read_to_string(out.join("failed.jsonl")).unwrap();
    assert_eq!(failed.lines().count(), 61);
}

#[test]
fn a_dataset_of_many_unusable_rows_is_summed_up_on_one_screen() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("answers.jsonl");
    let mut rows: String = (0..80)
        .map(|i| format!("{{\"query\": \"q{i}\", \"answer\": \"a\"}}\n"))
        .collect();
    rows.push_str(
        "{\"query\": \"What pressure?\", \"answer\": \"4.5 bar\", \"reference\": \"4.5 bar\"}\n",
    );
    std::fs::write(&file, rows).unwrap();
    let run = common::bin()
        .env("COLUMNS", "100")
        .args(["import", "--answers"])
        .arg(&file)
        .arg("--docs")
        .arg(common::corpus())
        .arg("--out")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let log = log_of(&run);
    assert!(log.lines().count() <= 45, "{log}");
    assert!(
        log.contains("answers.jsonl: line 1: no reference answer"),
        "{log}"
    );
    assert!(
        log.contains("answers.jsonl: 72 more rows likewise: no reference answer"),
        "{log}"
    );
    assert!(log.contains("1 answer of 81 rows"), "{log}");
}

/// A command target that closes its input unread: writing the question then fails with a broken pipe,
/// which must be that cell's error — not a SIGPIPE that ends the whole run.
#[cfg(unix)]
#[test]
fn a_target_that_never_reads_its_question_is_each_cell_s_error_not_the_run_s_end() {
    let dir = tempfile::tempdir().unwrap();
    let suite = common::small_suite(dir.path());
    // Questions longer than a pipe's buffer (64 KB), so the write is still under way when the command
    // closes it, and shorter than an environment variable may be (128 KB: the messages go there too).
    let long: String = std::fs::read_to_string(&suite)
        .unwrap()
        .lines()
        .map(|line| {
            let mut case: serde_json::Value = serde_json::from_str(line).unwrap();
            let query = case["query"].as_str().unwrap().to_string();
            case["query"] = format!("{query} {}", "padding ".repeat(10_000)).into();
            format!("{case}\n")
        })
        .collect();
    std::fs::write(&suite, long).unwrap();
    let project = dir.path().join("project.toml");
    std::fs::write(
        &project,
        "[[target]]\nname = \"deaf\"\ntype = \"command\"\ncommand = [\"sh\", \"-c\", \"exec 0<&-; sleep 0.2; exit 3\"]\ninput = \"stdin\"\nanswer_pointer = \"/answer\"\n",
    )
    .unwrap();
    let out = dir.path().join("run");
    let run = common::bin()
        .args(["run", "--docs"])
        .arg(common::corpus())
        .arg("--suite")
        .arg(&suite)
        .arg("--config")
        .arg(&project)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(3), "{}", log_of(&run));
    let answers = std::fs::read_to_string(out.join("answers.jsonl")).unwrap();
    assert!(!answers.is_empty());
    for line in answers.lines() {
        let answer: serde_json::Value = serde_json::from_str(line).unwrap();
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("exit"),
            "each cell names what the command did: {error}"
        );
    }
}
