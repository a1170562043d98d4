//! `ragtester demo`: the whole pipeline on the bundled corpus and two generated handbooks, offline.

use crate::context::StageContext;
use crate::events::Events;
use crate::full::{PipelineOutcome, full_pipeline};
use anyhow::{Context, Result};
use ragtester_core::config::{MatrixSettings, ProjectConfig};
use ragtester_core::{Generator, HistoryMode, RetrieverKind};
use std::path::Path;

use crate::init::{MINILM_DIR, MULTILINGUAL_DIR, fetched};

/// Embedders and rerankers of the demo's matrix; empty lists take the demo's own.
pub struct DemoArgs<'a> {
    pub out: &'a Path,
    pub embedders: Vec<String>,
    pub rerankers: Vec<String>,
}

/// The `hash` fallback always (so the demo runs anywhere), and beside it a real model when
/// `scripts/fetch-models.sh` has put one in the working directory: multilingual-e5-small, which reads the
/// demo's Chinese documents, or else the English-only MiniLM.
fn demo_embedders(events: &dyn Events) -> Vec<String> {
    let mut out = vec!["hash".to_string()];
    if !ragtester_models::local::BUILT_IN {
        // The lean build of the README's first command: the fetched models need the default build.
        if fetched(MULTILINGUAL_DIR) || fetched(MINILM_DIR) {
            events.note(
                "dense cells use the `hash` fallback: this build runs no model in-process \
                 (--no-default-features); the default build uses the fetched models",
            );
        }
        return out;
    }
    if fetched(MULTILINGUAL_DIR) {
        out.push(format!("local:{MULTILINGUAL_DIR}"));
    } else if fetched(MINILM_DIR) {
        out.push(format!("local:{MINILM_DIR}"));
        events.note(
            "dense cells use all-MiniLM-L6-v2, which cannot read the demo's Chinese documents; \
             scripts/fetch-models.sh converts the multilingual model too",
        );
    } else {
        events.note("dense cells use the `hash` fallback; --embedder names a real model");
    }
    out
}

/// Planted facts in English and Chinese, whose cases have exact ground truth, typeset as PDFs (the
/// English one with layout noise) and read back by the PDF loader like any real PDF. The report
/// separates them from the real documents (the paper's RQ3).
async fn write_generated(dir: &Path, cx: &StageContext<'_>) -> Result<()> {
    // The writer's own progress is not the demo's: its events go nowhere.
    let quiet = cx.telling(&crate::Silent);
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    for language in ["en", "zh"] {
        crate::docgen::docgen(
            &crate::docgen::DocgenRequest {
                request: ragtester_docgen::DocRequest {
                    language: language.into(),
                    words: 300,
                    ..Default::default()
                },
                llm: crate::docgen::DEFAULT_WRITER,
                count: 1,
                out: dir,
                prompts: None,
                format: crate::docgen::demo_format(language, cx.events()),
            },
            &quiet,
        )
        .await?;
    }
    Ok(())
}

pub async fn demo(args: DemoArgs<'_>, cx: &StageContext<'_>) -> Result<PipelineOutcome> {
    let events = cx.events();
    let embedders = match args.embedders {
        given if given.is_empty() => demo_embedders(events),
        given => given,
    };
    let rerankers = match args.rerankers {
        given if given.is_empty() => vec!["offline".to_string()],
        given => given,
    };
    let corpus = crate::bundled::write_corpus(&args.out.join("corpus"))?;
    write_generated(&corpus.join("generated"), cx).await?;
    let mut project = ProjectConfig {
        matrix: Some(MatrixSettings {
            // Two depths, so the demo shows what a retriever loses when only its first passage counts.
            top_k: vec![1, 3],
            // The four retrievers, and the closed book beside them: a system that cannot reach the
            // documents, which the simulated users' goals (and the leaky cases) tell from the rest.
            retriever: vec![
                RetrieverKind::Bm25,
                RetrieverKind::Dense,
                RetrieverKind::Hybrid,
                RetrieverKind::HybridRerank,
                RetrieverKind::ClosedBook,
            ],
            embedder: embedders,
            reranker: rerankers,
            // The conversation axis: each turn alone, with its history in the prompt, and rewritten from
            // its history before retrieval.
            history: vec![HistoryMode::None, HistoryMode::Prompt, HistoryMode::Rewrite],
            // An agent: the reader calls BM25 as its search tool before it answers.
            agent: vec![RetrieverKind::Bm25],
            ..Default::default()
        }),
        ..Default::default()
    };
    // Twelve cases per document with two complex ones and 48-token sections: every kind of case
    // (negatives of four kinds, multi-passage, multi-document, poisoned) fits every sample document,
    // the short generated handbooks included, since each section feeds one case.
    project.generation.n_test = 12;
    project.generation.n_complex = Some(2);
    project.generation.section_tokens = 48;
    // A simulated user per document, played by the offline user, pursuing a goal turn by turn.
    project.generation.goals = 2;
    // What the agent configuration is held to: a search before every answer.
    project.generation.expected_tools = vec!["search".to_string()];
    project.generation.strategies = vec![
        Generator::Ragtester,
        Generator::Baseline,
        Generator::Planted,
    ];
    full_pipeline(&[corpus], &project, args.out, cx).await
}
