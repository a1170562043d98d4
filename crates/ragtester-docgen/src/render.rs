//! Markdown → PDF with real typesetting: the Markdown is translated into Typst markup (headings, paragraphs,
//! emphasis, lists, tables, code blocks, block quotes, footnotes) with every piece of text passed as a string
//! literal — so a document's text can never be read as Typst code — and compiled in-process by typst with its
//! embedded fonts plus the system's (CJK text needs a CJK font installed, e.g. `fonts-noto-cjk`).
//!
//! Layout noise (the paper's future work: generated PDFs that challenge a RAG system as real ones do) adds,
//! chosen by the seed: running headers and footers, page numbers, two columns, a different body font size,
//! a footnote.

use anyhow::{Context, Result, bail};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::fmt::Write as _;
use std::sync::OnceLock;
use typst::diag::{FileError, FileResult};
use typst::foundations::{Bytes, Datetime, Duration};
use typst::syntax::{FileId, RootedPath, Source, VirtualPath, VirtualRoot};
use typst::text::{Font, FontBook};
use typst::utils::LazyHash;
use typst::{Library, LibraryExt, World};
use typst_kit::fonts::FontStore;

/// What the renderer adds to make a generated PDF look like a real one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Noise {
    /// Running header (the title and a confidentiality line) and footer (a document number).
    pub running_lines: bool,
    pub page_numbers: bool,
    pub two_columns: bool,
    /// Body font size in points (11 when `None`).
    pub font_size: Option<f32>,
    /// A footnote on the first paragraph.
    pub footnote: Option<String>,
}

impl Noise {
    /// A seeded mix: page numbers always, each other kind of noise with probability one half, at least one.
    pub fn seeded(seed: u64, language: &str) -> Self {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x006e_6f69_7365);
        let mut noise = Self {
            running_lines: rng.bool(),
            page_numbers: true,
            two_columns: rng.bool(),
            font_size: rng.bool().then(|| [9.5, 10.0, 12.0][rng.usize(..3)]),
            footnote: None,
        };
        if rng.bool() || !(noise.running_lines || noise.two_columns || noise.font_size.is_some()) {
            noise.footnote = Some(if language == "zh" {
                format!("内部编号 RT-{}。", rng.u32(1000..9999))
            } else {
                format!("Internal reference RT-{}.", rng.u32(1000..9999))
            });
        }
        noise
    }
}

/// A Typst string: only `\`, `"` and line ends need escaping, and nothing inside it is markup or code.
fn string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text in markup, as an embedded string; `;` ends the expression, so text that follows (`.foo`) is not read
/// as a method call.
fn literal(text: &str) -> String {
    format!("#{};", string(text))
}

/// Typst markup for the Markdown, after a preamble of page, text and noise settings.
pub fn to_typst(markdown: &str, title: &str, language: &str, noise: &Noise) -> String {
    let lang = if language == "zh" { "zh" } else { "en" };
    let mut writer = TypstWriter {
        out: preamble(title, lang, noise),
        footnote: noise.footnote.clone(),
        ..Default::default()
    };
    let parser = Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_FOOTNOTES | Options::ENABLE_STRIKETHROUGH,
    );
    for event in parser {
        match event {
            Event::Start(tag) => writer.start(tag),
            Event::End(tag) => writer.end(tag),
            other => writer.inline(other),
        }
    }
    writer.out
}

/// Page, text and noise settings: fonts for both scripts, justification without hyphens, running lines
/// and page numbers as the noise asks.
fn preamble(title: &str, lang: &str, noise: &Noise) -> String {
    let mut out = String::new();
    let size = noise.font_size.unwrap_or(11.0);
    // Serif first; CJK faces after it (typst falls back per glyph to any installed font as well).
    let _ = writeln!(
        out,
        "#set text(lang: \"{lang}\", size: {size}pt, font: (\"Libertinus Serif\", \"Noto Serif CJK SC\", \
         \"Noto Sans CJK SC\", \"Source Han Serif SC\", \"WenQuanYi Micro Hei\", \"WenQuanYi Zen Hei\"))"
    );
    // No automatic space between Chinese and Latin text: the PDF's text then reads as the Markdown does.
    if lang == "zh" {
        let _ = writeln!(out, "#set text(cjk-latin-spacing: none)");
    }
    // Justified but not hyphenated: typst marks its hyphens so that PDF text extraction drops them, which
    // would leave `commis` and `sioned` as two words.
    let _ = writeln!(out, "#set text(hyphenate: false)");
    let _ = writeln!(out, "#set par(justify: true)");
    let _ = writeln!(
        out,
        "#set page({})",
        page_settings(title, lang, noise).join(", ")
    );
    let _ = writeln!(out, "#show heading: set block(above: 1.2em, below: 0.7em)");
    let _ = writeln!(
        out,
        "#show raw.where(block: true): block.with(fill: luma(245), inset: 6pt, width: 100%)"
    );
    out.push('\n');
    out
}

