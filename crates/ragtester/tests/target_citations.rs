//! A service that returns its citations in a field of its own (`citations_pointer`), as a user configures
//! it: the citations are kept on each answer and checked against the passages they cite, so a service
//! that cites the wrong passage shows a lower citation precision than one that cites the right one.

mod common;

use common::*;
use ragtester_core::{Answer, read_jsonl};

/// A command target answering every question with the valve's pressure, returning two passages and
/// citing `rank` for the sentence.
fn target(name: &str, rank: usize) -> String {
    let reply = format!(
        r#"{{"answer": "The relief valve opens at 4.5 bar.", "contexts": ["The relief valve of the pump opens at 4.5 bar.", "The pump weighs 12 kilograms."], "citations": [{{"text": "relief valve opens at 4.5 bar", "document_ids": [{rank}]}}]}}"#
    );
    let command = format!("cat > /dev/null; printf '%s' '{reply}'");
    format!(
        "[[target]]\nname = \"{name}\"\ntype = \"command\"\ncommand = [\"sh\", \"-c\", {}]\n\
         answer_pointer = \"/answer\"\ncontexts_pointer = \"/contexts\"\n\
         citations_pointer = \"/citations\"\ncitation_ranks_pointer = \"/document_ids\"\n\
         citation_text_pointer = \"/text\"\n\n",
        toml_string(&command)
    )
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

#[test]
fn a_target_s_own_citations_are_kept_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite_with(tmp.path(), &["--n-test", "2", "--conversations", "0"]);
    let config = tmp.path().join("targets.toml");
    std::fs::write(&config, target("right", 1) + &target("wrong", 2)).unwrap();
    let run = tmp.path().join("run");
    succeeds(
        bin()
            .args(["run", "--docs"])
            .arg(corpus())
            .arg("--suite")
            .arg(&suite)
            .arg("--out")
            .arg(&run)
            .arg("--config")
            .arg(&config)
            .args(["--retriever", "bm25", "--top-k", "1"]),
    );
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let cited: Vec<&Answer> = answers.iter().filter(|a| !a.citations.is_empty()).collect();
    assert!(!cited.is_empty(), "the targets' citations are kept");
    assert!(
        cited
            .iter()
            .all(|a| a.citations[0].text.as_deref() == Some("relief valve opens at 4.5 bar"))
    );
    succeeds(bin().arg("judge").arg(&run));
    succeeds(bin().arg("report").arg(&run));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let precision = |name: &str| {
        summary["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["label"].as_str().unwrap().contains(name))
            .unwrap_or_else(|| panic!("no configuration {name}: {summary}"))["citation_precision"]
            .as_f64()
    };
    assert_eq!(precision("right"), Some(1.0));
    assert_eq!(precision("wrong"), Some(0.0));
}
