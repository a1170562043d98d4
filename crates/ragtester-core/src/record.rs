//! JSONL record files: one JSON object per line, each carrying `schema_version`.
//!
//! Files are written to a temporary sibling and renamed into place, so a reader never sees a half-written file
//! under the final name: a killed stage leaves the previous file or none, never a truncated one that looks done.

use anyhow::{Context, Result, bail};
use serde::{Serialize, de::DeserializeOwned};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

/// Version of every record format this build writes. Readers refuse newer versions and read older ones:
/// version 2 added conversations (a case's `turn`, an answer's `rewritten_query`, a configuration's
/// `history`), each absent from a version-1 record and read as "not a conversation".
pub const SCHEMA_VERSION: u32 = 2;

pub fn default_schema_version() -> u32 {
    SCHEMA_VERSION
}

/// Write records as JSONL, atomically.
pub fn write_jsonl_atomic<T: Serialize>(path: &Path, records: &[T]) -> Result<()> {
    let mut writer = AtomicWriter::create(path)?;
    for record in records {
        writer.record(record)?;
    }
    writer.finish()
}

/// Write bytes to `path` through a temporary file in the same directory and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut writer = AtomicWriter::create(path)?;
    writer
        .write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    writer.finish()
}

/// Write bytes to a new file at `path`, never replacing anything there: a file, a folder or a symbolic link
/// (which is not followed) under that name fails the write with [`std::io::ErrorKind::AlreadyExists`]. The
/// bytes go to a hidden temporary file in the same folder first, so a failed write leaves nothing.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = new_file_beside(path)?;
    file.write_all(bytes)?;
    persist_new(file, path)
}

/// A hidden temporary file in `path`'s folder, for [`persist_new`] to move to `path` once written (a stream
/// too large to hold in memory, say); dropped unpersisted, it is removed.
pub fn new_file_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    tempfile::Builder::new()
        .prefix(".")
        .suffix(".partial")
        .tempfile_in(dir)
}

/// Sync `file` and give it the name `path`, unless that name is taken (`AlreadyExists`; `file` is removed).
pub fn persist_new(file: tempfile::NamedTempFile, path: &Path) -> std::io::Result<()> {
    file.as_file().sync_all()?;
    file.persist_noclobber(path).map_err(|e| e.error)?;
    Ok(())
}

/// A file written under a temporary sibling name and renamed into place by `finish`, so records can be
/// streamed into it one at a time; dropped unfinished, it leaves the previous file (or none) in place.
pub struct AtomicWriter {
    path: std::path::PathBuf,
    tmp: std::path::PathBuf,
    writer: BufWriter<File>,
}

impl AtomicWriter {
    pub fn create(path: &Path) -> Result<Self> {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(dir) = dir {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create directory {}", dir.display()))?;
        }
        let file_name = path
            .file_name()
            .with_context(|| format!("{} is not a file path", path.display()))?;
        let tmp = path.with_file_name(format!(".{}.partial", file_name.to_string_lossy()));
        let file =
            File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            tmp,
            writer: BufWriter::new(file),
        })
    }

    /// One JSONL line.
    pub fn record<T: Serialize>(&mut self, record: &T) -> Result<()> {
        serde_json::to_writer(&mut self.writer, record)?;
        self.writer.write_all(b"\n")?;
        Ok(())
    }

    /// Everything `reader` holds, appended.
    pub fn copy_from(&mut self, reader: &mut impl std::io::Read) -> Result<()> {
        std::io::copy(reader, &mut self.writer)
            .with_context(|| format!("cannot write {}", self.tmp.display()))?;
        Ok(())
    }

    /// Flush, sync and move the file into place.
    pub fn finish(mut self) -> Result<()> {
        self.writer.flush()?;
        self.writer.get_ref().sync_all()?;
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("cannot move {} into place", self.path.display()))?;
        Ok(())
    }
}

impl Write for AtomicWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.writer.write(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.writer.flush()
    }
}

impl Drop for AtomicWriter {
    /// An unfinished file is removed (after `finish` there is nothing left under the temporary name).
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Read a JSONL file ragtester wrote (a run directory's records) under the default limits. Errors name the
/// file and the line; blank lines are skipped.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    read_jsonl_under(path, &crate::Limits::default())
}

/// Read a JSONL file a user named (a suite, a documents file) under the command's limits.
pub fn read_jsonl_under<T: DeserializeOwned>(
    path: &Path,
    limits: &crate::Limits,
) -> Result<Vec<T>> {
    JsonlReader::open_under(path, limits)?.collect()
}

/// Read a JSONL file one record at a time, never holding more than one: files of a whole run's answers
/// are read this way.
pub fn for_each_jsonl<T: DeserializeOwned>(
    path: &Path,
    mut each: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    for record in JsonlReader::open(path)? {
        each(record?)?;
    }
    Ok(())
}

/// The records of a JSONL file as an iterator, read line by line. Errors name the file and the line;
/// blank lines are skipped.
pub struct JsonlReader<T> {
    path: std::path::PathBuf,
    lines: std::io::Lines<BufReader<File>>,
    line: usize,
    limits: crate::Limits,
    record: std::marker::PhantomData<T>,
}

impl<T: DeserializeOwned> JsonlReader<T> {
    /// A file ragtester wrote, read under the default limits.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_under(path, &crate::Limits::default())
    }

