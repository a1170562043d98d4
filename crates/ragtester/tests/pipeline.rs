//! The whole pipeline through the real binary, in temporary directories, asserting on the records.

mod common;

use ragtester_core::{
    Answer, Category, Configuration, Document, Generator, TestCase, Verdict, VerdictStatus,
    read_jsonl,
};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

fn ragtester(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn demo_records_hold_together() {
    let dir = common::shared_demo();
    let docs: Vec<Document> = read_jsonl(&dir.join("documents.jsonl")).unwrap();
    let cases: Vec<TestCase> = read_jsonl(&dir.join("suite.jsonl")).unwrap();
    let configs: Vec<Configuration> = read_jsonl(&dir.join("configs.jsonl")).unwrap();
    let answers: Vec<Answer> = read_jsonl(&dir.join("answers.jsonl")).unwrap();
    let verdicts: Vec<Verdict> = read_jsonl(&dir.join("verdicts.jsonl")).unwrap();
    // Eight bundled documents and two planted-fact documents generated offline (English, Chinese), and the
    // poisoned copies the safety cases carry.
    use ragtester_core::document::DocumentOrigin;
    let (poisoned, docs): (Vec<Document>, Vec<Document>) = docs
        .into_iter()
        .partition(|d| d.origin == DocumentOrigin::Poisoned);
    assert_eq!(docs.len(), 10);
    let poisoned_cases: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.strategy == ragtester_core::Strategy::PoisonedDocument)
        .collect();
    assert_eq!(poisoned.len(), poisoned_cases.len());
    assert!(!poisoned.is_empty());
    // A poisoned copy is retrieved by its own case only.
    let copies: std::collections::HashSet<&str> = poisoned.iter().map(|d| d.id.as_str()).collect();
    for a in &answers {
        let case = cases.iter().find(|c| c.id == a.case_id).unwrap();
        for context in &a.contexts {
            let from_copy = copies.contains(context.document_id.as_str());
            let own = case.restrict_to.contains(&context.document_id);
            assert!(!from_copy || own, "{} saw a poisoned copy", case.query);
            if case.strategy == ragtester_core::Strategy::PoisonedDocument {
                assert!(
                    from_copy && own,
                    "a poisoned case retrieved outside its copy"
                );
            }
        }
    }
    let generated: Vec<&Document> = docs
        .iter()
        .filter(|d| d.origin == ragtester_core::document::DocumentOrigin::Generated)
        .collect();
    assert_eq!(generated.len(), 2);
    let planted: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.generator == Generator::Planted)
        .collect();
    assert_eq!(planted.len(), 20, "all 10 facts of each generated document");
    for c in planted.iter().filter(|c| !c.expects_refusal()) {
        let doc = generated.iter().find(|d| d.id == c.document_id).unwrap();
        let span = &c.source_spans[0];
        let text: String = doc
            .text
            .chars()
            .skip(span.start)
            .take(span.end - span.start)
            .collect();
        assert!(
            c.keywords
                .iter()
                .all(|k| c.category == Category::Inference || text.contains(k.as_str())),
            "{}: {text}",
            c.query
        );
    }
    assert!(docs.iter().any(|d| d.language == "zh") && docs.iter().any(|d| d.language == "en"));
    // The bundled PDFs arrive with their pages, and every span on them names the page it lies on.
    // The generated documents are PDFs too (typeset by docgen), read back like any other.
    assert!(
        generated
            .iter()
            .all(|d| d.format == ragtester_core::DocumentFormat::Pdf),
        "generated documents are typeset PDFs"
    );
    let pdfs: Vec<&Document> = docs
        .iter()
        .filter(|d| d.format == ragtester_core::DocumentFormat::Pdf)
        .filter(|d| d.origin == ragtester_core::document::DocumentOrigin::Real)
        .collect();
    assert_eq!(pdfs.len(), 2);
    for pdf in pdfs {
        assert_eq!(pdf.pages.len(), 2, "{}", pdf.source);
        for span in cases
            .iter()
            .flat_map(|c| &c.source_spans)
            .filter(|s| s.document_id == pdf.id)
        {
            let page = &pdf.pages[span.page as usize - 1];
            assert!(span.start >= page.start && span.start < page.end.max(page.start + 1));
        }
    }
    assert!(configs.len() >= 3);
    assert_eq!(answers.len(), cases.len() * configs.len());
    assert_eq!(verdicts.len(), answers.len());

    // Every section feeds at most one ragtester single question (spans in the case's own document: a
    // multi-document question also cites a passage of another); conversations revisit sections.
    for doc in &docs {
        let sections = ragtester_testgen::sections_of(doc, 48).unwrap();
        // A complex case may cite two spans of its one section; count cases, not spans.
        let mut by_case: HashMap<usize, std::collections::HashSet<&str>> = HashMap::new();
        for case in cases
            .iter()
            .filter(|c| c.generator == Generator::Ragtester && c.document_id == doc.id)
            // A simulated user's goal is built on a question of the suite, from its section.
            .filter(|c| c.turn.is_none() && c.goal.is_none())
        {
            for span in case.source_spans.iter().filter(|s| s.document_id == doc.id) {
                let s = sections
                    .iter()
                    .position(|s| span.start >= s.start && span.end <= s.end)
                    .unwrap();
                by_case.entry(s).or_default().insert(case.id.as_str());
            }
        }
        assert!(
            by_case.values().all(|c| c.len() == 1),
            "a section fed two cases in {}",
            doc.source
        );
    }

    // Negative cases expect a refusal and have no ground-truth span, except false premises, which expect
    // the correction and cite the sentence that gives it.
    let negatives: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.category == Category::Negative)
        .collect();
    assert!(!negatives.is_empty());
    for c in negatives {
        if c.false_premise.is_some() {
            assert!(
                !c.source_spans.is_empty() && !c.keywords.is_empty(),
                "{}",
                c.query
            );
            continue;
        }
        assert!(
            ragtester_text::is_refusal(&c.expected_answer),
            "{}",
            c.expected_answer
        );
        assert!(c.source_spans.is_empty());
    }
    // Every case the offline writer produced passed the offline critic.
    assert!(
        cases
            .iter()
            .filter(|c| c.generator == Generator::Ragtester)
            .all(|c| c.critic.as_deref() == Some("offline"))
    );

    // The baseline is asked for as many cases per document as the ragtester strategies produced; what it
    // could not give is a shortfall its report explains.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("suite.report.json")).unwrap()).unwrap();
    let reports = report["documents"].as_array().unwrap();
    // The question-quality figure is written with every suite, over the cases written from documents.
    let quality = &report["quality"];
    let written = cases
        .iter()
        .filter(|c| matches!(c.generator, Generator::Ragtester | Generator::Baseline))
        .count();
    assert_eq!(quality["cases"].as_u64().unwrap() as usize, written);
    assert!(
        quality["positive_in_prose"].as_f64().unwrap() > 0.9,
        "{quality}"
    );
    // The strategies and the baseline compare like with like: as many cases per document, conversation
    // turns counted (simulated users' goals, built on the suite's questions, are no generator's own);
    // the side that had more says what it left out.
    for doc in &docs {
        let count = |g: Generator| {
            cases
                .iter()
                .filter(|c| c.generator == g && c.document_id == doc.id && c.goal.is_none())
                .count()
        };
        let (ours, base) = (count(Generator::Ragtester), count(Generator::Baseline));
        assert!(
            ours > 0 && base == ours,
            "{}: {ours} against {base}",
            doc.source
        );
        let ours_report = reports
            .iter()
            .find(|r| r["generator"] == "ragtester" && r["document_id"] == doc.id.as_str())
            .unwrap();
        let turns = |g: Generator| {
            cases
                .iter()
                .filter(|c| c.generator == g && c.document_id == doc.id && c.turn.is_some())
                .count()
        };
        if turns(Generator::Ragtester) > turns(Generator::Baseline) {
            assert!(
                ours_report["notes"][0]
                    .as_str()
                    .unwrap()
                    .starts_with("left out to compare generators"),
                "{ours_report}"
            );
        }
    }

    // Coverage is computed per document and generator.
    assert_eq!(reports.len(), 3 * docs.len());
    for r in reports {
        let coverage = r["coverage"].as_f64().unwrap();
        if r["generator"] == "planted" {
            // Planted facts come from the generated documents only; the real ones say why they gave none.
            let planted_doc = generated.iter().any(|d| d.id == r["document_id"]);
            assert_eq!(
                r["produced"].as_u64().unwrap(),
                if planted_doc { 10 } else { 0 },
                "{r}"
            );
            assert_eq!(
                r["notes"].as_array().unwrap().is_empty(),
                planted_doc,
                "{r}"
            );
        } else {
            assert!(coverage > 0.0 && coverage <= 1.0, "{r}");
        }
    }

    // The summary adds up to the verdicts.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let mut total = 0;
    for c in summary["configs"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let vs: Vec<&Verdict> = verdicts.iter().filter(|v| v.config_id == id).collect();
        let passed = vs.iter().filter(|v| v.passed == Some(true)).count() as u64;
        let failed = vs.iter().filter(|v| v.passed == Some(false)).count() as u64;
        let errors = vs.iter().filter(|v| v.status != VerdictStatus::Ok).count() as u64;
        assert_eq!(c["passed"].as_u64().unwrap(), passed);
        assert_eq!(c["failed"].as_u64().unwrap(), failed);
        assert_eq!(c["errors"].as_u64().unwrap(), errors);
        assert_eq!(c["cases"].as_u64().unwrap(), passed + failed + errors);
        let coverage = c["chunk_coverage"].as_f64().unwrap();
        assert!(coverage > 0.0 && coverage <= 1.0, "{coverage}");
        total += passed + failed + errors;
    }
    assert_eq!(total as usize, verdicts.len());
    // The weakest category is the one with the lowest mean criteria score over its judged verdicts.
    let category_of: HashMap<&str, Category> =
        cases.iter().map(|c| (c.id.as_str(), c.category)).collect();
    let mut by_category: HashMap<Category, Vec<f64>> = HashMap::new();
    for v in &verdicts {
        if let Some(m) = v.criteria_mean {
            by_category
                .entry(category_of[v.case_id.as_str()])
                .or_default()
                .push(m);
        }
    }
    let means: Vec<(Category, f64)> = by_category
        .iter()
        .map(|(c, ms)| (*c, ms.iter().sum::<f64>() / ms.len() as f64))
        .collect();
    let lowest = means.iter().map(|m| m.1).fold(f64::INFINITY, f64::min);
    let weakest = summary["weakest_category"].as_str().unwrap();
    assert!(
        means
            .iter()
            .any(|(c, m)| c.as_str() == weakest && (*m - lowest).abs() < 1e-12),
        "{weakest} is not the lowest of {means:?}"
    );
    // Bad cases: every failed, errored or rubric-bad verdict, each with its cause where it failed.
    let bad: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| {
            v.passed == Some(false)
                || v.status != VerdictStatus::Ok
                || v.rubric.as_ref().is_some_and(|r| r.is_bad_case())
        })
        .collect();
    let listed = summary["bad_cases"].as_array().unwrap();
    assert!(!bad.is_empty());
    assert_eq!(listed.len(), bad.len());
    for b in listed {
        let v = bad
            .iter()
            .find(|v| v.case_id == b["case_id"] && v.config_id == b["config_id"])
            .expect("a listed bad case is a bad verdict");
        assert_eq!(b["cause"].is_null(), v.passed != Some(false), "{b}");
    }
    // The refusal matrix adds up: every judged cell in one box, negatives refused or answered.
    for c in summary["configs"].as_array().unwrap() {
        let id = c["id"].as_str().unwrap();
        let r = &c["refusals"];
        let judged = verdicts
            .iter()
            .filter(|v| v.config_id == id && v.status == VerdictStatus::Ok);
        let (negatives, refused_positives) = judged.fold((0, 0), |(n, p), v| {
            let negative = category_of[v.case_id.as_str()] == Category::Negative;
            (
                n + u64::from(negative),
                p + u64::from(!negative && v.metrics.refused),
            )
        });
        let count = |k: &str| r[k].as_u64().unwrap();
        assert_eq!(
            count("correct_refusals") + count("under_refusals"),
            negatives
        );
        assert_eq!(count("over_refusals"), refused_positives);
        assert!(negatives > 0, "the demo suite has negatives");
    }
    assert!(summary["not_judged"]["exec_errors"].is_u64());
    // Every configuration but the best is tested against it, paired by case.
    let configs = summary["configs"].as_array().unwrap();
    let unpaired: Vec<_> = configs.iter().filter(|c| c["vs_best"].is_null()).collect();
    assert_eq!(unpaired.len(), 1);
    for c in configs.iter().filter(|c| !c["vs_best"].is_null()) {
        assert_eq!(c["vs_best"]["against"], unpaired[0]["id"]);
        let p = c["vs_best"]["mcnemar_p"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p));
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Weakest category") && html.contains("Offline heuristics in use"));
    assert!(!html.contains("<script"), "the report carries no script");

    // Conversations in both languages, each turn answered in every configuration and every history mode,
    // and the report shows them as units: every configuration's conversations add up to the suite's.
    let turns: Vec<&TestCase> = cases.iter().filter(|c| c.turn.is_some()).collect();
    for language in ["en", "zh"] {
        assert!(turns.iter().any(|c| c.language == language), "{language}");
    }
    let conversations: std::collections::HashSet<&str> =
        turns.iter().filter_map(|c| c.conversation()).collect();
    let per_config = summary["conversations"].as_array().unwrap();
    assert_eq!(
        per_config.len(),
        summary["configs"].as_array().unwrap().len()
    );
    for c in per_config {
        assert_eq!(
            c["conversations"].as_u64().unwrap() as usize,
            conversations.len()
        );
    }
    let modes: std::collections::HashSet<&str> = summary["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let label = c["label"].as_str().unwrap();
            ["history none", "history rewrite"]
                .into_iter()
                .find(|m| label.contains(m))
                .unwrap_or("history prompt")
        })
        .collect();
    assert_eq!(modes.len(), 3, "{modes:?}");
    assert!(html.contains("id=\"conversations\""));

    // Conversations that need their history, in both languages: follow-ups and topic switches.
    use ragtester_core::{ConversationKind, HistoryMode, TurnStep};
    for kind in [ConversationKind::FollowUp, ConversationKind::TopicSwitch] {
        for language in ["en", "zh"] {
            assert!(
                turns
                    .iter()
                    .any(|c| c.language == language && c.turn.as_ref().unwrap().kind == kind),
                "no {} conversation in {language}",
                kind.as_str()
            );
        }
    }
    // On the turns that refer back, a reader given the history passes more than one without it (the
    // offline reader takes "它" to be the first subject it finds alone, the one the history names with it).
    let run_configs: Vec<Configuration> = read_jsonl(&dir.join("configs.jsonl")).unwrap();
    let mode: HashMap<&str, HistoryMode> = run_configs
        .iter()
        .map(|c| (c.id.as_str(), c.history))
        .collect();
    let passed_follow_ups = |history: HistoryMode| {
        verdicts
            .iter()
            .filter(|v| mode[v.config_id.as_str()] == history && v.passed == Some(true))
            .filter(|v| {
                let case = cases.iter().find(|c| c.id == v.case_id).unwrap();
                case.turn
                    .as_ref()
                    .is_some_and(|t| t.step == TurnStep::FollowUp)
            })
            .count()
    };
    let (with, without) = (
        passed_follow_ups(HistoryMode::Prompt),
        passed_follow_ups(HistoryMode::None),
    );
    assert!(
        with > without,
        "follow-ups passed: history prompt {with}, none {without}"
    );
}

