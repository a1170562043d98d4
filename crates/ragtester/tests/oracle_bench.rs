//! `ragtester bench oracle` on the offline judge: the labelled judge benchmark runs, covers both languages
//! and every kind of labelled answer, and the default judge meets the project's goals (precision on reported
//! failures ≥ 0.95, recall of real failures ≥ 0.90, in English and in Chinese; right answers in other words
//! ≥ 97 % passed with no rule failing any, and each kind of wrong answer ≥ 95 % failed, per language).

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
            "--min-other-words",
            "0.97",
            "--min-kind-recall",
            "0.95",
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
    // The project's own right answers in other words: at least 200, both languages, none failed by a rule.
    let mut right = 0;
    for lang in ["en", "zh"] {
        let c = &offline["by_kind_language"][format!("other_words/{lang}")];
        let count = |k: &str| c[k].as_u64().unwrap();
        let n = count("true_passes") + count("false_failures");
        assert!(n >= 100, "{lang}: {c}");
        assert!(
            count("true_passes") as f64 / n as f64 >= 0.97,
            "{lang}: {c}"
        );
        right += n;
    }
    assert!(right >= 200);
    assert!(
        offline["right_failed_by_rule"]
            .as_object()
            .unwrap()
            .is_empty(),
        "{}",
        offline["right_failed_by_rule"]
    );
}
