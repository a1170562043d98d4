//! Sharded runs: `run --shard K/N` into N directories, `merge` into one, judged and reported — equal to the
//! unsharded run cell for cell; and every way of merging the wrong slices refused with a reason.

mod common;

use common::{bin, comparable, corpus};
use ragtester_core::{Answer, Verdict, read_jsonl};
use std::path::{Path, PathBuf};
use std::process::Output;

fn ragtester(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn ok(args: &[&str]) -> Output {
    let out = ragtester(args);
    assert!(
        out.status.success(),
        "ragtester {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn fails_with(args: &[&str], message: &str) {
    let out = ragtester(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ragtester {args:?} should fail");
    assert!(stderr.contains(message), "ragtester {args:?}: {stderr}");
}

/// The run's arguments: two retrievers × two top-k over the sample corpus, as slice `shard` when given.
fn run_args(suite: &Path, out: &Path, shard: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = [
        "run",
        "--docs",
        corpus().to_str().unwrap(),
        "--suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--retriever",
        "bm25",
        "--retriever",
        "hybrid",
        "--top-k",
        "1",
        "--top-k",
        "3",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(s) = shard {
        args.extend(["--shard".to_string(), s.to_string()]);
    }
    args
}

fn run(suite: &Path, out: &Path, shard: Option<&str>) {
    let args = run_args(suite, out, shard);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
}

/// (case, configuration, passed, criteria mean) of every verdict, in file order.
fn verdicts(dir: &Path) -> Vec<(String, String, Option<bool>, Option<String>)> {
    let v: Vec<Verdict> = read_jsonl(&dir.join("verdicts.jsonl")).unwrap();
    v.into_iter()
        .map(|v| {
            (
                v.case_id,
                v.config_id,
                v.passed,
                v.criteria_mean.map(|m| format!("{m:.6}")),
            )
        })
        .collect()
}

#[test]
fn three_shards_merged_equal_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = common::suite(tmp.path());
    let whole = tmp.path().join("whole");
    run(&suite, &whole, None);
    let parts: Vec<PathBuf> = (1..=3)
        .map(|k| tmp.path().join(format!("part{k}")))
        .collect();
    for (k, part) in parts.iter().enumerate() {
        run(&suite, part, Some(&format!("{}/3", k + 1)));
    }
    // Every shard holds about a third of the cells, none holds them all.
    let all: Vec<Answer> = read_jsonl(&whole.join("answers.jsonl")).unwrap();
    for part in &parts {
        let some: Vec<Answer> = read_jsonl(&part.join("answers.jsonl")).unwrap();
        assert!(!some.is_empty() && some.len() < all.len(), "{}", some.len());
    }
    let merged = tmp.path().join("merged");
    let p: Vec<&str> = parts.iter().map(|p| p.to_str().unwrap()).collect();
    let m = merged.to_str().unwrap();
    ok(&[&["merge"], &p[..], &["--out", m]].concat());

    // The same answers in the same order (timings aside).
    let order = |dir: &Path| -> Vec<(String, String)> {
        let a: Vec<Answer> = read_jsonl(&dir.join("answers.jsonl")).unwrap();
        a.into_iter().map(|a| (a.case_id, a.config_id)).collect()
    };
    assert_eq!(order(&merged), order(&whole));
    assert_eq!(comparable(&merged), comparable(&whole));
    for name in [
        "documents.jsonl",
        "suite.jsonl",
        "configs.jsonl",
        "skipped.jsonl",
    ] {
        assert_eq!(
            std::fs::read(merged.join(name)).unwrap(),
            std::fs::read(whole.join(name)).unwrap(),
            "{name}"
        );
    }
    // Judged and reported, the verdicts and pass counts are the unsharded run's.
    for dir in [&whole, &merged] {
        let d = dir.to_str().unwrap();
        ok(&["judge", d, "--quiet"]);
        ok(&["report", d]);
    }
    assert_eq!(verdicts(&merged), verdicts(&whole));
    let passes = |dir: &Path| -> Vec<(String, usize, usize, usize)> {
        let s: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
        s["configs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_string(),
                    c["passed"].as_u64().unwrap() as usize,
                    c["failed"].as_u64().unwrap() as usize,
                    c["errors"].as_u64().unwrap() as usize,
                )
            })
            .collect()
    };
    assert_eq!(passes(&merged), passes(&whole));

    // The wrong slices are refused, each with its reason.
    let out = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    fails_with(
        &["merge", p[0], p[1], "--out", &out("m1")],
        "shard(s) 3/3 missing",
    );
    fails_with(
        &["merge", p[0], p[0], p[1], p[2], "--out", &out("m2")],
        "given twice",
    );
    fails_with(
        &[
            "merge",
            p[0],
            p[1],
            whole.to_str().unwrap(),
            "--out",
            &out("m3"),
        ],
        "is a whole run, not a shard",
    );
    fails_with(
        &["merge", p[0], p[1], p[2], "--out", m],
        "already holds answers",
    );
    // A shard directory resumed as another slice would mix two slices.
    let mut again = run_args(&suite, &parts[0], Some("2/3"));
    again.push("--resume".into());
    let resumed = ragtester(&again.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!resumed.status.success());
    assert!(
        String::from_utf8_lossy(&resumed.stderr)
            .contains("holds shard 1/3 of this run, not shard 2/3")
    );
    fails_with(
        &[
            "run", "--docs", "x", "--suite", "y", "--out", "z", "--shard", "4/3",
        ],
        "K must be between 1 and N",
    );
}
