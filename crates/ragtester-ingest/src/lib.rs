//! Stage 1: documents in. Loaders turn user files (PDF, DOCX, Markdown, HTML, text) into [`Document`] records
//! with page offsets; chunkers cut documents into the [`Chunk`](ragtester_core::Chunk)s a retriever indexes.
//!
//! This crate knows file formats and nothing of retrieval, models or reports. Every file either becomes a
//! document or a [`Failure`] naming it; one bad file never stops the rest of the corpus.

mod bounds;
mod chunk;
mod decode;
mod glyphs;
mod load;
mod mojibake;
mod overstrike;
mod pages;
mod pdf;
mod shifted;

pub use chunk::{chunk_document, split_sections};
pub use decode::{Decoded, decode_text};
pub use load::{
    Failure, IngestOptions, IngestReport, Input, ingest_inputs, ingest_paths, ingest_paths_with,
    load_bytes, load_file, load_file_with,
};
pub use pages::{PagedText, assemble, expand_ligatures};
pub use pdf::{PdfOxide, PdfTextEngine, extract_pages};

use ragtester_core::Document;
