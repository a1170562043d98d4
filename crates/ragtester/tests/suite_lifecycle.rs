//! A suite that lives as long as its documents, through the real binary: `generate --update` after a fact
//! is edited, a section removed and one added (an English and a Chinese document); a document that no
//! longer parses; `diff` across the suite versions; `run --repeat` against a target whose answers vary.

mod common;

use common::{bin, corpus, succeeds};
use ragtester_core::{Document, Generator, TestCase, read_jsonl};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn copy_corpus(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

/// `generate` with six single questions per document and no conversations, and these flags.
fn generate(docs: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    succeeds(&mut generating(docs, out, extra))
}

fn generating(docs: &Path, out: &Path, extra: &[&str]) -> std::process::Command {
    let mut command = bin();
    command.args([
        "generate",
        "--docs",
        docs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--conversations",
        "0",
    ]);
    if !extra.contains(&"--n-test") {
        command.args(["--n-test", "6"]);
    }
    command.args(extra);
    command
}

/// The bundled corpus copied twice (before and after an edit), and the suite generated from the first.
fn two_corpora() -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let (before_docs, after_docs) = (tmp.path().join("before"), tmp.path().join("after"));
    copy_corpus(&before_docs);
    copy_corpus(&after_docs);
    let v1 = tmp.path().join("v1.jsonl");
    generate(&before_docs, &v1, &[]);
    (tmp, before_docs, after_docs, v1)
}

/// The chars of a document's text a span covers.
fn text_of(doc: &Document, start: usize, end: usize) -> String {
    doc.slice(start, end)
}

/// The edits made to one Markdown document, and which earlier cases they should touch.
struct Edit {
    file: &'static str,
    /// The sentence edited, before and after.
    sentence: String,
    edited: String,
    /// The figure the edited sentence now gives.
    figure: String,
    added: &'static str,
    rewritten: BTreeSet<String>,
    retired: BTreeSet<String>,
}

/// Edit a fact a single-span case was written from, remove another section holding a case, and add a
/// section; work out which earlier cases must be rewritten and which retired.
fn edit(
    dir: &Path,
    file: &'static str,
    added: &'static str,
    cases: &[TestCase],
    docs: &[Document],
) -> Edit {
    let path = dir.join(file);
    let raw = std::fs::read_to_string(&path).unwrap();
    let doc = docs
        .iter()
        .find(|d| d.source.ends_with(file))
        .expect("the snapshot holds the document");
    let own: Vec<&TestCase> = cases.iter().filter(|c| c.document_id == doc.id).collect();
    let span_texts = |c: &TestCase| -> Vec<String> {
        c.source_spans
            .iter()
            .filter(|s| s.document_id == doc.id)
            .map(|s| text_of(doc, s.start, s.end))
            .collect()
    };
    // The fact: a figure in a sentence one single question was written from.
    let (sentence, range) = own
        .iter()
        .filter(|c| c.generator != Generator::Planted)
        .filter(|c| c.source_spans.len() == 1 && c.injected_documents.is_empty())
        .map(|c| (span_texts(c)[0].clone(), &c.source_spans[0]))
        .find(|(t, _)| {
            t.chars().any(|ch| ch.is_ascii_digit()) && raw.matches(t.as_str()).count() == 1
        })
        .expect("a case written from a sentence with a figure");
    let range = (range.start, range.end);
    let digits: String = sentence
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    let figure = (digits.parse::<u64>().unwrap() + 1).to_string();
    let edited = sentence.replacen(&digits, &figure, 1);
    // A section whose text holds no part of the edited sentence and at least one case's span.
    let blocks: Vec<&str> = raw.split("\n## ").collect();
    let removed = blocks[1..]
        .iter()
        .rev()
        .find(|b| {
            !b.contains(sentence.as_str())
                && own
                    .iter()
                    .any(|c| span_texts(c).iter().any(|t| b.contains(t.as_str())))
        })
        .expect("a section holding a case");
    let removed_block = format!("\n## {removed}");
    let text = raw
        .replacen(&removed_block, "", 1)
        .replacen(&sentence, &edited, 1)
        + added;
    std::fs::write(&path, text).unwrap();
    let mut retired = BTreeSet::new();
    let mut rewritten = BTreeSet::new();
    for c in &own {
        if span_texts(c).iter().any(|t| removed.contains(t.as_str())) {
            retired.insert(c.id.clone());
        } else if c
            .source_spans
            .iter()
            .any(|s| s.overlaps(&doc.id, range.0, range.1))
        {
            rewritten.insert(c.id.clone());
        }
    }
    Edit {
        file,
        sentence,
        edited,
        figure,
        added,
        rewritten,
        retired,
    }
}

