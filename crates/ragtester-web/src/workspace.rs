//! The workspace folder the UI works in: `docs/` (uploaded and generated documents), `suites/` (one JSONL
//! per suite, with the list of documents it was written from) and `runs/` (one run directory each), plus
//! run directories named on the command line, which are read but never written.

use anyhow::{Context, Result, bail};
use ragtester_stages::run_dir::{self, RunDir};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub struct Workspace {
    root: PathBuf,
    /// Run directories outside the workspace (`serve --run DIR`), by the name the UI shows.
    extra_runs: Vec<(String, PathBuf)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileEntry {
    pub name: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunEntry {
    pub name: String,
    /// Whether verdicts exist (the run can be browsed as judged results).
    pub judged: bool,
    /// Whether the run lives in the workspace (jobs may write it) or was named with `--run`.
    pub writable: bool,
}

/// A name the UI may use for a suite or run, or a document's file name: one path component of letters,
/// digits, CJK and `._-`, not hidden, not `..`. Anything else is refused, so no request can reach outside
/// the workspace.
pub fn check_name(name: &str) -> Result<()> {
    let ok_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | ' ');
    if name.is_empty()
        || name.chars().count() > 120
        || name.starts_with('.')
        || name.starts_with(' ')
        || name.ends_with(' ')
        || !name.chars().all(ok_char)
    {
        bail!(
            "`{}` is not a usable name: use letters, digits, spaces and . _ - (not first), up to 120 characters",
            name.escape_default()
        );
    }
    Ok(())
}

/// Why a document name cannot be written: something has it already.
pub fn taken(name: &str) -> String {
    format!(
        "a document named `{name}` exists already: rename the file, or delete the old one from the workspace first"
    )
}

/// Create `dir` (and its parents) readable by this account only: a workspace holds private documents and
/// results, and other accounts of the machine must not read them from disk either.
fn create_private_dir(dir: &Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))
}

/// The file name an upload is stored under: its last path component (browsers may send `C:\x\a.pdf` or
/// `../../a.pdf`), checked with [`check_name`].
pub fn upload_name(sent: &str) -> Result<String> {
    let last = sent.rsplit(['/', '\\']).next().unwrap_or_default().trim();
    check_name(last).with_context(|| format!("upload `{}` refused", sent.escape_default()))?;
    Ok(last.to_string())
}

