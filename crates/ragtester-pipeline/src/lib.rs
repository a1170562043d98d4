//! The stages of ragtester as one library, shared by the command line and the web UI: ingest, generate,
//! run, judge and report over run directories, plus document generation and the oracle's audit. Each
//! stage takes its settings and a [`Models`] registry and returns a typed outcome; everything it tells a
//! person goes through an [`Events`] sink. This crate never prints, parses arguments or chooses exit codes.

pub mod audit;
pub mod bench_oracle;
pub mod bench_retrieval;
pub mod bundled;
pub mod chat_models;
mod corpus;
pub mod docgen;
pub mod events;
pub mod full;
pub mod generate;
pub mod ingest;
pub mod interop;
pub mod judge;
pub mod manifest;
pub mod report;
pub mod run;
pub mod run_dir;

pub use chat_models::Models;
pub use events::{Event, Events, Level, Silent};
