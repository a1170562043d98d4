//! `ragtester diff`: two judged runs compared cell by cell, and the comparison as a pull request reads it.

use crate::run_dir::RunDir;
use anyhow::Result;
use ragtester_report::{RunDiff, RunSide};
use std::path::Path;

/// Compare two run directories; with `json`, the comparison is also saved there, and with `markdown`, the
/// pull-request summary of it (within a comment's limit).
pub fn diff(
    before: &Path,
    after: &Path,
    json: Option<&Path>,
    markdown: Option<&Path>,
) -> Result<RunDiff> {
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
    if let Some(path) = markdown {
        let summary: Option<ragtester_report::Summary> =
            after.json(crate::run_dir::SUMMARY).ok().flatten();
        let text = ragtester_report::diff_markdown(
            &diff,
            summary.as_ref(),
            ragtester_report::GITHUB_COMMENT_LIMIT,
        );
        ragtester_core::record::write_atomic(path, text.as_bytes())?;
    }
    Ok(diff)
}
