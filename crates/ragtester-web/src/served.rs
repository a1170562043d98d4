//! Reading a run directory the UI serves. A run directory may come from anyone (`serve --run DIR` on a run
//! someone sent): its files are data, read only where they really are in it — a symbolic link out of the
//! directory (to a private file, to `/dev/zero`) or anything but a regular file is refused, named — and a
//! file served whole is read up to a bound, never to the end of whatever it is.

use anyhow::{Context, Result, bail};
use ragtester_stages::run_dir;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where `name` in `dir` really is, when it is a regular file inside `dir`; `Ok(None)` when there is none.
pub fn file_in(dir: &Path, name: &str) -> Result<Option<PathBuf>> {
    let path = dir.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return Ok(None);
    };
    let root = std::fs::canonicalize(dir)
        .with_context(|| format!("cannot read the run directory {}", dir.display()))?;
    let real = if meta.file_type().is_symlink() {
        let Ok(target) = std::fs::canonicalize(&path) else {
            bail!("`{name}` in {} is a broken symbolic link", dir.display());
        };
        if !target.starts_with(&root) {
            bail!(
                "`{name}` in {} is a symbolic link out of the run directory: not served",
                dir.display()
            );
        }
        target
    } else {
        path
    };
    if !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) {
        bail!(
            "`{name}` in {} is not a regular file: not served",
            dir.display()
        );
    }
    Ok(Some(real))
}

/// The files of a run directory the UI reads.
const SERVED: [&str; 12] = [
    run_dir::DOCUMENTS,
    run_dir::SUITE,
    run_dir::CONFIGS,
    run_dir::ANSWERS,
    run_dir::VERDICTS,
    run_dir::SUMMARY,
    run_dir::AUDIT,
    run_dir::AUDIT_SHEET,
    run_dir::PAIRWISE,
    run_dir::PAIRWISE_CASES,
    run_dir::ORACLE,
    run_dir::REPORT_HTML,
];

/// Every file of a run directory that the UI reads is a regular file inside it (or absent).
pub fn check_run(dir: &Path) -> Result<()> {
    for name in SERVED {
        file_in(dir, name)?;
    }
    Ok(())
}

/// The bytes of `name` in `dir`, at most `max` of them (more is an error naming the limit); `Ok(None)`
/// when the run has no such file.
pub fn read_bounded(dir: &Path, name: &str, max: u64, limit: &str) -> Result<Option<Vec<u8>>> {
    let Some(path) = file_in(dir, name)? else {
        return Ok(None);
    };
    let file = std::fs::File::open(&path)
        .with_context(|| format!("cannot read `{name}` in {}", dir.display()))?;
    let mut bytes = Vec::new();
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read `{name}` in {}", dir.display()))?;
    if bytes.len() as u64 > max {
        bail!(ragtester_core::limits::exceeded(
            limit,
            max / (1024 * 1024),
            &format!("`{name}` is larger")
        ));
    }
    Ok(Some(bytes))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn links_out_devices_and_oversized_files_are_refused_by_name() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("private.html"), "secret").unwrap();
        let run = tempfile::tempdir().unwrap();
        let dir = run.path();
        std::fs::write(dir.join("report.html"), "<p>ok</p>").unwrap();
        std::os::unix::fs::symlink(dir.join("report.html"), dir.join("inside.html")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("private.html"), dir.join("out.html"))
            .unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero.html")).unwrap();
        assert_eq!(
            read_bounded(dir, "report.html", 100, "file_mb").unwrap(),
            Some(b"<p>ok</p>".to_vec())
        );
        assert!(
            read_bounded(dir, "inside.html", 100, "file_mb")
                .unwrap()
                .is_some()
        );
        assert!(
            read_bounded(dir, "none.html", 100, "file_mb")
                .unwrap()
                .is_none()
        );
        for (name, why) in [
            ("out.html", "symbolic link out of the run directory"),
            ("zero.html", "symbolic link out"),
        ] {
            let err = read_bounded(dir, name, 100, "file_mb")
                .unwrap_err()
                .to_string();
            assert!(err.contains(name) && err.contains(why), "{err}");
        }
        let err = read_bounded(dir, "report.html", 4, "file_mb")
            .unwrap_err()
            .to_string();
        assert!(err.contains("file_mb"), "{err}");
        // A device is not a regular file, wherever it is.
        let err = file_in(Path::new("/dev"), "zero").unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        std::os::unix::fs::symlink("/dev/zero", dir.join("suite.jsonl")).unwrap();
        assert!(
            check_run(dir)
                .unwrap_err()
                .to_string()
                .contains("suite.jsonl")
        );
    }
}
