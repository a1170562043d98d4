//! `ragtester docgen`: documents from a model, or offline with planted facts, written with their manifest.

use crate::stages::Models;
use anyhow::{Context, Result};
use ragtester_docgen::{DocRequest, DocumentPrompts};
use std::path::{Path, PathBuf};

pub struct DocgenArgs<'a> {
    pub request: DocRequest,
    pub llm: &'a str,
    pub count: usize,
    pub out: &'a Path,
    pub prompts: Option<&'a Path>,
    pub format: ragtester_docgen::OutputFormat,
}

/// Generate and write the documents; `progress(made)` after each. Returns the files written.
pub async fn docgen(
    args: &DocgenArgs<'_>,
    models: &Models,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<Vec<PathBuf>> {
    if args.count == 0 {
        anyhow::bail!("--count must be at least 1");
    }
    let prompts = match args.prompts {
        Some(dir) => DocumentPrompts::from_dir(dir)?,
        None => DocumentPrompts::default(),
    };
    let planted = ragtester_docgen::is_planted(args.llm);
    let model = if planted {
        None
    } else {
        Some(
            models
                .for_role(args.llm, ragtester_core::Sampling::default(), None)
                .context("document writer")?,
        )
    };
    let docs = ragtester_docgen::generate(
        &args.request,
        args.count,
        args.out,
        model.as_deref(),
        &prompts,
        progress,
    )
    .await?;
    let generator = if planted { "planted" } else { args.llm };
    ragtester_docgen::write_documents(args.out, &docs, generator, args.format)
}

impl crate::cli::DocgenCli {
    pub fn format(&self) -> Result<ragtester_docgen::OutputFormat> {
        if !(self.pdf || self.noise) {
            return Ok(ragtester_docgen::OutputFormat::Markdown);
        }
        #[cfg(feature = "pdf")]
        return Ok(ragtester_docgen::OutputFormat::Pdf { noise: self.noise });
        #[cfg(not(feature = "pdf"))]
        anyhow::bail!(
            "this ragtester was built without the `pdf` feature: generated documents are Markdown only"
        )
    }

    pub fn request(&self) -> Result<DocRequest> {
        Ok(DocRequest {
            title: self.title.clone(),
            topic: self.topic.clone(),
            language: self.language.clone(),
            words: self.words,
            detail: ragtester_docgen::Detail::parse(&self.detail)?,
            tone: self.tone.clone(),
            sections: self.sections.clone(),
            seed: self.seed,
        })
    }
}

/// How the demo writes its generated documents: PDFs (English with layout noise) where this build renders
/// them and, for Chinese, a CJK font is installed; Markdown otherwise, with a note.
pub fn demo_format(language: &str) -> ragtester_docgen::OutputFormat {
    #[cfg(feature = "pdf")]
    {
        if language != "zh" || ragtester_docgen::render::has_cjk_font() {
            return ragtester_docgen::OutputFormat::Pdf {
                noise: language != "zh",
            };
        }
        eprintln!(
            "note: no Chinese font installed (e.g. fonts-noto-cjk): the generated Chinese document stays Markdown"
        );
    }
    let _ = language;
    ragtester_docgen::OutputFormat::Markdown
}
