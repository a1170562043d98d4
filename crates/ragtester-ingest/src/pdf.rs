//! PDF text extraction behind a small trait, so the engine (chosen by measurement, see
//! `docs/decisions/pdf.md`) can be swapped without touching the rest of ingestion.

use anyhow::{Context, Result, anyhow, bail};
use pdf_oxide::PdfDocument;
use pdf_oxide::converters::ConversionOptions;

/// An engine that turns PDF bytes into one text per page, in reading order.
pub trait PdfTextEngine: Send + Sync {
    fn name(&self) -> &'static str;
    fn page_texts(&self, bytes: Vec<u8>) -> Result<Vec<String>>;
}

/// pdf_oxide's layout-aware plain-text converter (column detection by XY-cut, tagged-PDF structure order).
pub struct PdfOxide;

impl PdfTextEngine for PdfOxide {
    fn name(&self) -> &'static str {
        "pdf_oxide"
    }

    fn page_texts(&self, bytes: Vec<u8>) -> Result<Vec<String>> {
        if !bytes.starts_with(b"%PDF-")
            && !bytes[..bytes.len().min(1024)]
                .windows(5)
                .any(|w| w == b"%PDF-")
        {
            bail!("not a PDF (no %PDF- header)");
        }
        let doc = PdfDocument::from_bytes(bytes).map_err(|e| anyhow!("cannot parse PDF: {e}"))?;
        // pdf_oxide returns empty text, not an error, for a file it cannot decrypt: check first. Many PDFs are
        // encrypted with an empty user password (copy/print restrictions only); those open without one.
        if doc.is_encrypted() && !doc.authenticate(b"").unwrap_or(false) {
            bail!(
                "PDF is encrypted and needs a password; decrypt it first (e.g. `qpdf --decrypt`)"
            );
        }
        let count = doc
            .page_count()
            .map_err(|e| anyhow!("cannot read the page tree: {e}"))?;
        let options = ConversionOptions::default();
        (0..count)
            .map(|i| {
                doc.to_plain_text(i, &options)
                    .map_err(|e| anyhow!("{e}"))
                    .with_context(|| format!("cannot extract text from page {}", i + 1))
            })
            .collect()
    }
}

/// Run an engine with panics caught: a bug in a parser fails this file with a message, never the whole run.
pub fn extract_pages(engine: &dyn PdfTextEngine, bytes: Vec<u8>) -> Result<Vec<String>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.page_texts(bytes))) {
        Ok(result) => result,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unknown cause");
            bail!(
                "the PDF engine ({}) crashed on this file: {msg}",
                engine.name()
            )
        }
    }
}
