//! Baseline-shifted glyphs put back into their line. TeX's logos lower the E of "TeX" and raise the A of
//! "LaTeX"; superscripts, subscripts and footnote marks sit above or below the line too. pdf_oxide groups
//! text by baseline, so such a glyph lands after its line ("CTEX FAQ" → "CT X FAQ E", "LaTeX" → "LAT X E")
//! or is set off by spaces ("CT E X"), where poppler reads the word whole.
//!
//! The repair works from the page's spans (text with its box): on each line, a short span whose baseline is
//! off the line's by a fraction of the font size, touching a neighbour or sitting in a gap of one, is a
//! shifted glyph. Such a run of spans is spliced in x-order into one word, and the text pdf_oxide gave for
//! it — its pieces in x-order with any whitespace between them — is replaced by that word.

use pdf_oxide::layout::TextSpan;

/// The longest text a shifted span holds: a logo letter, a superscript, a footnote mark.
const MAX_GLYPHS: usize = 3;

/// The page's text with every shifted-glyph run spliced into its word. `spans` are the page's spans.
pub fn repair(text: &str, spans: &[TextSpan]) -> String {
    let mut out = text.to_string();
    for run in shifted_runs(spans) {
        if let Some(fixed) = replace_once(&out, &run.pieces, &run.word) {
            out = fixed;
        }
    }
    out
}

/// Whether a page's text shows what a shifted glyph leaves behind: a lone capital after one or two capitals
/// ("CT E X", "LAT X E"), or a lone digit after a single letter or a number ("H 2 O", "x 2", "10 3"). Pages
/// without one skip the span pass, which reads the page a second time; "up to 3 days", "page 3", "in R"
/// and code like "x <- c(1, 2)" do not trigger it.
pub fn may_hold_shifted_glyphs(text: &str) -> bool {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    tokens.windows(2).any(|w| {
        let (prev, t) = (w[0], w[1]);
        let mut chars = t.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return false;
        };
        let letters = |s: &str, n: usize| {
            s.chars().count() <= n && s.chars().all(|c| c.is_ascii_alphabetic())
        };
        let capital = c.is_ascii_uppercase()
            && !matches!(c, 'A' | 'I')
            && letters(prev, 2)
            && prev.chars().all(|c| c.is_ascii_uppercase());
        let digit = c.is_ascii_digit()
            && (letters(prev, 1) && !matches!(prev, "a" | "A" | "I")
                || prev.chars().all(|c| c.is_ascii_digit()));
        capital || digit
    })
}

/// A run of spans that reads as one word: the pieces as pdf_oxide emits them (x-order), and the word.
#[derive(Debug, PartialEq)]
struct Run {
    pieces: Vec<String>,
    word: String,
}

fn baseline(span: &TextSpan) -> f32 {
    span.bbox.y
}

fn right(span: &TextSpan) -> f32 {
    span.bbox.x + span.bbox.width
}

/// A short span off the baseline of `host` by more than a twentieth of the host's font size and less than
/// six tenths, or set in a font at most four fifths of the host's (pdf_oxide gives a superscript the
/// line's box): a raised or lowered glyph, not another line.
fn is_shifted(span: &TextSpan, host: &TextSpan) -> bool {
    let size = host.font_size.max(1.0);
    let offset = (baseline(span) - baseline(host)).abs();
    let smaller = span.font_size <= 0.8 * host.font_size;
    is_short(span) && offset < 0.6 * size && (offset > 0.05 * size || smaller)
}

fn is_short(span: &TextSpan) -> bool {
    let text = span.text.trim();
    !text.is_empty() && text.chars().nth(MAX_GLYPHS).is_none()
}

/// Whether two spans touch: the gap between them is under a sixth of the font size (kerning may overlap).
fn touch(left: &TextSpan, right_span: &TextSpan, size: f32) -> bool {
    let gap = right_span.bbox.x - right(left);
    gap > -0.5 * size && gap < size / 6.0
}

