//! `ragtester export` and `ragtester import`: suites and answered cells as RAGAS or DeepEval datasets.

use crate::events::Events;
use crate::ingest::ingest;
use crate::run_dir::RunDir;
use anyhow::{Context, Result, bail};
use ragtester_core::{Answer, Document, TestCase, read_jsonl};
use ragtester_testgen::interop::{self, Shape};
use std::path::{Path, PathBuf};

pub fn export(
    input: &Path,
    format: &str,
    out: &Path,
    docs: &[PathBuf],
    config: Option<&str>,
    events: &dyn Events,
) -> Result<()> {
    let shape = Shape::parse(format)?;
    let (cases, documents, answers): (Vec<TestCase>, Vec<Document>, Option<Vec<Answer>>) =
        if input.is_dir() {
            let run = RunDir::new(input);
            let cases = run.cases()?;
            let documents = run.documents()?;
            let answers = run.answers()?;
            let configs = run.configs()?;
            let chosen = match (config, configs.as_slice()) {
                (Some(id), _) => configs
                    .iter()
                    .find(|c| c.id == id || c.id.starts_with(id))
                    .with_context(|| format!("{} has no configuration `{id}`", input.display()))?,
                (None, [only]) => only,
                (None, _) => bail!(
                    "{} has {} configurations: choose one with --config ({})",
                    input.display(),
                    configs.len(),
                    configs
                        .iter()
                        .map(|c| format!("{} = {}", c.id, c.label()))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            };
            let answers = answers
                .into_iter()
                .filter(|a| a.config_id == chosen.id)
                .collect();
            (cases, documents, Some(answers))
        } else {
            let cases = read_jsonl(input)
                .with_context(|| format!("cannot read suite {}", input.display()))?;
            if docs.is_empty() {
                bail!("exporting a suite file needs --docs, for the text of its source spans");
            }
            (cases, ingest(docs, events)?.0, None)
        };
    let rows = interop::export_rows(shape, &cases, &documents, answers.as_deref());
    let bytes = interop::write_rows(&rows, interop::FileFormat::of(out), shape)?;
    ragtester_core::record::write_atomic(out, &bytes)?;
    events.info(format!("wrote {} rows to {}", rows.len(), out.display()));
    Ok(())
}

/// What an import kept.
pub struct Imported {
    pub rows: usize,
    pub cases: usize,
    /// Documents that could not be read.
    pub failed_documents: usize,
}

impl Imported {
    /// Whether rows or documents were left out.
    pub fn partial(&self) -> bool {
        self.failed_documents > 0 || self.cases < self.rows
    }
}

pub fn import(
    input: &Path,
    format: &str,
    docs: &[PathBuf],
    out: &Path,
    events: &dyn Events,
) -> Result<Imported> {
    let shape = Shape::parse(format)?;
    let rows = interop::read_rows(input, shape)?;
    let (documents, failed) = ingest(docs, events)?;
    let imported = interop::import_rows(shape, &rows, &documents);
    for r in &imported.rejected {
        events.note(format!("{}: {r}", input.display()));
    }
    if imported.cases.is_empty() {
        bail!(
            "no case could be imported from {} ({} rows)",
            input.display(),
            rows.len()
        );
    }
    ragtester_core::write_jsonl_atomic(out, &imported.cases)?;
    events.info(format!(
        "imported {} of {} rows into {}",
        imported.cases.len(),
        rows.len(),
        out.display()
    ));
    Ok(Imported {
        rows: rows.len(),
        cases: imported.cases.len(),
        failed_documents: failed,
    })
}