impl Workspace {
    pub fn open(root: &Path, extra_runs: &[PathBuf]) -> Result<Self> {
        for sub in ["docs", "suites", "runs"] {
            create_private_dir(&root.join(sub))?;
        }
        #[cfg(unix)]
        if let Ok(meta) = std::fs::metadata(root) {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o077 != 0 {
                tracing::warn!(
                    "{} can be read by other accounts of this machine (chmod 700 it to keep its documents and results private)",
                    root.display()
                );
            }
        }
        let mut named: Vec<(String, PathBuf)> = Vec::new();
        for dir in extra_runs {
            if !RunDir::new(dir).holds_a_run() {
                bail!("{} is not a run directory (no suite.jsonl)", dir.display());
            }
            let base = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "run".into());
            let mut name = base.clone();
            let mut n = 2;
            while named.iter().any(|(k, _)| *k == name) || root.join("runs").join(&name).exists() {
                name = format!("{base}-{n}");
                n += 1;
            }
            named.push((name, dir.clone()));
        }
        Ok(Self {
            root: root.to_path_buf(),
            extra_runs: named,
        })
    }

    /// The run the page opens on: the first `serve --run DIR`, whose results are what its user came for.
    pub fn opened_run(&self) -> Option<&str> {
        self.extra_runs.first().map(|(name, _)| name.as_str())
    }

    pub fn docs_dir(&self) -> PathBuf {
        self.root.join("docs")
    }

    /// Whether a document may be written under `name`: a name the workspace uses itself (the generated
    /// documents' manifest) is refused, and so is any name that something has already — a document, a
    /// folder, a symbolic link, which is never written through.
    pub fn check_new_document(&self, name: &str) -> Result<()> {
        check_name(name)?;
        if name.eq_ignore_ascii_case(ragtester_core::generated::MANIFEST_FILE) {
            bail!(
                "`{name}` is the workspace's own record of generated documents: upload the file under another name"
            );
        }
        if std::fs::symlink_metadata(self.docs_dir().join(name)).is_ok() {
            bail!(taken(name));
        }
        Ok(())
    }

    pub fn documents(&self) -> Result<Vec<FileEntry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(self.docs_dir())? {
            let entry = entry?;
            let meta = entry.metadata()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            // The docgen manifest describes documents; it is not one.
            if meta.is_file()
                && !name.starts_with('.')
                && name != ragtester_core::generated::MANIFEST_FILE
            {
                out.push(FileEntry {
                    name,
                    bytes: meta.len(),
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Paths of the named documents (all of them when `names` is empty); unknown names are an error.
    pub fn document_paths(&self, names: &[String]) -> Result<Vec<PathBuf>> {
        let all = self.documents()?;
        if all.is_empty() {
            bail!("the workspace has no documents: upload some or generate them first");
        }
        if names.is_empty() {
            return Ok(all.iter().map(|f| self.docs_dir().join(&f.name)).collect());
        }
        names
            .iter()
            .map(|n| {
                check_name(n)?;
                if !all.iter().any(|f| &f.name == n) {
                    bail!("no document `{n}` in the workspace");
                }
                Ok(self.docs_dir().join(n))
            })
            .collect()
    }

    pub fn suite_path(&self, name: &str) -> Result<PathBuf> {
        check_name(name)?;
        Ok(self.root.join("suites").join(format!("{name}.jsonl")))
    }

    /// Where a suite's list of source documents is kept, so a run ingests exactly those.
    pub fn suite_docs_path(&self, name: &str) -> Result<PathBuf> {
        check_name(name)?;
        Ok(self.root.join("suites").join(format!("{name}.docs.json")))
    }

    pub fn suites(&self) -> Result<Vec<FileEntry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(self.root.join("suites"))? {
            let entry = entry?;
            let file = entry.file_name().to_string_lossy().into_owned();
            // A suite's documents snapshot and conversations export sit beside it; they are not suites.
            let companion = [".documents.jsonl", ".conversations.jsonl"]
                .iter()
                .any(|c| file.ends_with(c));
            if let Some(name) = file.strip_suffix(".jsonl").filter(|_| !companion) {
                out.push(FileEntry {
                    name: name.to_string(),
                    bytes: entry.metadata()?.len(),
                });
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// A new run directory in the workspace; an existing name is refused (runs are never overwritten).
    pub fn new_run_dir(&self, name: &str) -> Result<PathBuf> {
        check_name(name)?;
        let dir = self.root.join("runs").join(name);
        if std::fs::symlink_metadata(&dir).is_ok() || self.extra_runs.iter().any(|(n, _)| n == name)
        {
            bail!("a run named `{name}` exists already: choose another name");
        }
        Ok(dir)
    }

    /// The directory of a run by name, and whether jobs may write it.
    pub fn run_dir(&self, name: &str) -> Result<(PathBuf, bool)> {
        if let Some((_, dir)) = self.extra_runs.iter().find(|(n, _)| n == name) {
            return Ok((dir.clone(), false));
        }
        check_name(name)?;
        let dir = self.root.join("runs").join(name);
        if !RunDir::new(&dir).holds_a_run() {
            bail!("no run named `{name}`");
        }
        Ok((dir, true))
    }

    pub fn runs(&self) -> Result<Vec<RunEntry>> {
        let mut out: Vec<RunEntry> = self
            .extra_runs
            .iter()
            .map(|(name, dir)| RunEntry {
                name: name.clone(),
                judged: dir.join(run_dir::VERDICTS).is_file(),
                writable: false,
            })
            .collect();
        let mut own = Vec::new();
        for entry in std::fs::read_dir(self.root.join("runs"))? {
            let dir = entry?.path();
            if RunDir::new(&dir).holds_a_run() {
                own.push(RunEntry {
                    name: dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    judged: dir.join(run_dir::VERDICTS).is_file(),
                    writable: true,
                });
            }
        }
        own.sort_by(|a, b| a.name.cmp(&b.name));
        out.extend(own);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_leave_the_workspace() {
        for bad in [
            "", "..", "../x", "a/b", "a\\b", ".hidden", "x\0y", "a:b", " lead",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["manual.pdf", "报告 2024.docx", "run-1_a.b"] {
            check_name(good).unwrap();
        }
    }

    #[test]
    fn uploads_keep_only_their_last_component() {
        assert_eq!(upload_name("../../etc/passwd").unwrap(), "passwd");
        assert_eq!(upload_name("C:\\Users\\me\\a.pdf").unwrap(), "a.pdf");
        assert!(upload_name("../..").is_err());
        assert!(upload_name("dir/").is_err());
        assert!(upload_name("..\\.bashrc").is_err());
    }

    #[test]
    fn documents_are_never_overwritten_nor_the_manifest_replaced() {
        let root = tempfile::tempdir().unwrap();
        let ws = Workspace::open(&root.path().join("ws"), &[]).unwrap();
        std::fs::write(ws.docs_dir().join("manual.md"), "mine").unwrap();
        let err = ws.check_new_document("manual.md").unwrap_err().to_string();
        assert!(err.contains("`manual.md` exists already"), "{err}");
        for reserved in ["docgen.json", "DOCGEN.json"] {
            let err = ws.check_new_document(reserved).unwrap_err().to_string();
            assert!(err.contains("own record"), "{err}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/nonexistent/x", ws.docs_dir().join("link.md")).unwrap();
            assert!(ws.check_new_document("link.md").is_err());
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(ws.docs_dir())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "docs/ is {mode:o}");
        }
        ws.check_new_document("other.md").unwrap();
    }

    #[test]
    fn runs_are_never_overwritten_and_unknown_ones_are_named() {
        let root = tempfile::tempdir().unwrap();
        let ws = Workspace::open(root.path(), &[]).unwrap();
        let dir = ws.new_run_dir("r1").unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(ragtester_stages::run_dir::SUITE), "").unwrap();
        assert!(ws.new_run_dir("r1").is_err());
        assert_eq!(ws.run_dir("r1").unwrap().0, dir);
        let err = ws.run_dir("nope").unwrap_err().to_string();
        assert!(err.contains("nope"), "{err}");
        assert_eq!(ws.runs().unwrap().len(), 1);
    }
}