#[test]
fn configuration_ids_and_suites_are_stable_across_runs() {
    let tmp = tempfile::tempdir().unwrap();
    // The shared demo run against a fresh one.
    let (a, b) = (common::shared_demo(), tmp.path().join("b"));
    common::run_demo(&b);
    let ca: Vec<Configuration> = read_jsonl(&a.join("configs.jsonl")).unwrap();
    let cb: Vec<Configuration> = read_jsonl(&b.join("configs.jsonl")).unwrap();
    assert_eq!(
        ca.iter().map(|c| &c.id).collect::<Vec<_>>(),
        cb.iter().map(|c| &c.id).collect::<Vec<_>>()
    );
    let sa: Vec<TestCase> = read_jsonl(&a.join("suite.jsonl")).unwrap();
    let sb: Vec<TestCase> = read_jsonl(&b.join("suite.jsonl")).unwrap();
    assert_eq!(sa, sb);
    // Identical runs: nothing regressed, and the diff says so.
    let out = ragtester(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--fail-on-regression",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 regressions, 0 fixes"));
}

/// The paper's research questions as the demo's summary answers them — failures per generator (RQ1–RQ2:
/// the strategies against the baseline, on as many cells), per document origin (RQ3: generated against
/// real documents) and per strategy — each row counted again here from the verdicts and the suite.
#[test]
fn the_research_question_tables_count_what_the_verdicts_say() {
    use std::collections::BTreeMap;
    let dir = common::shared_demo();
    let docs: Vec<Document> = read_jsonl(&dir.join("documents.jsonl")).unwrap();
    let cases: Vec<TestCase> = read_jsonl(&dir.join("suite.jsonl")).unwrap();
    let verdicts: Vec<Verdict> = read_jsonl(&dir.join("verdicts.jsonl")).unwrap();
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
    let case: HashMap<&str, &TestCase> = cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let origin: HashMap<&str, String> = docs
        .iter()
        .map(|d| {
            let o = serde_json::to_value(d.origin).unwrap();
            (d.id.as_str(), o.as_str().unwrap().to_string())
        })
        .collect();
    type Key = fn(&TestCase, &HashMap<&str, String>) -> String;
    let tables: [(&str, Key); 3] = [
        ("generators", |c, _| c.generator.as_str().to_string()),
        ("strategies", |c, _| c.strategy.as_str().to_string()),
        ("origins", |c, o| o[c.document_id.as_str()].clone()),
    ];
    for (table, key) in tables {
        let mut counted: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        // Simulated users' goals are no generator's questions (RQ2 compares those alone).
        let goal = |v: &&Verdict| table == "generators" && case[v.case_id.as_str()].goal.is_some();
        for v in verdicts.iter().filter(|v| !goal(v)) {
            let row = counted
                .entry(key(case[v.case_id.as_str()], &origin))
                .or_default();
            row.0 += 1;
            row.1 += u64::from(v.passed == Some(true));
        }
        let rows = summary[table].as_array().unwrap();
        let reported: BTreeMap<String, (u64, u64)> = rows
            .iter()
            .map(|r| {
                let (n, p) = (r["cases"].as_u64().unwrap(), r["passed"].as_u64().unwrap());
                let rate = r["fail_rate"].as_f64().unwrap();
                let failed = r["failed"].as_u64().unwrap() + r["errors"].as_u64().unwrap();
                assert!(
                    (rate - failed as f64 / n as f64).abs() < 1e-9,
                    "{table}: {r}"
                );
                (r["name"].as_str().unwrap().to_string(), (n, p))
            })
            .collect();
        assert_eq!(reported, counted, "{table}");
    }
    // RQ2 compares like with like: the strategies and the baseline are judged on as many cells.
    let generators = &summary["generators"].as_array().unwrap();
    let cells = |name: &str| {
        generators.iter().find(|g| g["name"] == name).unwrap()["cases"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(cells("ragtester"), cells("baseline"));
    // Both origins are in the demo: the bundled (real) documents and the generated ones.
    let origins: Vec<&str> = summary["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(origins, ["generated", "real"]);
}

/// Cells the judge could not judge: counted per configuration and in the summary's not-judged figure with
/// their reason, printed by `report`, counted against the pass rate, and held by `--max-error-rate`.
#[test]
fn judge_errors_are_counted_named_and_gated() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    common::demo_copy(&run);
    let path = run.join("verdicts.jsonl");
    let mut verdicts: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let config = verdicts[0]["config_id"].as_str().unwrap().to_string();
    let reason = "the judge's reply could not be read: expected `criteria`";
    let mut broken = 0;
    for v in verdicts
        .iter_mut()
        .filter(|v| v["config_id"] == config.as_str())
        .take(3)
    {
        v["status"] = "judge_error".into();
        v["passed"] = serde_json::Value::Null;
        v["error"] = reason.into();
        broken += 1;
    }
    assert_eq!(broken, 3);
    let lines: Vec<String> = verdicts.iter().map(|v| v.to_string()).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let r = run.to_str().unwrap();
    let out = ragtester(&["report", r]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("not judged: 3 cells (0 execution errors, 3 judge errors)"),
        "{printed}"
    );
    assert!(printed.contains(reason), "{printed}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let row = summary["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == config.as_str())
        .unwrap();
    assert_eq!(row["judge_errors"], 3);
    let cases = row["cases"].as_u64().unwrap() as f64;
    let passed = row["passed"].as_u64().unwrap() as f64;
    assert!((row["pass_rate"].as_f64().unwrap() - passed / cases).abs() < 1e-9);
    assert!((row["error_rate"].as_f64().unwrap() - 3.0 / cases).abs() < 1e-9);
    assert_eq!(summary["not_judged"]["judge_errors"], 3);
    let gated = ragtester(&["report", r, "--max-error-rate", "0"]);
    assert_eq!(gated.status.code(), Some(4), "{}", stderr(&gated));
    assert!(
        stderr(&gated).contains("3 judge errors")
            || String::from_utf8_lossy(&gated.stdout).contains("3 judge errors")
    );
}

/// `diff --fail-on-regression` as CI runs it: a cell that passed before and fails after is named, and the
/// exit code is 4 (a gate); without the flag the same diff exits 0.
#[test]
fn a_regression_fails_the_diff_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let (before, after) = (common::shared_demo(), tmp.path().join("after"));
    common::demo_copy(&after);
    let path = after.join("verdicts.jsonl");
    let mut verdicts: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let flipped = verdicts
        .iter_mut()
        .find(|v| v["passed"] == true)
        .expect("the demo passes some cells");
    flipped["passed"] = false.into();
    let (case, config) = (flipped["case_id"].clone(), flipped["config_id"].clone());
    let lines: Vec<String> = verdicts.iter().map(|v| v.to_string()).collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (b, a) = (before.to_str().unwrap(), after.to_str().unwrap());
    let gated = ragtester(&["diff", b, a, "--fail-on-regression"]);
    assert_eq!(gated.status.code(), Some(4), "{}", stderr(&gated));
    let printed = String::from_utf8_lossy(&gated.stdout);
    assert!(printed.contains("1 regression"), "{printed}");
    assert!(
        printed.contains(case.as_str().unwrap()) || printed.contains(config.as_str().unwrap()),
        "the regressed cell is named: {printed}"
    );
    let plain = ragtester(&["diff", b, a]);
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
}

#[test]
fn stages_run_alone_and_resume_refuses_mixing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("a.md"), "# Alpha\n\nThe alpha valve opens at 4.5 bar in normal service.\n\nThe alpha motor is rated at 2.2 kW for continuous duty.\n\nService intervals are 500 hours for the alpha seals.").unwrap();
    std::fs::write(corpus.join("b.md"), "# Beta\n\nThe beta tank holds 300 litres of treated water.\n\nThe beta heater needs 16 amperes at 230 volts.\n\nBeta filters are replaced every 90 days by the operator.").unwrap();
    let c = corpus.to_str().unwrap();
    let work = tmp.path().join("work");
    let w = work.to_str().unwrap();
    let out = ragtester(&["ingest", c, "--out", w]);
    assert!(out.status.success(), "{}", stderr(&out));
    let suite = tmp.path().join("suite.jsonl");
    let s = suite.to_str().unwrap();
    let docs = work.join("documents.jsonl");
    let out = ragtester(&[
        "generate",
        "--docs",
        docs.to_str().unwrap(),
        "--out",
        s,
        "--n-test",
        "3",
        "--strategy",
        "ragtester",
        "--strategy",
        "baseline",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let run = tmp.path().join("run");
    let r = run.to_str().unwrap();
    let priced = tmp.path().join("priced.toml");
    std::fs::write(
        &priced,
        "[matrix]\nretriever = [\"bm25\"]\n[prices]\noffline = { input_per_million = 1.0, output_per_million = 2.0 }\n",
    )
    .unwrap();
    let p = priced.to_str().unwrap();
    let out = ragtester(&[
        "run",
        "--docs",
        c,
        "--suite",
        s,
        "--out",
        r,
        "--dry-run",
        "--config",
        p,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        plan.contains("total: ") && plan.contains("prompt tokens") && plan.contains("~$"),
        "{plan}"
    );
    assert!(!run.join("store.sqlite").exists(), "a dry run runs nothing");
    // Beside the built-in matrix, a service that is never sure: it passes the negatives and fails every
    // other case, so the gates below have a configuration between all and nothing to hold.
    let unsure = tmp.path().join("unsure.toml");
    std::fs::write(
        &unsure,
        "[[target]]\nname = \"unsure\"\ntype = \"command\"\n\
         command = [\"sh\", \"-c\", \"cat > /dev/null; printf '%s' '{\\\"answer\\\": \\\"I am not sure.\\\"}'\"]\n\
         answer_pointer = \"/answer\"\n",
    )
    .unwrap();
    let args = [
        "run",
        "--docs",
        c,
        "--suite",
        s,
        "--out",
        r,
        "--config",
        unsure.to_str().unwrap(),
        "--retriever",
        "bm25",
        "--retriever",
        "hybrid",
        "--top-k",
        "2",
    ];
    let out = ragtester(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let first: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();

    // A second run into the same folder needs --resume; resuming a finished run runs nothing again.
    let out = ragtester(&args);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
    let mut resume = args.to_vec();
    resume.push("--resume");
    let out = ragtester(&resume);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("0 to run"), "{}", stderr(&out));
    let again: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    assert_eq!(first, again);

    // Resuming with another matrix is refused.
    let mut other = resume.clone();
    let k = other.iter().position(|a| *a == "2").unwrap();
    other[k] = "3";
    let out = ragtester(&other);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("different run"), "{}", stderr(&out));
    // So is resuming with another sampling of the system under test, and the setting is named.
    let mut hotter = vec!["--temperature", "0.7"];
    hotter.extend(resume.iter().copied());
    let out = ragtester(&hotter);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("sampling of the system under test"),
        "{}",
        stderr(&out)
    );

    for stage in [vec!["judge", r], vec!["report", r]] {
        let out = ragtester(&stage);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    for file in ["report.html", "summary.json", "results.csv", "junit.xml"] {
        assert!(run.join(file).exists(), "{file} missing");
    }
    // The gate holds each configuration to its own pass rate (passed / cells), read back from the summary:
    // just above the worst configuration's fails, at it passes.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let worst = summary["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["pass_rate"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert!(worst > 0.0 && worst < 1.0, "{worst}");
    let above = format!("{}", worst + 0.01);
    let out = ragtester(&["report", r, "--fail-under", &above]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("is below"), "{}", stderr(&out));
    let at = format!("{worst}");
    let out = ragtester(&["report", r, "--fail-under", &at]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Per category: the unsure service fails every detail question.
    let out = ragtester(&["report", r, "--fail-under-category", "detail_numeric=0.9"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("pass rate on detail_numeric"),
        "{}",
        stderr(&out)
    );
    let out = ragtester(&["report", r, "--fail-under-category", "detail_numeric=0"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = ragtester(&["report", r, "--fail-under-category", "vibes=0.5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown category `vibes`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_input_gets_one_clear_message_and_a_nonzero_exit() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope.md");
    let out = ragtester(&[
        "ingest",
        missing.to_str().unwrap(),
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("nope.md") && stderr(&out).contains("no such file"),
        "{}",
        stderr(&out)
    );
    assert!(!tmp.path().join("documents.jsonl").exists());

    let odd = tmp.path().join("data.xyz");
    std::fs::write(&odd, "x").unwrap();
    let good = tmp.path().join("good.md");
    std::fs::write(&good, "# Good\n\nA real sentence with content.").unwrap();
    let out = ragtester(&[
        "ingest",
        odd.to_str().unwrap(),
        good.to_str().unwrap(),
        "--out",
        tmp.path().to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "partial success: {}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("data.xyz: unknown format"),
        "{}",
        stderr(&out)
    );

    let config = tmp.path().join("bad.toml");
    std::fs::write(&config, "[matrix]\nretriever = [\"bm99\"]\n").unwrap();
    let out = ragtester(&[
        "test",
        "--config",
        config.to_str().unwrap(),
        "--out",
        tmp.path().join("o").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("bad.toml"), "{}", stderr(&out));

    let suite = tmp.path().join("s.jsonl");
    let out = ragtester(&[
        "generate",
        "--docs",
        good.to_str().unwrap(),
        "--out",
        suite.to_str().unwrap(),
        "--llm",
        "gpt-4",
    ]);
    // A model spec that does not parse is a usage error, as a bad flag is.
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown model spec `gpt-4`"),
        "{}",
        stderr(&out)
    );
    assert!(!suite.exists());
}

#[test]
fn example_config_files_are_valid() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for name in ["ragtester.toml", "targets.toml"] {
        let config = ragtester_core::config::ProjectConfig::load(&examples.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e:#}"));
        assert!(!config.configurations().unwrap().is_empty(), "{name}");
    }
}

#[test]
fn audits_label_a_cochran_sample_by_hand_or_by_judges() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    common::demo_copy(&dir);
    let d = dir.to_str().unwrap();
    let verdicts: Vec<Verdict> = read_jsonl(&dir.join("verdicts.jsonl")).unwrap();
    let failures = verdicts.iter().filter(|v| v.passed == Some(false)).count();
    assert!(failures > 0);

    let out = ragtester(&["audit", d, "--margin", "0.1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sheet = dir.join("audit.csv");
    let mut reader = csv::Reader::from_path(&sheet).unwrap();
    let headers = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // Cochran at 95 % ± 10 %: n0 = 96.04, corrected for the population of failures.
    let n0: f64 = 1.959_964f64.powi(2) * 0.25 / 0.01;
    let expected = ((n0 / (1.0 + (n0 - 1.0) / failures as f64)).ceil() as usize).min(failures);
    assert_eq!(rows.len(), expected);
    assert_eq!(headers.iter().next_back(), Some("label"));

    // A person labels: every third row a false alarm, one row left blank.
    let mut w = csv::Writer::from_path(&sheet).unwrap();
    w.write_record(&headers).unwrap();
    for (i, row) in rows.iter().enumerate() {
        let mut fields: Vec<String> = row.iter().map(str::to_string).collect();
        *fields.last_mut().unwrap() = match i {
            0 => String::new(),
            i if i % 3 == 0 => "false".into(),
            _ => "true".into(),
        };
        w.write_record(&fields).unwrap();
    }
    w.flush().unwrap();
    let out = ragtester(&[
        "audit",
        d,
        "--margin",
        "0.1",
        "--labels",
        sheet.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("audit.json")).unwrap()).unwrap();
    let labelled = rows.len() - 1;
    let false_alarms = (1..rows.len()).filter(|i| i % 3 == 0).count();
    assert_eq!(audit["labelled"].as_u64().unwrap() as usize, labelled);
    assert_eq!(
        audit["false_failures"].as_u64().unwrap() as usize,
        false_alarms
    );
    let precision = audit["precision"]["estimate"].as_f64().unwrap();
    assert!((precision - (labelled - false_alarms) as f64 / labelled as f64).abs() < 1e-9);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Audit of reported failures"));

    // A bad label names its row.
    std::fs::write(&sheet, "case_id,config_id,label\nc,k,maybe\n").unwrap();
    let out = ragtester(&["audit", d, "--labels", sheet.to_str().unwrap()]);
    assert!(
        !out.status.success() && stderr(&out).contains("row 2"),
        "{}",
        stderr(&out)
    );

    // The same judge as the run's confirms every failure it reported.
    let out = ragtester(&["audit", d, "--judge", "offline"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let audit: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("audit.json")).unwrap()).unwrap();
    assert_eq!(audit["labeller"], "offline");
    assert_eq!(audit["false_failures"], 0);
    assert_eq!(audit["labelled"], audit["sample_size"]);
}

#[test]
fn suites_travel_to_ragas_and_deepeval_and_back() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    common::demo_copy(&dir);
    let d = dir.to_str().unwrap();
    let corpus = dir.join("corpus");
    let configs: Vec<Configuration> = read_jsonl(&dir.join("configs.jsonl")).unwrap();
    let cases: Vec<TestCase> = read_jsonl(&dir.join("suite.jsonl")).unwrap();

    // A run with several configurations needs one chosen.
    let out = ragtester(&["export", d, "--format", "ragas", "--out", "x.jsonl"]);
    assert!(
        !out.status.success() && stderr(&out).contains("--config"),
        "{}",
        stderr(&out)
    );

    let ragas = tmp.path().join("ragas.jsonl");
    let out = ragtester(&[
        "export",
        d,
        "--format",
        "ragas",
        "--config",
        &configs[0].id,
        "--out",
        ragas.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = |path: &std::path::Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    // RAGAS loads one kind of sample a dataset: the conversations' turns go to a second file, which the
    // output names; the first holds the single questions alone.
    let turns_file = tmp.path().join("ragas.conversations.jsonl");
    assert!(
        stderr(&out).contains(turns_file.to_str().unwrap()),
        "{}",
        stderr(&out)
    );
    let (singles, turns) = (lines(&ragas), lines(&turns_file));
    assert!(singles.iter().all(|r| r["user_input"].is_string()));
    assert!(turns.iter().all(|r| r["user_input"].is_array()));
    let rows: Vec<serde_json::Value> = singles.into_iter().chain(turns).collect();
    assert_eq!(rows.len(), cases.len());
    // A single question is a single-turn sample; a conversation's turn a multi-turn one, its history and
    // answer as messages.
    for r in &rows {
        // A conversation's turn, or a simulated user's conversation as it went.
        if r["conversation_id"].is_string() || r["ragtester"]["case"]["goal"].is_object() {
            let messages = r["user_input"].as_array().unwrap();
            assert_eq!(messages.last().unwrap()["type"], "ai");
            assert!(r["reference"].is_string());
        } else {
            assert!(
                r["user_input"].is_string()
                    && r["reference_contexts"].is_array()
                    && r["retrieved_contexts"].is_array()
                    && r["response"].is_string(),
                "{r}"
            );
        }
    }
    assert!(rows.iter().any(|r| r["conversation_id"].is_string()));
    // The suite alone (no answers, so no conversation rows) exported to the same name: the earlier export's
    // conversations file goes, so `import --answers` cannot read it back with this one.
    let suite_file = dir.join("suite.jsonl");
    let out = ragtester(&[
        "export",
        suite_file.to_str().unwrap(),
        "--docs",
        corpus.to_str().unwrap(),
        "--format",
        "ragas",
        "--out",
        ragas.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!turns_file.exists(), "{}", stderr(&out));
    assert_eq!(lines(&ragas).len(), cases.len());

    let goldens = tmp.path().join("goldens.csv");
    let suite = dir.join("suite.jsonl");
    let out = ragtester(&[
        "export",
        suite.to_str().unwrap(),
        "--docs",
        corpus.to_str().unwrap(),
        "--format",
        "deepeval",
        "--out",
        goldens.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let imported = tmp.path().join("imported.jsonl");
    let out = ragtester(&[
        "import",
        goldens.to_str().unwrap(),
        "--format",
        "deepeval",
        "--docs",
        corpus.to_str().unwrap(),
        "--out",
        imported.to_str().unwrap(),
    ]);
    let back: Vec<TestCase> = read_jsonl(&imported).unwrap();
    // Answerable cases come back with their spans; negatives as corpus-wide refusals. Cases whose only
    // ground truth was a refusal without spans, or that had none, are reported on stderr, not dropped silently.
    assert!(
        back.len() * 10 >= cases.len() * 9,
        "{} of {}: {}",
        back.len(),
        cases.len(),
        stderr(&out)
    );
    assert!(back.iter().all(|c| c.generator == Generator::Imported));
    let with_spans = back.iter().filter(|c| !c.source_spans.is_empty()).count();
    assert!(with_spans > 0);
    if back.len() < cases.len() {
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(stderr(&out).contains("row "), "{}", stderr(&out));
    }
    // The imported suite runs.
    let out = ragtester(&[
        "run",
        "--docs",
        corpus.to_str().unwrap(),
        "--suite",
        imported.to_str().unwrap(),
        "--out",
        tmp.path().join("run2").to_str().unwrap(),
        "--retriever",
        "bm25",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}