/// Where in `host`'s text a glyph lying inside the host's box belongs: a space the glyph was taken out of
/// (replaced), else the character boundary nearest the glyph's middle (inserted). "CT X FAQ" takes a
/// lowered E at its space; "LT X" takes a raised A between L and T and a lowered E at its space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Slot {
    Replace(usize),
    Insert(usize),
}

impl Slot {
    fn at(self) -> usize {
        match self {
            Slot::Replace(i) | Slot::Insert(i) => i,
        }
    }
}

fn slot_in(host: &TextSpan, glyph: &TextSpan) -> Option<Slot> {
    if glyph.bbox.x <= host.bbox.x || right(glyph) >= right(host) {
        return None;
    }
    let chars: Vec<char> = host.text.chars().collect();
    if chars.len() < 2 {
        return None;
    }
    let per_char = host.bbox.width / chars.len() as f32;
    let middle = (glyph.bbox.x + glyph.bbox.width / 2.0 - host.bbox.x) / per_char;
    let at = middle as usize;
    // The nearest space within a character of the estimate.
    if let Some(space) =
        (at.saturating_sub(1)..=(at + 1).min(chars.len() - 1)).find(|&i| chars[i] == ' ')
    {
        return Some(Slot::Replace(space));
    }
    let boundary = (middle.round() as usize).clamp(1, chars.len() - 1);
    Some(Slot::Insert(boundary))
}

fn shifted_runs(spans: &[TextSpan]) -> Vec<Run> {
    let (mut runs, consumed, repaired) = runs_inside_gaps(spans);
    runs.extend(touching_runs(spans, &consumed, &repaired));
    runs
}

/// Glyphs inside a gap of a host span ("CT X FAQ" with a lowered E over its space), spliced into it; with
/// which spans were spliced into a host and each host's repaired text.
fn runs_inside_gaps(spans: &[TextSpan]) -> (Vec<Run>, Vec<bool>, Vec<Option<String>>) {
    let mut runs = Vec::new();
    let mut used = vec![false; spans.len()];
    // Glyphs spliced into a host; a host stays free to join a chain with its repaired text.
    let mut consumed = vec![false; spans.len()];
    // A host's text once its gaps are filled: what the page's text holds after the first pass.
    let mut repaired: Vec<Option<String>> = vec![None; spans.len()];
    // Only short spans can be shifted glyphs; a page has few, so each host looks at those alone (a page of
    // code set span by span has thousands of spans, and all pairs of them were most of its reading time).
    let short: Vec<usize> = (0..spans.len()).filter(|&i| is_short(&spans[i])).collect();
    for (h, host) in spans.iter().enumerate() {
        if used[h] {
            continue;
        }
        // Glyphs inside a gap of this span: "CT X FAQ" with a lowered E over its space.
        let mut inside: Vec<(Slot, usize)> = short
            .iter()
            .map(|&g| (g, &spans[g]))
            .filter(|(g, glyph)| *g != h && !used[*g] && is_shifted(glyph, host))
            .filter_map(|(g, glyph)| slot_in(host, glyph).map(|slot| (slot, g)))
            .collect();
        if !inside.is_empty() {
            // Right to left, so earlier positions stay where they were.
            inside.sort_by_key(|&(slot, g)| (slot.at(), spans[g].bbox.x.to_bits()));
            let mut word: Vec<char> = host.text.chars().collect();
            for &(slot, g) in inside.iter().rev() {
                let glyph: Vec<char> = spans[g].text.trim().chars().collect();
                match slot {
                    Slot::Replace(at) => drop(word.splice(at..=at, glyph)),
                    Slot::Insert(at) => drop(word.splice(at..at, glyph)),
                }
            }
            // pdf_oxide emits the host, then the glyphs after it in x-order.
            let mut pieces = vec![host.text.clone()];
            inside.sort_by(|a, b| spans[a.1].bbox.x.total_cmp(&spans[b.1].bbox.x));
            for &(_, g) in &inside {
                pieces.push(spans[g].text.trim().to_string());
                used[g] = true;
                consumed[g] = true;
            }
            used[h] = true;
            let word: String = word.into_iter().collect();
            repaired[h] = Some(word.clone());
            runs.push(Run { pieces, word });
        }
    }
    (runs, consumed, repaired)
}

