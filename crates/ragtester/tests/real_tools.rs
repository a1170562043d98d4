//! ragtester against the real tools its users run, not our reading of them: llama.cpp's OpenAI-compatible
//! server (`llama-cpp-python[server]`, serving the SmolLM2 GGUF the other tests use) in every LLM role, and
//! RAGAS's and DeepEval's own dataset writers and readers.
//!
//! They need the tools' Python environment: `scripts/real-tools.sh` builds it and prints its interpreter,
//! which `RAGTESTER_TOOLS_PYTHON` names (scripts/test.sh does both, then runs the ignored tests too). So
//! plain `cargo test` reports them as ignored, with the reason, never as passed; run by hand without the
//! tools they say so and return — unless `RAGTESTER_REQUIRE_REAL_TOOLS=1` (CI), where a missing tool
//! fails them.

use ragtester_core::{Answer, Category, TestCase, Verdict, VerdictStatus, read_jsonl};
use serde_json::{Value, json};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn tools_python() -> Option<PathBuf> {
    let python = std::env::var_os("RAGTESTER_TOOLS_PYTHON").map(PathBuf::from);
    let required = std::env::var("RAGTESTER_REQUIRE_REAL_TOOLS").is_ok_and(|v| v == "1");
    match python {
        Some(p) if p.is_file() => Some(p),
        other => {
            let why = match other {
                Some(p) => format!("RAGTESTER_TOOLS_PYTHON={} is not a file", p.display()),
                None => "RAGTESTER_TOOLS_PYTHON is not set".to_string(),
            };
            assert!(
                !required,
                "{why}; run scripts/real-tools.sh, which prints the interpreter to name"
            );
            eprintln!("skipped: {why} (scripts/real-tools.sh builds the real tools)");
            None
        }
    }
}

fn smollm2() -> PathBuf {
    ragtester_testkit::smollm2_gguf()
}

/// The binary with its own response cache, against `base` as the OpenAI-compatible server.
fn ragtester(args: &[&str], base: &str, cache: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(args)
        .env("RAGTESTER_CACHE_DIR", cache)
        .env("OPENAI_BASE_URL", base)
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("binary runs")
}

fn succeeded(out: &std::process::Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{what} failed ({:?}): {stderr}",
        out.status.code()
    );
    stderr
}

/// llama.cpp's server on a free loopback port, stopped when dropped.
struct LlamaServer {
    child: Child,
    base: String,
}

impl LlamaServer {
    fn start(python: &Path) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = tempfile::NamedTempFile::new().unwrap();
        let child = Command::new(python)
            .args(["-m", "llama_cpp.server", "--model"])
            .arg(smollm2())
            .args(["--model_alias", "smollm2", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "--n_ctx", "4096"])
            .stdout(Stdio::null())
            .stderr(log.reopen().unwrap())
            .spawn()
            .expect("llama_cpp.server starts");
        let mut server = Self {
            child,
            base: format!("http://127.0.0.1:{port}/v1"),
        };
        // The model loads before the server listens: a connection means it is ready.
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "llama_cpp.server exited ({status}): {}",
                    std::fs::read_to_string(log.path()).unwrap_or_default()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "llama_cpp.server did not listen within 120 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        server
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const PUMP_NOTES: &str = "# Harbor P-200 pump\n\n\
The Harbor P-200 pump has a maximum pressure of 4.5 bar. Above that pressure the relief valve opens \
and returns water to the tank.\n\n\
The pump motor runs at 1,200 revolutions per minute and draws 3.2 amperes at full load. It was \
designed in 2019 by the Harbor engineering team in Rotterdam.\n\n\
Service the pump every 500 operating hours: replace the shaft seal, check the impeller for wear and \
clean the inlet strainer.\n";

#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn llama_cpp_server_plays_every_llm_role() {
    let Some(python) = tools_python() else {
        return;
    };
    let server = LlamaServer::start(&python);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("pump.md"), PUMP_NOTES).unwrap();
    let (d, suite, run) = (
        docs.to_str().unwrap(),
        tmp.path().join("suite.jsonl"),
        tmp.path().join("run"),
    );
    let model = "openai:smollm2";

    // The question writer: the server refuses json_schema with HTTP 500; the writer steps down at once.
    // SmolLM2-135M copies the section's sentences as its "questions": every reply is read, and each is
    // turned down as a statement (one, "…4.5 bar, above which the relief valve opens…", once went through
    // on its relative pronoun and then "passed" closed book by repeating itself).
    let written = tmp.path().join("written.jsonl");
    let out = ragtester(
        &[
            "generate",
            "--docs",
            d,
            "--out",
            written.to_str().unwrap(),
            "--llm",
            model,
            "--strategy",
            "ragtester",
            "--n-test",
            "3",
        ],
        &server.base,
        &cache,
    );
    let notes = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        let cases: Vec<TestCase> = read_jsonl(&written).unwrap();
        assert!(
            cases
                .iter()
                .all(|c| c.generator_model == model && c.query.ends_with('?'))
        );
    } else {
        assert!(
            notes.contains("rejected a statement, not a question"),
            "{notes}"
        );
        assert!(
            !notes.contains("unreadable"),
            "every reply was read: {notes}"
        );
    }

    // The suite the other roles meet, from the offline writer; each positive question is asked again of
    // the real model closed book and judged for a leak.
    let out = ragtester(
        &[
            "generate",
            "--docs",
            d,
            "--out",
            suite.to_str().unwrap(),
            "--n-test",
            "4",
            "--conversations",
            "0",
            "--drop-leaky",
            model,
        ],
        &server.base,
        &cache,
    );
    succeeded(&out, "generate");
    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    assert!(!cases.is_empty(), "no case generated");
    let suite_report: Value =
        serde_json::from_slice(&std::fs::read(suite.with_extension("report.json")).unwrap())
            .unwrap();
    let leak_check = &suite_report["leaky"][0];
    assert_eq!(leak_check["model"], model);
    assert!(
        leak_check["unchecked"].as_array().unwrap().is_empty(),
        "every closed-book call answered: {leak_check}"
    );
    let dropped = leak_check["leaky"].as_array().unwrap().len();
    assert_eq!(
        leak_check["checked"].as_u64().unwrap() as usize,
        cases
            .iter()
            .filter(|c| !c.expects_refusal() && c.turn.is_none() && c.category != Category::Safety)
            .count()
            + dropped,
        "every positive single question was asked: {leak_check}"
    );
    assert!(
        leak_check["checked"].as_u64() > Some(0),
        "the real model was asked: {leak_check}"
    );

    // The system under test.
    let out = ragtester(
        &[
            "run",
            "--docs",
            d,
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
            "--llm",
            model,
            "--retriever",
            "bm25",
            // The reference points beside it: the case's own passages and the closed book.
            "--retriever",
            "oracle",
            "--retriever",
            "none",
            "--top-k",
            "2",
            "--max-tokens",
            "48",
            "--quiet",
        ],
        &server.base,
        &cache,
    );
    succeeded(&out, "run");
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    assert_eq!(answers.len(), 3 * cases.len());
    for a in &answers {
        assert!(a.error.is_none(), "{:?}", a.error);
        assert!(!a.answer.trim().is_empty());
        assert!(a.usage.completion_tokens > 0, "the server reports usage");
    }

    // The judge: every reply must parse (json_object with a schema is grammar-constrained on this server),
    // under a 200-token limit too — the schema goes out with its strings bounded to fit it, and a reply
    // still cut at the limit is asked again with room (2 of 6 were cut before the bounds were sent).
    let out = ragtester(
        &[
            "judge",
            run.to_str().unwrap(),
            "--judge",
            model,
            "--max-tokens",
            "200",
            "--quiet",
        ],
        &server.base,
        &cache,
    );
    succeeded(&out, "judge");
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    assert_eq!(verdicts.len(), answers.len());
    let unreadable: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| v.status != VerdictStatus::Ok)
        .collect();
    assert!(unreadable.is_empty(), "judge errors: {unreadable:?}");
    // What the server was found to accept is recorded with the run.
    let store = ragtester_store::RunStore::open(&run).unwrap();
    let learned: Value = serde_json::from_str(
        &store
            .meta(ragtester_store::Meta::StructuredOutput)
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        learned[format!("openai:smollm2@{}", server.base)],
        json!("json_object_with_schema")
    );
    // The report names each configuration's headroom against the oracle and the closed book's leaky
    // cases, from a real model's answers.
    succeeded(
        &ragtester(&["report", run.to_str().unwrap()], &server.base, &cache),
        "report",
    );
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    if cases.iter().any(|c| !c.expects_refusal()) {
        // bm25 and the closed book, each against the oracle.
        assert_eq!(
            summary["headroom"].as_array().unwrap().len(),
            2,
            "{summary}"
        );
    }
    assert_eq!(summary["leaky"][0]["llm"], model, "{summary}");

    // The document writer.
    let generated = tmp.path().join("generated");
    let out = ragtester(
        &[
            "docgen",
            "--llm",
            model,
            "--count",
            "1",
            "--words",
            "120",
            "--out",
            generated.to_str().unwrap(),
            "--pdf",
        ],
        &server.base,
        &cache,
    );
    succeeded(&out, "docgen");
    let pdfs = std::fs::read_dir(&generated)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "pdf")
        })
        .count();
    assert_eq!(pdfs, 1);
}

