//! File loaders and folder walking.

use crate::Document;
use crate::decode::decode_text;
use crate::pages::assemble;
use crate::pdf::{PdfOxide, extract_pages};
use anyhow::{Context, Result, bail};
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use ragtester_core::limits::exceeded;
use ragtester_core::record::read_jsonl_under;
use ragtester_core::{DocumentFormat, Limits};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A file that could not be read, and why; or, as a warning, what was assumed to read it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub path: PathBuf,
    pub error: String,
}

#[derive(Debug, Default)]
pub struct IngestReport {
    pub documents: Vec<Document>,
    pub failures: Vec<Failure>,
    /// Files read with an assumption the user should know of (a guessed encoding, say).
    pub warnings: Vec<Failure>,
    /// Files skipped because their text was already ingested under another name.
    pub duplicates: Vec<PathBuf>,
}

/// How files are read.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Remove running headers, footers and page numbers from PDFs (lines repeated across pages).
    pub strip_running_lines: bool,
    /// What a file may make the loaders read: its size, a DOCX's archive, a PDF's pages and objects, the
    /// decoded text, nesting. A file over one fails with a message naming the limit.
    pub limits: Limits,
    /// Read what a symbolic link inside a walked folder leads to outside it. Off by default: a link to a
    /// private file elsewhere would land its text in the records; such a link is skipped and named.
    pub follow_symlinks: bool,
}

/// The default limits: a front end passes the user's (`--limit`), read once where it starts.
impl Default for IngestOptions {
    fn default() -> Self {
        Self {
            strip_running_lines: true,
            limits: Limits::default(),
            follow_symlinks: false,
        }
    }
}

/// What a path given to ingestion holds, said by whoever passes it rather than guessed from a file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// The user's files: a document, or a folder walked for documents.
    Sources(PathBuf),
    /// Document records an earlier ingestion wrote (JSON lines).
    Records(PathBuf),
}

impl Input {
    /// The kind of a path typed on a command line: a `.jsonl` file holds records, anything else sources.
    pub fn of_path(path: &Path) -> Self {
        let records = path.is_file()
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"));
        if records {
            Self::Records(path.to_path_buf())
        } else {
            Self::Sources(path.to_path_buf())
        }
    }

    /// Every path with the kind [`Input::of_path`] gives it.
    pub fn of_paths(paths: &[PathBuf]) -> Vec<Self> {
        paths.iter().map(|p| Self::of_path(p)).collect()
    }

    pub fn path(&self) -> &Path {
        match self {
            Self::Sources(p) | Self::Records(p) => p,
        }
    }
}

/// Ingest files and folders with the default options.
pub fn ingest_paths(paths: &[PathBuf]) -> IngestReport {
    ingest_paths_with(paths, &IngestOptions::default())
}

/// Ingest paths of the kind [`Input::of_path`] gives them.
pub fn ingest_paths_with(paths: &[PathBuf], options: &IngestOptions) -> IngestReport {
    ingest_inputs(&Input::of_paths(paths), options)
}