/// Chains of touching spans on one line that hold at least one shifted glyph, each one word.
fn touching_runs(spans: &[TextSpan], consumed: &[bool], repaired: &[Option<String>]) -> Vec<Run> {
    let mut runs = Vec::new();
    // Glyphs touching their neighbours: "CT" "E" "X", "x" "2", "H" "2" "O". Chains of touching spans on one
    // line that hold at least one shifted glyph become one word.
    let text_of = |i: usize| {
        repaired[i]
            .clone()
            .unwrap_or_else(|| spans[i].text.trim().to_string())
    };
    let mut order: Vec<usize> = (0..spans.len()).filter(|&i| !consumed[i]).collect();
    order.sort_by(|&a, &b| spans[a].bbox.x.total_cmp(&spans[b].bbox.x));
    let lefts: Vec<f32> = order.iter().map(|&i| spans[i].bbox.x).collect();
    let mut taken = vec![false; spans.len()];
    for &start in &order {
        if taken[start] {
            continue;
        }
        let mut chain = vec![start];
        let mut shifted = false;
        loop {
            let last = &spans[*chain.last().expect("a chain starts with one span")];
            let size = last.font_size.max(spans[start].font_size).max(1.0);
            // Only spans starting where `last` ends can touch it: a window of the x-sorted order.
            let from = lefts.partition_point(|&x| x <= right(last) - 0.5 * size);
            let to = lefts.partition_point(|&x| x < right(last) + size / 6.0);
            let next = order[from..to.max(from)].iter().copied().find(|&n| {
                !taken[n]
                    && !chain.contains(&n)
                    && touch(last, &spans[n], size)
                    && (baseline(&spans[n]) - baseline(last)).abs() < 0.6 * size
            });
            let Some(next) = next else { break };
            let host = &spans[start];
            shifted |= is_shifted(&spans[next], host) || is_shifted(host, &spans[next]);
            chain.push(next);
        }
        if chain.len() > 1 && shifted {
            for &c in &chain {
                taken[c] = true;
            }
            let pieces: Vec<String> = chain.iter().map(|&c| text_of(c)).collect();
            runs.push(Run {
                word: pieces.concat(),
                pieces,
            });
        }
    }
    runs
}

