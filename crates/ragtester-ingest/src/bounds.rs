//! What a hostile file is measured against before a parser spends memory or stack on it: a DOCX's archive
//! (entries, expanded size, expansion ratio, counted by actually expanding it, since a zip's declared sizes
//! can lie), an HTML document's element nesting (the renderer recurses). PDF pages and objects are checked
//! in `pdf.rs`, Markdown nesting as its events stream by, decoded text size after decoding.

use anyhow::{Context, Result, bail};
use ragtester_core::Limits;
use ragtester_core::limits::exceeded;
use std::io::Read;

/// Refuse a DOCX archive that holds too many entries or expands too far, before office_oxide reads it.
pub fn check_docx_archive(bytes: &[u8], limits: &Limits) -> Result<()> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .context("cannot read the DOCX's zip archive")?;
    let entries = archive.len() as u64;
    if entries > limits.zip_entries {
        bail!(exceeded(
            "zip_entries",
            limits.zip_entries,
            &format!("the DOCX holds {entries} entries")
        ));
    }
    // Allowed expansion: the smaller of the absolute cap and the ratio times the archive's size.
    let by_ratio = (bytes.len() as u64).saturating_mul(limits.zip_ratio);
    let cap = limits.zip_expanded_bytes().min(by_ratio);
    let mut expanded = 0u64;
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .with_context(|| format!("cannot read entry {} of the DOCX", i + 1))?;
        let name = entry
            .name()
            .map_or_else(|_| format!("entry {}", i + 1), |n| n.to_string());
        let read = std::io::copy(
            &mut (&mut entry).take(cap - expanded + 1),
            &mut std::io::sink(),
        )
        .with_context(|| format!("cannot expand `{name}` in the DOCX"))?;
        expanded += read;
        if expanded > cap {
            return Err(if cap == by_ratio {
                anyhow::anyhow!(exceeded(
                    "zip_ratio",
                    limits.zip_ratio,
                    &format!(
                        "the DOCX's {} KiB expand to over {} KiB (a zip bomb?)",
                        bytes.len() / 1024,
                        cap / 1024
                    )
                ))
            } else {
                anyhow::anyhow!(exceeded(
                    "zip_expanded_mb",
                    limits.zip_expanded_mb,
                    "the DOCX expands to more"
                ))
            });
        }
    }
    Ok(())
}

/// Parse HTML and refuse it when its elements nest deeper than the limit. The depth is measured on the
/// token stream first, since html5ever's tree builder takes time quadratic in the depth (100,000 nested
/// `<div>`s: minutes) and the renderer that follows recurses; then once more, exactly, on the DOM, walked with
/// a stack of its own.
pub fn parse_html_bounded(
    config: &html2text::config::Config<html2text::render::PlainDecorator>,
    bytes: &[u8],
    limits: &Limits,
) -> Result<html2text::RcDom> {
    let too_deep = || {
        anyhow::anyhow!(exceeded(
            "nesting",
            limits.nesting,
            &format!("the HTML's elements nest more than {} deep", limits.nesting)
        ))
    };
    if token_depth(&String::from_utf8_lossy(bytes)) > limits.nesting {
        return Err(too_deep());
    }
    let dom = config.parse_html(bytes).context("cannot parse HTML")?;
    let mut stack = vec![(dom.document.clone(), 0u64)];
    while let Some((node, depth)) = stack.pop() {
        if depth > limits.nesting {
            return Err(too_deep());
        }
        for child in node.children.borrow().iter() {
            stack.push((child.clone(), depth + 1));
        }
    }
    Ok(dom)
}

/// How deep the elements of `html` nest as its tags say: start tags open, end tags close. Void elements and
/// those HTML closes by itself (`<p>`, `<li>`, `<td>`…, often left open) do not count, nor self-closing tags
/// inside SVG or MathML; script and style bodies are read as text, as a browser reads them.
fn token_depth(html: &str) -> u64 {
    use html5ever::tendril::StrTendril;
    use html5ever::tokenizer::{BufferQueue, Tokenizer, TokenizerOpts};
    let sink = DepthSink::default();
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.deepest.get()
}

#[derive(Default)]
struct DepthSink {
    depth: std::cell::Cell<u64>,
    deepest: std::cell::Cell<u64>,
    /// Open `<svg>` and `<math>` elements: inside them `<x/>` closes itself.
    foreign: std::cell::Cell<u64>,
}

/// Elements without content, and elements whose end tag HTML lets a document leave out.
fn never_nests(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
            | "p"
            | "li"
            | "dt"
            | "dd"
            | "tr"
            | "td"
            | "th"
            | "thead"
            | "tbody"
            | "tfoot"
            | "option"
            | "optgroup"
            | "rb"
            | "rt"
            | "rp"
            | "rtc"
            | "colgroup"
            | "caption"
            | "html"
            | "head"
            | "body"
    )
}

impl html5ever::tokenizer::TokenSink for DepthSink {
    type Handle = ();

    fn process_token(
        &self,
        token: html5ever::tokenizer::Token,
        _line: u64,
    ) -> html5ever::tokenizer::TokenSinkResult<()> {
        use html5ever::tokenizer::states::RawKind;
        use html5ever::tokenizer::{TagKind, Token, TokenSinkResult};
        let Token::TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        let name: &str = &tag.name;
        let foreign = matches!(name, "svg" | "math");
        match tag.kind {
            TagKind::StartTag => {
                let closed = tag.self_closing && self.foreign.get() > 0;
                if !never_nests(name) && !closed {
                    self.depth.set(self.depth.get() + 1);
                    self.deepest.set(self.deepest.get().max(self.depth.get()));
                    if foreign {
                        self.foreign.set(self.foreign.get() + 1);
                    }
                }
                match name {
                    "script" => return TokenSinkResult::RawData(RawKind::ScriptData),
                    "style" | "xmp" | "iframe" | "noembed" | "noframes" => {
                        return TokenSinkResult::RawData(RawKind::Rawtext);
                    }
                    "textarea" | "title" => return TokenSinkResult::RawData(RawKind::Rcdata),
                    "plaintext" => return TokenSinkResult::Plaintext,
                    _ => {}
                }
            }
            TagKind::EndTag if !never_nests(name) => {
                self.depth.set(self.depth.get().saturating_sub(1));
                if foreign {
                    self.foreign.set(self.foreign.get().saturating_sub(1));
                }
            }
            TagKind::EndTag => {}
        }
        TokenSinkResult::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::token_depth;

    #[test]
    fn token_depth_counts_what_nests() {
        assert_eq!(token_depth("<div><span>a</span><b>c</b></div>"), 2);
        // Left-open paragraphs and list items, void elements, script bodies: no depth.
        let loose = format!(
            "<ul>{}</ul><br><img src=x><script>{}</script>",
            "<li>x".repeat(500),
            "<div>".repeat(500)
        );
        assert_eq!(token_depth(&loose), 1);
        // Self-closing tags close themselves only in SVG; `<div/>` opens a div in HTML.
        assert_eq!(
            token_depth(&format!("<svg>{}</svg>", "<path/>".repeat(300))),
            1
        );
        assert_eq!(token_depth(&"<div/>".repeat(300)), 300);
    }
}
