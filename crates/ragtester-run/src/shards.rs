//! The slices of a run that `run --shard K/N` wrote, read back for `merge` and checked to belong together:
//! one manifest, one N, every K once. Joining their cells is the merge stage's.

use crate::manifest::{RunManifest, StoredManifest};
use crate::{RunDir, SKIPPED};
use anyhow::{Context, Result, bail};
use ragtester_core::shard::Shard;
use ragtester_core::{Answer, SkippedCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The shards' run directories read, each checked to be a slice, and all checked to be the slices of one
/// run, each present once.
pub fn read_slices(dirs: &[PathBuf]) -> Result<Vec<Slice>> {
    let slices: Vec<Slice> = dirs.iter().map(|d| read_slice(d)).collect::<Result<_>>()?;
    check_slices(&slices)?;
    Ok(slices)
}

/// One slice as found on disk.
pub struct Slice {
    pub dir: PathBuf,
    pub shard: Shard,
    pub manifest: RunManifest,
    pub answers: Vec<Answer>,
    pub skipped: Vec<SkippedCell>,
}

fn read_slice(dir: &Path) -> Result<Slice> {
    let run = RunDir::new(dir);
    if !run.has_db() {
        bail!(
            "{} is not a run directory (no {})",
            dir.display(),
            crate::DB_FILE
        );
    }
    let db = run.db()?;
    let manifest = match db.manifest()? {
        None => bail!("{} holds no run manifest", dir.display()),
        Some(StoredManifest::Older) => {
            bail!(
                "{} was made by an earlier version of ragtester",
                dir.display()
            )
        }
        Some(StoredManifest::Current(manifest)) => *manifest,
    };
    let shard = db.shard()?.with_context(|| {
        format!(
            "{} is a whole run, not a shard (run with --shard K/N)",
            dir.display()
        )
    })?;
    Ok(Slice {
        dir: dir.to_path_buf(),
        shard,
        manifest,
        answers: db.answers()?,
        skipped: run.records_or_empty(SKIPPED)?,
    })
}

/// Every slice present once, all of one N and one manifest.
fn check_slices(slices: &[Slice]) -> Result<()> {
    let first = &slices[0];
    for s in &slices[1..] {
        let differences = s.manifest.differences(&first.manifest);
        if !differences.is_empty() {
            bail!(
                "{} and {} are shards of different runs:\n  {}",
                first.dir.display(),
                s.dir.display(),
                differences.join("\n  ")
            );
        }
        if s.shard.count != first.shard.count {
            bail!(
                "{} is shard {} and {} is shard {}: all shards must split the run in the same N",
                first.dir.display(),
                first.shard,
                s.dir.display(),
                s.shard
            );
        }
    }
    let mut seen: BTreeMap<usize, &Path> = BTreeMap::new();
    for s in slices {
        if let Some(other) = seen.insert(s.shard.index, &s.dir) {
            bail!(
                "shard {} is given twice ({} and {})",
                s.shard,
                other.display(),
                s.dir.display()
            );
        }
    }
    let missing: Vec<String> = (1..=first.shard.count)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{}", first.shard.count))
        .collect();
    if !missing.is_empty() {
        bail!("shard(s) {} missing", missing.join(", "));
    }
    Ok(())
}