fn page_settings(title: &str, lang: &str, noise: &Noise) -> Vec<String> {
    let mut page = vec!["paper: \"a4\"".to_string(), "margin: 2.2cm".to_string()];
    if noise.two_columns {
        page.push("columns: 2".into());
    }
    if noise.running_lines {
        let confidential = if lang == "zh" {
            "内部资料"
        } else {
            "Internal use only"
        };
        page.push(format!(
            "header: [#set text(size: 8pt); {} #h(1fr) {}]",
            literal(title),
            literal(confidential)
        ));
    }
    match (noise.running_lines, noise.page_numbers) {
        (true, true) => page.push(format!(
            "footer: context [#set text(size: 8pt); {} #h(1fr) #counter(page).display(\"1 / 1\", both: true)]",
            literal("DOC-2041 rev. 3")
        )),
        (true, false) => page.push(format!(
            "footer: [#set text(size: 8pt); {}]",
            literal("DOC-2041 rev. 3")
        )),
        (false, true) => page.push("numbering: \"1\"".into()),
        (false, false) => {}
    }
    page
}

/// The markup as the Markdown's events arrive: open lists, the table being collected, a code block's
/// text, the noise footnote still to place.
#[derive(Default)]
struct TypstWriter {
    out: String,
    footnote: Option<String>,
    lists: Vec<Option<u64>>,
    table_cells: Option<(usize, Vec<String>)>,
    cell: String,
    in_cell: bool,
    code: Option<(String, String)>,
    footnotes_open: usize,
    last_char: Option<char>,
}

