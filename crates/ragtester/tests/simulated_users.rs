//! Simulated users against systems that talk back: the offline user converses with two command targets
//! in English and Chinese — one that asks which model the user means before it answers, one that answers
//! another question — and with the built-in pipeline; the conversations differ turn by turn, goal reached
//! separates the good target from the bad one, a negative goal is met only by refusals kept, a target too
//! slow for the time bound is each case's named error, and every report shows the goal figures.

mod common;

use common::{bin, succeeds};
use ragtester_core::{
    Answer, Category, Ending, Goal, SourceSpan, Strategy, TestCase, UserMove, Verdict, read_jsonl,
    write_jsonl_atomic,
};
use std::path::{Path, PathBuf};

const MANUAL_EN: &str =
    "# X2 scooter\n\nThe X2 battery warranty lasts two years. The X2 weighs 14 kilograms.\n";
const MANUAL_ZH: &str = "# X2 滑板车\n\nX2 的电池保修期为两年。X2 重 14 公斤。\n";

/// A service that talks back: `clarify` asks which model the user means before it answers; `wrong`
/// answers another question every time; `slow` sleeps past any short time bound.
const TARGET: &str = r#"
import json, os, sys, time
mode = sys.argv[1]
query = sys.stdin.read()
users = [m for m in json.loads(os.environ.get("RAGTESTER_MESSAGES", "[]")) if m["role"] == "user"]
zh = any("\u4e00" <= c <= "\u9fff" for c in query)
if mode == "slow":
    time.sleep(3)
if mode == "clarify" and len(users) <= 1:
    answer = "您指的是哪个型号？" if zh else "Which model do you mean?"
elif mode in ("clarify", "slow"):
    answer = "X2 的电池保修期为两年。" if zh else "The X2 battery warranty lasts two years."
elif mode == "refuse":
    answer = "文档中没有这方面的信息。" if zh else "The documents do not say."
else:
    answer = "X2 重 14 公斤。" if zh else "The X2 weighs 14 kilograms."
print(json.dumps({"answer": answer}, ensure_ascii=False))
"#;

fn corpus(dir: &Path) -> PathBuf {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("x2.md"), MANUAL_EN).unwrap();
    std::fs::write(docs.join("x2-zh.md"), MANUAL_ZH).unwrap();
    docs
}

/// A goal for each language, answerable from the manual, and one the manual cannot meet.
fn suite(dir: &Path, docs: &Path) -> PathBuf {
    let out = dir.join("ingested");
    succeeds(bin().args(["ingest"]).arg(docs).arg("--out").arg(&out));
    let documents: Vec<ragtester_core::Document> =
        read_jsonl(&out.join("documents.jsonl")).unwrap();
    let doc = |name: &str| documents.iter().find(|d| d.source.ends_with(name)).unwrap();
    let goal =
        |id: &str, doc: &ragtester_core::Document, query: &str, expected: &str, language: &str| {
            let start = doc.text.find(expected).unwrap_or(0);
            let start = doc.text[..start].chars().count();
            let mut case = ragtester_testkit::case(id, query, expected);
            case.document_id = doc.id.clone();
            case.language = language.into();
            case.strategy = Strategy::Simulated;
            case.source_spans = vec![SourceSpan::in_document(
                doc,
                start,
                start + expected.chars().count(),
            )];
            case.goal = Some(Goal {
                want: query.into(),
                persona: "a new owner".into(),
                max_turns: 5,
                details: vec!["X2".into()],
            });
            case
        };
    let (en, zh) = (doc("x2.md"), doc("x2-zh.md"));
    let mut never = goal(
        "never",
        en,
        "Who designed the X2's logo?",
        "The documents do not say who designed the logo.",
        "en",
    );
    never.category = Category::Negative;
    never.source_spans.clear();
    let cases = vec![
        goal(
            "en",
            en,
            "How long is the battery warranty?",
            "The X2 battery warranty lasts two years.",
            "en",
        ),
        goal(
            "zh",
            zh,
            "电池保修期多长？",
            "X2 的电池保修期为两年。",
            "zh",
        ),
        never,
    ];
    let suite = dir.join("suite.jsonl");
    write_jsonl_atomic(&suite, &cases).unwrap();
    suite
}