/// The rows both libraries write: a comma and quotes inside a context, and Chinese.
fn peer_rows() -> Value {
    json!([
        {
            "question": "When does the relief valve open?",
            "answer": "At 4.5 bar, as the manual says.",
            "contexts": [
                "The Harbor P-200 pump has a maximum pressure of 4.5 bar.",
                "Above that pressure the relief valve opens and returns water to the tank."
            ]
        },
        {
            "question": "泵的最大转速是多少？",
            "answer": "每分钟 1,200 转。",
            "contexts": ["泵的电机转速为每分钟 1,200 转，满载电流为 3.2 安培。"]
        }
    ])
}

fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_tools/peer_datasets.py")
}

fn peer_read(python: &Path, library: &str, file: &Path) -> Vec<Value> {
    serde_json::from_value(peer(python, "read", library, file)).unwrap()
}

/// What `peer_datasets.py VERB LIBRARY FILE` prints, as JSON; a library that cannot read the file fails the
/// test with its own error.
fn peer(python: &Path, verb: &str, library: &str, file: &Path) -> Value {
    let out = Command::new(python)
        .arg(peer_script())
        .args([verb, library])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{library} cannot {verb} {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn ragas_and_deepeval_files_round_trip_field_by_field() {
    let Some(python) = tools_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("pump.md"), PUMP_NOTES).unwrap();
    std::fs::write(
        docs.join("泵.md"),
        "# 泵的参数\n\n泵的电机转速为每分钟 1,200 转，满载电流为 3.2 安培。\n",
    )
    .unwrap();
    let d = docs.to_str().unwrap();
    let rows = peer_rows();
    let rows_file = tmp.path().join("rows.json");
    std::fs::write(&rows_file, rows.to_string()).unwrap();
    let written = Command::new(&python)
        .arg(peer_script())
        .arg("write")
        .arg(tmp.path())
        .arg(&rows_file)
        .output()
        .unwrap();
    assert!(
        written.status.success(),
        "{}",
        String::from_utf8_lossy(&written.stderr)
    );

    // What the libraries wrote, imported: every row, with its contexts located in the documents.
    let shapes = [
        ("ragas", "jsonl"),
        ("ragas", "csv"),
        ("deepeval", "json"),
        ("deepeval", "csv"),
        ("deepeval", "jsonl"),
    ];
    for (shape, ext) in shapes {
        let file = tmp.path().join(format!("{shape}.{ext}"));
        let suite = tmp.path().join(format!("imported-{shape}-{ext}.jsonl"));
        let out = ragtester(
            &[
                "import",
                file.to_str().unwrap(),
                "--format",
                shape,
                "--docs",
                d,
                "--out",
                suite.to_str().unwrap(),
            ],
            "http://127.0.0.1:9/v1",
            &cache,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{shape}.{ext}: {stderr}");
        let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
        assert_eq!(cases.len(), 2, "{shape}.{ext}");
        for (case, row) in cases.iter().zip(rows.as_array().unwrap()) {
            assert_eq!(case.query, row["question"], "{shape}.{ext}");
            assert_eq!(case.expected_answer, row["answer"], "{shape}.{ext}");
            assert_eq!(
                case.source_spans.len(),
                row["contexts"].as_array().unwrap().len(),
                "{shape}.{ext}: every context located"
            );
        }
    }

    // What we write, read by the libraries' own readers: the suite, and the answered cells of a run.
    let suite = tmp.path().join("imported-ragas-jsonl.jsonl");
    let run = tmp.path().join("run");
    let out = ragtester(
        &[
            "run",
            "--docs",
            d,
            "--suite",
            suite.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
            "--retriever",
            "bm25",
            "--quiet",
        ],
        "http://127.0.0.1:9/v1",
        &cache,
    );
    succeeded(&out, "run");
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let fields = |shape: &str| match shape {
        "ragas" => [
            "user_input",
            "reference",
            "reference_contexts",
            "response",
            "retrieved_contexts",
        ],
        _ => [
            "input",
            "expected_output",
            "context",
            "actual_output",
            "retrieval_context",
        ],
    };
    for (shape, ext) in shapes {
        for (source, answered) in [(suite.as_path(), false), (run.as_path(), true)] {
            let file = tmp.path().join(format!("ours-{shape}-{answered}.{ext}"));
            let out = ragtester(
                &[
                    "export",
                    source.to_str().unwrap(),
                    "--format",
                    shape,
                    "--docs",
                    d,
                    "--out",
                    file.to_str().unwrap(),
                ],
                "http://127.0.0.1:9/v1",
                &cache,
            );
            succeeded(&out, "export");
            let read = peer_read(&python, shape, &file);
            assert_eq!(read.len(), 2, "{}", file.display());
            let [q, r, rc, resp, ret] = fields(shape);
            for got in &read {
                let what = format!("{} read by {shape}", file.display());
                let row = rows
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|row| row["question"] == got[q])
                    .unwrap_or_else(|| panic!("{what}: unknown question {}", got[q]));
                assert_eq!(got[q], row["question"], "{what}");
                assert_eq!(got[r], row["answer"], "{what}");
                assert_eq!(got[rc], row["contexts"], "{what}");
                if answered {
                    let answer = answers
                        .iter()
                        .find(|a| {
                            read_jsonl::<TestCase>(&suite)
                                .unwrap()
                                .iter()
                                .any(|c| c.id == a.case_id && c.query == row["question"])
                        })
                        .unwrap();
                    assert_eq!(got[resp], json!(answer.answer), "{what}");
                    let contexts: Vec<&str> =
                        answer.contexts.iter().map(|c| c.text.as_str()).collect();
                    assert_eq!(got[ret], json!(contexts), "{what}");
                }
            }
        }
    }
}

/// More of the pump's manual: paragraphs that say several things about one part, as conversations need.
const PUMP_PARTS: &str = "The relief valve is made of brass. The relief valve is tested every spring by the \
site technician.\n\n\
The inlet strainer has a mesh of 0.5 millimetres. The inlet strainer is cleaned with fresh water after \
every flood.\n\n\
The shaft seal is a ceramic ring. The shaft seal lasts about 2,000 operating hours in clean water.\n\n\
The pressure gauge reads up to 10 bar. The pressure gauge is mounted above the outlet flange.\n\n\
The control box holds the motor starter. The control box is rated IP55 against dust and water.\n";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The instrumented sample service (`real_tools/traced_target.py`, the OpenTelemetry Python SDK and its
/// OTLP/HTTP exporter), exporting to `trace_port`; stopped when dropped.
/// `DIR/docs/pump.md`, the pump notes and parts list the traced sample service reads: (folder, file).
fn pump_corpus(dir: &Path) -> (PathBuf, PathBuf) {
    let docs = dir.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let corpus = docs.join("pump.md");
    std::fs::write(&corpus, format!("{PUMP_NOTES}\n{PUMP_PARTS}")).unwrap();
    (docs, corpus)
}

struct TracedTarget {
    child: Child,
    base: String,
}

impl TracedTarget {
    /// The sample service on a free port; `replay` names the passages and answers `/replay` serves.
    fn start(python: &Path, corpus: &Path, trace_port: u16, replay: Option<&Path>) -> Self {
        let port = free_port();
        let child = Command::new(python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real_tools/traced_target.py"))
            .arg(port.to_string())
            .arg(corpus)
            .args(replay)
            .env(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                format!("http://127.0.0.1:{trace_port}"),
            )
            .stdout(Stdio::null())
            .spawn()
            .expect("the sample target starts");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(30), "target not up");
            std::thread::sleep(Duration::from_millis(100));
        }
        Self {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for TracedTarget {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A service instrumented with the real OpenTelemetry SDK reports its retrieval in spans alone: what those
/// spans give (hit rate, MRR, attribution) equals what the same service's returned passages give, cell
/// by cell; conversations reach it turn by turn in one session each; a target that sends no trace still
/// runs, its answers noting why they have none.
#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn an_instrumented_target_is_scored_from_its_own_spans() {
    let Some(python) = tools_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (docs, corpus) = pump_corpus(tmp.path());
    let trace_port = free_port();
    let target = TracedTarget::start(&python, &corpus, trace_port, None);
    let config = tmp.path().join("project.toml");
    // The same service three ways: passages in the reply; passages in its spans alone; no spans.
    let target_row = |name: &str, path: &str, traces: bool| {
        let contexts = if traces {
            ""
        } else {
            "contexts_pointer = \"/contexts\"\n"
        };
        format!(
            "[[target]]\nname = \"{name}\"\ntype = \"http\"\nurl = \"{}/{path}\"\n\
             body = '{{\"query\": \"{{{{query}}}}\", \"messages\": {{{{messages}}}}}}'\n\
             answer_pointer = \"/answer\"\n{contexts}\
             session_header = \"X-Session-Id\"\ntraces = {traces}\n\n",
            target.base
        )
    };
    std::fs::write(
        &config,
        format!(
            "[corpus]\npaths = [\"{}\"]\n\n[generation]\nn_test = 4\nconversations = 2\n\n\
             [run]\ntrace_port = {trace_port}\ntrace_wait_ms = 3000\n\n{}{}{}",
            docs.display(),
            target_row("returned", "with-contexts", false),
            target_row("traced", "traced", true),
            target_row("silent", "silent", true),
        ),
    )
    .unwrap();
    let run = tmp.path().join("run");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(["test", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&run)
        .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
        .output()
        .unwrap();
    succeeded(&out, "ragtester test against the traced target");
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&run.join("configs.jsonl")).unwrap();
    let id = |name: &str| {
        configs
            .iter()
            .find(|c| c.target.as_ref().is_some_and(|t| t.name == name))
            .unwrap()
            .id
            .clone()
    };
    let (returned, traced, silent) = (id("returned"), id("traced"), id("silent"));
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    let cases: Vec<TestCase> = read_jsonl(&run.join("suite.jsonl")).unwrap();
    let mut compared = 0;
    for case in &cases {
        let of = |config: &str| {
            verdicts
                .iter()
                .find(|v| v.case_id == case.id && v.config_id == config)
        };
        let (Some(a), Some(b)) = (of(&returned), of(&traced)) else {
            continue;
        };
        let answer = answers
            .iter()
            .find(|x| x.case_id == case.id && x.config_id == traced)
            .unwrap();
        let trace = answer
            .trace
            .as_ref()
            .expect("a traced call records its trace");
        assert!(trace.spans >= 3, "{trace:?}");
        assert_eq!(trace.convention.as_deref(), Some("openinference"));
        assert_eq!(trace.model.as_deref(), Some("extractive-first-sentence"));
        assert!(answer.usage.completion_tokens > 0);
        assert!(!answer.contexts.is_empty() && !answer.contexts[0].document_id.is_empty());
        assert_eq!(a.metrics.hit, b.metrics.hit, "{}", case.query);
        assert_eq!(a.metrics.reciprocal_rank, b.metrics.reciprocal_rank);
        assert_eq!(a.passed, b.passed, "{}", case.query);
        assert_eq!(
            a.attribution.as_ref().map(|x| x.cause),
            b.attribution.as_ref().map(|x| x.cause)
        );
        compared += 1;
    }
    assert!(compared >= 4, "{compared} cells compared");
    // The report gives the traced target's steps their own medians, from its spans.
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let of = |id: &str| {
        summary["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    let traced_summary = of(&traced);
    for stage in ["retrieval", "generation"] {
        assert!(
            traced_summary["stage_p50_ms"][stage].as_f64().is_some(),
            "{traced_summary}"
        );
    }
    let calls = traced_summary["traced"][1].as_u64().unwrap();
    assert_eq!(traced_summary["traced"][0].as_u64(), Some(calls));
    assert_eq!(of(&silent)["traced"][0].as_u64(), Some(0));
    // The silent target ran; each answer says it came without a trace.
    let quiet: Vec<&Answer> = answers.iter().filter(|a| a.config_id == silent).collect();
    assert!(!quiet.is_empty());
    for a in quiet {
        assert!(a.error.is_none());
        let note = a.trace.as_ref().and_then(|t| t.note.as_deref()).unwrap();
        assert!(note.contains("no trace"), "{note}");
    }
    // Each conversation reached the service in one session per target, its turns in order (those a
    // service can be fairly asked: skipped cells are never sent).
    let sessions: Value = ureq_get(&format!("{}/sessions", target.base));
    let skipped: Vec<ragtester_core::SkippedCell> =
        read_jsonl(&run.join("skipped.jsonl")).unwrap_or_default();
    let turns: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.turn.is_some() && !skipped.iter().any(|s| s.case_id == c.id))
        .collect();
    assert!(!turns.is_empty());
    let conversations: std::collections::BTreeSet<&str> =
        turns.iter().filter_map(|c| c.conversation()).collect();
    let sessions = sessions.as_object().unwrap();
    for conversation in conversations {
        let mut asked: Vec<&TestCase> = turns
            .iter()
            .copied()
            .filter(|c| c.conversation() == Some(conversation))
            .collect();
        asked.sort_by_key(|c| c.turn.as_ref().unwrap().index);
        let queries: Vec<Value> = asked.iter().map(|c| json!(c.query)).collect();
        let matching = sessions
            .values()
            .filter(|s| s.as_array().unwrap() == &queries)
            .count();
        assert_eq!(matching, 3, "one session per target for {conversation}");
    }
}

/// A service whose retriever is ragtester's own (its passages and answers replayed from an in-process run,
/// reported only in spans the real OpenTelemetry SDK exports) scores from those spans exactly as the
/// in-process configuration did: every rule metric (hit, reciprocal rank, nDCG, recall, precision, keyword
/// recall), the verdict and the failure's attribution, cell by cell, and the same hit rate and MRR.
#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn spans_of_our_own_retriever_score_as_it_does_in_process() {
    let Some(python) = tools_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (docs, corpus) = pump_corpus(tmp.path());
    let project = |body: &str| {
        format!(
            "[corpus]\npaths = [\"{}\"]\n\n[generation]\nn_test = 6\nconversations = 0\n\n{body}",
            docs.display()
        )
    };
    let test = |name: &str, config: String, out: &Path| {
        let file = tmp.path().join(format!("{name}.toml"));
        std::fs::write(&file, config).unwrap();
        let done = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["test", "--config"])
            .arg(&file)
            .arg("--out")
            .arg(out)
            .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
            .output()
            .unwrap();
        succeeded(&done, name);
    };
    let inner = tmp.path().join("inner");
    test(
        "in-process",
        project(
            "[matrix]\nllm = [\"offline\"]\nembedder = [\"hash\"]\nretriever = [\"bm25\"]\ntop_k = [2]\n\
             chunking = [{ max_tokens = 48, overlap_tokens = 0 }]\n",
        ),
        &inner,
    );
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&inner.join("configs.jsonl")).unwrap();
    assert_eq!(configs.len(), 1, "{configs:?}");
    let answers: Vec<Answer> = read_jsonl(&inner.join("answers.jsonl")).unwrap();
    let cases: Vec<TestCase> = read_jsonl(&inner.join("suite.jsonl")).unwrap();
    let query = |id: &str| &cases.iter().find(|c| c.id == id).unwrap().query;
    let replay: serde_json::Map<String, Value> = answers
        .iter()
        .map(|a| {
            assert!(a.error.is_none(), "{a:?}");
            let passages: Vec<Value> = a
                .contexts
                .iter()
                .map(|c| json!({"id": c.chunk_id, "score": c.score, "text": c.text}))
                .collect();
            (
                query(&a.case_id).clone(),
                json!({"answer": a.answer, "passages": passages}),
            )
        })
        .collect();
    let replay_file = tmp.path().join("replay.json");
    std::fs::write(&replay_file, Value::Object(replay).to_string()).unwrap();
    let trace_port = free_port();
    let target = TracedTarget::start(&python, &corpus, trace_port, Some(&replay_file));
    let outer = tmp.path().join("outer");
    test(
        "traced",
        project(&format!(
            "[run]\ntrace_port = {trace_port}\ntrace_wait_ms = 3000\n\n[[target]]\nname = \"replayed\"\n\
             type = \"http\"\nurl = \"{}/replay\"\nbody = '{{\"query\": \"{{{{query}}}}\"}}'\n\
             answer_pointer = \"/answer\"\ntraces = true\n",
            target.base
        )),
        &outer,
    );
    let verdicts =
        |run: &Path| -> Vec<Verdict> { read_jsonl(&run.join("verdicts.jsonl")).unwrap() };
    let (inside, outside) = (verdicts(&inner), verdicts(&outer));
    assert_eq!(inside.len(), answers.len());
    assert_eq!(
        outside.len(),
        inside.len(),
        "the same suite, every case answered"
    );
    let traced: Vec<Answer> = read_jsonl(&outer.join("answers.jsonl")).unwrap();
    let mut hits = 0;
    for a in &inside {
        let b = outside
            .iter()
            .find(|b| query(&b.case_id) == query(&a.case_id))
            .expect("the traced run asked the same question");
        let answer = traced.iter().find(|x| x.case_id == b.case_id).unwrap();
        assert!(
            answer.trace.as_ref().is_some_and(|t| t.spans >= 3),
            "{answer:?}"
        );
        assert_eq!(a.metrics, b.metrics, "{}", query(&a.case_id));
        assert_eq!(a.passed, b.passed, "{}", query(&a.case_id));
        assert_eq!(
            a.attribution.as_ref().map(|x| x.cause),
            b.attribution.as_ref().map(|x| x.cause),
            "{}",
            query(&a.case_id)
        );
        hits += usize::from(a.metrics.hit == Some(true));
    }
    assert!(
        hits > 0 && inside.len() >= 4,
        "{hits} hits in {} cells",
        inside.len()
    );
    let summary = |run: &Path| -> Value {
        let s: Value =
            serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
        s["configs"][0].clone()
    };
    let (a, b) = (summary(&inner), summary(&outer));
    for figure in ["hit_rate", "mrr", "pass_rate"] {
        assert_eq!(a[figure], b[figure], "{figure}: {a} against {b}");
        assert!(a[figure].is_number(), "{figure}: {a}");
    }
}

fn ureq_get(url: &str) -> Value {
    let body = Command::new("python3")
        .args(["-c", "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())"])
        .arg(url)
        .output()
        .unwrap();
    serde_json::from_slice(&body.stdout).unwrap()
}

fn peer_conversations(python: &Path, args: &[&str], file: &Path) -> Vec<Value> {
    let out = Command::new(python)
        .arg(peer_script())
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the libraries cannot handle {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

/// The demo's run — single questions and conversations — exported as RAGAS and DeepEval datasets loads
/// whole in each library's own dataset loader, each kind of sample where the library keeps it (the
/// conversations in the second file the export names), and comes back through `import` with every row.
#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn the_demo_run_exported_loads_whole_in_ragas_and_deepeval() {
    let Some(python) = tools_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let demo = tmp.path().join("demo");
    let cache = tmp.path().join("cache");
    let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
        .args(["demo", "--out", demo.to_str().unwrap()])
        .env("RAGTESTER_CACHE_DIR", &cache)
        .output()
        .unwrap();
    succeeded(&out, "demo");
    let config: Value = serde_json::from_str(
        std::fs::read_to_string(demo.join("configs.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let config = config["id"].as_str().unwrap();
    let answers: Vec<Answer> = read_jsonl(&demo.join("answers.jsonl")).unwrap();
    let cells = answers.iter().filter(|a| a.config_id == config).count();
    let cases: Vec<TestCase> = read_jsonl(&demo.join("suite.jsonl")).unwrap();
    let scripted = cases.iter().filter(|c| c.turn.is_some()).count();
    let simulated = cases.iter().filter(|c| c.goal.is_some()).count();
    // Scripted turns and simulated users' conversations both travel as conversations.
    let turns = scripted + simulated;
    assert!(
        scripted > 0 && simulated > 0 && turns < cases.len(),
        "the demo has every kind"
    );
    for (library, ext, single, multi) in [
        ("ragas", "jsonl", "SingleTurnSample", "MultiTurnSample"),
        ("deepeval", "json", "Golden", "ConversationalGolden"),
        ("deepeval", "jsonl", "Golden", "ConversationalGolden"),
    ] {
        let file = tmp.path().join(format!("demo-{library}.{ext}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["export", demo.to_str().unwrap(), "--format", library])
            .args(["--config", config, "--out", file.to_str().unwrap()])
            .output()
            .unwrap();
        let said = succeeded(&out, &format!("exporting the demo to {library}"));
        let second = tmp
            .path()
            .join(format!("demo-{library}.conversations.{ext}"));
        assert!(
            said.contains(second.to_str().unwrap()),
            "the output names the second file: {said}"
        );
        let load = |path: &Path| peer(&python, "load", library, path);
        let (first, rest) = (load(&file), load(&second));
        assert_eq!(first, json!({ single: cells - turns }), "{library}.{ext}");
        assert_eq!(rest, json!({ multi: turns }), "{library}.{ext}");
        let back = tmp.path().join(format!("back-{library}-{ext}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["import", "--answers", file.to_str().unwrap()])
            .arg("--docs")
            .arg(demo.join("corpus"))
            .args(["--out", back.to_str().unwrap()])
            .env("RAGTESTER_CACHE_DIR", &cache)
            .output()
            .unwrap();
        succeeded(&out, &format!("importing {library}'s export"));
        let again: Vec<Answer> = read_jsonl(&back.join("answers.jsonl")).unwrap();
        assert_eq!(again.len(), cells, "{library}.{ext}: every row back");
        let kept: Vec<TestCase> = read_jsonl(&back.join("suite.jsonl")).unwrap();
        assert_eq!(
            kept.iter().filter(|c| c.turn.is_some()).count(),
            scripted,
            "{library}.{ext}: every conversation turn back as a turn"
        );
        assert_eq!(
            kept.iter().filter(|c| c.goal.is_some()).count(),
            simulated,
            "{library}.{ext}: every simulated user's goal back"
        );
    }
    agent_exports_round_trip(&python, &demo, &cache, tmp.path());
}

/// The demo's agent configuration exported: RAGAS reads every answer as a multi-turn sample with the
/// agent's search call and the expected one, and scores it with its own ToolCallF1; DeepEval reads
/// `tools_called` and `expected_tools`; `import --answers` gives back every call unchanged.
fn agent_exports_round_trip(python: &Path, demo: &Path, cache: &Path, tmp: &Path) {
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&demo.join("configs.jsonl")).unwrap();
    let agent = configs
        .iter()
        .find(|c| c.agent && c.top_k == 3)
        .expect("the demo has an agent");
    let answers: Vec<Answer> = read_jsonl(&demo.join("answers.jsonl")).unwrap();
    let cases: Vec<TestCase> = read_jsonl(&demo.join("suite.jsonl")).unwrap();
    let single: Vec<&Answer> = answers
        .iter()
        .filter(|a| a.config_id == agent.id)
        .filter(|a| cases.iter().any(|c| c.id == a.case_id && c.turn.is_none()))
        .collect();
    assert!(
        single
            .iter()
            .all(|a| a.error.is_some() || a.tool_calls.as_ref().is_some_and(|c| c.len() == 1))
    );
    for (library, ext) in [("ragas", "jsonl"), ("deepeval", "json")] {
        let file = tmp.join(format!("agent-{library}.{ext}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["export", demo.to_str().unwrap(), "--format", library])
            .args(["--config", &agent.id, "--out", file.to_str().unwrap()])
            .output()
            .unwrap();
        succeeded(&out, &format!("exporting the agent to {library}"));
        // RAGAS's agent answers are multi-turn samples, as its conversations are: one file of them.
        let read = file.clone();
        if library == "ragas" {
            assert!(
                !tmp.join(format!("agent-{library}.conversations.{ext}"))
                    .exists()
            );
        }
        let samples = peer(python, "tools", library, &read);
        let samples = samples.as_array().unwrap();
        let with_calls: Vec<&Value> = samples
            .iter()
            .filter(|s| !s["called"].as_array().unwrap().is_empty())
            .collect();
        assert!(
            with_calls.len() >= single.len() / 2,
            "{library}: {} samples with calls",
            with_calls.len()
        );
        for s in &with_calls {
            assert_eq!(s["called"][0][0], "search", "{library}: {s}");
            assert!(s["called"][0][1]["query"].is_string(), "{library}: {s}");
            assert_eq!(s["expected"], json!([["search", {}]]), "{library}: {s}");
            if library == "ragas" {
                // RAGAS's ToolCallF1 runs on the sample; it matches a call only with equal arguments,
                // where ours matches by name and scores arguments apart (DeepEval's default).
                let f1 = s["f1"].as_f64().expect("RAGAS scores the sample");
                assert!((0.0..=1.0).contains(&f1), "{s}");
            }
        }
        let back = tmp.join(format!("agent-back-{library}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["import", "--answers", file.to_str().unwrap()])
            .arg("--docs")
            .arg(demo.join("corpus"))
            .args(["--out", back.to_str().unwrap()])
            .env("RAGTESTER_CACHE_DIR", cache)
            .output()
            .unwrap();
        succeeded(&out, &format!("importing the agent's {library} export"));
        let again: Vec<Answer> = read_jsonl(&back.join("answers.jsonl")).unwrap();
        let kept: Vec<TestCase> = read_jsonl(&back.join("suite.jsonl")).unwrap();
        for a in &single {
            let b = again
                .iter()
                .find(|b| b.case_id == a.case_id)
                .expect("every answer back");
            assert_eq!(b.tool_calls, a.tool_calls, "{library}: {}", a.case_id);
            let case = kept.iter().find(|c| c.id == a.case_id).unwrap();
            assert_eq!(
                case.expected_tools,
                vec![ragtester_core::ToolCall::named("search")]
            );
        }
    }
}

/// Conversations RAGAS and DeepEval write with their own classes come in with their history, and what
/// ragtester writes back is read by those classes as conversations again, turn for turn.
#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn ragas_and_deepeval_conversations_round_trip() {
    let Some(python) = tools_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("pump.md"), PUMP_NOTES).unwrap();
    let conversations = json!([
        {"turns": [
            ["Which valve protects the pump?", "The relief valve.", ["The relief valve protects the pump."]],
            ["At what pressure does it open?", "At 4.5 bar.", ["The relief valve opens at 4.5 bar."]]],
         "reference": "The relief valve opens at 4.5 bar."},
        {"turns": [
            ["泵的转速是多少？", "每分钟 1,200 转。", ["泵的电机转速为每分钟 1,200 转。"]],
            ["满载电流呢？", "3.2 安培。", ["满载电流为 3.2 安培。"]]],
         "reference": "满载电流为 3.2 安培。"}
    ]);
    let file = tmp.path().join("conversations.json");
    std::fs::write(&file, conversations.to_string()).unwrap();
    peer_conversations(
        &python,
        &["conversations-write", tmp.path().to_str().unwrap()],
        &file,
    );
    for (library, written, format) in [
        ("ragas", "ragas-multiturn.jsonl", "ragas"),
        ("deepeval", "deepeval-conversations.json", "deepeval"),
    ] {
        let run = tmp.path().join(format!("run-{library}"));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["import", "--answers"])
            .arg(tmp.path().join(written))
            .arg("--docs")
            .arg(&docs)
            .arg("--out")
            .arg(&run)
            .output()
            .unwrap();
        succeeded(&out, &format!("importing {library}'s conversations"));
        let cases: Vec<Value> = std::fs::read_to_string(run.join("suite.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(cases.len(), 2, "{library}: {cases:?}");
        for case in &cases {
            assert_eq!(case["turn"]["kind"], "logged");
            assert_eq!(case["turn"]["history"].as_array().unwrap().len(), 2);
        }
        assert!(
            cases
                .iter()
                .any(|c| c["query"] == "满载电流呢？" && c["language"] == "zh")
        );
        let configs = std::fs::read_to_string(run.join("configs.jsonl")).unwrap();
        let config: Value = serde_json::from_str(configs.lines().next().unwrap()).unwrap();
        let exported = tmp.path().join(format!("back-{library}.jsonl"));
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(["export", run.to_str().unwrap(), "--format", format])
            .args(["--config", config["id"].as_str().unwrap()])
            .arg("--out")
            .arg(&exported)
            .output()
            .unwrap();
        succeeded(&out, &format!("exporting to {library}"));
        let read = peer_conversations(&python, &["conversations-read", library], &exported);
        assert_eq!(read.len(), 2, "{library}: {read:?}");
        let kind = if library == "ragas" {
            "MultiTurnSample"
        } else {
            "ConversationalTestCase"
        };
        for (got, sent) in read.iter().zip(conversations.as_array().unwrap()) {
            assert_eq!(got["kind"], kind);
            assert_eq!(got["reference"], sent["reference"]);
            let texts: Vec<&str> = got["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m[1].as_str().unwrap())
                .collect();
            let expected: Vec<&str> = sent["turns"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|t| [t[0].as_str().unwrap(), t[1].as_str().unwrap()])
                .collect();
            assert_eq!(texts, expected, "{library}");
            if library == "deepeval" {
                assert_eq!(got["retrieval_context"], sent["turns"][1][2]);
            }
        }
    }
}

/// An agent instrumented with the real OpenTelemetry SDK, reporting its tool calls as spans (OpenInference
/// TOOL spans over a retriever, a GenAI execute_tool span) or in its reply: each planted mistake — a wrong
/// tool, a wrong argument, a missing search — is the reported cause of its failed cases, though every
/// answer is the right one; the right calls pass with tool-call F1 100 % and score their search as
/// retrieval; a reply whose tool call has no name is each case's error, naming why.
#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn planted_tool_mistakes_are_each_the_cause_of_their_cases() {
    let Some(python) = tools_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (docs, corpus) = pump_corpus(tmp.path());
    let trace_port = free_port();
    let target = TracedTarget::start(&python, &corpus, trace_port, None);
    let row = |name: &str, path: &str, traces: bool| {
        let reply_calls = if traces {
            ""
        } else {
            "tool_calls_pointer = \"/tool_calls\"\n"
        };
        format!(
            "[[target]]\nname = \"{name}\"\ntype = \"http\"\nurl = \"{}/{path}\"\n\
             body = '{{\"query\": \"{{{{query}}}}\"}}'\nanswer_pointer = \"/answer\"\n\
             contexts_pointer = \"/contexts\"\n{reply_calls}traces = {traces}\n\n",
            target.base
        )
    };
    let config = tmp.path().join("project.toml");
    std::fs::write(
        &config,
        format!(
            "[run]\ntrace_port = {trace_port}\ntrace_wait_ms = 3000\n\n{}{}{}{}{}{}",
            row("good", "agent/good", true),
            row("wrong-tool", "agent/wrong-tool", true),
            row("wrong-argument", "agent/wrong-argument", true),
            row("no-search", "agent/no-search", true),
            row("reply", "agent-reply/good", false),
            row("malformed", "agent-reply/malformed", false),
        ),
    )
    .unwrap();
    let bin = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args(args)
            .env("RAGTESTER_CACHE_DIR", tmp.path().join("cache"))
            .output()
            .unwrap();
        succeeded(&out, &args.join(" "))
    };
    let suite = tmp.path().join("suite.jsonl");
    let (docs, suite_s) = (docs.to_str().unwrap(), suite.to_str().unwrap());
    bin(&[
        "generate",
        "--docs",
        docs,
        "--out",
        suite_s,
        "--n-test",
        "4",
        "--conversations",
        "0",
    ]);
    // Every answerable case expects a search of the manuals.
    let mut cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    cases.retain(|c| !c.expects_refusal());
    assert!(cases.len() >= 3, "{} answerable cases", cases.len());
    for case in &mut cases {
        case.expected_tools =
            vec![ragtester_core::ToolCall::named("search").with_arg("collection", "manuals")];
    }
    ragtester_core::write_jsonl_atomic(&suite, &cases).unwrap();
    let run = tmp.path().join("run");
    let run_s = run.to_str().unwrap();
    let config_s = config.to_str().unwrap();
    bin(&[
        "run", "--docs", docs, "--suite", suite_s, "--config", config_s, "--out", run_s,
    ]);
    bin(&["judge", run_s]);
    bin(&["report", run_s]);
    let configs: Vec<ragtester_core::Configuration> =
        read_jsonl(&run.join("configs.jsonl")).unwrap();
    let id = |name: &str| {
        configs
            .iter()
            .find(|c| c.target.as_ref().is_some_and(|t| t.name == name))
            .unwrap()
            .id
            .clone()
    };
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    let of = |name: &str| -> Vec<&Verdict> {
        let id = id(name);
        verdicts.iter().filter(|v| v.config_id == id).collect()
    };
    for (name, cause) in [
        ("wrong-tool", ragtester_core::FailureCause::WrongTool),
        (
            "wrong-argument",
            ragtester_core::FailureCause::WrongArgument,
        ),
        ("no-search", ragtester_core::FailureCause::MissingSearch),
    ] {
        let cells = of(name);
        assert_eq!(cells.len(), cases.len(), "{name}");
        for v in cells {
            assert_eq!(v.passed, Some(false), "{name}: {v:?}");
            assert_eq!(
                v.attribution.as_ref().map(|a| a.cause),
                Some(cause),
                "{name}: {v:?}"
            );
        }
    }
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    let tools_of = |name: &str| {
        let id = id(name);
        summary["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id.as_str())
            .unwrap()["tools"]
            .clone()
    };
    for name in ["good", "reply"] {
        for v in of(name) {
            assert_ne!(
                v.attribution.as_ref().map(|a| a.cause.stage()),
                Some("agent"),
                "{name}: {v:?}"
            );
        }
        let tools = tools_of(name);
        assert_eq!(tools["f1"].as_f64(), Some(1.0), "{name}: {tools}");
        assert_eq!(
            tools["argument_match"].as_f64(),
            Some(1.0),
            "{name}: {tools}"
        );
    }
    assert!(tools_of("good")["search_hit_rate"].as_f64().unwrap() > 0.0);
    assert_eq!(tools_of("wrong-tool")["f1"].as_f64(), Some(0.0));
    assert_eq!(
        tools_of("wrong-tool")["mistakes"]["wrong_tool"].as_u64(),
        Some(cases.len() as u64)
    );
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let malformed = id("malformed");
    for a in answers.iter().filter(|a| a.config_id == malformed) {
        let error = a.error.as_deref().unwrap_or_default();
        assert!(
            error.contains("tool_calls_pointer") && error.contains("no name"),
            "{error}"
        );
    }
    let summary_md = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(summary_md.contains("tool-call F1"), "{summary_md}");
}

/// llama.cpp's server plays the simulated user: each goal's conversation runs with its replies read as
/// moves (the server's structured output), every turn bounded by the budget, and a reply the model gets
/// wrong ends that conversation as the case's error naming the model — never a silent pass.
#[test]
#[ignore = "needs the real tools: scripts/real-tools.sh builds them, scripts/test.sh runs this with them"]
fn llama_cpp_server_plays_the_simulated_user() {
    let Some(python) = tools_python() else {
        return;
    };
    let server = LlamaServer::start(&python);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let (docs, _) = pump_corpus(tmp.path());
    let suite = tmp.path().join("suite.jsonl");
    let d = docs.to_str().unwrap();
    let args = ["generate", "--docs", d, "--out", suite.to_str().unwrap()];
    let flags = [
        "--strategy",
        "ragtester",
        "--n-test",
        "3",
        "--conversations",
        "0",
        "--goals",
        "2",
    ];
    let out = ragtester(&[&args[..], &flags[..]].concat(), &server.base, &cache);
    succeeded(&out, "generate with goals");
    let cases: Vec<TestCase> = read_jsonl(&suite).unwrap();
    let goals = cases.iter().filter(|c| c.goal.is_some()).count();
    assert!(goals >= 2, "{goals} goals");
    let project = tmp.path().join("project.toml");
    std::fs::write(
        &project,
        "[matrix]\nretriever = [\"bm25\"]\n\n[run]\nuser_model = \"openai:smollm2\"\nconversation_seconds = 120\n",
    )
    .unwrap();
    let run = tmp.path().join("run");
    let out = ragtester(
        &[
            "run",
            "--docs",
            d,
            "--suite",
            suite.to_str().unwrap(),
            "--config",
            project.to_str().unwrap(),
            "--out",
            run.to_str().unwrap(),
        ],
        &server.base,
        &cache,
    );
    succeeded(&out, "a run with the real model as the user");
    let answers: Vec<Answer> = read_jsonl(&run.join("answers.jsonl")).unwrap();
    let simulated: Vec<&Answer> = answers.iter().filter(|a| a.simulation.is_some()).collect();
    assert_eq!(simulated.len(), goals);
    let mut asked = 0;
    for a in &simulated {
        let sim = a.simulation.as_ref().unwrap();
        assert_eq!(sim.user_model, "openai:smollm2");
        assert!(sim.ended.is_some(), "every conversation ends: {a:?}");
        assert!(sim.turns.len() <= 5, "bounded in turns: {a:?}");
        asked += sim.user_calls;
        if let Some(error) = &a.error {
            assert!(
                error.contains("openai:smollm2"),
                "a named user-model error: {error}"
            );
        }
    }
    assert!(asked >= 1, "the real model was asked to play the user");
    for stage in ["judge", "report"] {
        succeeded(
            &ragtester(&[stage, run.to_str().unwrap()], &server.base, &cache),
            stage,
        );
    }
    // The real model as judge decides, turn by turn, whether an answer met each goal: its decision is
    // recorded as who settled it, or an unreadable one is that verdict's named error — never the offline
    // comparison standing in silently.
    let judged = ragtester(
        &[
            "judge",
            run.to_str().unwrap(),
            "--judge",
            "openai:smollm2",
            "--max-tokens",
            "200",
            "--quiet",
        ],
        &server.base,
        &cache,
    );
    assert!(
        matches!(judged.status.code(), Some(0 | 3)),
        "judge with the real model: {}",
        String::from_utf8_lossy(&judged.stderr)
    );
    let verdicts: Vec<Verdict> = read_jsonl(&run.join("verdicts.jsonl")).unwrap();
    let with_goals: Vec<&Verdict> = verdicts
        .iter()
        .filter(|v| simulated.iter().any(|a| a.case_id == v.case_id))
        .collect();
    assert_eq!(with_goals.len(), goals);
    let mut settled = 0;
    for v in &with_goals {
        let case = cases.iter().find(|c| c.id == v.case_id).unwrap();
        match (&v.status, v.metrics.goal.as_ref()) {
            // A goal the documents cannot meet is decided by whether the answers refused (no model is
            // asked), and says so by naming no judge.
            (VerdictStatus::Ok, Some(goal)) if case.expects_refusal() => {
                assert_eq!(goal.settled_by, None, "{v:?}");
            }
            (VerdictStatus::Ok, Some(goal)) => {
                let by = goal.settled_by.as_deref().unwrap_or_default();
                assert!(by.contains("smollm2"), "settled by the model named: {v:?}");
                settled += 1;
            }
            (VerdictStatus::JudgeError | VerdictStatus::ExecError, _) => {
                let error = v.error.as_deref().unwrap_or_default();
                assert!(!error.is_empty(), "an error says why: {v:?}");
            }
            other => panic!("a goal verdict neither settled by the model nor its error: {other:?}"),
        }
    }
    assert!(
        settled >= 1,
        "the real model settled no goal: {with_goals:?}"
    );
}
