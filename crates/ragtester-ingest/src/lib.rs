//! Stage 1: documents in. Loaders turn user files (PDF, DOCX, Markdown, HTML, text) into [`Document`] records
//! with page offsets; chunkers cut documents into the [`Chunk`](ragtester_core::Chunk)s a retriever indexes.
//!
//! This crate knows file formats and nothing of retrieval, models or reports. Every file either becomes a
//! document or a [`Failure`] naming it; one bad file never stops the rest of the corpus.
//!
//! # Map
//!
//! Loaders (`load.rs`) for PDF, DOCX (office_oxide, through its Markdown rendering), Markdown (headings
//! become paragraph boundaries), HTML and text; text decoding with BOM, UTF-8 and detected legacy encodings
//! (`decode.rs`, encoding_rs + chardetng; a NUL or dense control characters refuse a file as binary, while
//! `mojibake.rs` repairs UTF-8 misread as windows-1252 or Latin-1 — "â€™", "â" U+0080 U+0099 — and drops the
//! few stray controls real web text carries, with a warning naming the file); the PDF engine behind the
//! `PdfTextEngine` trait (`pdf.rs`, pdf_oxide — chosen in `docs/decisions/pdf.md`; pages of a long file read
//! on several threads, each with its own parse; panics caught; `shifted.rs` puts glyphs set off the baseline
//! — TeX logos, super- and subscripts, footnote marks — back into their words in x-order from the page's
//! spans, where pdf_oxide sets them after the line); page assembly (`pages.rs`: running headers, footers and
//! page numbers by repetition, ligatures, hyphenation, line joining, per-page char offsets; `overstrike.rs`
//! prints "poor man's bold" words once); `glyphs.rs` (pages whose text is unmapped glyph codes, warned
//! about); chunkers (`chunk.rs`: paragraph, fixed windows, headings; cl100k budgets) and the paper's section
//! split. `bounds.rs` measures a hostile file before a parser spends memory or stack on it (a DOCX's archive
//! by expanding it: entries, size, ratio; HTML element nesting on the parsed DOM with a stack of its own);
//! PDF pages and objects are checked in `pdf.rs`, Markdown nesting as its events stream, decoded text after
//! decoding — each against a named `Limits` value, the one its caller puts in `IngestOptions` (the defaults
//! unless given: the crate reads no process setting). `load_bytes` is the one entry from bytes to a document;
//! `ingest_inputs` takes each path with its kind (`Input::Sources`: the user's files, folders walked for
//! document formats; `Input::Records`: documents an earlier ingestion wrote) — the caller says which, a
//! command line by `Input::of_path` (a `.jsonl` file is records). A walked folder's symbolic links are
//! followed while they stay inside it; one leading out is skipped and named unless
//! `IngestOptions::follow_symlinks`. Fuzz targets live in `fuzz/` (outside the workspace; cargo-fuzz): the
//! PDF, DOCX, HTML and Markdown loaders, the text decoder, provider and target replies, judge replies, run
//! records, RAGAS/DeepEval datasets.

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
