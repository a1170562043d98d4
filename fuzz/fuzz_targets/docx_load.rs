//! DOCX bytes (a zip archive) through the loader: a document or an error, never a panic, a hang or
//! an expansion past the zip limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_core::DocumentFormat;
use ragtester_ingest::{IngestOptions, load_bytes};

fuzz_target!(|data: &[u8]| {
    if let Ok((doc, _)) = load_bytes(
        data.to_vec(),
        DocumentFormat::Docx,
        "fuzz",
        "fuzz",
        &IngestOptions::default(),
    ) {
        // Offsets every later stage relies on: the text is whole and non-empty.
        assert!(!doc.text.is_empty());
    }
});
