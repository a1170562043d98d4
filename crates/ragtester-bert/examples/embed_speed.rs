//! Embedding throughput of a model folder on the first N documents of a BEIR corpus.
//! Usage: embed_speed MODEL_DIR CORPUS_JSONL [N] [one-by-one]
//! `one-by-one` embeds each text in a call of its own, as queries are embedded.

use ragtester_core::{EmbedKind, Embedder};
use std::io::BufRead;
use std::time::Instant;
// The allocator the binary uses, so the figures match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(3).map_or(1000, |s| s.parse().unwrap());
    let model = ragtester_bert::BertEmbedder::load(std::path::Path::new(&args[1]))?;
    let texts: Vec<String> = std::io::BufReader::new(std::fs::File::open(&args[2])?)
        .lines()
        .take(n)
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(&l.unwrap()).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let one_by_one = args.get(4).is_some_and(|a| a == "one-by-one");
    let t = Instant::now();
    let embedded = if one_by_one {
        let mut n = 0;
        for text in &refs {
            n += model.embed(&[text], EmbedKind::Query)?.len();
        }
        n
    } else {
        model.embed(&refs, EmbedKind::Passage)?.len()
    };
    let s = t.elapsed().as_secs_f64();
    println!(
        "{embedded} texts in {s:.2} s: {:.1} texts/s, {:.2} ms each",
        embedded as f64 / s,
        1000.0 * s / embedded as f64
    );
    Ok(())
}
