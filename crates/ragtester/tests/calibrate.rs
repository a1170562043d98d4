//! A judge that learns from people: `calibrate` fits a profile to a team's labels and measures it on
//! held-out folds; `judge --judge-profile` scores every verdict with it and records its hash; the report
//! states the agreement measured (or that none was) and `--require-agreement` gates on it.

mod common;

use common::{bin, demo_copy, succeeds};
use serde_json::{Value, json};
use std::path::Path;

/// A team's labels in one domain, both languages: people score an answer by whether it gives the
/// reference's figure and does not deny it — a rule the answers' wording varies around. Every third
/// answer is a paraphrase that shares few words with the reference but keeps the figure: people rate it
/// well. People are not perfectly consistent: a paraphrase gets 3 or 4, a changed figure 1 or 2.
fn labels(path: &Path) {
    let mut lines = Vec::new();
    for i in 0..90 {
        let (low, high) = (2 + i % 7, 10 + i);
        let reference = format!("Valve {i} opens at {high} bar and closes at {low} bar.");
        let question = format!("At what pressure does valve {i} open?");
        let answers = [
            (format!("Valve {i} opens at {high} bar."), 5),
            (
                format!("Its opening point is {high} bar, per the manual."),
                3 + i % 2,
            ),
            (
                format!("Valve {i} opens at {} bar.", high + 7),
                1 + i % 3 / 2,
            ),
            (format!("Valve {i} does not open at {high} bar."), 1),
        ];
        for (n, (answer, score)) in answers.into_iter().enumerate() {
            lines.push(
                json!({"id": format!("en-{i}-{n}"), "language": "en", "question": question,
                "reference": reference, "answer": answer, "score": score}),
            );
        }
        let reference = format!("{i}号阀门在{high}巴时打开。");
        let question = format!("{i}号阀门在多大压力下打开？");
        let answers = [
            (format!("{i}号阀门在{high}巴时打开。"), 5),
            (format!("开启压力是{high}巴。"), 3 + i % 2),
            (format!("{i}号阀门在{}巴时打开。", high + 7), 1 + i % 3 / 2),
            (format!("{i}号阀门不在{high}巴时打开。"), 1),
        ];
        for (n, (answer, score)) in answers.into_iter().enumerate() {
            lines.push(
                json!({"id": format!("zh-{i}-{n}"), "question": question, "reference": reference,
                "answer": answer, "score": score}),
            );
        }
    }
    let text: Vec<String> = lines.iter().map(Value::to_string).collect();
    std::fs::write(path, text.join("\n")).unwrap();
}

/// `ragtester judge RUN --judge-profile PROFILE`, as run.
fn judge_with(run: &Path, profile: &Path) -> std::process::Output {
    bin()
        .arg("judge")
        .arg(run)
        .arg("--judge-profile")
        .arg(profile)
        .output()
        .unwrap()
}

/// `ragtester report RUN --require-agreement LEVEL`, as run.
fn report_requiring(run: &Path, level: &str) -> std::process::Output {
    bin()
        .arg("report")
        .arg(run)
        .args(["--require-agreement", level])
        .output()
        .unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_profile_learns_from_labels_and_its_agreement_stands_beside_the_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let (labelled, profile) = (dir.path().join("ours.jsonl"), dir.path().join("ours.json"));
    labels(&labelled);
    let out = succeeds(bin().args([
        "calibrate",
        "--labels",
        labelled.to_str().unwrap(),
        "--out",
        profile.to_str().unwrap(),
        "--folds",
        "3",
    ]));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("after: held out in 3 folds"), "{printed}");

    // The profile is a model of signals, never a lookup of the labelled answers; it keeps the held-out
    // figures per language, on the labels it was fitted on.
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(!text.contains("per the manual") && !text.contains("开启压力"));
    let p: Value = serde_json::from_str(&text).unwrap();
    let measured = &p["measured"];
    assert_eq!(measured["folds"], 3);
    assert_eq!(measured["labels"][0]["name"], "ours.jsonl");
    assert_eq!(measured["labels"][0]["items"], 720);
    for language in ["en", "zh"] {
        let figures = measured["by_language"][language].as_array().unwrap();
        let pearson = figures
            .iter()
            .find(|f| f["measure"] == "scores pearson")
            .unwrap();
        assert_eq!(pearson["n"], 360);
        // The rule is learnable from the signals: a changed figure and a denial score low, a paraphrase
        // keeping the figure high, on questions the model never saw.
        let r = pearson["value"].as_f64().unwrap();
        assert!(r > 0.8, "{language}: held-out pearson {r}");
        assert!(p["models"][language]["overall"].is_object());
    }

    // Judged with it, every verdict names it; the report states what was measured and the gate holds.
    let run = dir.path().join("run");
    demo_copy(&run);
    let judged = judge_with(&run, &profile);
    assert!(
        judged.status.success(),
        "{}",
        String::from_utf8_lossy(&judged.stderr)
    );
    let hash = {
        let raw: Value = serde_json::from_str(&text).unwrap();
        let parsed = ragtester_judge::profile::JudgeProfile::parse(&raw.to_string(), "p").unwrap();
        parsed.hash()
    };
    let verdicts = std::fs::read_to_string(run.join("verdicts.jsonl")).unwrap();
    let first: Value = serde_json::from_str(verdicts.lines().next().unwrap()).unwrap();
    assert_eq!(first["profile"], hash.as_str());
    let score = first["score"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&score));
    let passing = succeeds(bin().args([
        "report",
        run.to_str().unwrap(),
        "--require-agreement",
        "0.5",
    ]));
    let table = String::from_utf8_lossy(&passing.stdout);
    // The console gives it in brief; summary.json (and the report) every figure.
    assert!(
        table.contains("TRUST: judge offline vs people, 1 held-out set"),
        "{table}"
    );
    let summary = std::fs::read_to_string(run.join("summary.json")).unwrap();
    assert!(
        summary.contains("held out in 3-fold cross-validation on ours.jsonl (720 items)"),
        "{summary}"
    );
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(
        summary["oracle"]["people"][0]["profile_hash"],
        hash.as_str()
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("id=\"agreement-with-people\""));

    let failing = report_requiring(&run, "0.99");
    assert_eq!(failing.status.code(), Some(4));
    let said = String::from_utf8_lossy(&failing.stderr);
    assert!(
        said.contains("best held-out agreement with people"),
        "{said}"
    );
}

