//! `hf:ORG/NAME` and `hf:ORG/NAME/FILE.gguf` as chat models: a GGUF file of a repository in the local
//! Hugging Face cache. Nothing is downloaded; a repository that is not there is an error that says where it
//! was looked for.

use anyhow::{Result, bail};
use std::path::{Path, PathBuf};

/// The GGUF file a `hf:` chat spec names.
pub fn resolve(spec: &str, hub: Option<&Path>) -> Result<PathBuf> {
    let (repo, file) = split(spec);
    let snapshot = ragtester_core::hf_cache::snapshot_folder(hub, repo)?;
    gguf_in(&snapshot, file)
}

/// `ORG/NAME/FILE.gguf` → (`ORG/NAME`, Some(`FILE.gguf`)); `ORG/NAME` → (`ORG/NAME`, None).
pub fn split(spec: &str) -> (&str, Option<&str>) {
    match spec.rsplit_once('/') {
        Some((repo, file)) if file.ends_with(".gguf") && repo.contains('/') => (repo, Some(file)),
        _ => (spec, None),
    }
}

/// The named file in a snapshot, or its only GGUF file.
fn gguf_in(snapshot: &Path, file: Option<&str>) -> Result<PathBuf> {
    if let Some(name) = file {
        let path = snapshot.join(name);
        if !path.is_file() {
            bail!("{} has no {name}", snapshot.display());
        }
        return Ok(path);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(snapshot)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "gguf"))
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!("{} holds no .gguf file", snapshot.display()),
        _ => bail!(
            "{} holds several GGUF files ({}): name one, as hf:ORG/NAME/FILE.gguf",
            snapshot.display(),
            found
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_split_and_files_are_found_or_explained() {
        assert_eq!(
            split("Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf"),
            ("Qwen/Qwen3-0.6B-GGUF", Some("Qwen3-0.6B-Q8_0.gguf"))
        );
        assert_eq!(
            split("Qwen/Qwen3-0.6B-GGUF"),
            ("Qwen/Qwen3-0.6B-GGUF", None)
        );
        let dir = tempfile::tempdir().unwrap();
        assert!(
            gguf_in(dir.path(), None)
                .unwrap_err()
                .to_string()
                .contains("no .gguf")
        );
        std::fs::write(dir.path().join("a-q4.gguf"), b"x").unwrap();
        assert_eq!(
            gguf_in(dir.path(), None).unwrap(),
            dir.path().join("a-q4.gguf")
        );
        std::fs::write(dir.path().join("a-q8.gguf"), b"x").unwrap();
        let err = gguf_in(dir.path(), None).unwrap_err().to_string();
        assert!(err.contains("a-q4.gguf, a-q8.gguf"), "{err}");
        assert_eq!(
            gguf_in(dir.path(), Some("a-q8.gguf")).unwrap(),
            dir.path().join("a-q8.gguf")
        );
        assert!(gguf_in(dir.path(), Some("b.gguf")).is_err());
        assert!(resolve("nobody/never-downloaded-model-xyz", Some(dir.path())).is_err());
        let err = resolve("nobody/x", None).unwrap_err().to_string();
        assert!(err.contains("not in the Hugging Face cache"), "{err}");
    }
}
