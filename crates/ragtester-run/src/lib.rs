//! The run directory, and the only door to it: [`RunDir`] knows every file's name, loads each record typed
//! (with an error that says which stage has not run yet), saves each atomically, and opens the run's
//! database ([`RunDb`]), whose SQL store no other crate reaches.
//!
//! A run directory holds documents.jsonl, suite.jsonl, configs.jsonl, answers.jsonl, verdicts.jsonl,
//! skipped.jsonl, oracle.json, prices.json, summary.json, report.html, results.csv, junit.xml and
//! store.sqlite, and after an audit audit.csv and audit.json. The JSONL and JSON records are what every
//! reader reads (the stages, the web UI, export, diff). The store holds what resuming needs and the records
//! cannot say: each answer committed the moment it exists, each verdict under its judging session, the run
//! manifest, and how each endpoint took structured output.
//!
//! One writer: the store is written first and the JSONL records are written from what was committed, by
//! this type alone (`writers.rs`); stages hand it records, never write a record file themselves.

mod audit_sheet;
mod db;
pub mod manifest;
pub mod shards;
mod writers;
pub use audit_sheet::Sheet;
pub use db::RunDb;
pub use writers::VerdictWriter;

use anyhow::{Context, Result};
use ragtester_core::oracle::{AuditSummary, OracleSummary};
use ragtester_core::{
    Answer, Configuration, Document, SkippedCell, TestCase, Verdict, read_jsonl, write_jsonl_atomic,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};

pub const DOCUMENTS: &str = "documents.jsonl";
/// The files `ingest` could not read, each with why.
pub const FAILED_FILES: &str = "failed.jsonl";
pub const SUITE: &str = "suite.jsonl";
/// The generation report of the run's suite: its quality and what each document gave.
pub const SUITE_REPORT: &str = "suite.report.json";
/// The documents the run's suite was written from (see [`suite_documents_path`]).
pub const SUITE_DOCUMENTS: &str = "suite.documents.jsonl";
pub const CONFIGS: &str = "configs.jsonl";
pub const ANSWERS: &str = "answers.jsonl";
pub const VERDICTS: &str = "verdicts.jsonl";
/// The cells a run did not ask, and why.
pub const SKIPPED: &str = "skipped.jsonl";
/// The oracle's figures, kept beside the verdicts.
pub const ORACLE: &str = "oracle.json";
/// The audit of a run's reported failures.
pub const AUDIT: &str = "audit.json";
/// Two configurations compared answer by answer (`judge --pairwise`).
pub const PAIRWISE: &str = "pairwise.json";
/// Every case of that comparison: who won, on each criterion, and why.
pub const PAIRWISE_CASES: &str = "pairwise.jsonl";
/// The audit sample a person labels.
pub const AUDIT_SHEET: &str = "audit.csv";
/// The prices a run was configured with, kept beside its records so the report can cost it.
pub const PRICES: &str = "prices.json";
/// How each embedder's tokenizer reads the corpus (unknown tokens, truncated passages), per language.
pub const EMBEDDERS: &str = "embedders.json";
pub const SUMMARY: &str = "summary.json";
pub const REPORT_HTML: &str = "report.html";
/// The run's summary in Markdown, within a pull-request comment's limit.
pub const SUMMARY_MD: &str = "summary.md";
pub const RESULTS_CSV: &str = "results.csv";
pub const JUNIT: &str = "junit.xml";
/// The run's database: what resuming needs and the records cannot say.
pub const DB_FILE: &str = ragtester_store::STORE_FILE;

/// Files a pipeline writes into its output folder; removed before a fresh `test` or `demo` run there.
const RUN_FILES: &[&str] = &[
    DOCUMENTS,
    SUITE,
    SUITE_REPORT,
    SUITE_DOCUMENTS,
    CONFIGS,
    ANSWERS,
    VERDICTS,
    SKIPPED,
    SUMMARY,
    REPORT_HTML,
    SUMMARY_MD,
    RESULTS_CSV,
    JUNIT,
    PRICES,
    EMBEDDERS,
    ORACLE,
    AUDIT,
    AUDIT_SHEET,
    PAIRWISE,
    PAIRWISE_CASES,
    DB_FILE,
    "store.sqlite-wal",
    "store.sqlite-shm",
];