#[test]
fn a_judge_with_no_agreement_measured_says_so_and_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = serde_json::to_value(ragtester_judge::profile::JudgeProfile::builtin()).unwrap();
    p["measured"] = Value::Null;
    p["name"] = "unmeasured".into();
    let profile = dir.path().join("unmeasured.json");
    std::fs::write(&profile, p.to_string()).unwrap();
    let run = dir.path().join("run");
    demo_copy(&run);
    let judged = judge_with(&run, &profile);
    assert!(
        judged.status.success(),
        "{}",
        String::from_utf8_lossy(&judged.stderr)
    );
    let out = report_requiring(&run, "0.1");
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not measured against people"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "judge offline: not measured against people, so its agreement cannot be held"
        )
    );

    // A profile that is not one is refused by name before any verdict is made.
    std::fs::write(&profile, "{\"format\": 1}").unwrap();
    let out = judge_with(&run, &profile);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("unmeasured.json is not a judge profile"),
        "{said}"
    );
}

/// `bench oracle --labels … --items FILE`: each labelled item's verdict beside people's label, criteria and
/// their reasons, so a team reads where its judge and its people part.
#[test]
fn bench_oracle_writes_each_item_beside_peoples_label() {
    let dir = tempfile::tempdir().unwrap();
    let (labelled, items) = (
        dir.path().join("ours.jsonl"),
        dir.path().join("items.jsonl"),
    );
    labels(&labelled);
    succeeds(bin().args([
        "bench",
        "oracle",
        "--labels",
        labelled.to_str().unwrap(),
        "--items",
        items.to_str().unwrap(),
    ]));
    let lines: Vec<Value> = std::fs::read_to_string(&items)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 720);
    let line = |id: &str| lines.iter().find(|l| l["id"] == id).unwrap();
    // Valve 3 opens at 13 bar; the third answer says 20: people scored it low, and the judge says why.
    let changed = line("en-3-2");
    assert_eq!(changed["judge"], "offline");
    assert_eq!(changed["language"], "en");
    assert!(changed["people"]["score"].as_f64().unwrap() <= 2.0);
    assert_eq!(changed["passed"], false, "{changed}");
    let reason = changed["verdict"]["criteria"]["faithfulness"]["reason"]
        .as_str()
        .unwrap();
    assert!(reason.contains("20"), "{reason}");
    let right = line("en-3-0");
    assert_eq!(right["people"]["score"], 5.0);
    assert_eq!(right["passed"], true, "{right}");
    assert!(right["score"].as_f64().unwrap() > changed["score"].as_f64().unwrap());
    assert!(right["criteria"]["faithfulness"].as_f64().is_some());
    // The raw signals a profile reads sit beside the verdict: the judge's own faithfulness before any
    // profile rescored it, and what the texts say.
    let signal = |l: &Value, name: &str| l["signals"][name].as_f64().unwrap();
    assert!(signal(right, "faithfulness") > signal(changed, "faithfulness"));
    assert_eq!(signal(right, "negation_agrees"), 1.0, "{right}");
    assert!(
        right.get("signals_b").is_none(),
        "a single answer has no second"
    );
}
