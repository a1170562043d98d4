//! What `ragtester docgen` records beside the documents it writes (`docgen.json` in their folder): which
//! files are generated (reports separate generated from real documents, the paper's RQ3), by what, and for
//! planted-fact documents the facts with the exact sentences that state them, so their ground truth needs no
//! model's word.

use crate::case::Category;
use crate::record::default_schema_version;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const MANIFEST_FILE: &str = "docgen.json";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneratedManifest {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    pub documents: Vec<GeneratedEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratedEntry {
    /// File name in the manifest's folder.
    pub file: String,
    pub title: String,
    pub language: String,
    /// `planted` for the offline generator, else the model spec that wrote it.
    pub generator: String,
    #[serde(default)]
    pub facts: Vec<PlantedFact>,
}

/// A fact the document states (or, for a negative, a question it is built never to answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlantedFact {
    pub category: Category,
    pub question: String,
    /// The correct answer; for negatives, the refusal expected.
    pub answer: String,
    pub keywords: Vec<String>,
    /// Sentences of the document that together support the answer, verbatim; empty for negatives.
    pub evidence: Vec<String>,
    /// For a fact another generated document states differently (`docgen --conflicts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<crate::case::SourceConflict>,
}

impl GeneratedManifest {
    /// The manifest of `dir`, or an empty one when it has none.
    pub fn read(dir: &Path) -> Result<Self> {
        let path = dir.join(MANIFEST_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .with_context(|| format!("{} is not a ragtester docgen manifest", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    /// Add or replace entries (by file name) and write the manifest back atomically.
    pub fn merge_into(dir: &Path, entries: Vec<GeneratedEntry>) -> Result<()> {
        let mut manifest = Self::read(dir)?;
        manifest.schema_version = crate::SCHEMA_VERSION;
        for e in entries {
            manifest.documents.retain(|d| d.file != e.file);
            manifest.documents.push(e);
        }
        manifest.documents.sort_by(|a, b| a.file.cmp(&b.file));
        crate::record::write_atomic(
            &dir.join(MANIFEST_FILE),
            serde_json::to_string_pretty(&manifest)?.as_bytes(),
        )
    }

    /// The entry of the file at `path`, from the manifest in its folder.
    pub fn entry_for(path: &Path) -> Result<Option<GeneratedEntry>> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(None);
        };
        let name = name.to_string_lossy();
        Ok(Self::read(dir)?
            .documents
            .into_iter()
            .find(|d| d.file == name))
    }
}
