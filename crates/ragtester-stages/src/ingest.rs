//! Stage 1: the user's files become documents.

use crate::StageContext;
use crate::events::Events;
use crate::listed::{LISTED, Problem, listed};
use anyhow::{Result, bail};
use ragtester_core::Document;
pub use ragtester_ingest::{IngestOptions, Input};
use std::path::PathBuf;

/// How ingest counts what it lists.
const FILES: (&str, &str) = ("file", "files");

/// `ingest` as a front end asks for it: inputs of stated kinds read under `options`, the documents written to
/// the run directory `out`.
pub struct IngestRequest<'a> {
    pub inputs: Vec<Input>,
    pub options: IngestOptions,
    pub out: &'a std::path::Path,
}

/// What an ingest request wrote.
pub struct Ingested {
    pub documents: usize,
    pub failed: usize,
    pub path: PathBuf,
}

/// Read the inputs and write `documents.jsonl` into the run directory.
pub fn ingest_request(
    req: &IngestRequest<'_>,
    cx: &crate::context::StageContext<'_>,
) -> Result<Ingested> {
    let (docs, failures) = ingest_naming_failures(&req.inputs, &req.options, cx.events())?;
    let run = crate::run_dir::RunDir::new(req.out);
    run.save_records(crate::run_dir::DOCUMENTS, &docs)?;
    // Every failure by name, however many the console summed up.
    let failed: Vec<serde_json::Value> = failures
        .iter()
        .map(|f| serde_json::json!({ "path": f.path, "error": f.error }))
        .collect();
    run.save_records(crate::run_dir::FAILED_FILES, &failed)?;
    if failed.len() > LISTED {
        cx.events().info(format!(
            "every file that failed, with why: {}",
            run.file(crate::run_dir::FAILED_FILES).display()
        ));
    }
    let path = run.file(crate::run_dir::DOCUMENTS);
    Ok(Ingested {
        documents: docs.len(),
        failed: failed.len(),
        path,
    })
}

/// Ingest paths typed by a person (a `.jsonl` file holds records, anything else the user's files) with the
/// default options under the context's limits, telling each failure. Errors when no document could be read.
pub fn ingest(paths: &[PathBuf], cx: &StageContext<'_>) -> Result<(Vec<Document>, usize)> {
    ingest_with(&Input::of_paths(paths), &options_of(cx), cx.events())
}

/// The default options under the context's limits.
pub fn options_of(cx: &StageContext<'_>) -> IngestOptions {
    IngestOptions {
        limits: *cx.limits(),
        ..IngestOptions::default()
    }
}

/// Ingest inputs of a stated kind, telling each failure and warning. Errors when no document could be read.
pub fn ingest_with(
    inputs: &[Input],
    options: &IngestOptions,
    events: &dyn Events,
) -> Result<(Vec<Document>, usize)> {
    let (docs, failures) = ingest_naming_failures(inputs, options, events)?;
    if failures.len() > LISTED {
        events.note(
            "`ragtester ingest` names every file that failed, with why, in its output's failed.jsonl",
        );
    }
    Ok((docs, failures.len()))
}

/// Files that failed, or were read with a warning, as the listing tells them.
fn files(list: &[ragtester_ingest::Failure]) -> Vec<Problem<'_>> {
    list.iter()
        .map(|f| Problem::file(&f.path, &f.error))
        .collect()
}

/// [`ingest_with`], with each file that failed and why.
pub fn ingest_naming_failures(
    inputs: &[Input],
    options: &IngestOptions,
    events: &dyn Events,
) -> Result<(Vec<Document>, Vec<ragtester_ingest::Failure>)> {
    events.stage("ingest");
    let report = ragtester_ingest::ingest_inputs(inputs, options);
    for line in listed(&files(&report.failures), FILES, "cannot be read") {
        events.error(line);
    }
    for line in listed(&files(&report.warnings), FILES, "read with a warning") {
        events.warning(line);
    }
    let repeats: Vec<Problem<'_>> = report
        .duplicates
        .iter()
        .map(|d| Problem::file(d, "repeats the text of another document; ingested once"))
        .collect();
    for line in listed(&repeats, FILES, "repeat another document") {
        events.note(line);
    }
    if report.documents.is_empty() {
        bail!(
            "no document could be read from {} ({} failed)",
            inputs
                .iter()
                .map(|i| i.path().display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            report.failures.len()
        );
    }
    events.info(format!(
        "ingested {} documents ({} failed)",
        report.documents.len(),
        report.failures.len()
    ));
    Ok((report.documents, report.failures))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{Event, Level, Recorded};

    #[test]
    fn a_file_that_fails_is_told_as_an_error_naming_it_and_the_rest_is_ingested() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("good.md"), "# Pump\n\nIt runs at 4.5 bar.").unwrap();
        std::fs::write(dir.path().join("broken.pdf"), b"%PDF-1.7 not really").unwrap();
        let events = Recorded::default();
        let inputs = Input::of_paths(&[dir.path().to_path_buf()]);
        let (docs, failed) = ingest_with(&inputs, &IngestOptions::default(), &events).unwrap();
        assert_eq!((docs.len(), failed), (1, 1));
        assert!(matches!(
            events.0.lock().unwrap().first(),
            Some(Event::Stage("ingest"))
        ));
        let errors = events.messages(Level::Error);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("broken.pdf"), "{errors:?}");
        assert_eq!(
            events.messages(Level::Info),
            ["ingested 1 documents (1 failed)"]
        );
    }
}
