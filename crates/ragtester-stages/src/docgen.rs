//! `ragtester docgen`: documents from a model, or offline with planted facts, written with their manifest.

use crate::context::StageContext;
use crate::events::Events;
use anyhow::{Context, Result};
use ragtester_docgen::{DocRequest, DocumentPrompts};
use std::path::{Path, PathBuf};

pub struct DocgenRequest<'a> {
    pub request: DocRequest,
    pub llm: &'a str,
    pub count: usize,
    pub out: &'a Path,
    pub prompts: Option<&'a Path>,
    pub format: ragtester_docgen::OutputFormat,
}

/// Generate and write the documents, telling progress after each. Returns the files written.
pub async fn docgen(args: &DocgenRequest<'_>, cx: &StageContext<'_>) -> Result<Vec<PathBuf>> {
    let events = cx.events();
    events.stage("docgen");
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
            (cx.models())
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
        &|made| {
            events.progress(
                "documents",
                "",
                ragtester_exec::Counts {
                    done: made,
                    total: args.count,
                    ..Default::default()
                },
            )
        },
    )
    .await?;
    let generator = if planted { "planted" } else { args.llm };
    let written = ragtester_docgen::write_documents(args.out, &docs, generator, args.format)?;
    let manifest = args.out.join(ragtester_core::generated::MANIFEST_FILE);
    events.info(format!(
        "wrote {} documents and {}",
        written.len(),
        manifest.display()
    ));
    Ok(written)
}

/// The writer a request leaves out (see [`ragtester_docgen::DEFAULT_WRITER`]).
pub const DEFAULT_WRITER: &str = ragtester_docgen::DEFAULT_WRITER;

/// The format the command line's `--pdf` / `--noise` ask for (`--noise` implies `--pdf`).
pub fn format_of(pdf: bool, noise: bool) -> Result<ragtester_docgen::OutputFormat> {
    format_named(match (pdf, noise) {
        (_, true) => "pdf-noise",
        (true, false) => "pdf",
        (false, false) => "markdown",
    })
}

/// A document format by name: `markdown`, `pdf`, or `pdf-noise` (typeset with layout noise); the PDF ones
/// only where this build renders PDFs.
pub fn format_named(name: &str) -> Result<ragtester_docgen::OutputFormat> {
    Ok(match name {
        "markdown" => ragtester_docgen::OutputFormat::Markdown,
        #[cfg(feature = "pdf")]
        "pdf" => ragtester_docgen::OutputFormat::Pdf { noise: false },
        #[cfg(feature = "pdf")]
        "pdf-noise" => ragtester_docgen::OutputFormat::Pdf { noise: true },
        #[cfg(not(feature = "pdf"))]
        "pdf" | "pdf-noise" => anyhow::bail!(
            "this ragtester was built without the `pdf` feature: generated documents are Markdown only"
        ),
        other => anyhow::bail!("unknown document format `{other}` (markdown, pdf, pdf-noise)"),
    })
}

/// How the demo writes its generated documents: PDFs (English with layout noise) where this build renders
/// them and, for Chinese, a CJK font is installed; Markdown otherwise, with a note.
pub fn demo_format(language: &str, events: &dyn Events) -> ragtester_docgen::OutputFormat {
    #[cfg(feature = "pdf")]
    {
        if language != "zh" || ragtester_docgen::render::has_cjk_font() {
            return ragtester_docgen::OutputFormat::Pdf {
                noise: language != "zh",
            };
        }
        events.note(
            "no Chinese font installed (e.g. fonts-noto-cjk): the generated Chinese document stays Markdown",
        );
    }
    let _ = (language, events);
    ragtester_docgen::OutputFormat::Markdown
}
