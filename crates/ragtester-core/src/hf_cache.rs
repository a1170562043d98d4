//! The local Hugging Face cache (`$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`), so
//! models other tools already downloaded are used in place: `hf:ORG/NAME` → `models--ORG--NAME/snapshots/REV`.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The folder of `hf:ORG/NAME` under a hub cache folder, if that model has been downloaded there.
pub fn repo_folder_in(hub: &Path, repo: &str) -> Option<PathBuf> {
    let folder = hub.join(format!("models--{}", repo.replace('/', "--")));
    folder.is_dir().then_some(folder)
}

/// For a cache repository folder: the snapshot `refs/main` points at, else the only or newest snapshot.
pub fn snapshot_of(dir: &Path) -> Result<Option<PathBuf>> {
    let snapshots = dir.join("snapshots");
    if dir.join("config.json").exists() || !snapshots.is_dir() {
        return Ok(None);
    }
    if let Ok(rev) = std::fs::read_to_string(dir.join("refs/main")) {
        let chosen = snapshots.join(rev.trim());
        if chosen.is_dir() {
            return Ok(Some(chosen));
        }
    }
    let mut newest: Option<(std::time::SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(&snapshots)
        .with_context(|| format!("cannot list {}", snapshots.display()))?
    {
        let entry = entry?;
        let modified = entry.metadata()?.modified()?;
        if newest.as_ref().is_none_or(|(t, _)| modified > *t) {
            newest = Some((modified, entry.path()));
        }
    }
    match newest {
        Some((_, path)) => Ok(Some(path)),
        None => bail!("{} has no downloaded snapshot", dir.display()),
    }
}

/// The snapshot folder of `hf:ORG/NAME` under the hub cache folder `hub` (the environment's, None when
/// no home folder is known), or an error that says where it was looked for.
pub fn snapshot_folder(hub: Option<&Path>, repo: &str) -> Result<PathBuf> {
    let folder = hub
        .and_then(|hub| repo_folder_in(hub, repo))
        .with_context(|| {
            format!(
                "hf:{repo} is not in the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub or \
             ~/.cache/huggingface/hub): download it there, or pass local:PATH"
            )
        })?;
    Ok(snapshot_of(&folder)?.unwrap_or(folder))
}
