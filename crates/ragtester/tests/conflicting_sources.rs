//! Sources that disagree, as a user plants and tests them: `docgen --conflicts` writes, beside each
//! planted handbook, an older edition with another filter interval and a bulletin with another overhaul
//! interval, in English and Chinese; the planted suite asks both facts; answers that give the superseded
//! value or hide the disagreement fail by rule and are attributed `stale_source` / `conflict_hidden`.

mod common;

use common::*;
use ragtester_core::{Answer, FailureCause, SourceConflict, TestCase, Verdict, read_jsonl};

#[test]
fn stale_and_conflicting_sources_are_planted_asked_and_attributed() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    for language in ["en", "zh"] {
        succeeds(
            bin()
                .args([
                    "docgen",
                    "--count",
                    "1",
                    "--conflicts",
                    "--language",
                    language,
                    "--out",
                ])
                .arg(&docs),
        );
    }
    // Each handbook comes with its older edition and a bulletin.
    let files = std::fs::read_dir(&docs).unwrap().count();
    assert_eq!(
        files,
        6 + 1,
        "three documents per language and the manifest"
    );
    let suite = tmp.path().join("suite.jsonl");
    succeeds(
        bin()
            .args(["generate", "--docs"])
            .arg(&docs)
            .args(["--strategy", "planted", "--n-test", "4", "--out"])
            .arg(&suite),
    );
    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    for language in ["en", "zh"] {
        let kinds: Vec<&SourceConflict> = cases
            .iter()
            .filter(|c| c.language == language)
            .filter_map(|c| c.conflict.as_ref())
            .collect();
        assert_eq!(kinds.len(), 2, "{language}: {kinds:?}");
        assert!(
            kinds
                .iter()
                .any(|k| matches!(k, SourceConflict::Superseded { .. }))
        );
        assert!(
            kinds
                .iter()
                .any(|k| matches!(k, SourceConflict::Disagreeing { .. }))
        );
    }
    let run = tmp.path().join("run");
    succeeds(
        bin()
            .args(["run", "--docs"])
            .arg(&docs)
            .arg("--suite")
            .arg(&suite)
            .arg("--out")
            .arg(&run)
            .args(["--retriever", "bm25", "--top-k", "3"]),
    );
    succeeds(bin().arg("judge").arg(&run));
    succeeds(bin().arg("report").arg(&run));
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    let mut causes = std::collections::HashSet::new();
    for v in &verdicts {
        let case = cases.iter().find(|c| c.id == v.case_id).unwrap();
        let Some(conflict) = &case.conflict else {
            continue;
        };
        let answer = answers.iter().find(|a| a.case_id == v.case_id).unwrap();
        // The rule and the verdict agree: a wronged conflict always fails, with its own cause.
        if let Some(why) = conflict.wronged_by(&answer.answer) {
            assert_eq!(v.passed, Some(false), "{why}");
            let cause = v.attribution.as_ref().unwrap().cause;
            let expected = match conflict {
                SourceConflict::Superseded { .. } => FailureCause::StaleSource,
                SourceConflict::Disagreeing { .. } => FailureCause::ConflictHidden,
            };
            assert_eq!(cause, expected, "{}", answer.answer);
            causes.insert((case.language.clone(), cause));
        }
    }
    // The offline reader follows the short rival documents: both causes show, the hidden conflict in
    // both languages.
    assert!(
        causes.contains(&("en".to_string(), FailureCause::StaleSource)),
        "{causes:?}"
    );
    for language in ["en", "zh"] {
        assert!(
            causes.contains(&(language.to_string(), FailureCause::ConflictHidden)),
            "{causes:?}"
        );
    }
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let counted = &summary["configs"][0]["causes"];
    assert!(counted["stale_source"].as_u64() >= Some(1), "{counted}");
    assert!(counted["conflict_hidden"].as_u64() >= Some(2), "{counted}");
}
