//! Stage 1: documents in. Loaders turn user files into [`Document`] records with page offsets; chunkers cut
//! documents into the [`Chunk`]s a retriever indexes.
//!
//! This crate knows file formats and nothing of retrieval, models or reports. Every file either becomes a
//! document or a [`Failure`] naming it; one bad file never stops the rest of the corpus.

mod chunk;
mod load;

pub use chunk::{chunk_document, split_sections};
pub use load::{Failure, IngestReport, ingest_paths, load_file};

use ragtester_core::Document;
