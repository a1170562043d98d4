//! JSONL record files: one JSON object per line, each carrying `schema_version`.
//!
//! Files are written to a temporary sibling and renamed into place, so a reader never sees a half-written file
//! under the final name: a killed stage leaves the previous file or none, never a truncated one that looks done.

use anyhow::{Context, Result, bail};
use serde::{Serialize, de::DeserializeOwned};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

/// Version of every record format this build writes. Readers refuse newer versions.
pub const SCHEMA_VERSION: u32 = 1;

pub fn default_schema_version() -> u32 {
    SCHEMA_VERSION
}

/// Write records as JSONL, atomically.
pub fn write_jsonl_atomic<T: Serialize>(path: &Path, records: &[T]) -> Result<()> {
    let mut buf = Vec::new();
    for record in records {
        serde_json::to_writer(&mut buf, record)?;
        buf.push(b'\n');
    }
    write_atomic(path, &buf)
}

/// Write bytes to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create directory {}", dir.display()))?;
    }
    let file_name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    let tmp = path.with_file_name(format!(".{}.partial", file_name.to_string_lossy()));
    {
        let file =
            File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        let mut writer = BufWriter::new(file);
        writer.write_all(bytes)?;
        writer.flush()?;
        writer.get_ref().sync_all()?;
    }
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot move {} into place", path.display()))?;
    Ok(())
}

/// Read a JSONL file. Errors name the file and the line; blank lines are skipped.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut records = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(&line)
            .with_context(|| format!("{}:{}: not valid JSON", path.display(), index + 1))?;
        if let Some(version) = value.get("schema_version").and_then(|v| v.as_u64())
            && version > u64::from(SCHEMA_VERSION)
        {
            bail!(
                "{}:{}: schema_version {version} is newer than this build understands ({SCHEMA_VERSION})",
                path.display(),
                index + 1
            );
        }
        let record = serde_json::from_value(value).with_context(|| {
            format!(
                "{}:{}: record does not match the expected schema",
                path.display(),
                index + 1
            )
        })?;
        records.push(record);
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct R {
        schema_version: u32,
        x: i32,
    }

    #[test]
    fn round_trip_and_no_partial_file_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/r.jsonl");
        let rs = vec![
            R {
                schema_version: 1,
                x: 1,
            },
            R {
                schema_version: 1,
                x: 2,
            },
        ];
        write_jsonl_atomic(&path, &rs).unwrap();
        assert_eq!(read_jsonl::<R>(&path).unwrap(), rs);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["r.jsonl"]);
    }

    #[test]
    fn errors_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, "{\"schema_version\":1,\"x\":1}\nnot json\n").unwrap();
        let err = format!("{:#}", read_jsonl::<R>(&path).unwrap_err());
        assert!(err.contains("bad.jsonl:2"), "{err}");
    }

    #[test]
    fn refuses_newer_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.jsonl");
        std::fs::write(&path, "{\"schema_version\":99,\"x\":1}\n").unwrap();
        let err = format!("{:#}", read_jsonl::<R>(&path).unwrap_err());
        assert!(err.contains("schema_version 99"), "{err}");
    }
}
