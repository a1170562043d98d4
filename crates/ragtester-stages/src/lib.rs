//! The stages of ragtester as one library, shared by the command line and the web UI: ingest, generate,
//! run (planned by `plan`), judge and report over run directories, plus document generation, the oracle's
//! audit, run comparison, dataset import/export, the benchmarks and the demo. [`Models`] (from
//! `ragtester-models`, re-exported) is the one registry where a model spec becomes a chat model, an
//! embedder or a reranker. Each
//! stage takes its settings and a [`Models`] registry and returns a typed outcome; everything it tells a
//! person goes through an [`Events`] sink. This crate never prints, parses arguments or chooses exit codes.

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
pub mod manifest;
pub mod merge;
/// The model registry, re-exported: every stage takes its models from it.
pub use ragtester_models as models;
pub mod pairwise;
pub mod plan;
pub mod report;
pub mod run;
pub mod run_dir;

pub use context::StageContext;
pub use events::{Event, Events, Level, Silent};
pub use models::Models;
