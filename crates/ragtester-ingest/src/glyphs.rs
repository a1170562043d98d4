//! Pages whose text layer is glyph codes rather than characters. A PDF font without a ToUnicode map (subset
//! CID fonts written with Identity-H, some TeX fonts) gives extractors its glyph numbers, which come out as
//! runs of ASCII punctuation and stray letters (`!"#$%&' ()*+,- ./0123`). Such a page is not an error —
//! other pages may be fine — but its text must not be trusted silently: ingestion warns, naming the pages.

/// A page looks like glyph codes when, among at least this many visible characters, …
const MIN_VISIBLE: usize = 40;
/// … at least this share are ASCII punctuation or symbols (prose: under 0.07; shell code: about 0.2), …
const SYMBOL_SHARE: f64 = 0.25;
/// … and fewer than this share of its whitespace-separated pieces hold a lower-case word of two letters or
/// more (code and JSON, dense in symbols, are full of them; glyph numbers of a small subset font, mostly
/// below 0x60, give punctuation, digits and capitals).
const WORD_PIECES: f64 = 0.3;

/// Whether a page's text looks like unmapped glyph codes. Subset fonts with many glyphs map past ASCII,
/// where this test does not look: it catches the common case, not every one.
pub fn looks_like_glyph_codes(text: &str) -> bool {
    // Dots are left out: tables of contents and indexes are mostly dot leaders.
    let visible: Vec<char> = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .collect();
    if visible.len() < MIN_VISIBLE {
        return false;
    }
    let symbols = visible
        .iter()
        .filter(|c| c.is_ascii() && !c.is_ascii_alphanumeric())
        .count();
    if (symbols as f64) < SYMBOL_SHARE * visible.len() as f64 {
        return false;
    }
    let pieces: Vec<&str> = text
        .split_whitespace()
        .filter(|p| !p.chars().all(|c| c == '.'))
        .collect();
    let with_words = pieces
        .iter()
        .filter(|p| {
            p.as_bytes()
                .windows(2)
                .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_lowercase())
        })
        .count();
    (with_words as f64) < WORD_PIECES * pieces.len() as f64
}

/// The warning for a document whose pages (1-based) look like glyph codes; None when none do.
pub fn glyph_code_warning(page_texts: &[String]) -> Option<String> {
    let pages: Vec<String> = page_texts
        .iter()
        .enumerate()
        .filter(|(_, t)| looks_like_glyph_codes(t))
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    (!pages.is_empty()).then(|| {
        format!(
            "the text of page(s) {} looks like glyph codes, not characters (fonts without a ToUnicode map?): \
             answers drawn from it will be wrong; re-export the PDF with text, or OCR it",
            pages.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyph_codes_are_told_from_prose_and_code() {
        let codes = "!\"#$%&' ()*+,- ./0123456789:;<=\n)*>?\n@A BC#DEFGH IDJ EF\nKL ?M\n@A B DEF I\nD/ EF\nN8OPQR";
        assert!(looks_like_glyph_codes(codes));
        let prose = "The relief valve of the harbour pump opens at 4.5 bar and closes again at 3.8 bar. \
                     Bearings are greased every ninety days (lithium soap); seals are checked yearly.";
        assert!(!looks_like_glyph_codes(prose));
        let code = "Run `apt-get install -y poppler-utils` then: pdftotext -layout in.pdf out.txt; \
                    for f in *.pdf; do echo \"$f\"; done # loop over files [--help]";
        assert!(!looks_like_glyph_codes(code));
        let json = r#"{"pump": {"pressure_bar": 4.5, "seals": ["viton", "nbr"], "ok": true}, "ids": [1, 2, 3]}"#;
        assert!(!looks_like_glyph_codes(json));
        let contents = "Table of Contents\n\n1 Introduction . . . . . . . . . . . . . . . . . . 1\n\n\
                        2 ASN.1 structure handling . . . . . . . . . . . . . 2 2.1 ASN.1 syntax. . . . . . . . . 3";
        assert!(
            !looks_like_glyph_codes(contents),
            "dot leaders are not glyph codes"
        );
        let chinese = "本产品的保修期为二十四个月，自购买之日起计算。电池组净重5.8千克，设计循环寿命为800次。";
        assert!(!looks_like_glyph_codes(chinese));
        assert!(!looks_like_glyph_codes("!!! ???"), "too short to judge");
        let warning = glyph_code_warning(&[prose.into(), codes.into()]).unwrap();
        assert!(warning.contains("page(s) 2 "), "{warning}");
        assert!(glyph_code_warning(&[prose.into()]).is_none());
    }
}
