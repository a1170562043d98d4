//! Hostile input against every limit ingestion keeps: each file fails alone, with an error that names the
//! limit it crossed, while the well-formed file beside it is read.

use ragtester_core::Limits;
use ragtester_ingest::{IngestOptions, ingest_paths_with};
use ragtester_testkit::pdf::{Line, PageSpec, PdfSpec, write_pdf};
use std::io::Write;
use std::path::{Path, PathBuf};

fn options(settings: &[&str]) -> IngestOptions {
    let settings: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
    IngestOptions {
        limits: Limits::default().with_overrides(&settings).unwrap(),
        ..IngestOptions::default()
    }
}

/// Ingest `hostile` beside a well-formed file; the well-formed one must be read, the hostile one fail with
/// an error naming `limit`.
fn fails_alone(dir: &Path, hostile: PathBuf, limit: &str, options: &IngestOptions) -> String {
    let fine = dir.join("fine.md");
    std::fs::write(&fine, "# Fine\n\nThe pump moves water.").unwrap();
    let report = ingest_paths_with(&[hostile.clone(), fine], options);
    assert_eq!(report.documents.len(), 1, "the well-formed file is read");
    assert_eq!(report.failures.len(), 1, "{:?}", report.failures);
    assert_eq!(report.failures[0].path, hostile);
    let error = report.failures[0].error.clone();
    assert!(
        error.contains(&format!("limit {limit} = "))
            && error.contains(&format!("--limit {limit}=")),
        "{error}"
    );
    error
}

fn zip_of(path: &Path, entries: &[(&str, Vec<u8>)]) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn docx_with_too_many_entries_fails() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("many.docx");
    let entries: Vec<(String, Vec<u8>)> = (0..50)
        .map(|i| (format!("word/part{i}.xml"), b"<x/>".to_vec()))
        .collect();
    let refs: Vec<(&str, Vec<u8>)> = entries
        .iter()
        .map(|(n, b)| (n.as_str(), b.clone()))
        .collect();
    zip_of(&p, &refs);
    let error = fails_alone(dir.path(), p, "zip_entries", &options(&["zip_entries=20"]));
    assert!(error.contains("50 entries"), "{error}");
}

#[test]
fn docx_zip_bomb_fails_on_its_ratio_and_on_its_size() {
    let dir = tempfile::tempdir().unwrap();
    // 20 MiB of zeros deflate to ~20 KiB: a ratio near 1000.
    let bomb = dir.path().join("bomb.docx");
    zip_of(&bomb, &[("word/document.xml", vec![0u8; 20 * 1024 * 1024])]);
    assert!(std::fs::metadata(&bomb).unwrap().len() < 200 * 1024);
    let error = fails_alone(
        dir.path(),
        bomb.clone(),
        "zip_ratio",
        &IngestOptions::default(),
    );
    assert!(error.contains("zip bomb"), "{error}");
    // With the ratio allowed, the absolute cap still holds.
    fails_alone(
        dir.path(),
        bomb,
        "zip_expanded_mb",
        &options(&["zip_ratio=100000", "zip_expanded_mb=4"]),
    );
}

fn pdf(pages: usize) -> Vec<u8> {
    write_pdf(&PdfSpec {
        pages: (0..pages)
            .map(|i| PageSpec {
                lines: vec![Line::new(
                    72.0,
                    700.0,
                    format!("Page {i} of the pump manual."),
                )],
                drawing: None,
            })
            .collect(),
        ..PdfSpec::default()
    })
}

#[test]
fn pdf_over_its_page_or_object_limit_fails_before_pages_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.pdf");
    std::fs::write(&p, pdf(12)).unwrap();
    let error = fails_alone(
        dir.path(),
        p.clone(),
        "pdf_pages",
        &options(&["pdf_pages=10"]),
    );
    assert!(error.contains("12 pages"), "{error}");
    fails_alone(
        dir.path(),
        p.clone(),
        "pdf_objects",
        &options(&["pdf_objects=5"]),
    );
    // Within the limits it reads.
    let report = ingest_paths_with(&[p], &IngestOptions::default());
    assert_eq!(report.documents.len(), 1, "{:?}", report.failures);
}

#[test]
fn text_that_expands_when_decoded_fails() {
    let dir = tempfile::tempdir().unwrap();
    // Latin-1 accented letters: one byte each in the file, two in UTF-8.
    let p = dir.path().join("latin1.txt");
    let line = b"\xe9t\xe9 \xe0 \xe7\xe0 \xe9l\xe8ve \xe0 \xe9t\xe9\n";
    let bytes: Vec<u8> = line.iter().copied().cycle().take(800 * 1024).collect();
    std::fs::write(&p, bytes).unwrap();
    fails_alone(dir.path(), p, "text_mb", &options(&["text_mb=1"]));
}

#[test]
fn markdown_nested_past_the_limit_fails() {
    let dir = tempfile::tempdir().unwrap();
    let quotes = dir.path().join("quotes.md");
    std::fs::write(
        &quotes,
        format!("# Deep\n\n{} the end\n", ">".repeat(100_000)),
    )
    .unwrap();
    fails_alone(dir.path(), quotes, "nesting", &IngestOptions::default());
    let lists = dir.path().join("lists.md");
    let nested: String = (0..400)
        .map(|i| format!("{}- item {i}\n", "  ".repeat(i)))
        .collect();
    std::fs::write(&lists, nested).unwrap();
    fails_alone(dir.path(), lists, "nesting", &options(&["nesting=64"]));
}

#[test]
fn html_nested_past_the_limit_fails_without_overflowing_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("deep.html");
    let html = format!(
        "<html><head><title>Deep</title></head><body>{}text{}</body></html>",
        "<div><span>".repeat(50_000),
        "</span></div>".repeat(50_000)
    );
    std::fs::write(&p, html).unwrap();
    fails_alone(dir.path(), p, "nesting", &IngestOptions::default());
}

#[test]
fn oversized_file_fails_on_file_mb() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.txt");
    std::fs::write(&p, "word ".repeat(500_000)).unwrap();
    fails_alone(dir.path(), p, "file_mb", &options(&["file_mb=1"]));
}