impl TypstWriter {
    /// Inside a table cell, inline content collects into the cell.
    fn sink(&mut self) -> &mut String {
        if self.in_cell {
            &mut self.cell
        } else {
            &mut self.out
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Heading { level, .. } => {
                let depth = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
                let sink = self.sink();
                sink.push_str(&"=".repeat(depth));
                sink.push(' ');
            }
            Tag::Emphasis => self.sink().push_str("#emph["),
            Tag::Strong => self.sink().push_str("#strong["),
            Tag::Strikethrough => self.sink().push_str("#strike["),
            Tag::BlockQuote(_) => self.sink().push_str("#quote(block: true)["),
            Tag::List(start) => {
                if !self.lists.is_empty() {
                    self.sink().push('\n');
                }
                self.lists.push(start);
            }
            Tag::Item => {
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}.");
                        *n += 1;
                        m
                    }
                    _ => "-".to_string(),
                };
                let _ = write!(self.sink(), "{}{} ", "  ".repeat(depth), marker);
            }
            Tag::Table(alignments) => self.table_cells = Some((alignments.len(), Vec::new())),
            Tag::TableCell => {
                self.in_cell = true;
                self.cell.clear();
            }
            Tag::CodeBlock(kind) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => {
                        l.split_whitespace().next().unwrap_or("").to_string()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::FootnoteDefinition(_) => {
                // Definitions are placed where they are referenced; keep the text as a trailing note.
                self.footnotes_open += 1;
                self.sink().push_str("#block[");
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) => self.sink().push_str("\n\n"),
            TagEnd::Paragraph => {
                if let Some(note) = self.footnote.take() {
                    let _ = write!(self.sink(), "#footnote[{}]", literal(&note));
                }
                if self.lists.is_empty() {
                    self.sink().push_str("\n\n");
                } else {
                    self.sink().push(' ');
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.sink().push(']'),
            TagEnd::BlockQuote(_) => self.sink().push_str("]\n\n"),
            TagEnd::List(_) => {
                self.lists.pop();
                if self.lists.is_empty() {
                    self.sink().push_str("\n\n");
                }
            }
            TagEnd::Item => self.sink().push('\n'),
            TagEnd::Table => {
                if let Some((columns, cells)) = self.table_cells.take() {
                    let _ = write!(
                        self.out,
                        "#table(columns: {}, inset: 5pt, {})\n\n",
                        columns.max(1),
                        cells.join(", ")
                    );
                }
            }
            TagEnd::TableCell => {
                self.in_cell = false;
                if let Some((_, cells)) = self.table_cells.as_mut() {
                    cells.push(format!("[{}]", self.cell.trim()));
                }
            }
            TagEnd::CodeBlock => {
                if let Some((lang, text)) = self.code.take() {
                    // A raw block from a string: no fence in the text can end it early.
                    let _ = write!(
                        self.out,
                        "#raw(block: true, lang: {}, {})\n\n",
                        if lang.is_empty() {
                            "none".to_string()
                        } else {
                            format!("\"{}\"", lang.replace(['"', '\\'], ""))
                        },
                        string(text.trim_end())
                    );
                }
            }
            TagEnd::FootnoteDefinition => {
                self.footnotes_open = self.footnotes_open.saturating_sub(1);
                self.sink().push_str("]\n\n");
            }
            _ => {}
        }
    }

    fn inline(&mut self, event: Event<'_>) {
        match event {
            Event::Text(text) => {
                if let Some((_, body)) = self.code.as_mut() {
                    body.push_str(&text);
                } else {
                    self.last_char = text.chars().last().or(self.last_char);
                    self.sink().push_str(&literal(&text));
                }
            }
            Event::Code(text) => {
                let _ = write!(self.sink(), "#raw({})", string(&text));
            }
            // Chinese lines join without a space; other text with one.
            Event::SoftBreak if !self.last_char.is_some_and(ragtester_text::is_cjk_script) => {
                self.sink().push(' ')
            }
            Event::SoftBreak => {}
            Event::HardBreak => self.sink().push_str("\\\n"),
            Event::Rule => self.out.push_str("#line(length: 100%)\n\n"),
            Event::FootnoteReference(label) => {
                let _ = write!(self.sink(), "#super[{}]", literal(&label));
            }
            Event::TaskListMarker(done) => self.sink().push_str(if done { "☑ " } else { "☐ " }),
            Event::InlineMath(text) | Event::DisplayMath(text) => {
                self.sink().push_str(&literal(&text))
            }
            _ => {}
        }
    }
}

/// The fonts typst may use: its embedded ones and the system's, found once per process.
fn fonts() -> &'static FontStore {
    static FONTS: OnceLock<FontStore> = OnceLock::new();
    FONTS.get_or_init(|| {
        let mut store = FontStore::new();
        store.extend(typst_kit::fonts::embedded());
        store.extend(typst_kit::fonts::system());
        store
    })
}

/// Whether some installed font has Chinese glyphs.
pub fn has_cjk_font() -> bool {
    let book = fonts().book();
    (0..)
        .map_while(|i| book.info(i))
        .any(|info| info.coverage.contains('中' as u32))
}

struct DocWorld {
    library: LazyHash<Library>,
    main: Source,
}

impl World for DocWorld {
    fn library(&self) -> &LazyHash<Library> {
        &self.library
    }
    fn book(&self) -> &LazyHash<FontBook> {
        fonts().book()
    }
    fn main(&self) -> FileId {
        self.main.id()
    }
    fn source(&self, id: FileId) -> FileResult<Source> {
        if id == self.main.id() {
            Ok(self.main.clone())
        } else {
            Err(FileError::AccessDenied)
        }
    }
    // A generated document reads no file: images, data and packages are refused.
    fn file(&self, _id: FileId) -> FileResult<Bytes> {
        Err(FileError::AccessDenied)
    }
    fn font(&self, index: usize) -> Option<Font> {
        fonts().font(index)
    }
    // Fixed, so a document renders the same bytes on any day.
    fn today(&self, _offset: Option<Duration>) -> Option<Datetime> {
        Datetime::from_ymd(2026, 1, 1)
    }
}

