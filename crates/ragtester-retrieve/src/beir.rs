//! Public retrieval benchmarks in the BEIR layout (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv`) and
//! the standard document-level metrics over them: nDCG@k with graded gains (as pytrec_eval computes it),
//! recall@k and MRR@k, averaged over the queries that have judgements.

use anyhow::{Context, Result, bail};
use ragtester_core::Chunk;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

pub struct BeirSet {
    /// One chunk per corpus document (title and text), its `document_id` the BEIR `_id`.
    pub corpus: Vec<Chunk>,
    /// (query id, text), only queries with at least one relevant document.
    pub queries: Vec<(String, String)>,
    /// query id → document id → graded relevance (> 0).
    pub qrels: HashMap<String, HashMap<String, u32>>,
}

#[derive(Deserialize)]
struct Doc {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    text: String,
}

#[derive(Deserialize)]
struct Query {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

fn jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Vec<T>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        out.push(
            serde_json::from_str(&line)
                .with_context(|| format!("{} line {}: not a BEIR record", path.display(), n + 1))?,
        );
    }
    Ok(out)
}

impl BeirSet {
    pub fn load(dir: &Path) -> Result<Self> {
        let corpus: Vec<Chunk> = jsonl::<Doc>(&dir.join("corpus.jsonl"))?
            .into_iter()
            .map(|d| {
                let text = if d.title.trim().is_empty() {
                    d.text
                } else {
                    format!("{}\n{}", d.title, d.text)
                };
                Chunk {
                    id: d.id.clone(),
                    end: text.chars().count(),
                    document_id: d.id,
                    start: 0,
                    text,
                }
            })
            .collect();
        let qrels_path = dir.join("qrels/test.tsv");
        let qrels_text = std::fs::read_to_string(&qrels_path)
            .with_context(|| format!("cannot read {}", qrels_path.display()))?;
        let mut qrels: HashMap<String, HashMap<String, u32>> = HashMap::new();
        for (n, line) in qrels_text.lines().enumerate() {
            let fields: Vec<&str> = line.split('\t').collect();
            if n == 0 && fields.first() == Some(&"query-id") {
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let [query, doc, score] = fields[..] else {
                bail!(
                    "{} line {}: expected query-id, corpus-id, score",
                    qrels_path.display(),
                    n + 1
                );
            };
            let score: i64 = score.trim().parse().with_context(|| {
                format!(
                    "{} line {}: score is not a number",
                    qrels_path.display(),
                    n + 1
                )
            })?;
            if score > 0 {
                qrels
                    .entry(query.to_string())
                    .or_default()
                    .insert(doc.to_string(), score as u32);
            }
        }
        let queries = jsonl::<Query>(&dir.join("queries.jsonl"))?
            .into_iter()
            .filter(|q| qrels.contains_key(&q.id))
            .map(|q| (q.id, q.text))
            .collect::<Vec<_>>();
        if corpus.is_empty() || queries.is_empty() {
            bail!("{} has no documents or no judged queries", dir.display());
        }
        Ok(Self {
            corpus,
            queries,
            qrels,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IrScores {
    pub ndcg: f64,
    pub recall: f64,
    pub mrr: f64,
}

/// Metrics of one ranked list of document ids against one query's judgements.
pub fn score_ranking(ranked: &[&str], relevant: &HashMap<String, u32>, k: usize) -> IrScores {
    let top = &ranked[..ranked.len().min(k)];
    let dcg: f64 = top
        .iter()
        .enumerate()
        .map(|(i, d)| f64::from(*relevant.get(*d).unwrap_or(&0)) / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<u32> = relevant.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| f64::from(*g) / ((i + 2) as f64).log2())
        .sum();
    let found = top.iter().filter(|d| relevant.contains_key(**d)).count();
    let first = top.iter().position(|d| relevant.contains_key(*d));
    IrScores {
        ndcg: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        recall: if relevant.is_empty() {
            0.0
        } else {
            found as f64 / relevant.len() as f64
        },
        mrr: first.map_or(0.0, |i| 1.0 / (i + 1) as f64),
    }
}

/// The mean of per-query scores.
pub fn mean_scores(scores: &[IrScores]) -> IrScores {
    let n = scores.len().max(1) as f64;
    IrScores {
        ndcg: scores.iter().map(|s| s.ndcg).sum::<f64>() / n,
        recall: scores.iter().map(|s| s.recall).sum::<f64>() / n,
        mrr: scores.iter().map(|s| s.mrr).sum::<f64>() / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_by_hand() {
        let relevant: HashMap<String, u32> = [("a".to_string(), 2), ("b".to_string(), 1)].into();
        // Ranking x, a, y, b: DCG = 2/log2(3) + 1/log2(5); IDCG = 2/log2(2) + 1/log2(3).
        let s = score_ranking(&["x", "a", "y", "b"], &relevant, 10);
        let dcg = 2.0 / 3f64.log2() + 1.0 / 5f64.log2();
        let idcg = 2.0 + 1.0 / 3f64.log2();
        assert!((s.ndcg - dcg / idcg).abs() < 1e-12);
        assert_eq!(s.recall, 1.0);
        assert_eq!(s.mrr, 0.5);
        // Cut at 2: only "a" counts.
        let s = score_ranking(&["x", "a", "y", "b"], &relevant, 2);
        assert!((s.ndcg - (2.0 / 3f64.log2()) / idcg).abs() < 1e-12);
        assert_eq!(s.recall, 0.5);
        let none = score_ranking(&["x"], &relevant, 10);
        assert_eq!(none, IrScores::default());
        let m = mean_scores(&[s, none]);
        assert_eq!(m.recall, 0.25);
    }

    #[test]
    fn loads_the_beir_layout() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("corpus.jsonl"),
            "{\"_id\": \"d1\", \"title\": \"T\", \"text\": \"valve\"}\n{\"_id\": \"d2\", \"text\": \"pump\"}\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("queries.jsonl"),
            "{\"_id\": \"q1\", \"text\": \"valve?\"}\n{\"_id\": \"q2\", \"text\": \"unjudged\"}\n",
        )
        .unwrap();
        std::fs::create_dir(dir.path().join("qrels")).unwrap();
        std::fs::write(
            dir.path().join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n",
        )
        .unwrap();
        let set = BeirSet::load(dir.path()).unwrap();
        assert_eq!(set.corpus[0].text, "T\nvalve");
        assert_eq!(set.queries, vec![("q1".to_string(), "valve?".to_string())]);
        assert_eq!(set.qrels["q1"].len(), 1);
        std::fs::write(dir.path().join("qrels/test.tsv"), "q1\td1\n").unwrap();
        assert!(BeirSet::load(dir.path()).is_err());
    }
}
