//! Stage 1: the user's files become documents.

use crate::StageContext;
use crate::events::Events;
use anyhow::{Result, bail};
use ragtester_core::Document;
pub use ragtester_ingest::{IngestOptions, Input};
use std::path::PathBuf;

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

/// Files named one by one before the rest are summed up by reason: a folder of hundreds of broken files
/// would otherwise fill the screen.
const LISTED: usize = 8;

/// `path: why` for the first [`LISTED`] files, then the others counted per reason with a few of their
/// names (`52 more files cannot be read: cannot parse PDF: … (b50.pdf, b51.pdf, b52.pdf, …)`).
fn listed<'a>(
    what: &str,
    items: impl Iterator<Item = (&'a std::path::Path, &'a str)>,
) -> Vec<String> {
    let items: Vec<_> = items.collect();
    let mut lines: Vec<String> = items
        .iter()
        .take(LISTED)
        .map(|(path, why)| format!("{}: {why}", path.display()))
        .collect();
    let mut rest: Vec<(&str, Vec<String>)> = Vec::new();
    for (path, why) in items.iter().skip(LISTED) {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match rest.iter_mut().find(|(reason, _)| reason == why) {
            Some((_, names)) => names.push(name),
            None => rest.push((why, vec![name])),
        }
    }
    for (why, names) in rest {
        let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
        let more = if names.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        let files = if names.len() == 1 { "file" } else { "files" };
        lines.push(format!(
            "{} more {files} {what}: {why} ({}{more})",
            names.len(),
            shown.join(", ")
        ));
    }
    lines
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

/// [`ingest_with`], with each file that failed and why.
pub fn ingest_naming_failures(
    inputs: &[Input],
    options: &IngestOptions,
    events: &dyn Events,
) -> Result<(Vec<Document>, Vec<ragtester_ingest::Failure>)> {
    events.stage("ingest");
    let report = ragtester_ingest::ingest_inputs(inputs, options);
    let failures = report
        .failures
        .iter()
        .map(|f| (f.path.as_path(), f.error.as_str()));
    for line in listed("cannot be read", failures) {
        events.error(line);
    }
    let warnings = report
        .warnings
        .iter()
        .map(|w| (w.path.as_path(), w.error.as_str()));
    for line in listed("read with a warning", warnings) {
        events.warning(line);
    }
    let repeats = report.duplicates.iter().map(|d| {
        (
            d.as_path(),
            "repeats the text of another document; ingested once",
        )
    });
    for line in listed("repeat another document", repeats) {
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

    #[test]
    fn many_failures_are_named_first_then_counted_by_reason() {
        let paths: Vec<std::path::PathBuf> = (0..30)
            .map(|i| std::path::PathBuf::from(format!("docs/b{i:02}.pdf")))
            .collect();
        let items = paths.iter().enumerate().map(|(i, p)| {
            let why = if i % 10 == 9 {
                "encrypted"
            } else {
                "cannot parse PDF"
            };
            (p.as_path(), why)
        });
        let lines = listed("cannot be read", items);
        assert_eq!(lines.len(), LISTED + 2, "{lines:#?}");
        assert_eq!(lines[0], "docs/b00.pdf: cannot parse PDF");
        assert_eq!(
            lines[LISTED],
            "19 more files cannot be read: cannot parse PDF (b08.pdf, b10.pdf, b11.pdf, …)"
        );
        assert_eq!(
            lines[LISTED + 1],
            "3 more files cannot be read: encrypted (b09.pdf, b19.pdf, b29.pdf)"
        );
    }
}