/// Typst's diagnostics as one error naming the step.
fn failed(step: &str, errors: &[typst::diag::SourceDiagnostic]) -> anyhow::Error {
    let messages: Vec<String> = errors.iter().map(|e| e.message.to_string()).collect();
    anyhow::anyhow!("{step} failed: {}", messages.join("; "))
}

/// Render Markdown to PDF bytes.
pub fn render_pdf(markdown: &str, title: &str, language: &str, noise: &Noise) -> Result<Vec<u8>> {
    if language == "zh" && !has_cjk_font() {
        bail!(
            "no installed font has Chinese glyphs: install one (Debian: apt-get install fonts-noto-cjk or \
             fonts-wqy-microhei) to render Chinese PDFs"
        );
    }
    let markup = to_typst(markdown, title, language, noise);
    let id = FileId::new(RootedPath::new(
        VirtualRoot::Project,
        VirtualPath::new("main.typ").context("typst path")?,
    ));
    let world = DocWorld {
        library: LazyHash::new(Library::default()),
        main: Source::new(id, markup),
    };
    let compiled = typst::compile::<typst_layout::PagedDocument>(&world);
    let document = compiled.output.map_err(|e| failed("typesetting", &e))?;
    typst_pdf::pdf(&document, &typst_pdf::PdfOptions::default())
        .map_err(|e| failed("PDF export", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_never_becomes_typst_code() {
        let markup = to_typst(
            "# T\n\nA #read(\"/etc/passwd\") \"quote\" back\\slash = **b** `x#y`\n",
            "T",
            "en",
            &Noise::default(),
        );
        assert!(
            markup.contains(r#"#"A #read(\"/etc/passwd\") \"quote\" back\\slash = ";"#),
            "{markup}"
        );
        assert!(markup.contains("#strong[#\"b\";]"), "{markup}");
        assert!(markup.contains("#raw(\"x#y\")"), "{markup}");
    }

    #[test]
    fn structure_maps_to_typst() {
        let md = "# Title\n\n## Section\n\nPara one\ncontinues.\n\n1. first\n2. second\n   - nested\n\n| A | B |\n| - | - |\n| 1 | 2 |\n\n```toml\nk = \"v\"\n```\n";
        let markup = to_typst(md, "Title", "en", &Noise::default());
        assert!(markup.contains("= #\"Title\";\n"), "{markup}");
        assert!(markup.contains("== #\"Section\";\n"), "{markup}");
        assert!(
            markup.contains("#\"Para one\"; #\"continues.\";"),
            "{markup}"
        );
        assert!(markup.contains("1. #\"first\";"), "{markup}");
        assert!(markup.contains("2. #\"second\";"), "{markup}");
        assert!(markup.contains("  - #\"nested\";"), "{markup}");
        assert!(
            markup.contains(
                "#table(columns: 2, inset: 5pt, [#\"A\";], [#\"B\";], [#\"1\";], [#\"2\";])"
            ),
            "{markup}"
        );
        assert!(
            markup.contains("#raw(block: true, lang: \"toml\", \"k = \\\"v\\\"\")"),
            "{markup}"
        );
        let zh = to_typst("第一行\n第二行\n", "T", "zh", &Noise::default());
        assert!(zh.contains("#\"第一行\";#\"第二行\";"), "{zh}");
    }

    #[test]
    fn noise_is_seeded_and_never_empty() {
        for seed in 0..20 {
            let n = Noise::seeded(seed, "en");
            assert_eq!(n, Noise::seeded(seed, "en"));
            assert!(n.page_numbers);
            assert!(
                n.running_lines || n.two_columns || n.font_size.is_some() || n.footnote.is_some()
            );
        }
        let markup = to_typst(
            "# T\n\nBody.\n",
            "T",
            "en",
            &Noise {
                running_lines: true,
                page_numbers: true,
                two_columns: true,
                font_size: Some(9.5),
                footnote: Some("Note.".into()),
            },
        );
        assert!(
            markup.contains("columns: 2")
                && markup.contains("header:")
                && markup.contains("size: 9.5pt")
        );
        assert!(markup.contains("#footnote[#\"Note.\";]"), "{markup}");
    }
}
