//! `ragtester bench index`: each index over the synthetic corpus reports its build time, latency
//! percentiles and memory; HNSW is measured against exact search; a wrong index name is an error naming it.

mod common;

use common::{bin, succeeds};

fn bench(args: &[&str], json: &std::path::Path) -> serde_json::Value {
    succeeds(
        bin()
            .args(["bench", "index", "--json", json.to_str().unwrap()])
            .args(args),
    );
    serde_json::from_slice(&std::fs::read(json).unwrap()).unwrap()
}

#[test]
fn every_index_reports_its_figures_and_hnsw_is_held_to_exact_search() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("figures.json");
    let work = tmp.path().join("bm25");
    let small = ["--chunks", "1500", "--queries", "60"];
    for index in ["bm25", "exact", "hnsw"] {
        let mut args = small.to_vec();
        args.extend(["--index", index]);
        if index == "bm25" {
            args.extend(["--work", work.to_str().unwrap()]);
        }
        let f = bench(&args, &json);
        assert_eq!(f["index"], index);
        assert_eq!(f["chunks"], 1500);
        assert_eq!(f["queries"], 60);
        let (p50, p95) = (
            f["query_p50_ms"].as_f64().unwrap(),
            f["query_p95_ms"].as_f64().unwrap(),
        );
        assert!(p50 > 0.0 && p50 <= p95, "{f}");
        assert!(f["build_s"].as_f64().unwrap() > 0.0);
        // Each query is its chunk's rarest words: a sound index returns that chunk.
        let found = f["source_at_10"].as_f64().unwrap();
        if index != "hnsw" {
            assert!(found >= 0.9, "{index}: {f}");
        }
        assert_eq!(
            f["recall_vs_exact_at_10"].is_null(),
            index != "hnsw",
            "only the graph is compared with exact search: {f}"
        );
        if cfg!(target_os = "linux") {
            assert!(f["peak_rss_mib"].as_f64().unwrap() >= f["corpus_rss_mib"].as_f64().unwrap());
        }
    }
    assert!(
        std::fs::read_dir(&work).unwrap().next().is_some(),
        "BM25 kept its index under --work"
    );
    let out = bin()
        .args(["bench", "index", "--chunks", "10", "--index", "faiss"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("unknown index `faiss`"),
        "{stderr}"
    );
}
