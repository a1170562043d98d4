//! Generated documents typeset as PDFs and read back by ragtester's own PDF loader: the text matches the
//! Markdown (English and Chinese, with and without layout noise), and every planted fact's sentence is found,
//! so planted ground truth survives typesetting.
#![cfg(feature = "pdf")]

use ragtester_docgen::render::{Noise, has_cjk_font, render_pdf};
use ragtester_docgen::{DocRequest, DocumentPrompts, GeneratedDoc, OutputFormat};
use std::collections::HashMap;

async fn planted(language: &str, seed: u64) -> GeneratedDoc {
    let dir = tempfile::tempdir().unwrap();
    let req = DocRequest {
        language: language.into(),
        words: 500,
        seed,
        ..Default::default()
    };
    ragtester_docgen::generate(
        &req,
        1,
        dir.path(),
        None,
        &DocumentPrompts::default(),
        &|_| {},
    )
    .await
    .unwrap()
    .remove(0)
}

/// Word-level F1 between two texts (CJK counted by character), as the PDF benchmark measures it.
fn f1(a: &str, b: &str) -> f64 {
    let bag = |t: &str| {
        let mut m: HashMap<String, i64> = HashMap::new();
        for w in t.split(|c: char| !c.is_alphanumeric()) {
            if w.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)) {
                for c in w.chars() {
                    *m.entry(c.to_string()).or_default() += 1;
                }
            } else if !w.is_empty() {
                *m.entry(w.to_lowercase()).or_default() += 1;
            }
        }
        m
    };
    let (x, y) = (bag(a), bag(b));
    let common: i64 = x
        .iter()
        .map(|(k, n)| (*n).min(*y.get(k).unwrap_or(&0)))
        .sum();
    let (nx, ny): (i64, i64) = (x.values().sum(), y.values().sum());
    if common == 0 {
        return 0.0;
    }
    let (p, r) = (common as f64 / nx as f64, common as f64 / ny as f64);
    2.0 * p * r / (p + r)
}

/// The Markdown's text as a reader sees it: no syntax characters.
fn plain(markdown: &str) -> String {
    markdown
        .lines()
        .filter(|l| !l.starts_with("```") && !l.starts_with("| ---"))
        .map(|l| l.trim_start_matches(['#', ' ', '|']).replace('|', " "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn read_back(doc: &GeneratedDoc, noise: &Noise) -> ragtester_core::Document {
    let pdf = render_pdf(&doc.markdown, &doc.title, &doc.language, noise).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.pdf");
    std::fs::write(&path, pdf).unwrap();
    ragtester_ingest::load_file(&path).unwrap()
}

fn check(doc: &GeneratedDoc, noise: &Noise) {
    let read = read_back(doc, noise);
    let score = f1(&plain(&doc.markdown), &read.text);
    assert!(
        score >= 0.95,
        "{} {noise:?}: F1 {score:.3}\n{}",
        doc.language,
        read.text
    );
    for fact in &doc.facts {
        for sentence in &fact.evidence {
            assert!(
                ragtester_core::document::find_text(std::slice::from_ref(&read), sentence)
                    .is_some(),
                "{} {noise:?}: `{sentence}` not found in\n{}",
                doc.language,
                read.text
            );
        }
    }
}

#[tokio::test]
async fn english_pdfs_read_back_as_their_markdown_with_and_without_noise() {
    let doc = planted("en", 3).await;
    check(&doc, &Noise::default());
    check(
        &doc,
        &Noise {
            running_lines: true,
            page_numbers: true,
            two_columns: true,
            font_size: Some(12.0),
            footnote: Some("Internal reference RT-1234.".into()),
        },
    );
}

#[tokio::test]
async fn chinese_pdfs_read_back_as_their_markdown() {
    assert!(
        has_cjk_font(),
        "these tests need a font with Chinese glyphs: apt-get install fonts-wqy-microhei"
    );
    let doc = planted("zh", 5).await;
    check(&doc, &Noise::default());
    check(&doc, &Noise::seeded(1, "zh"));
}

#[tokio::test]
async fn pdfs_are_written_with_their_markdown_source_and_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let doc = planted("en", 9).await;
    let paths = ragtester_docgen::write_documents(
        dir.path(),
        std::slice::from_ref(&doc),
        "planted",
        OutputFormat::Pdf { noise: true },
    )
    .unwrap();
    assert_eq!(paths[0].extension().unwrap(), "pdf");
    let name = paths[0].file_name().unwrap().to_str().unwrap();
    let source = dir.path().join(".markdown").join(format!("{name}.md"));
    assert_eq!(std::fs::read_to_string(source).unwrap(), doc.markdown);
    let entry = ragtester_core::generated::GeneratedManifest::entry_for(&paths[0])
        .unwrap()
        .unwrap();
    assert_eq!(entry.facts, doc.facts);
    // Ingestion marks it generated, from the manifest beside it.
    let read = ragtester_ingest::load_file(&paths[0]).unwrap();
    assert_eq!(
        read.origin,
        ragtester_core::document::DocumentOrigin::Generated
    );
}

/// A PDF whose fonts lost their ToUnicode maps extracts as glyph numbers; ingestion keeps the file but warns,
/// naming the pages, instead of passing the codes off as text. The intact PDF gets no such warning.
#[tokio::test]
async fn a_pdf_without_tounicode_maps_is_read_with_a_warning() {
    let doc = planted("zh", 5).await;
    let pdf = render_pdf(&doc.markdown, &doc.title, &doc.language, &Noise::default()).unwrap();
    // Renaming the key (same length, so every offset stays valid) hides the maps from readers.
    let needle = b"/ToUnicode";
    let mut stripped = pdf.clone();
    let mut renamed = 0;
    for i in 0..stripped.len().saturating_sub(needle.len()) {
        if &stripped[i..i + needle.len()] == needle {
            stripped[i + needle.len() - 1] = b'X';
            renamed += 1;
        }
    }
    assert!(renamed > 0, "typst writes ToUnicode maps");
    let dir = tempfile::tempdir().unwrap();
    let options = ragtester_ingest::IngestOptions::default();
    let (intact, stripped_path) = (
        dir.path().join("intact.pdf"),
        dir.path().join("stripped.pdf"),
    );
    std::fs::write(&intact, &pdf).unwrap();
    std::fs::write(&stripped_path, &stripped).unwrap();
    let (_, warning) = ragtester_ingest::load_file_with(&intact, &options).unwrap();
    assert!(warning.is_none(), "{warning:?}");
    let (read, warning) = ragtester_ingest::load_file_with(&stripped_path, &options).unwrap();
    let warning = warning.expect("a warning for glyph codes");
    assert!(
        warning.contains("glyph codes") && warning.contains("page(s) 1"),
        "{warning}"
    );
    assert!(
        !read.text.contains(&doc.title),
        "the codes are not the text"
    );
}