/// Ingest inputs: sources loaded (folders walked recursively, hidden entries and files of other kinds
/// skipped), records read back as they were written.
pub fn ingest_inputs(inputs: &[Input], options: &IngestOptions) -> IngestReport {
    let mut report = IngestReport::default();
    let mut seen = HashSet::new();
    for input in inputs {
        let path = &input.path().to_path_buf();
        let records = matches!(input, Input::Records(_));
        if !path.exists() {
            report.failures.push(Failure {
                path: path.clone(),
                error: "no such file or folder".into(),
            });
            continue;
        }
        // Links inside the folder are followed while they stay in it; the path given is the user's word.
        let root = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        let mut outside = Vec::new();
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(path)
            .follow_links(true)
            .into_iter()
            .filter_entry(|e| {
                if e.depth() > 0 && e.file_name().to_string_lossy().starts_with('.') {
                    return false;
                }
                if e.depth() == 0 || !e.path_is_symlink() || options.follow_symlinks {
                    return true;
                }
                match std::fs::canonicalize(e.path()) {
                    Ok(target) if target.starts_with(&root) => true,
                    target => {
                        outside.push((e.path().to_path_buf(), target.ok()));
                        false
                    }
                }
            })
            .filter_map(|e| match e {
                Ok(e) if e.file_type().is_file() => Some(e.into_path()),
                Ok(_) => None,
                Err(err) => {
                    report.failures.push(Failure {
                        path: err.path().map_or_else(|| path.clone(), Path::to_path_buf),
                        error: err.to_string(),
                    });
                    None
                }
            })
            .collect();
        for (link, target) in outside {
            let to = target.map_or_else(|| "nowhere".into(), |t| t.display().to_string());
            report.warnings.push(Failure {
                path: link,
                error: format!(
                    "skipped: a symbolic link that leads outside {} (to {to}); pass --follow-symlinks to read it",
                    path.display()
                ),
            });
        }
        files.sort();
        let walked = path.is_dir();
        for file in files {
            if walked && format_of(&file).is_none() {
                // Inside a folder, files of other kinds (images, licences, records) are not part of the corpus.
                continue;
            }
            let loaded = if records {
                read_jsonl_under(&file, &options.limits).map(|docs| (docs, None))
            } else {
                load_file_with(&file, options).map(|(doc, warning)| (vec![doc], warning))
            };
            match loaded {
                Ok((docs, warning)) => {
                    if let Some(warning) = warning {
                        report.warnings.push(Failure {
                            path: file.clone(),
                            error: warning,
                        });
                    }
                    for doc in docs {
                        if seen.insert(doc.id.clone()) {
                            report.documents.push(doc);
                        } else {
                            report.duplicates.push(file.clone());
                        }
                    }
                }
                Err(err) => report.failures.push(Failure {
                    path: file.clone(),
                    error: format!("{err:#}"),
                }),
            }
        }
    }
    report
}

fn format_of(path: &Path) -> Option<DocumentFormat> {
    let ext = path.extension()?.to_string_lossy().to_lowercase();
    Some(match ext.as_str() {
        "md" | "markdown" => DocumentFormat::Markdown,
        "txt" | "text" => DocumentFormat::Text,
        "html" | "htm" => DocumentFormat::Html,
        "pdf" => DocumentFormat::Pdf,
        "docx" => DocumentFormat::Docx,
        _ => return None,
    })
}

/// Load one file by its extension, with the default options.
pub fn load_file(path: &Path) -> Result<Document> {
    load_file_with(path, &IngestOptions::default()).map(|(doc, _)| doc)
}

/// Load one file by its extension; also returns a warning when something had to be assumed.
pub fn load_file_with(path: &Path, options: &IngestOptions) -> Result<(Document, Option<String>)> {
    let format = format_of(path).with_context(|| {
        format!(
            "unknown format (supported: .pdf, .docx, .md, .markdown, .txt, .html, .htm; got {})",
            path.extension().map_or("no extension".into(), |e| format!(
                ".{}",
                e.to_string_lossy()
            ))
        )
    })?;
    let limits = &options.limits;
    let size = std::fs::metadata(path).context("cannot read file")?.len();
    if size > limits.file_bytes() {
        bail!(exceeded(
            "file_mb",
            limits.file_mb,
            &format!("the file is {} MiB", size.div_ceil(1024 * 1024))
        ));
    }
    let bytes = std::fs::read(path).context("cannot read file")?;
    let source = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or_else(|| source.clone(), |s| s.to_string_lossy().into_owned());
    let (mut doc, mut warning) = load_bytes(bytes, format, &source, &stem, options)?;
    // Documents `ragtester docgen` wrote are listed beside them; reports keep them apart from real ones.
    match ragtester_core::generated::GeneratedManifest::entry_for(path) {
        Ok(Some(_)) => doc.origin = ragtester_core::document::DocumentOrigin::Generated,
        Ok(None) => {}
        Err(e) => warning = Some(format!("read as a real document: {e:#}")),
    }
    Ok((doc, warning))
}

