//! File loaders and folder walking.

use crate::Document;
use anyhow::{Context, Result, bail};
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use ragtester_core::{DocumentFormat, read_jsonl};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A file that could not be read, and why.
#[derive(Debug, Clone)]
pub struct Failure {
    pub path: PathBuf,
    pub error: String,
}

#[derive(Debug, Default)]
pub struct IngestReport {
    pub documents: Vec<Document>,
    pub failures: Vec<Failure>,
    /// Files skipped because their text was already ingested under another name.
    pub duplicates: Vec<PathBuf>,
}

/// Ingest files and folders (walked recursively, hidden entries skipped). A `documents.jsonl` written by an
/// earlier `ragtester ingest` is read back as records.
pub fn ingest_paths(paths: &[PathBuf]) -> IngestReport {
    let mut report = IngestReport::default();
    let mut seen = HashSet::new();
    for path in paths {
        if !path.exists() {
            report.failures.push(Failure {
                path: path.clone(),
                error: "no such file or folder".into(),
            });
            continue;
        }
        let mut files: Vec<PathBuf> = walkdir::WalkDir::new(path)
            .follow_links(true)
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'))
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
        files.sort();
        let walked = path.is_dir();
        for file in files {
            if walked && format_of(&file).is_none() && !is_record_file(&file) {
                // Inside a folder, files of other kinds (images, licences) are not part of the corpus.
                continue;
            }
            match load_any(&file) {
                Ok(docs) => {
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

fn is_record_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "documents.jsonl")
}

fn load_any(path: &Path) -> Result<Vec<Document>> {
    if is_record_file(path) {
        return read_jsonl(path);
    }
    Ok(vec![load_file(path)?])
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

/// Load one file by its extension.
pub fn load_file(path: &Path) -> Result<Document> {
    let format = format_of(path).with_context(|| {
        format!(
            "unknown format (supported: .md, .markdown, .txt, .html, .htm; got {})",
            path.extension().map_or("no extension".into(), |e| format!(
                ".{}",
                e.to_string_lossy()
            ))
        )
    })?;
    let bytes = std::fs::read(path).context("cannot read file")?;
    if bytes.is_empty() {
        bail!("file is empty");
    }
    let source = path.display().to_string();
    let stem = path
        .file_stem()
        .map_or_else(|| source.clone(), |s| s.to_string_lossy().into_owned());
    let (title, text) = match format {
        DocumentFormat::Markdown => markdown_to_text(&decode_utf8(&bytes)?, &stem),
        DocumentFormat::Text => {
            let text = decode_utf8(&bytes)?;
            (first_line_title(&text).unwrap_or(stem), text)
        }
        DocumentFormat::Html => html_to_text(&bytes, &stem)?,
        DocumentFormat::Pdf | DocumentFormat::Docx => {
            bail!(
                "{format:?} documents are not supported by this build yet; convert to Markdown or text"
            )
        }
    };
    let text = normalise(&text);
    if !text.chars().any(char::is_alphanumeric) {
        bail!("no text found");
    }
    Ok(Document::new(source, format, title, text, None))
}

fn decode_utf8(bytes: &[u8]) -> Result<String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(e) => bail!(
            "not valid UTF-8 (first bad byte at offset {})",
            e.valid_up_to()
        ),
    }
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
/// paragraph-aware chunkers see headings as section boundaries; list items stay one per line.
fn markdown_to_text(markdown: &str, fallback_title: &str) -> (String, String) {
    let mut out = String::new();
    let mut title: Option<String> = None;
    let mut in_h1 = false;
    let mut h1_text = String::new();
    for event in Parser::new_ext(markdown, pulldown_cmark::Options::ENABLE_TABLES) {
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
    (title.unwrap_or_else(|| fallback_title.to_string()), out)
}

fn html_to_text(bytes: &[u8], fallback_title: &str) -> Result<(String, String)> {
    let text = html2text::config::plain()
        .no_link_wrapping()
        .string_from_read(bytes, 10_000)
        .context("cannot parse HTML")?;
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
        write(dir.path(), "bad.txt", b"ok \xff\xfe broken");
        write(dir.path(), "image.png", b"\x89PNG");
        let missing = dir.path().join("missing.md");
        let odd = write(dir.path(), "x.xyz", b"data");
        let report = ingest_paths(&[dir.path().to_path_buf(), missing, odd]);
        assert_eq!(report.documents.len(), 1);
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
                .any(|e| e.starts_with("bad.txt: not valid UTF-8"))
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