fn project(dir: &Path, modes: &[&str], seconds: f64) -> PathBuf {
    let script = dir.join("target.py");
    std::fs::write(&script, TARGET).unwrap();
    let mut text = format!("[run]\nconversation_seconds = {seconds}\n\n");
    for mode in modes {
        text.push_str(&format!(
            "[[target]]\nname = \"{mode}\"\ntype = \"command\"\ncommand = [\"python3\", {:?}, \"{mode}\"]\n\
             answer_pointer = \"/answer\"\ntimeout_s = 10\n\n",
            script.to_str().unwrap()
        ));
    }
    let path = dir.join(format!("{}.toml", modes.join("-")));
    std::fs::write(&path, text).unwrap();
    path
}

fn run(dir: &Path, docs: &Path, suite: &Path, project: &Path) -> PathBuf {
    let out = dir.join(project.file_stem().unwrap()).with_extension("run");
    // Exit code 3: some cells errored (the slow target's); the run and its reports are whole.
    let finished = |command: &mut std::process::Command| {
        let done = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(matches!(done.status.code(), Some(0 | 3)), "{stderr}");
    };
    finished(
        bin()
            .args(["run", "--docs"])
            .arg(docs)
            .arg("--suite")
            .arg(suite)
            .arg("--config")
            .arg(project)
            .arg("--out")
            .arg(&out),
    );
    for stage in ["judge", "report"] {
        finished(bin().arg(stage).arg(&out));
    }
    out
}

fn by_target(run: &Path, name: &str) -> (Vec<Answer>, Vec<Verdict>) {
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&run.join("configs.jsonl")).unwrap();
    let id = &configs
        .iter()
        .find(|c| c.target.as_ref().is_some_and(|t| t.name == name))
        .unwrap()
        .id;
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    (
        answers.into_iter().filter(|a| &a.config_id == id).collect(),
        verdicts
            .into_iter()
            .filter(|v| &v.config_id == id)
            .collect(),
    )
}

#[test]
fn a_target_that_asks_back_reaches_the_goal_and_one_that_answers_another_question_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = corpus(tmp.path());
    let suite = suite(tmp.path(), &docs);
    let project = project(tmp.path(), &["clarify", "wrong", "refuse"], 120.0);
    let run = run(tmp.path(), &docs, &suite, &project);
    let (clarify, clarify_verdicts) = by_target(&run, "clarify");
    let (wrong, wrong_verdicts) = by_target(&run, "wrong");
    for language in ["en", "zh"] {
        let of = |answers: &[Answer]| {
            answers
                .iter()
                .find(|a| a.case_id == language)
                .unwrap()
                .clone()
        };
        let (good, bad) = (of(&clarify), of(&wrong));
        let (good, bad) = (good.simulation.unwrap(), bad.simulation.unwrap());
        // The good target asked back; the user answered with the detail it knows; the answer settled it.
        let moves: Vec<UserMove> = good.turns.iter().map(|t| t.user_move).collect();
        assert_eq!(
            moves,
            [UserMove::Open, UserMove::Clarify],
            "{language}: {good:?}"
        );
        assert!(good.turns[1].user.contains("X2"), "{:?}", good.turns[1]);
        assert_eq!(good.ended, Some(Ending::Satisfied));
        // The bad target was corrected turn after turn until the user gave up.
        let moves: Vec<UserMove> = bad.turns.iter().map(|t| t.user_move).collect();
        assert_eq!(
            moves,
            [
                UserMove::Open,
                UserMove::Correct,
                UserMove::Correct,
                UserMove::Correct
            ],
            "{language}: {bad:?}"
        );
        assert_eq!(bad.ended, Some(Ending::GaveUp));
        assert_ne!(
            good.turns[1].user, bad.turns[1].user,
            "the conversations differ turn by turn"
        );
        let verdict = |vs: &[Verdict]| vs.iter().find(|v| v.case_id == language).unwrap().clone();
        let (good, bad) = (verdict(&clarify_verdicts), verdict(&wrong_verdicts));
        let goal = good.metrics.goal.as_ref().unwrap();
        assert!(goal.reached && goal.language_kept, "{language}: {goal:?}");
        assert_eq!(goal.turns_to_goal, Some(2));
        assert_eq!(good.passed, Some(true), "{language}: {good:?}");
        assert!(!bad.metrics.goal.as_ref().unwrap().reached);
        assert_eq!(bad.passed, Some(false));
        assert!(
            bad.rule_failure
                .as_deref()
                .unwrap()
                .contains("goal was not reached"),
            "{bad:?}"
        );
    }
    // The goal the documents cannot meet: a system that keeps refusing meets it; one that answers fails.
    let (_, refuse_verdicts) = by_target(&run, "refuse");
    let never = |vs: &[Verdict]| vs.iter().find(|v| v.case_id == "never").unwrap().clone();
    let kept = never(&refuse_verdicts);
    assert_eq!(
        kept.metrics.goal.as_ref().unwrap().refusals_kept,
        Some(true),
        "{kept:?}"
    );
    assert_eq!(kept.passed, Some(true));
    assert_eq!(
        never(&wrong_verdicts)
            .metrics
            .goal
            .as_ref()
            .unwrap()
            .refusals_kept,
        Some(false)
    );
    // The reports carry the goal figures; the good target's beat the bad one's.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let rate = |name: &str| {
        summary["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["label"].as_str().unwrap().contains(name))
            .unwrap()["goals"]["reached_rate"]
            .as_f64()
            .unwrap()
    };
    assert!(rate("clarify") > rate("wrong"), "{summary}");
    let markdown = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(markdown.contains("simulated conversations"), "{markdown}");
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("simulated-users"));
}