/// Read a document of a known format from its bytes (`source` names it in the record, `stem` is the title
/// when the text has none), under `options`' limits; also returns a warning when something had to be
/// assumed. Every parser of untrusted file bytes is reached through here (the fuzz targets call it).
pub fn load_bytes(
    bytes: Vec<u8>,
    format: DocumentFormat,
    source: &str,
    stem: &str,
    options: &IngestOptions,
) -> Result<(Document, Option<String>)> {
    let limits = &options.limits;
    if bytes.is_empty() {
        bail!("file is empty");
    }
    let stem = stem.to_string();
    let mut warning = None;
    let mut decode = |bytes: &[u8]| -> Result<String> {
        let decoded = decode_text(bytes)?;
        if decoded.text.len() as u64 > limits.text_bytes() {
            bail!(exceeded(
                "text_mb",
                limits.text_mb,
                &format!(
                    "the file decodes to {} MiB of text",
                    decoded.text.len().div_ceil(1024 * 1024)
                )
            ));
        }
        warning = decoded.warning;
        Ok(decoded.text)
    };
    let (title, text, pages) = match format {
        DocumentFormat::Markdown => {
            let (title, text) = markdown_to_text(&decode(&bytes)?, &stem, limits)?;
            (title, normalise(&text), None)
        }
        DocumentFormat::Text => {
            let text = normalise(&decode(&bytes)?);
            (first_line_title(&text).unwrap_or(stem), text, None)
        }
        DocumentFormat::Html => {
            let (title, text) = html_to_text(&bytes, &stem, limits)?;
            (title, normalise(&text), None)
        }
        DocumentFormat::Docx => {
            let (title, text) = markdown_to_text(&docx_to_markdown(bytes, limits)?, &stem, limits)?;
            (title, normalise(&text), None)
        }
        DocumentFormat::Pdf => {
            let page_texts = extract_pages(&PdfOxide::with_limits(*limits), bytes)?;
            let normalised: Vec<String> = page_texts.iter().map(|p| normalise(p)).collect();
            let paged = assemble(&normalised, options.strip_running_lines);
            if !paged.text.chars().any(char::is_alphanumeric) {
                bail!(
                    "no text layer in its {} page(s): a scanned or image-only PDF; run OCR on it first (e.g. `ocrmypdf`)",
                    page_texts.len()
                );
            }
            if let Some(unmapped) = crate::glyphs::glyph_code_warning(&normalised) {
                warning = Some(unmapped);
            }
            let title = first_line_title(&paged.text).unwrap_or(stem);
            (title, paged.text, Some(paged.pages))
        }
    };
    if !text.chars().any(char::is_alphanumeric) {
        bail!("no text found");
    }
    let doc = Document::new(source.to_string(), format, title, text, pages);
    Ok((doc, warning))
}

/// DOCX through its Markdown rendering, so headings become section boundaries as in Markdown files.
fn docx_to_markdown(bytes: Vec<u8>, limits: &Limits) -> Result<String> {
    if !bytes.starts_with(b"PK") {
        bail!("not a DOCX: a DOCX is a zip archive and this file is not one");
    }
    crate::bounds::check_docx_archive(&bytes, limits)?;
    let doc = office_oxide::Document::from_reader(
        std::io::Cursor::new(bytes),
        office_oxide::DocumentFormat::Docx,
    )
    .map_err(|e| anyhow::anyhow!("cannot read DOCX: {e}"))?;
    Ok(doc.to_markdown())
}

fn first_line_title(text: &str) -> Option<String> {
    let line = text.lines().find(|l| !l.trim().is_empty())?.trim();
    (line.chars().count() <= 120).then(|| line.to_string())
}

/// Line endings unified, trailing spaces dropped, runs of blank lines collapsed to one: offsets then refer to
/// a text every later stage sees identically.
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.replace("\r\n", "\n").replace('\r', "\n").lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