fn report_of(suite: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(suite.with_extension("report.json")).unwrap())
        .unwrap()
}

fn run_and_judge(docs: &Path, suite: &Path, out: &Path, extra: &[&str]) {
    let mut command = bin();
    command.args([
        "run",
        "--docs",
        docs.to_str().unwrap(),
        "--suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    succeeds(command.args(extra));
    succeeds(bin().args(["judge", out.to_str().unwrap()]));
}

#[test]
fn an_update_keeps_untouched_cases_rewrites_the_edited_fact_retires_and_adds_and_diff_sets_them_apart()
 {
    let (tmp, before_docs, after_docs, v1) = two_corpora();
    let cases: Vec<TestCase> = read_jsonl(&v1).unwrap();
    let snapshot: Vec<Document> = read_jsonl(&v1.with_extension("documents.jsonl")).unwrap();
    assert!(
        cases
            .iter()
            .all(|c| c.source_spans.iter().all(|s| s.hash.is_some()))
    );
    let edits = [
        edit(
            &after_docs,
            "harbor-pump-manual.md",
            "\n## Service life\n\nThe HX-40 is designed for a service life of 9,400 operating hours at full load.\n",
            &cases,
            &snapshot,
        ),
        edit(
            &after_docs,
            "qinghe-library-rules.md",
            "\n## 夜间还书\n\n总馆东门设有夜间自助还书机，每台机器每小时最多可处理图书260册。\n",
            &cases,
            &snapshot,
        ),
    ];
    for e in &edits {
        assert!(
            !e.rewritten.is_empty(),
            "{}: a case is drawn from «{}»",
            e.file,
            e.sentence
        );
        assert!(
            !e.retired.is_empty(),
            "{}: a case is drawn from the removed section",
            e.file
        );
    }
    let v1_bytes = std::fs::read(&v1).unwrap();
    // An update never writes over the suite it updates.
    let refused = bin()
        .args(["generate", "--docs", after_docs.to_str().unwrap()])
        .args([
            "--update",
            v1.to_str().unwrap(),
            "--out",
            v1.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("never writes over"));
    let v2 = tmp.path().join("v2.jsonl");
    generate(&after_docs, &v2, &["--update", v1.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(&v1).unwrap(),
        v1_bytes,
        "the earlier suite is untouched"
    );
    let updated: Vec<TestCase> = read_jsonl(&v2).unwrap();
    let now_docs: Vec<Document> = read_jsonl(&v2.with_extension("documents.jsonl")).unwrap();
    let rewritten: BTreeSet<String> = edits.iter().flat_map(|e| e.rewritten.clone()).collect();
    let retired: BTreeSet<String> = edits.iter().flat_map(|e| e.retired.clone()).collect();
    // Every untouched case keeps its id and its text.
    for c in cases
        .iter()
        .filter(|c| !rewritten.contains(&c.id) && !retired.contains(&c.id))
    {
        let kept = updated
            .iter()
            .find(|u| u.id == c.id)
            .unwrap_or_else(|| panic!("{} kept", c.id));
        assert_eq!(
            (&kept.query, &kept.expected_answer),
            (&c.query, &c.expected_answer)
        );
        assert!(kept.stale.is_none());
    }
    // Exactly the cases drawn from the edited fact are written again, with the new figure.
    for e in &edits {
        for old in &e.rewritten {
            assert!(updated.iter().all(|u| u.id != *old), "{old} replaced");
            let new = updated
                .iter()
                .find(|u| u.lineage.as_deref() == Some(old.as_str()))
                .unwrap_or_else(|| panic!("{}: {old} written again from «{}»", e.file, e.edited));
            assert!(
                new.expected_answer.contains(&e.figure),
                "{}: «{}» gives {}",
                e.file,
                new.expected_answer,
                e.figure
            );
        }
    }
    let lineages: BTreeSet<&str> = updated
        .iter()
        .filter_map(|u| u.lineage.as_deref())
        .collect();
    assert_eq!(lineages, rewritten.iter().map(String::as_str).collect());
    assert!(retired.iter().all(|id| updated.iter().all(|u| u.id != *id)));
    // The report lists each change with its reason; new cases ask about the added sections.
    let report = report_of(&v2);
    let changes = report["update"]["cases"].as_array().unwrap();
    let of_kind = |kind: &str| -> BTreeSet<String> {
        changes
            .iter()
            .filter(|c| c["change"] == kind)
            .map(|c| {
                c["previous_id"]
                    .as_str()
                    .or(c["case_id"].as_str())
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(of_kind("rewritten"), rewritten);
    assert_eq!(of_kind("retired"), retired);
    assert!(of_kind("stale").is_empty());
    let new = of_kind("new");
    for e in &edits {
        let doc = now_docs
            .iter()
            .find(|d| d.source.ends_with(e.file))
            .unwrap();
        let asked: Vec<&TestCase> = updated
            .iter()
            .filter(|u| new.contains(&u.id) && u.document_id == doc.id)
            .collect();
        assert!(
            !asked.is_empty(),
            "{}: the new section is asked about",
            e.file
        );
        for c in asked {
            for s in &c.source_spans {
                let text = text_of(doc, s.start, s.end);
                assert!(
                    e.added.contains(text.trim()),
                    "{}: «{text}» is new text",
                    e.file
                );
            }
        }
    }
    // Runs before and after: the diff names each change apart from regressions.
    let (before_run, after_run) = (tmp.path().join("run-before"), tmp.path().join("run-after"));
    let axes = ["--retriever", "bm25", "--top-k", "3"];
    run_and_judge(&before_docs, &v1, &before_run, &axes);
    run_and_judge(&after_docs, &v2, &after_run, &axes);
    let json = tmp.path().join("diff.json");
    let md = tmp.path().join("diff.md");
    succeeds(bin().args([
        "diff",
        before_run.to_str().unwrap(),
        after_run.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]));
    let diff: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let apart = |kind: &str| -> BTreeSet<String> {
        diff["suite_changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == kind)
            .map(|c| c["lineage"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(apart("rewritten"), rewritten);
    assert_eq!(apart("retired"), retired);
    assert_eq!(apart("new"), new);
    let regressed: BTreeSet<String> = diff["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["case_id"].as_str().unwrap().to_string())
        .collect();
    assert!(
        regressed.is_disjoint(&rewritten)
            && regressed.is_disjoint(&retired)
            && regressed.is_disjoint(&new)
    );
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.contains("**rewritten**") && text.contains("**retired**") && text.contains("**new**")
    );
}

#[test]
fn a_question_the_documents_could_not_answer_retires_once_they_do_and_a_short_new_fact_is_asked_about()
 {
    let (tmp, _, after_docs, v1) = two_corpora();
    let cases: Vec<TestCase> = read_jsonl(&v1).unwrap();
    let snapshot: Vec<Document> = read_jsonl(&v1.with_extension("documents.jsonl")).unwrap();
    // A negative of an English Markdown document: its document now states the answer.
    let negative = cases
        .iter()
        .find(|c| {
            c.expects_refusal()
                && c.language == "en"
                && snapshot
                    .iter()
                    .any(|d| d.id == c.document_id && d.source.ends_with(".md"))
        })
        .expect("the suite has an English negative of a Markdown document");
    let doc = snapshot
        .iter()
        .find(|d| d.id == negative.document_id)
        .unwrap();
    let file = Path::new(&doc.source).file_name().unwrap().to_owned();
    let answer = format!(
        "\n## Answered at last\n\n{} It is 42, as set out in the 2026 notice.\n",
        negative.query.trim_end_matches('?')
    );
    let path = after_docs.join(&file);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&answer);
    // And a short new sentence with a figure in another document.
    std::fs::write(&path, text).unwrap();
    let other = snapshot
        .iter()
        .find(|d| d.id != doc.id && d.language == "en" && d.source.ends_with(".md"))
        .expect("a second English Markdown document");
    let other_path = after_docs.join(Path::new(&other.source).file_name().unwrap());
    let mut other_text = std::fs::read_to_string(&other_path).unwrap();
    other_text.push_str("\n## Fees\n\nThe yearly fee is $35.\n");
    std::fs::write(&other_path, other_text).unwrap();
    let v2 = tmp.path().join("v2.jsonl");
    generate(&after_docs, &v2, &["--update", v1.to_str().unwrap()]);
    let updated: Vec<TestCase> = read_jsonl(&v2).unwrap();
    assert!(
        updated.iter().all(|u| u.id != negative.id),
        "the negative answered now is retired"
    );
    let report = report_of(&v2);
    let changes = report["update"]["cases"].as_array().unwrap();
    let retired = changes
        .iter()
        .find(|c| c["change"] == "retired" && c["previous_id"].as_str() == Some(&negative.id))
        .unwrap_or_else(|| panic!("{changes:?}"));
    let reason = retired["reason"].as_str().unwrap();
    assert!(
        reason.contains("now answers it") && reason.contains("42"),
        "{reason}"
    );
    // The short new sentence is asked about: a new case whose expected answer gives its figure.
    let now_docs: Vec<Document> = read_jsonl(&v2.with_extension("documents.jsonl")).unwrap();
    let other_name = Path::new(&other.source).file_name().unwrap();
    let other_now = now_docs
        .iter()
        .find(|d| Path::new(&d.source).file_name() == Some(other_name))
        .unwrap();
    assert!(
        updated.iter().any(|u| u.document_id == other_now.id
            && changes
                .iter()
                .any(|c| c["change"] == "new" && c["case_id"].as_str() == Some(&u.id))
            && u.expected_answer.contains("35")),
        "no new case asks about «The yearly fee is $35.»"
    );
}

#[test]
fn a_document_that_no_longer_parses_keeps_its_cases_marked_stale() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    copy_corpus(&docs);
    let v1 = tmp.path().join("v1.jsonl");
    generate(&docs, &v1, &[]);
    let snapshot: Vec<Document> = read_jsonl(&v1.with_extension("documents.jsonl")).unwrap();
    let broken = snapshot
        .iter()
        .find(|d| d.source.ends_with("xinghai-cold-chain-guide.pdf"))
        .unwrap();
    std::fs::write(
        docs.join("xinghai-cold-chain-guide.pdf"),
        b"not a PDF any more",
    )
    .unwrap();
    let v2 = tmp.path().join("v2.jsonl");
    // A document failed, so the command says the suite is partial (its exit code), and writes it.
    let partial = generating(&docs, &v2, &["--update", v1.to_str().unwrap()])
        .output()
        .unwrap();
    assert_ne!(partial.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&partial.stderr).contains("stale"));
    let before: Vec<TestCase> = read_jsonl(&v1).unwrap();
    let after: Vec<TestCase> = read_jsonl(&v2).unwrap();
    let of_broken: Vec<&TestCase> = before
        .iter()
        .filter(|c| c.document_id == broken.id)
        .collect();
    assert!(!of_broken.is_empty());
    for c in of_broken {
        let kept = after.iter().find(|a| a.id == c.id).expect("never dropped");
        let reason = kept.stale.as_deref().expect("marked stale");
        assert!(reason.contains("no longer parses"), "{reason}");
    }
    assert_eq!(after.len(), before.len(), "nothing else changed");
}

#[test]
fn an_imported_suite_is_followed_where_it_is_anchored_to_the_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    copy_corpus(&docs);
    let suite = tmp.path().join("suite.jsonl");
    generate(&docs, &suite, &["--strategy", "ragtester", "--n-test", "3"]);
    let (ragas, imported) = (
        tmp.path().join("ragas.jsonl"),
        tmp.path().join("imported.jsonl"),
    );
    let d = docs.to_str().unwrap();
    succeeds(
        bin()
            .args([
                "export",
                suite.to_str().unwrap(),
                "--docs",
                d,
                "--format",
                "ragas",
            ])
            .args(["--out", ragas.to_str().unwrap()]),
    );
    succeeds(
        bin()
            .args([
                "import",
                ragas.to_str().unwrap(),
                "--format",
                "ragas",
                "--docs",
                d,
            ])
            .args(["--out", imported.to_str().unwrap()]),
    );
    let cases: Vec<TestCase> = read_jsonl(&imported).unwrap();
    let snapshot: Vec<Document> = read_jsonl(&imported.with_extension("documents.jsonl")).unwrap();
    let edited = edit(&docs, "harbor-pump-manual.md", "", &cases, &snapshot);
    let v2 = tmp.path().join("v2.jsonl");
    generate(&docs, &v2, &["--update", imported.to_str().unwrap()]);
    let updated: Vec<TestCase> = read_jsonl(&v2).unwrap();
    for old in &edited.rewritten {
        let kept = updated
            .iter()
            .find(|u| u.id == *old)
            .expect("an imported case is kept");
        let reason = kept
            .stale
            .as_deref()
            .expect("marked stale where its source changed");
        assert!(reason.contains("imported"), "{reason}");
    }
    for old in &edited.retired {
        assert!(
            updated.iter().all(|u| u.id != *old),
            "{old} retired with its section"
        );
    }
    let untouched = cases
        .iter()
        .filter(|c| !edited.rewritten.contains(&c.id) && !edited.retired.contains(&c.id));
    for c in untouched {
        let kept = updated.iter().find(|u| u.id == c.id).expect("kept");
        assert!(kept.stale.is_none() && kept.query == c.query);
    }
}

/// An LLM writer (SmolLM2-135M in process, `scripts/fetch-models.sh`) writes the changed cases again: each
/// is rewritten by it or kept and marked stale with the writer's reason, never dropped.
#[test]
fn an_llm_writer_rewrites_a_changed_case_or_says_why_not() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let pump = docs.join("pump.md");
    std::fs::write(
        &pump,
        "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 4.5 bar.\n\nIts filter is replaced every 90 days.\n",
    )
    .unwrap();
    let v1 = tmp.path().join("v1.jsonl");
    generate(&docs, &v1, &["--strategy", "ragtester", "--n-test", "2"]);
    let before: Vec<TestCase> = read_jsonl(&v1).unwrap();
    std::fs::write(
        &pump,
        "# Pump notes\n\nThe Harbor P-200 pump has a maximum pressure of 5.5 bar.\n\nIts filter is replaced every 90 days.\n",
    )
    .unwrap();
    let model = format!("local:{}", ragtester_testkit::smollm2_gguf().display());
    let v2 = tmp.path().join("v2.jsonl");
    let out = generating(&docs, &v2, &["--strategy", "ragtester", "--n-test", "2"])
        .args([
            "--update",
            v1.to_str().unwrap(),
            "--llm",
            &model,
            "--critic",
            "none",
        ])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after: Vec<TestCase> = read_jsonl(&v2).unwrap();
    for old in before.iter().filter(|c| !c.source_spans.is_empty()) {
        let rewritten = after
            .iter()
            .find(|a| a.lineage.as_deref() == Some(old.id.as_str()));
        let stale = after.iter().find(|a| a.id == old.id && a.stale.is_some());
        match (rewritten, stale) {
            (Some(new), None) => assert!(new.generator_model.starts_with("local:"), "{new:?}"),
            (None, Some(kept)) => assert!(
                kept.stale
                    .as_deref()
                    .unwrap()
                    .contains("no question could be written"),
                "{kept:?}"
            ),
            other => panic!("{} neither rewritten nor kept stale: {other:?}", old.id),
        }
    }
    for old in before.iter().filter(|c| c.source_spans.is_empty()) {
        assert!(
            after.iter().any(|a| a.id == old.id && a.stale.is_none()),
            "the negative is kept"
        );
    }
}

/// A command target that answers each case's expected answer, except that a question whose hash is even
/// gets a wrong answer on every second call: its outcomes disagree across repeats.
const FLAKY_TARGET: &str = r#"
import hashlib, json, os, sys
mode = os.environ["TARGET_MODE"]
suite, calls, flaky = sys.argv[1], os.path.join(sys.argv[2], mode), mode == "flaky"
os.makedirs(calls, exist_ok=True)
query = sys.stdin.read().strip()
expected = next(json.loads(l)["expected_answer"] for l in open(suite, encoding="utf-8")
                if json.loads(l)["query"] == query)
h = hashlib.sha256(query.encode()).hexdigest()
n = 1
while True:
    try:
        os.close(os.open(os.path.join(calls, f"{h}.{n}"), os.O_CREAT | os.O_EXCL))
        break
    except FileExistsError:
        n += 1
wrong = flaky and int(h[:2], 16) % 2 == 0 and n % 2 == 0
print(json.dumps({"answer": "The manual says it is 987654 units." if wrong else expected}))
"#;

/// One project for both runs (the same configuration id, so the runs line up); `TARGET_MODE` in the
/// environment decides whether the target varies.
fn target_project(dir: &Path, suite: &Path) -> PathBuf {
    let script = dir.join("target.py");
    std::fs::write(&script, FLAKY_TARGET).unwrap();
    let calls = dir.join("calls");
    let project = dir.join("target.toml");
    let list = [
        "python3",
        script.to_str().unwrap(),
        suite.to_str().unwrap(),
        calls.to_str().unwrap(),
    ]
    .iter()
    .map(|p| format!("{p:?}"))
    .collect::<Vec<_>>()
    .join(", ");
    std::fs::write(
        &project,
        format!(
            "[[target]]\nname = \"scripted\"\ntype = \"command\"\ncommand = [{list}]\ninput = \"stdin\"\nanswer_pointer = \"/answer\"\n"
        ),
    )
    .unwrap();
    project
}

#[test]
fn repeats_tell_flaky_cases_from_broken_ones_and_the_diff_never_calls_them_regressions() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite.jsonl");
    generate(
        &corpus(),
        &suite,
        &["--strategy", "ragtester", "--n-test", "3"],
    );
    let project = target_project(tmp.path(), &suite);
    let runs: Vec<PathBuf> = ["steady", "flaky"]
        .iter()
        .map(|mode| {
            let out = tmp.path().join(format!("run-{mode}"));
            let (docs, suite_arg) = (corpus(), suite.to_str().unwrap().to_string());
            succeeds(
                bin()
                    .env("TARGET_MODE", mode)
                    .args([
                        "run",
                        "--docs",
                        docs.to_str().unwrap(),
                        "--suite",
                        &suite_arg,
                    ])
                    .args([
                        "--out",
                        out.to_str().unwrap(),
                        "--config",
                        project.to_str().unwrap(),
                    ])
                    .args(["--repeat", "3"]),
            );
            succeeds(bin().args(["judge", out.to_str().unwrap()]));
            succeeds(bin().args(["report", out.to_str().unwrap()]));
            out
        })
        .collect();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(runs[1].join("summary.json")).unwrap())
            .unwrap();
    let repeated = &summary["repeats"][0];
    assert_eq!(repeated["repeats"], 3);
    let flaky: Vec<&Value> = repeated["flaky_cases"].as_array().unwrap().iter().collect();
    assert!(!flaky.is_empty(), "{repeated}");
    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    let even = |query: &str| {
        use sha2::Digest;
        sha2::Sha256::digest(query.as_bytes())[0] % 2 == 0
    };
    for f in &flaky {
        let case = cases
            .iter()
            .find(|c| c.id == f["case_id"].as_str().unwrap())
            .unwrap();
        assert!(even(&case.query), "only the varying questions are flaky");
        assert_eq!((f["passed"].as_u64(), f["of"].as_u64()), (Some(2), Some(3)));
    }
    let passes: Vec<f64> = repeated["passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    let cells = repeated["cases"].as_f64().unwrap();
    let (all, at_least_two) = (passes[3] / cells, (passes[2] + passes[3]) / cells);
    assert!(all < at_least_two);
    let limit = format!("{:.4}", (all + at_least_two) / 2.0);
    let gate = |policy: &str| {
        bin()
            .args(["report", runs[1].to_str().unwrap(), "--fail-under", &limit])
            .args(["--repeat-policy", policy])
            .output()
            .unwrap()
            .status
            .code()
    };
    assert_eq!(gate("2"), Some(0), "at least 2 of 3 passes the gate");
    assert_eq!(gate("all"), Some(4), "every repeat does not");
    // The steady run against the flaky one: the flaky cells are set apart, none is a regression.
    let json = tmp.path().join("diff.json");
    let out = succeeds(bin().args([
        "diff",
        runs[0].to_str().unwrap(),
        runs[1].to_str().unwrap(),
        "--fail-on-regression",
        "--json",
        json.to_str().unwrap(),
    ]));
    let diff: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(
        diff["regressions"].as_array().unwrap().is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let set_apart: BTreeSet<&str> = diff["flaky"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case_id"].as_str().unwrap())
        .collect();
    let reported: BTreeSet<&str> = flaky
        .iter()
        .map(|f| f["case_id"].as_str().unwrap())
        .collect();
    assert_eq!(set_apart, reported);
}