/// Where the generation report of a suite file goes: beside it, `NAME.report.json` (a run directory's
/// `suite.jsonl` → [`SUITE_REPORT`]).
pub fn suite_report_path(suite: &Path) -> PathBuf {
    suite.with_extension("report.json")
}

/// The documents a suite file was written from, beside it: `NAME.documents.jsonl`. `generate --update`
/// compares them with the documents as they are now.
pub fn suite_documents_path(suite: &Path) -> PathBuf {
    suite.with_extension("documents.jsonl")
}

/// The generation report of a suite file, written beside it, pretty and atomically.
pub fn save_suite_report<T: Serialize>(suite: &Path, report: &T) -> Result<()> {
    let path = suite_report_path(suite);
    ragtester_core::record::write_atomic(&path, serde_json::to_string_pretty(report)?.as_bytes())
}

const NOT_A_RUN: &str = "is this a run directory?";
const NOT_RUN: &str = "has `ragtester run` finished here?";
const NOT_JUDGED: &str = "has `ragtester judge` run here?";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A file of the run directory, by one of this module's names.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Whether this holds a run: a suite was written here.
    pub fn holds_a_run(&self) -> bool {
        self.file(SUITE).is_file()
    }

    pub fn documents(&self) -> Result<Vec<Document>> {
        self.records(DOCUMENTS, NOT_A_RUN)
    }
    pub fn cases(&self) -> Result<Vec<TestCase>> {
        self.records(SUITE, NOT_A_RUN)
    }
    pub fn configs(&self) -> Result<Vec<Configuration>> {
        self.records(CONFIGS, NOT_A_RUN)
    }
    pub fn answers(&self) -> Result<Vec<Answer>> {
        self.records(ANSWERS, NOT_RUN)
    }
    /// The answers one at a time, for stages that must not hold a whole run's answers.
    pub fn answer_reader(&self) -> Result<ragtester_core::record::JsonlReader<Answer>> {
        ragtester_core::record::JsonlReader::open(&self.file(ANSWERS))
            .with_context(|| format!("{}: {NOT_RUN}", self.path.display()))
    }
    pub fn verdicts(&self) -> Result<Vec<Verdict>> {
        self.records(VERDICTS, NOT_JUDGED)
    }
    /// Cells not asked; none when the run wrote no list (runs made before it did).
    pub fn skipped(&self) -> Result<Vec<SkippedCell>> {
        self.records_or_empty(SKIPPED)
    }
    pub fn prices(&self) -> Result<ragtester_core::config::PriceTable> {
        Ok(self.json(PRICES)?.unwrap_or_default())
    }
    pub fn oracle(&self) -> Result<Option<OracleSummary>> {
        self.json(ORACLE)
    }
    pub fn audit(&self) -> Result<Option<AuditSummary>> {
        self.json(AUDIT)
    }
    /// The pairwise comparison's summary with every case's outcome joined to it.
    pub fn pairwise(&self) -> Result<Option<ragtester_core::oracle::PairwiseSummary>> {
        let Some(mut summary) = self.json::<ragtester_core::oracle::PairwiseSummary>(PAIRWISE)?
        else {
            return Ok(None);
        };
        summary.cases = self.records_or_empty(PAIRWISE_CASES)?;
        Ok(Some(summary))
    }
    /// Embedder token profiles; none for runs made before they were taken.
    pub fn embedder_profiles(&self) -> Result<Vec<ragtester_core::EmbedderProfile>> {
        Ok(self.json(EMBEDDERS)?.unwrap_or_default())
    }

    /// The records of a JSONL file a stage must have written; the error says which stage to run.
    fn records<T: DeserializeOwned>(&self, name: &str, hint: &str) -> Result<Vec<T>> {
        read_jsonl(&self.file(name)).with_context(|| format!("{}: {hint}", self.path.display()))
    }

    /// The records of a JSONL file, none when it does not exist (yet): a run being made is read as far as
    /// it has got.
    pub fn records_or_empty<T: DeserializeOwned>(&self, name: &str) -> Result<Vec<T>> {
        let path = self.file(name);
        if !path.exists() {
            return Ok(Vec::new());
        }
        read_jsonl(&path)
    }

    /// A JSON record, `None` when the file does not exist.
    pub fn json<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        let path = self.file(name);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
                format!("{} is not what ragtester wrote there", path.display())
            })?)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Replace a JSONL file with `records`, atomically.
    pub fn save_records<T: Serialize>(&self, name: &str, records: &[T]) -> Result<()> {
        write_jsonl_atomic(&self.file(name), records)
    }

    /// Replace a JSON file with `value` (pretty-printed), atomically; streamed into the file, since a large
    /// run's summary lists tens of thousands of bad cases.
    pub fn save_json<T: Serialize + ?Sized>(&self, name: &str, value: &T) -> Result<()> {
        let mut file = ragtester_core::record::AtomicWriter::create(&self.file(name))?;
        serde_json::to_writer_pretty(&mut file, value)?;
        file.finish()
    }

    /// Replace a text file (the HTML report, the CSV, JUnit), atomically.
    pub fn save_text(&self, name: &str, text: &str) -> Result<()> {
        ragtester_core::record::write_atomic(&self.file(name), text.as_bytes())
    }

    /// Keep the price table beside the records (nothing is written for an empty table).
    pub fn save_prices(&self, prices: &ragtester_core::config::PriceTable) -> Result<()> {
        if prices.is_empty() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.path)
            .with_context(|| format!("cannot create {}", self.path.display()))?;
        self.save_json(PRICES, prices)
    }

    /// Commit a run's inputs once: documents, cases and configurations into the store (what resuming and
    /// queries read) and as their records (what readers read), the store first.
    pub fn commit_inputs(
        &self,
        db: &RunDb,
        docs: &[ragtester_core::Document],
        cases: &[ragtester_core::TestCase],
        configs: &[ragtester_core::Configuration],
    ) -> Result<()> {
        let store = db.store();
        store.put_documents(docs)?;
        store.put_cases(cases)?;
        store.put_configs(configs)?;
        self.save_records(DOCUMENTS, docs)?;
        self.save_records(SUITE, cases)?;
        self.save_records(CONFIGS, configs)
    }

    /// Whether a run's database is here (a run, a merge or an import wrote this directory).
    pub fn has_db(&self) -> bool {
        self.file(DB_FILE).is_file()
    }

    /// The run's database (created when missing).
    pub fn db(&self) -> Result<RunDb> {
        RunDb::open(&self.path)
    }

    /// Remove what an earlier pipeline wrote here, before a fresh `test` or `demo` run.
    pub fn clear(&self) -> Result<()> {
        for f in RUN_FILES {
            let p = self.file(f);
            if p.exists() {
                std::fs::remove_file(&p)
                    .with_context(|| format!("cannot remove the previous {}", p.display()))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_record_names_the_stage_that_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        assert!(!run.holds_a_run());
        let err = run.cases().unwrap_err();
        assert!(
            format!("{err:#}").contains("is this a run directory?"),
            "{err:#}"
        );
        run.save_records::<TestCase>(SUITE, &[]).unwrap();
        assert!(run.holds_a_run());
        let err = run.verdicts().unwrap_err();
        assert!(format!("{err:#}").contains("ragtester judge"), "{err:#}");
        assert!(run.skipped().unwrap().is_empty());
        assert!(run.oracle().unwrap().is_none());
        std::fs::write(run.file(ORACLE), b"{not json").unwrap();
        let err = run.oracle().unwrap_err();
        assert!(
            format!("{err:#}").contains("not what ragtester wrote"),
            "{err:#}"
        );
    }

    #[test]
    fn prices_round_trip_and_clear_removes_the_records() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path().join("run"));
        run.save_prices(&Default::default()).unwrap();
        assert!(!run.path().exists(), "an empty table writes nothing");
        let prices: ragtester_core::config::PriceTable = serde_json::from_value(
            serde_json::json!({"m": {"input_per_million": 1.0, "output_per_million": 2.0}}),
        )
        .unwrap();
        run.save_prices(&prices).unwrap();
        assert_eq!(run.prices().unwrap(), prices);
        std::fs::write(run.file("notes.txt"), "mine").unwrap();
        run.clear().unwrap();
        assert!(!run.file(PRICES).exists());
        assert!(
            run.file("notes.txt").exists(),
            "files ragtester did not write stay"
        );
    }
}