/// Markdown to plain text that keeps structure: headings and block elements end with a blank line, so the
/// paragraph-aware chunkers see headings as section boundaries; list items stay one per line. Blocks nested
/// deeper than the `nesting` limit (`>>>>…`, lists in lists) fail the file.
pub(crate) fn markdown_to_text(
    markdown: &str,
    fallback_title: &str,
    limits: &Limits,
) -> Result<(String, String)> {
    let mut out = String::new();
    let mut title: Option<String> = None;
    let mut in_h1 = false;
    let mut h1_text = String::new();
    let mut depth = 0u64;
    for event in Parser::new_ext(markdown, pulldown_cmark::Options::ENABLE_TABLES) {
        match &event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > limits.nesting {
            bail!(exceeded(
                "nesting",
                limits.nesting,
                &format!("Markdown blocks nest more than {} deep", limits.nesting)
            ));
        }
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                in_h1 = level == HeadingLevel::H1 && title.is_none();
            }
            Event::End(TagEnd::Heading(_)) => {
                if in_h1 {
                    title = Some(h1_text.trim().to_string());
                    in_h1 = false;
                }
                out.push_str("\n\n");
            }
            Event::Start(Tag::Item) => out.push_str("- "),
            Event::End(TagEnd::Item)
            | Event::End(TagEnd::TableRow)
            | Event::End(TagEnd::TableHead) => out.push('\n'),
            Event::End(TagEnd::TableCell) => out.push_str(" | "),
            Event::End(TagEnd::Paragraph)
            | Event::End(TagEnd::List(_))
            | Event::End(TagEnd::CodeBlock)
            | Event::End(TagEnd::Table)
            | Event::End(TagEnd::BlockQuote(_)) => out.push_str("\n\n"),
            Event::Text(t) | Event::Code(t) => {
                if in_h1 {
                    h1_text.push_str(&t);
                }
                out.push_str(&t);
            }
            Event::SoftBreak => out.push(' '),
            Event::HardBreak => out.push('\n'),
            _ => {}
        }
    }
    Ok((title.unwrap_or_else(|| fallback_title.to_string()), out))
}