#[test]
fn a_target_too_slow_for_the_time_bound_is_each_conversation_s_named_error() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = corpus(tmp.path());
    let suite = suite(tmp.path(), &docs);
    let project = project(tmp.path(), &["slow"], 1.0);
    let run = run(tmp.path(), &docs, &suite, &project);
    let (answers, verdicts) = by_target(&run, "slow");
    assert_eq!(answers.len(), 3);
    for a in &answers {
        let error = a.error.as_deref().unwrap_or_default();
        assert!(error.contains("time bound of 1 s"), "{a:?}");
        let sim = a.simulation.as_ref().unwrap();
        assert_eq!(sim.ended, Some(Ending::Error));
        assert!(
            sim.turns.is_empty(),
            "the turn past the bound is not kept as answered"
        );
    }
    assert!(
        verdicts
            .iter()
            .all(|v| v.status == ragtester_core::VerdictStatus::ExecError)
    );
}

#[test]
fn generate_writes_goals_and_the_built_in_pipeline_converses_with_the_offline_user() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let corpus = common::corpus();
    succeeds(
        bin()
            .args(["generate", "--docs"])
            .arg(&corpus)
            .args(["--out", suite.to_str().unwrap(), "--strategy", "ragtester"])
            .args(["--n-test", "3", "--conversations", "0", "--goals", "2"]),
    );
    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    let goals: Vec<&TestCase> = cases.iter().filter(|c| c.goal.is_some()).collect();
    assert!(goals.len() >= 8, "{} goals", goals.len());
    assert!(goals.iter().any(|g| g.language == "zh") && goals.iter().any(|g| g.language == "en"));
    let out = tmp.path().join("run");
    succeeds(
        bin()
            .args(["run", "--docs"])
            .arg(&corpus)
            .args([
                "--suite",
                suite.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ])
            .args(["--retriever", "bm25", "--top-k", "3"]),
    );
    let answers: Vec<Answer> = read_jsonl(&out.join("answers.jsonl")).unwrap();
    let simulated: Vec<&Answer> = answers.iter().filter(|a| a.simulation.is_some()).collect();
    assert_eq!(simulated.len(), goals.len());
    for a in &simulated {
        let sim = a.simulation.as_ref().unwrap();
        assert!(sim.ended.is_some() && !sim.turns.is_empty(), "{a:?}");
        assert_eq!(sim.user_model, "offline");
        assert!(sim.turns.len() <= 5);
    }
}
