//! Corpus and embedder diagnostics a run takes before its first cell: how each embedder's tokenizer reads
//! the passages it indexes, per document language (tokens it cannot map, passages cut at its window).
//! Written to `embedders.json`; the report turns them into warnings with advice.

use anyhow::Result;
use ragtester_core::{Chunk, Document, EmbedderProfile, TokenProfile};
use ragtester_exec::{ModelSource, Pipeline, System};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// One profile per (embedder, chunking, language) among the configurations that embed passages.
pub fn profile_embedders(
    docs: &[Document],
    pipelines: &[Arc<Pipeline>],
    source: &dyn ModelSource,
) -> Result<Vec<EmbedderProfile>> {
    let language: HashMap<&str, &str> = docs
        .iter()
        .map(|d| (d.id.as_str(), d.language.as_str()))
        .collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for pipeline in pipelines {
        let config = &pipeline.config;
        let System::BuiltIn { chunks, .. } = &pipeline.system else {
            continue;
        };
        if !config.retriever.uses_dense()
            || !seen.insert((config.embedder.clone(), &config.chunking))
        {
            continue;
        }
        let embedder = source.embedder(&config.embedder)?;
        let mut by_language: BTreeMap<&str, Vec<&Chunk>> = BTreeMap::new();
        for chunk in chunks.iter() {
            let lang = language
                .get(chunk.document_id.as_str())
                .copied()
                .unwrap_or("");
            by_language.entry(lang).or_default().push(chunk);
        }
        for (lang, chunks) in by_language {
            let mut profile = TokenProfile::default();
            // In slices, so a large corpus is never tokenised in one allocation.
            for slice in chunks.chunks(256) {
                let texts: Vec<&str> = slice.iter().map(|c| c.text.as_str()).collect();
                match embedder.token_profile(&texts) {
                    Some(p) => profile.add(&p?),
                    None => break,
                }
            }
            if profile.texts == 0 {
                continue;
            }
            out.push(EmbedderProfile {
                embedder: config.embedder.clone(),
                chunking: chunking_label(&config.chunking),
                language: lang.to_string(),
                profile,
            });
        }
    }
    Ok(out)
}

fn chunking_label(c: &ragtester_core::ChunkingSettings) -> String {
    let strategy = serde_json::to_value(c.strategy)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    format!(
        "{strategy} {} tokens, overlap {}",
        c.max_tokens, c.overlap_tokens
    )
}