fn html_to_text(bytes: &[u8], fallback_title: &str, limits: &Limits) -> Result<(String, String)> {
    let config = html2text::config::plain().no_link_wrapping();
    let dom = crate::bounds::parse_html_bounded(&config, bytes, limits)?;
    let tree = config
        .dom_to_render_tree(&dom)
        .context("cannot parse HTML")?;
    let text = config
        .render_to_string(tree, 10_000)
        .context("cannot render HTML as text")?;
    let html = String::from_utf8_lossy(bytes);
    let title = html
        .find("<title>")
        .and_then(|s| {
            let rest = &html[s + 7..];
            rest.find("</title>").map(|e| rest[..e].trim().to_string())
        })
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| fallback_title.to_string());
    Ok((title, text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_folder_are_skipped_and_named_unless_followed() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(
            outside.path().join("private.md"),
            "# Salaries\n\nAlice earns 9,000.",
        )
        .unwrap();
        std::fs::create_dir(outside.path().join("secrets")).unwrap();
        std::fs::write(
            outside.path().join("secrets/keys.md"),
            "# Keys\n\nsk-live-123",
        )
        .unwrap();
        let docs = tempfile::tempdir().unwrap();
        std::fs::write(
            docs.path().join("manual.md"),
            "# Pump\n\nIt runs at 4.5 bar.",
        )
        .unwrap();
        std::fs::create_dir(docs.path().join("sub")).unwrap();
        std::fs::write(
            docs.path().join("sub/inner.md"),
            "# Valve\n\nIt opens at 6 bar.",
        )
        .unwrap();
        let link =
            |to: &Path, name: &str| std::os::unix::fs::symlink(to, docs.path().join(name)).unwrap();
        link(&outside.path().join("private.md"), "notes.md");
        link(&outside.path().join("secrets"), "more");
        link(&docs.path().join("sub/inner.md"), "inside.md");
        let report = ingest_paths(&[docs.path().to_path_buf()]);
        let texts: Vec<&str> = report.documents.iter().map(|d| d.text.as_str()).collect();
        assert!(
            texts
                .iter()
                .all(|t| !t.contains("Alice") && !t.contains("sk-live")),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t.contains("4.5 bar")));
        let skipped: Vec<String> = report
            .warnings
            .iter()
            .map(|w| format!("{}: {}", w.path.display(), w.error))
            .collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(
            skipped
                .iter()
                .any(|w| w.contains("notes.md") && w.contains("--follow-symlinks")),
            "{skipped:?}"
        );
        assert!(skipped.iter().any(|w| w.contains("more")), "{skipped:?}");
        // A link that stays inside is read (its text once: it repeats sub/inner.md).
        assert_eq!(report.duplicates.len(), 1, "{:?}", report.duplicates);
        let followed = ingest_paths_with(
            &[docs.path().to_path_buf()],
            &IngestOptions {
                follow_symlinks: true,
                ..IngestOptions::default()
            },
        );
        assert!(followed.documents.iter().any(|d| d.text.contains("Alice")));
        assert!(
            followed
                .documents
                .iter()
                .any(|d| d.text.contains("sk-live"))
        );
        assert!(followed.warnings.is_empty(), "{:?}", followed.warnings);
    }

    fn write(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        p
    }

    #[test]
    fn markdown_keeps_headings_as_paragraphs_and_takes_title() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "m.md",
            "# Pump Manual\n\nIntro text\ncontinues.\n\n## Limits\n\n- max 4.5 bar\n- min 1 bar\n"
                .as_bytes(),
        );
        let d = load_file(&p).unwrap();
        assert_eq!(d.title, "Pump Manual");
        assert_eq!(
            d.text,
            "Pump Manual\n\nIntro text continues.\n\nLimits\n\n- max 4.5 bar\n- min 1 bar"
        );
        assert_eq!(d.language, "en");
        assert_eq!(d.pages.len(), 1);
    }

    #[test]
    fn html_and_text_load() {
        let dir = tempfile::tempdir().unwrap();
        let h = write(
            dir.path(),
            "p.html",
            b"<html><head><title>Doc T</title></head><body><h1>Head</h1><p>Body text here.</p></body></html>",
        );
        let d = load_file(&h).unwrap();
        assert_eq!(d.title, "Doc T");
        assert!(d.text.contains("Body text here."), "{}", d.text);
        let t = write(
            dir.path(),
            "t.txt",
            "\u{feff}标题\r\n\r\n\r\n正文内容。".as_bytes(),
        );
        let d = load_file(&t).unwrap();
        assert_eq!(d.text, "标题\n\n正文内容。");
        assert_eq!(d.language, "zh");
    }

    #[test]
    fn bad_inputs_fail_alone_with_named_errors() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "good.md", b"# Good\n\nReal content here.");
        write(dir.path(), "empty.txt", b"");
        write(dir.path(), "bad.txt", b"ok \x00\x01 broken");
        write(dir.path(), "image.png", b"\x89PNG");
        // Real web text with a stray control and a misread "’": kept, repaired, and named in a warning.
        write(
            dir.path(),
            "web.txt",
            "The valve opens at 4.5 bar.\u{1} It\u{e2}\u{80}\u{99}s checked yearly.".as_bytes(),
        );
        let missing = dir.path().join("missing.md");
        let odd = write(dir.path(), "x.xyz", b"data");
        let report = ingest_paths(&[dir.path().to_path_buf(), missing, odd]);
        assert_eq!(report.documents.len(), 2);
        let web = report
            .documents
            .iter()
            .find(|d| d.text.contains("valve"))
            .unwrap();
        assert_eq!(web.text, "The valve opens at 4.5 bar. It’s checked yearly.");
        let warned = &report.warnings[0];
        assert!(warned.path.ends_with("web.txt"));
        assert!(
            warned.error.contains("dropped 1 stray control"),
            "{}",
            warned.error
        );
        let errors: Vec<String> = report
            .failures
            .iter()
            .map(|f| {
                format!(
                    "{}: {}",
                    f.path.file_name().unwrap().to_string_lossy(),
                    f.error
                )
            })
            .collect();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("empty.txt: file is empty"))
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("bad.txt: looks binary"))
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("missing.md: no such file"))
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("x.xyz: unknown format"))
        );
    }

    #[test]
    fn duplicate_text_is_ingested_once() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.txt", b"Same text.");
        write(dir.path(), "b.txt", b"Same text.");
        let report = ingest_paths(&[dir.path().to_path_buf()]);
        assert_eq!(report.documents.len(), 1);
        assert_eq!(report.duplicates.len(), 1);
    }
}
