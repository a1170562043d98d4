//! PDF text extraction behind a small trait, so the engine (chosen by measurement, see
//! `docs/decisions/pdf.md`) can be swapped without touching the rest of ingestion.

use anyhow::{Context, Result, anyhow, bail};
use pdf_oxide::PdfDocument;
use pdf_oxide::converters::ConversionOptions;
use ragtester_core::Limits;
use ragtester_core::limits::exceeded;

/// An engine that turns PDF bytes into one text per page, in reading order.
pub trait PdfTextEngine: Send + Sync {
    fn name(&self) -> &'static str;
    fn page_texts(&self, bytes: Vec<u8>) -> Result<Vec<String>>;
}

/// pdf_oxide's layout-aware plain-text converter (column detection by XY-cut, tagged-PDF structure order),
/// refusing files with more pages or cross-reference objects than the limits allow before reading a page.
#[derive(Default)]
pub struct PdfOxide {
    limits: Limits,
}

impl PdfOxide {
    pub fn with_limits(limits: Limits) -> Self {
        Self { limits }
    }
}

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
        let doc = open(bytes.clone())?;
        let objects = doc.all_object_ids().len() as u64;
        if objects > self.limits.pdf_objects {
            bail!(exceeded(
                "pdf_objects",
                self.limits.pdf_objects,
                &format!("the PDF's cross-reference table lists {objects} objects")
            ));
        }
        let count = doc
            .page_count()
            .map_err(|e| anyhow!("cannot read the page tree: {e}"))?;
        if count as u64 > self.limits.pdf_pages {
            bail!(exceeded(
                "pdf_pages",
                self.limits.pdf_pages,
                &format!("the PDF has {count} pages")
            ));
        }
        let workers = page_workers(count);
        if workers == 1 {
            drop(bytes);
            return extract_range(&doc, 0..count);
        }
        // pdf_oxide's document is neither Send nor Sync: each spawned worker opens its own copy (fonts are parsed
        // once, in pdf_oxide's global cache) and reads a contiguous run of pages; this thread reads the last run
        // with the document it already opened. docs/benchmarks.md has the timings.
        let per_worker = count.div_ceil(workers);
        let mut starts: Vec<usize> = (0..count).step_by(per_worker).collect();
        let last = starts.pop().expect("a document of several pages");
        // The last spawned worker takes the file's bytes; the others get copies.
        let mut copies: Vec<Vec<u8>> = starts[1..].iter().map(|_| bytes.clone()).collect();
        copies.push(bytes);
        std::thread::scope(|s| {
            let handles: Vec<_> = starts
                .iter()
                .zip(copies)
                .map(|(&start, bytes)| {
                    s.spawn(move || extract_range(&open(bytes)?, start..start + per_worker))
                })
                .collect();
            let tail = extract_range(&doc, last..count);
            let mut pages = Vec::with_capacity(count);
            for handle in handles {
                match handle.join() {
                    Ok(texts) => pages.extend(texts?),
                    // Re-raised on this thread, so `extract_pages` reports the engine's own message.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            pages.extend(tail?);
            Ok(pages)
        })
    }
}

/// Parse a PDF and unlock it if it opens with the empty password.
fn open(bytes: Vec<u8>) -> Result<PdfDocument> {
    let doc = PdfDocument::from_bytes(bytes).map_err(|e| anyhow!("cannot parse PDF: {e}"))?;
    // pdf_oxide returns empty text, not an error, for a file it cannot decrypt: check first. Many PDFs are
    // encrypted with an empty user password (copy/print restrictions only); those open without one.
    if doc.is_encrypted() && !doc.authenticate(b"").unwrap_or(false) {
        bail!("PDF is encrypted and needs a password; decrypt it first (e.g. `qpdf --decrypt`)");
    }
    Ok(doc)
}

fn extract_range(doc: &PdfDocument, pages: std::ops::Range<usize>) -> Result<Vec<String>> {
    let options = ConversionOptions {
        // Table detection in the plain-text converter regroups cells by column: on debian-reference's package
        // tables it tore rows apart ("w3m" on one line, two rows' numbers on the next). Without it every row
        // reads left to right, F1 against pdftotext is equal or higher on every benchmark file, and pages are
        // read 15-25 % faster (docs/decisions/pdf.md).
        extract_tables: false,
        ..ConversionOptions::default()
    };
    pages
        .map(|i| {
            let text = doc
                .to_plain_text(i, &options)
                .map_err(|e| anyhow!("{e}"))
                .with_context(|| format!("cannot extract text from page {}", i + 1))?;
            // Raised and lowered glyphs (TeX logos, super- and subscripts) back into their words. Only
            // pages that show a stray short token are looked at again, span by span.
            if !crate::shifted::may_hold_shifted_glyphs(&text) {
                return Ok(text);
            }
            match doc.extract_spans(i) {
                Ok(spans) => Ok(crate::shifted::repair(&text, &spans)),
                Err(_) => Ok(text),
            }
        })
        .collect()
}

/// Threads for a document of `pages` pages: one per core, each with at least `MIN_PAGES_EACH` pages, since
/// every worker parses the file again.
fn page_workers(pages: usize) -> usize {
    const MIN_PAGES_EACH: usize = 8;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (pages / MIN_PAGES_EACH).clamp(1, cores)
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
