//! `ragtester diff`: two judged runs compared cell by cell.

use crate::run_dir::RunDir;
use anyhow::Result;
use ragtester_report::{RunDiff, RunSide};
use std::path::Path;

/// Compare two run directories; with `json`, the comparison is also saved there.
pub fn diff(before: &Path, after: &Path, json: Option<&Path>) -> Result<RunDiff> {
    let (before, after) = (RunDir::new(before), RunDir::new(after));
    let (b_cases, b_configs, b_verdicts) = (before.cases()?, before.configs()?, before.verdicts()?);
    let (a_cases, a_configs, a_verdicts) = (after.cases()?, after.configs()?, after.verdicts()?);
    let side = |cases, configs, verdicts| RunSide {
        cases,
        configs,
        verdicts,
    };
    let diff = ragtester_report::diff_runs(
        side(&b_cases, &b_configs, &b_verdicts),
        side(&a_cases, &a_configs, &a_verdicts),
    );
    if let Some(path) = json {
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&diff)?.as_bytes(),
        )?;
    }
    Ok(diff)
}