    /// A file read under `limits` (each line's nesting checked against `json_depth`).
    pub fn open_under(path: &Path, limits: &crate::Limits) -> Result<Self> {
        let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Self {
            path: path.to_path_buf(),
            lines: BufReader::new(file).lines(),
            line: 0,
            limits: *limits,
            record: std::marker::PhantomData,
        })
    }

    fn parse(&self, line: &str) -> Result<T> {
        let file = self.path.display().to_string();
        parse_record(line, &file, self.line, &self.limits)
    }
}

/// One line of a JSONL record file read as a record of type `T`; errors name `file` and `index` (the line).
/// A line nested deeper than `limits`' `json_depth` or newer than this build's schema is refused.
pub fn parse_record<T: DeserializeOwned>(
    line: &str,
    file: &str,
    index: usize,
    limits: &crate::Limits,
) -> Result<T> {
    limits.check_json_depth(line, format_args!("{file}:{index}"))?;
    let value: serde_json::Value =
        serde_json::from_str(line).with_context(|| format!("{file}:{index}: not valid JSON"))?;
    if let Some(version) = value.get("schema_version").and_then(|v| v.as_u64())
        && version > u64::from(SCHEMA_VERSION)
    {
        bail!(
            "{file}:{index}: schema_version {version} is newer than this build understands ({SCHEMA_VERSION})"
        );
    }
    let mut unknown = Vec::new();
    let record = serde_ignored::deserialize(value, |path| unknown.push(path.to_string()))
        .with_context(|| format!("{file}:{index}: record does not match the expected schema"))?;
    for field in unknown {
        warn_unknown_field(file, index, &field);
    }
    Ok(record)
}

/// A field a record held that its reader does not know is named once per file and field (with the first
/// line that has it), never dropped in silence: a misspelt `expected_tool` or another tool's field name
/// shows up instead of quietly testing less.
pub fn warn_unknown_field(file: &str, index: usize, field: &str) {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashSet<(String, String)>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let first = seen
        .lock()
        .map(|mut s| s.insert((file.to_string(), field.to_string())))
        .unwrap_or(true);
    if first {
        tracing::warn!("{file}:{index}: unknown field `{field}` ignored (this and later lines)");
    }
}

impl<T: DeserializeOwned> Iterator for JsonlReader<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Result<T>> {
        loop {
            let line = self.lines.next()?;
            self.line += 1;
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    return Some(
                        Err(e).with_context(|| format!("cannot read {}", self.path.display())),
                    );
                }
            };
            if !line.trim().is_empty() {
                return Some(self.parse(&line));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn a_new_file_never_replaces_a_file_or_writes_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.md");
        std::fs::write(&kept, "the user's own").unwrap();
        let err = write_new(&kept, b"replacement").unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "the user's own");
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            let private = outside.path().join("private.txt");
            std::fs::write(&private, "secret").unwrap();
            let link = dir.path().join("link.md");
            std::os::unix::fs::symlink(&private, &link).unwrap();
            let dangling = dir.path().join("dangling.md");
            std::os::unix::fs::symlink(outside.path().join("none"), &dangling).unwrap();
            for through in [&link, &dangling] {
                let err = write_new(through, b"planted").unwrap_err();
                assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists, "{through:?}");
            }
            assert_eq!(std::fs::read_to_string(&private).unwrap(), "secret");
            assert!(!outside.path().join("none").exists());
        }
        write_new(&dir.path().join("new.md"), b"fresh").unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".partial"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct R {
        schema_version: u32,
        x: i32,
    }

    #[test]
    fn a_streamed_file_appears_only_when_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        write_jsonl_atomic(
            &path,
            &[R {
                schema_version: 1,
                x: 1,
            }],
        )
        .unwrap();
        {
            let mut unfinished = AtomicWriter::create(&path).unwrap();
            unfinished
                .record(&R {
                    schema_version: 1,
                    x: 2,
                })
                .unwrap();
            // Dropped, as by an error mid-stage: the earlier file stays, nothing partial is left.
        }
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.jsonl"]);
        assert_eq!(
            read_jsonl::<R>(&path).unwrap(),
            [R {
                schema_version: 1,
                x: 1
            }]
        );
        let mut writer = AtomicWriter::create(&path).unwrap();
        for x in 0..3 {
            writer
                .record(&R {
                    schema_version: 1,
                    x,
                })
                .unwrap();
        }
        writer.finish().unwrap();
        let read: Vec<i32> = JsonlReader::<R>::open(&path)
            .unwrap()
            .map(|r| r.unwrap().x)
            .collect();
        assert_eq!(read, [0, 1, 2]);
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
