//! The stages of ragtester as one library, shared by the command line and the web UI: ingest, generate,
//! run (planned by `plan`), judge and report over run directories, plus document generation, the oracle's
//! audit, run comparison, dataset import/export, the benchmarks and the demo. [`Models`] (from
//! `ragtester-models`, re-exported) is the one registry where a model spec becomes a chat model, an
//! embedder or a reranker. Each
//! stage takes its settings and a [`Models`] registry and returns a typed outcome; everything it tells a
//! person goes through an [`Events`] sink. This crate never prints, parses arguments or chooses exit codes.
//!
//! # Map
//!
//! The stages as functions over run directories, shared by the command line and the web UI. Each stage has
//! one shape: a request (what a front end asks for, filled from flags or form fields over the project file's
//! settings — `SuiteRequest::from_project`, `JudgeRequest::from_project`, `MatrixRequest::from_plan`,
//! `AuditRequest::new`: `IngestRequest`, `SuiteRequest`, `MatrixRequest`, `JudgeRequest`,
//! `OracleBenchRequest`, `AuditRequest`, `DocgenRequest`, `AnswersImport`) carried out by one function with a
//! `StageContext` (`context.rs`: the command's `Models` under the project's `[models]` table, the `Events`
//! sink, the spending cap and the front end's `--limit` values, built once by the front end —
//! `StageContext::new(...).planned(&plan)` — and read, never changed, by the stages, which never read the
//! process's limits or environment themselves (`init` reads the environment from the registry's
//! `ProviderEnv`; no library crate but core reads either, checked by `tests/architecture.rs`); a web job
//! builds its own, so two jobs never see each other's settings) — `ingest_request`, `generate_request`,
//! `run_request`, `judge_request`, `bench_request`, `audit`, `docgen`, … — which returns a typed outcome the
//! front end prints or shows. `full.rs` chains the same requests, each built from the project and reading
//! what the one before wrote. `ingest.rs` (inputs of a stated kind, `Input`, written as `documents.jsonl`),
//! `generate.rs` (every generator, the critic's quality gate over a BM25 corpus in `corpus.rs`, the suite, the
//! documents it was written from and its generation report; `suite_update.rs`: `generate --update`, the
//! earlier suite brought in step with the documents as they are now and written to a new file, never over
//! it; `suite.rs`: the request a front end fills, sent to one or the other; `leaky.rs` leaves out what a `--drop-leaky` model answers closed book, asked with
//! exec's answer prompt and judged by the offline judge), `run.rs` (the matrix executed under the run
//! manifest, the cost estimate, the budget; `MatrixRequest` → `run_request`, the one request both front ends
//! fill: the plan's model settings applied, documents and suite read, prices kept, the matrix run;
//! `answers.jsonl` streamed from the store), `judge.rs` (`JudgeRequest` → `judge_request`: the judges,
//! prompts, profile and judging session set up, the judge crate's pass run with the run directory as its
//! sink — verdicts committed one by one under the session, each batch written, the panel's first and every
//! judge's after them through a side file —, the oracle's figures over the pass's slim verdicts, what each
//! endpoint accepted as structured output), `report.rs` (answers kept without their passages' text except for bad
//! cases; CSV and JUnit streamed into their files), `pairwise.rs` (`judge --pairwise A B` → `pairwise.json`,
//! and each case's winner per criterion with the reasons → `pairwise.jsonl`, joined to the summary when a run
//! is read), `bench_labels.rs` (`bench oracle --labels`: labelled answers judged as a run judges them, scored
//! by the profile in use), `calibrate.rs` (`calibrate`: those judgements fitted into a profile with held-out
//! agreement before and after; `judge::scoring` loads the profile and the embedder it reads), `docgen.rs`,
//! `audit.rs` (the audit sheet's CSV round trip and audit judges), `full.rs` (ingest → report from a project
//! file), `interop.rs` (`export` / `import` of RAGAS and DeepEval datasets, and `import --answers`: answered
//! records written as a run directory — store and records — with one imported configuration per file),
//! `bench_oracle.rs` (the labelled questions from docgen's planted facts and CMRC 2018, judged and scored),
//! `bench_retrieval.rs` (the retrievers on a BEIR data set, dense vectors in-process or in a Chroma server),
//! `bench_index.rs` (`bench index`: one index — BM25, exact, HNSW or Chroma — over a synthetic Zipf corpus of
//! any size: build time, query latency P50/P95, memory, HNSW's recall against exact search), `merge.rs`
//! (`ragtester merge`: the slices of `run --shard K/N` checked — one manifest, one N, every K once, every
//! cell once — and joined into the run an unsharded `run` writes), `diagnose.rs` (each embedder's token
//! profile over the passages it indexes, per document language, taken by `run` into `embedders.json`),
//! `plan.rs` (a run's configurations and settings: the project file with the command line's or the web form's
//! axes and limits laid over it, `--repeat N` multiplying it), `diff.rs` (two runs compared, and the
//! comparison in Markdown for a pull request), `demo.rs` (the bundled corpus through the
//! whole pipeline), `init.rs` (`ragtester init`: the documents read, the model servers the environment names
//! asked once — through the providers' probes — and a commented project file drafted, read back, then put in
//! place). `manifest.rs`: a run's manifest filled from its inputs and built pipelines (the run crate keeps it and
//! compares it field by field on `--resume`). `run_dir`
//! is `ragtester-run`, re-exported for the front ends. `bundled.rs`: the demo corpus (`examples/corpus`,
//! compiled in); `about.rs`: what the binary carries and under which licences (the long version's text).
//! `events.rs`: what stages tell a person — a stage starting, progress counts, and messages by level (error,
//! warning, note, info) — through an `Events` sink.

pub mod about;
pub mod audit;
pub mod bench_index;
pub mod bench_labels;
pub mod bench_oracle;
pub mod bench_retrieval;
pub mod bundled;
pub mod calibrate;
pub mod context;
mod corpus;
pub mod demo;
mod diagnose;
pub mod diff;
pub mod docgen;
pub mod events;
pub mod full;
pub mod generate;
pub mod ingest;
pub mod init;
pub mod interop;
pub mod judge;
pub mod leaky;
mod listed;
pub mod manifest;
pub mod merge;
/// The model registry, re-exported: every stage takes its models from it.
pub use ragtester_models as models;
pub mod pairwise;
pub mod plan;
pub mod report;
pub mod run;
pub mod suite;
pub mod suite_update;
pub use ragtester_run as run_dir;

pub use context::StageContext;

/// What a front end (the command line, the web UI) needs of the engines beyond the stages' own requests and
/// outcomes: the controls it fills in and the renderings it shows. Re-exported here so that a front end
/// depends on `stages` and `core` alone, and an engine's other types stay out of its reach.
pub mod front {
    pub use ragtester_docgen::{Detail, DocRequest};
    pub use ragtester_exec::{Counts, Shard};
    pub use ragtester_ingest::{IngestOptions, Input};
    pub use ragtester_judge::PanelMethod;
    pub use ragtester_report::{
        Gates, RepeatPolicy, check_gates, fold, parse_category_gate, render_audit, render_diff,
        render_table,
    };

    /// What a command prints of a reported run: the one-screen summary folded to `width`, or with `full`
    /// every table.
    pub fn render(summary: &ragtester_report::Summary, full: bool, width: usize) -> String {
        if full {
            render_table(summary)
        } else {
            ragtester_report::render_summary(summary, width)
        }
    }
}
pub use events::{Event, Events, Level, Silent};
pub use models::Models;
pub use ragtester_llm::ProviderEnv;
