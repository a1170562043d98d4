//! `ragtester bench oracle` on the offline judge: the labelled judge benchmark runs, covers both languages
//! and every kind of labelled answer, and the default judge meets the project's goals (precision on reported
//! failures ≥ 0.95, recall of real failures ≥ 0.90, in English and in Chinese).

use std::process::Command;

#[test]
fn the_offline_judge_meets_its_goals_on_the_labelled_benchmark() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("oracle.json");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args([
            "bench",
            "oracle",
            "--min-precision",
            "0.95",
            "--min-recall",
            "0.90",
            "--json",
            json.to_str().unwrap(),
        ])
        .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let scores: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let offline = &scores[0];
    assert_eq!(offline["judge"], "offline");
    for lang in ["en", "zh"] {
        let c = &offline["by_language"][lang];
        let count = |k: &str| c[k].as_u64().unwrap();
        let failures = count("true_failures") + count("missed_failures");
        let passes = count("true_passes") + count("false_failures");
        assert!(failures >= 100 && passes >= 40, "{lang}: {c}");
        assert_eq!(count("judge_errors"), 0, "the offline judge always replies");
        let precision = count("true_failures") as f64
            / (count("true_failures") + count("false_failures")) as f64;
        let recall = count("true_failures") as f64 / failures as f64;
        assert!(precision >= 0.95 && recall >= 0.90, "{lang}: {c}");
    }
    for kind in [
        "verbatim",
        "reworded",
        "quoted",
        "other_question",
        "other_passage",
        "refusal",
        "truncated",
        "changed_number",
        "swapped_name",
        "flipped_negation",
        "wrong_language",
    ] {
        assert!(offline["by_kind"][kind].is_object(), "no {kind} answers");
    }
    // The wrong answers a lexical judge is most tempted to pass — another question's answer read from its
    // own passage, the passage's sentence with a name swapped, a figure moved or a negation flipped — each
    // fail at least 95 % of the time; a quoted sentence of the passage passes.
    for kind in [
        "other_passage",
        "swapped_name",
        "changed_number",
        "flipped_negation",
    ] {
        let c = &offline["by_kind"][kind];
        let count = |k: &str| c[k].as_u64().unwrap();
        let failures = count("true_failures") + count("missed_failures");
        assert!(failures >= 20, "{kind}: {c}");
        let recall = count("true_failures") as f64 / failures as f64;
        assert!(recall >= 0.95, "{kind}: {c}");
    }
    let quoted = &offline["by_kind"]["quoted"];
    assert_eq!(quoted["false_failures"], 0, "{quoted}");
}
