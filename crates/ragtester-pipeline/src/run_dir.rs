//! The files of a run directory and how they are read and kept. A run directory holds: documents.jsonl,
//! suite.jsonl, configs.jsonl, answers.jsonl, verdicts.jsonl, oracle.json, summary.json, report.html,
//! results.csv, junit.xml, store.sqlite, and after an audit audit.csv and audit.json.

use anyhow::{Context, Result};
use ragtester_core::read_jsonl;
use std::path::Path;

/// The cells a run did not ask, and why.
pub const SKIPPED_FILE: &str = "skipped.jsonl";

/// Records of an optional JSONL file; None when the file does not exist.
pub(crate) fn read_optional_jsonl<T: serde::de::DeserializeOwned>(
    path: &Path,
) -> Result<Option<Vec<T>>> {
    if !path.exists() {
        return Ok(None);
    }
    Ok(Some(read_jsonl(path)?))
}

/// The audit of a run's reported failures.
pub const AUDIT_FILE: &str = "audit.json";

/// The prices a run was configured with, kept beside its records so the report can cost it.
pub const PRICES_FILE: &str = "prices.json";

/// Keep the price table in the run directory (nothing is written for an empty table).
pub fn save_prices(run_dir: &Path, prices: &ragtester_core::config::PriceTable) -> Result<()> {
    if prices.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(run_dir)?;
    ragtester_core::record::write_atomic(
        &run_dir.join(PRICES_FILE),
        serde_json::to_string_pretty(prices)?.as_bytes(),
    )
}

/// The oracle's figures, kept beside the verdicts.
pub const ORACLE_FILE: &str = "oracle.json";

/// An optional JSON record of the run directory.
pub(crate) fn read_optional<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
            format!("{} is not what ragtester wrote there", path.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Files a pipeline writes into its output folder; removed before a fresh `test` or `demo` run there.
pub const RUN_FILES: &[&str] = &[
    "documents.jsonl",
    "suite.jsonl",
    "suite.report.json",
    "configs.jsonl",
    "answers.jsonl",
    "verdicts.jsonl",
    "summary.json",
    "report.html",
    "results.csv",
    "junit.xml",
    "prices.json",
    "oracle.json",
    "audit.json",
    "audit.csv",
    "store.sqlite",
    "store.sqlite-wal",
    "store.sqlite-shm",
];

/// Remove what an earlier pipeline wrote into `out`, before a fresh `test` or `demo` run there.
pub fn clear(out: &Path) -> Result<()> {
    for f in RUN_FILES {
        let p = out.join(f);
        if p.exists() {
            std::fs::remove_file(&p)
                .with_context(|| format!("cannot remove the previous {}", p.display()))?;
        }
    }
    Ok(())
}
