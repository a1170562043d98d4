//! The refusal detector against a labelled list of real phrasings (tests/fixtures/refusals.jsonl): refusals
//! in English and Chinese — apologies, "not mentioned", "no information about", "cannot find", 无法回答,
//! 未提及, 资料中没有 — and answers that merely contain a negation, a partial refusal, or a correction.

use ragtester_text::is_refusal;
use serde::Deserialize;

#[derive(Deserialize)]
struct Labelled {
    lang: String,
    refusal: bool,
    text: String,
}

fn labelled() -> Vec<Labelled> {
    include_str!("fixtures/refusals.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a labelled line"))
        .collect()
}

#[test]
fn precision_and_recall_on_labelled_refusals_in_both_languages() {
    let all = labelled();
    for lang in ["en", "zh"] {
        let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
        let mut wrong = Vec::new();
        let items: Vec<&Labelled> = all.iter().filter(|l| l.lang == lang).collect();
        assert!(items.iter().filter(|l| l.refusal).count() >= 25);
        assert!(items.iter().filter(|l| !l.refusal).count() >= 20);
        for item in &items {
            let said = is_refusal(&item.text);
            match (item.refusal, said) {
                (true, true) => tp += 1,
                (false, true) => fp += 1,
                (true, false) => fn_ += 1,
                (false, false) => {}
            }
            if said != item.refusal {
                wrong.push(format!("{} (labelled {})", item.text, item.refusal));
            }
        }
        let precision = tp as f64 / (tp + fp).max(1) as f64;
        let recall = tp as f64 / (tp + fn_).max(1) as f64;
        eprintln!("{lang}: precision {precision:.3}, recall {recall:.3}; wrong: {wrong:#?}");
        assert!(
            precision >= 0.95,
            "{lang} precision {precision:.3}: {wrong:#?}"
        );
        assert!(recall >= 0.95, "{lang} recall {recall:.3}: {wrong:#?}");
    }
}

#[test]
fn the_apologetic_refusal_a_user_reported_is_a_refusal() {
    assert!(is_refusal(
        "I'm sorry, but the provided documents do not contain the information needed to answer this question."
    ));
}
