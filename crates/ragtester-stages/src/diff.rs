//! `ragtester diff`: two judged runs compared cell by cell.

use crate::run_dir::RunDir;
use anyhow::Result;
use ragtester_report::RunDiff;
use std::path::Path;

/// Compare two run directories; with `json`, the comparison is also saved there.
pub fn diff(before: &Path, after: &Path, json: Option<&Path>) -> Result<RunDiff> {
    let (before, after) = (RunDir::new(before), RunDir::new(after));
    let (b_configs, b_verdicts) = (before.configs()?, before.verdicts()?);
    let (a_configs, a_verdicts) = (after.configs()?, after.verdicts()?);
    let cases = after.cases()?;
    let diff =
        ragtester_report::diff_runs(&cases, (&b_configs, &b_verdicts), (&a_configs, &a_verdicts));
    if let Some(path) = json {
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&diff)?.as_bytes(),
        )?;
    }
    Ok(diff)
}