/// `text` with the first place its pieces stand in a row (any whitespace between them) replaced by `word`;
/// None when they do not, or when they already read as the word.
fn replace_once(text: &str, pieces: &[String], word: &str) -> Option<String> {
    if pieces.iter().any(|p| p.is_empty()) {
        return None;
    }
    let mut search = 0;
    while let Some(found) = text[search..].find(pieces[0].as_str()) {
        let start = search + found;
        let mut end = start + pieces[0].len();
        let mut matched = true;
        for piece in &pieces[1..] {
            let rest = &text[end..];
            let skipped = rest.len() - rest.trim_start().len();
            if rest[skipped..].starts_with(piece.as_str()) {
                end += skipped + piece.len();
            } else {
                matched = false;
                break;
            }
        }
        if matched && &text[start..end] != word {
            return Some(format!("{}{word}{}", &text[..start], &text[end..]));
        }
        search = start + pieces[0].len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_oxide::geometry::Rect;

    fn span(text: &str, x: f32, y: f32, width: f32, size: f32) -> TextSpan {
        TextSpan {
            text: text.into(),
            bbox: Rect::new(x, y, width, size),
            font_size: size,
            ..Default::default()
        }
    }

    // Span boxes as pdf_oxide reads them from the CTeX FAQ (texlive-lang-chinese), page 1.
    #[test]
    fn a_lowered_e_in_a_gap_of_its_line_is_put_back() {
        let spans = [
            span("CT X FAQ", 148.42, 691.01, 132.11, 24.79),
            span("（常见问题集）", 289.79, 691.01, 173.51, 24.79),
            span("E", 179.67, 685.50, 18.29, 24.79),
        ];
        assert_eq!(
            repair("CT X FAQ E （常见问题集） Version 0.4", &spans),
            "CTEX FAQ （常见问题集） Version 0.4"
        );
    }

    #[test]
    fn a_raised_a_and_a_lowered_e_both_go_back_into_latex() {
        // "LaTeX" as the CTeX FAQ's table of contents gives it: the host "LT X", A raised and smaller
        // between L and T, E lowered in the space.
        let spans = [
            span("LT X", 100.0, 500.0, 24.0, 10.0),
            span("A", 103.5, 502.5, 4.0, 7.0),
            span("E", 112.5, 497.8, 5.5, 10.0),
            span("是什么？", 126.0, 500.0, 40.0, 10.0),
        ];
        assert_eq!(repair("6 LT X A E 是什么？", &spans), "6 LATEX 是什么？");
    }

    #[test]
    fn touching_logo_letters_and_superscripts_join() {
        let spans = [
            span("本文的大部分内容都来自于", 91.93, 555.56, 121.43, 9.96),
            span("CT", 216.03, 555.56, 13.89, 9.96),
            span("E", 228.26, 553.41, 6.78, 9.96),
            span("X", 233.80, 555.56, 7.47, 9.96),
            span("论坛", 243.94, 555.56, 20.0, 9.96),
        ];
        assert_eq!(
            repair("本文的大部分内容都来自于 CT E X 论坛", &spans),
            "本文的大部分内容都来自于 CTEX 论坛"
        );
        // x² and H₂O: a raised and a lowered digit, smaller, touching their letters.
        let spans = [
            span("x", 100.0, 500.0, 5.0, 10.0),
            span("2", 105.2, 503.5, 3.5, 7.0),
            span("H", 200.0, 500.0, 7.0, 10.0),
            span("2", 207.1, 497.5, 3.5, 7.0),
            span("O", 210.8, 500.0, 7.5, 10.0),
        ];
        assert_eq!(
            repair("area x 2 and H 2 O here", &spans),
            "area x2 and H2O here"
        );
        // A superscript pdf_oxide boxes on the line itself, told by its smaller font: "10³".
        let spans = [
            span("the tank holds 10", 205.35, 616.43, 225.06, 9.96),
            span("3", 430.41, 616.43, 3.97, 6.97),
            span("litres.", 438.20, 616.43, 24.44, 9.96),
        ];
        assert_eq!(
            repair("the tank holds 10 3 litres.", &spans),
            "the tank holds 103 litres."
        );
    }

    #[test]
    fn only_pages_showing_a_stray_glyph_are_read_again() {
        for broken in [
            "CT X FAQ E here",
            "LT X A E 是什么",
            "water is H 2 O",
            "x 2 square",
            "holds 10 3 litres",
        ] {
            assert!(may_hold_shifted_glyphs(broken), "{broken}");
        }
        for plain in [
            "See page 3 of the manual",
            "Figure 2 shows it",
            "a word is a word",
            "CTEX FAQ",
        ] {
            assert!(!may_hold_shifted_glyphs(plain), "{plain}");
        }
    }

    #[test]
    fn text_already_whole_or_spans_apart_are_left_alone() {
        let spans = [
            span("x", 100.0, 500.0, 5.0, 10.0),
            span("2", 140.0, 503.5, 3.5, 7.0),
        ];
        assert_eq!(repair("x 2", &spans), "x 2");
        let spans = [
            span("CT", 216.03, 555.56, 13.89, 9.96),
            span("E", 228.26, 553.41, 6.78, 9.96),
            span("X", 233.80, 555.56, 7.47, 9.96),
        ];
        assert_eq!(repair("CTEX", &spans), "CTEX");
    }
}
