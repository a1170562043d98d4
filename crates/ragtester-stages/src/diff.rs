//! `ragtester diff`: two judged runs compared cell by cell, and the comparison as a pull request reads it.

use crate::run_dir::RunDir;
use anyhow::Result;
use ragtester_core::Configuration;
use ragtester_report::{RunDiff, RunSide};
use std::path::Path;

/// A run's configurations once each, without their repeats: what `--compare` names.
fn bases(configs: &[Configuration]) -> Vec<Configuration> {
    let mut seen = std::collections::HashSet::new();
    configs
        .iter()
        .filter(|c| seen.insert(c.base_id()))
        .map(|c| Configuration {
            id: c.base_id(),
            repeat: None,
            ..c.clone()
        })
        .collect()
}

/// Compare two run directories; with `json`, the comparison is also saved there, and with `markdown`, the
/// pull-request summary of it (within a comment's limit). `compare` names configurations of the first run
/// to compare as configurations of the second (by id, id prefix, system name or label, each side in its
/// own run): the change under test is then the setting that tells them apart.
pub fn diff(
    before: &Path,
    after: &Path,
    (json, markdown): (Option<&Path>, Option<&Path>),
    compare: &[(String, String)],
) -> Result<RunDiff> {
    let (before, after) = (RunDir::new(before), RunDir::new(after));
    let (b_cases, b_configs, b_verdicts) = (before.cases()?, before.configs()?, before.verdicts()?);
    let (a_cases, a_configs, a_verdicts) = (after.cases()?, after.configs()?, after.verdicts()?);
    let side = |cases, configs, verdicts| RunSide {
        cases,
        configs,
        verdicts,
    };
    let pairs = compare
        .iter()
        .map(|(b, a)| {
            let base = |configs: &[Configuration], name: &str, run: &str| {
                crate::pairwise::find(&bases(configs), name)
                    .map(|c| c.base_id())
                    .map_err(|e| {
                        anyhow::Error::new(ragtester_core::usage::UsageError(format!(
                            "--compare, in {run}: {e:#}"
                        )))
                    })
            };
            Ok((
                base(&b_configs, b, "the first run")?,
                base(&a_configs, a, "the second run")?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let diff = ragtester_report::diff_runs_paired(
        side(&b_cases, &b_configs, &b_verdicts),
        side(&a_cases, &a_configs, &a_verdicts),
        &pairs,
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
