//! A small PDF writer for test fixtures: pages of positioned lines in a standard font, so tests control layout
//! exactly (columns, running headers, hyphenated line ends) without committing binary files.

use std::fmt::Write as _;

/// One line of text placed on a page, in points from the bottom-left corner.
#[derive(Debug, Clone)]
pub struct Line {
    pub x: f32,
    pub y: f32,
    pub size: f32,
    pub text: String,
}

impl Line {
    pub fn new(x: f32, y: f32, text: impl Into<String>) -> Self {
        Self {
            x,
            y,
            size: 11.0,
            text: text.into(),
        }
    }
}

/// A page: its lines, plus optional vector drawing (a page with drawing and no lines stands in for a scan).
#[derive(Debug, Clone, Default)]
pub struct PageSpec {
    pub lines: Vec<Line>,
    pub drawing: Option<String>,
}

/// Options for the whole file.
#[derive(Debug, Clone, Default)]
pub struct PdfSpec {
    pub pages: Vec<PageSpec>,
    /// Add a standard security handler with an unknown user password.
    pub encrypted: bool,
    pub font: PdfFont,
}

/// The one font every line is set in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PdfFont {
    /// Helvetica in WinAnsi: Latin text.
    #[default]
    Helvetica,
    /// Adobe's STSong-Light, not embedded, as a Type 0 font over the predefined `GBK-EUC-H` CMap with no
    /// ToUnicode map, the text written as GBK bytes: how older Chinese PDF producers wrote Chinese. A reader
    /// must know the predefined CMap and the Adobe-GB1 collection to get the characters back.
    SongGbk,
}

/// US Letter width and height in points.
pub const PAGE_W: f32 = 612.0;
pub const PAGE_H: f32 = 792.0;

/// Lay out paragraphs as lines of at most `width` characters in one or more columns, with optional running
/// header and footer (the footer carries the page number). Returns the pages.
pub fn layout(
    paragraphs: &[&str],
    columns: usize,
    header: Option<&str>,
    footer: Option<&str>,
) -> Vec<PageSpec> {
    let columns = columns.max(1);
    let margin = 54.0;
    let gutter = 24.0;
    let col_w = (PAGE_W - 2.0 * margin - gutter * (columns - 1) as f32) / columns as f32;
    // Helvetica at 11 pt averages about 5.5 pt per character.
    let chars_per_line = (col_w / 5.5) as usize;
    let top = PAGE_H - 90.0;
    let bottom = 90.0;
    let leading = 14.0;
    let mut lines_out: Vec<String> = Vec::new();
    for p in paragraphs {
        lines_out.extend(wrap(p, chars_per_line));
        lines_out.push(String::new());
    }
    let mut pages = Vec::new();
    let mut page = PageSpec::default();
    let (mut col, mut y) = (0usize, top);
    for line in lines_out {
        if y < bottom {
            col += 1;
            y = top;
            if col == columns {
                pages.push(std::mem::take(&mut page));
                col = 0;
            }
        }
        if !line.is_empty() {
            page.lines
                .push(Line::new(margin + col as f32 * (col_w + gutter), y, line));
        }
        y -= leading;
    }
    if !page.lines.is_empty() {
        pages.push(page);
    }
    let total = pages.len();
    for (i, page) in pages.iter_mut().enumerate() {
        if let Some(h) = header {
            page.lines.push(Line::new(margin, PAGE_H - 50.0, h));
        }
        if let Some(f) = footer {
            page.lines.push(Line::new(
                margin,
                45.0,
                format!("{f}  Page {} of {total}", i + 1),
            ));
        }
    }
    pages
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        if !current.is_empty() && current.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.is_empty() {
        lines.push(current);
    }
    lines
}

/// Serialise a PDF with a correct cross-reference table.
pub fn write_pdf(spec: &PdfSpec) -> Vec<u8> {
    let mut objects: Vec<String> = Vec::new();
    let n_pages = spec.pages.len();
    // 1 catalog, 2 pages tree, 3 font, then (page, content) pairs.
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".into());
    let kids: Vec<String> = (0..n_pages).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {n_pages} >>",
        kids.join(" ")
    ));
    objects.push(match spec.font {
        PdfFont::Helvetica => {
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".into()
        }
        PdfFont::SongGbk => "<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light-GBK-EUC-H \
            /Encoding /GBK-EUC-H /DescendantFonts [<< /Type /Font /Subtype /CIDFontType0 \
            /BaseFont /STSong-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (GB1) /Supplement 4 >> \
            /FontDescriptor << /Type /FontDescriptor /FontName /STSong-Light /Flags 6 \
            /FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 \
            /StemV 93 >> /DW 1000 >>] >>"
            .into(),
    });
    for (i, page) in spec.pages.iter().enumerate() {
        let content_id = 5 + 2 * i;
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_W} {PAGE_H}] \
             /Resources << /Font << /F1 3 0 R >> >> /Contents {content_id} 0 R >>"
        ));
        let mut stream = String::new();
        if let Some(d) = &page.drawing {
            stream.push_str(d);
            stream.push('\n');
        }
        for line in &page.lines {
            let shown = match spec.font {
                PdfFont::Helvetica => format!("({})", escape(&line.text)),
                PdfFont::SongGbk => format!("<{}>", hex_gbk(&line.text)),
            };
            let _ = writeln!(
                stream,
                "BT /F1 {} Tf {} {} Td {shown} Tj ET",
                line.size, line.x, line.y,
            );
        }
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}endstream",
            stream.len()
        ));
    }
    let mut encrypt_id = None;
    if spec.encrypted {
        objects.push(format!(
            "<< /Filter /Standard /V 2 /R 3 /Length 128 /P -3904 /O <{}> /U <{}> >>",
            "7a".repeat(32),
            "3c".repeat(32)
        ));
        encrypt_id = Some(objects.len());
    }
    let mut out: Vec<u8> = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref_at = out.len();
    let mut xref = format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1);
    for o in offsets {
        let _ = writeln!(xref, "{o:010} 00000 n ");
    }
    let encrypt = encrypt_id.map_or(String::new(), |id| {
        format!(" /Encrypt {id} 0 R /ID [<{0}> <{0}>]", "ab".repeat(16))
    });
    let _ = write!(
        xref,
        "trailer\n<< /Size {} /Root 1 0 R{encrypt} >>\nstartxref\n{xref_at}\n%%EOF\n",
        objects.len() + 1
    );
    out.extend_from_slice(xref.as_bytes());
    out
}

/// The text's GBK bytes as a PDF hex string body.
fn hex_gbk(text: &str) -> String {
    let (bytes, _, _) = encoding_rs::GBK.encode(text);
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

/// PDF literal-string escaping; characters outside Latin-1 become `?` (WinAnsi fixtures are Latin only).
fn escape(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars() {
        match c {
            '(' | ')' | '\\' => {
                s.push('\\');
                s.push(c);
            }
            c if (c as u32) < 0x80 => s.push(c),
            c if (c as u32) <= 0xFF => {
                let _ = write!(s, "\\{:03o}", c as u32);
            }
            _ => s.push('?'),
        }
    }
    s
}
