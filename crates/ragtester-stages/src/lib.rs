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
pub mod leaky;
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

/// What a front end (the command line, the web UI) needs of the engines beyond the stages' own requests and
/// outcomes: the controls it fills in and the renderings it shows. Re-exported here so that a front end
/// depends on `stages` and `core` alone, and an engine's other types stay out of its reach.
pub mod front {
    pub use ragtester_docgen::{Detail, DocRequest};
    pub use ragtester_exec::{Counts, Shard};
    pub use ragtester_ingest::{IngestOptions, Input};
    pub use ragtester_judge::PanelMethod;
    pub use ragtester_report::{
        Gates, check_gates, parse_category_gate, render_audit, render_diff, render_table,
    };
}
pub use events::{Event, Events, Level, Silent};
pub use models::Models;
pub use ragtester_llm::ProviderEnv;
