//! Turning extracted page texts into one document text with page offsets: ligatures and line-end hyphenation
//! undone, overstruck ("poor man's bold") words printed once, lines of a paragraph joined, running headers,
//! footers and page numbers removed.

use crate::overstrike::collapse_overstrike;
use ragtester_core::Page;
use ragtester_text::is_cjk;
use std::borrow::Cow;
use std::collections::HashMap;

/// How many lines at the top and bottom of a page are candidates for running headers and footers.
const BAND_LINES: usize = 2;

/// The cleaned pages joined by blank lines, with each page's char range in the result, and how many header,
/// footer or page-number lines were removed.
pub struct PagedText {
    pub text: String,
    pub pages: Vec<Page>,
    pub removed_lines: usize,
}

pub fn assemble(page_texts: &[String], strip_running: bool) -> PagedText {
    let mut pages_lines: Vec<Vec<String>> = page_texts
        .iter()
        .map(|p| {
            expand_ligatures(p)
                .lines()
                .map(|l| collapse_overstrike(l.trim()))
                .collect()
        })
        .collect();
    let removed_lines = if strip_running {
        strip_running_lines(&mut pages_lines)
    } else {
        0
    };
    let mut text = String::new();
    let mut pages = Vec::with_capacity(pages_lines.len());
    let mut offset = 0usize;
    for (i, lines) in pages_lines.iter().enumerate() {
        let body = join_paragraph_lines(&undouble_spacing(lines));
        if !body.is_empty() {
            if !text.is_empty() {
                text.push_str("\n\n");
                offset += 2;
            }
            text.push_str(&body);
        }
        let len = body.chars().count();
        pages.push(Page {
            number: i as u32 + 1,
            start: offset,
            end: offset + len,
        });
        offset += len;
    }
    PagedText {
        text,
        pages,
        removed_lines,
    }
}

/// Typographic ligatures (U+FB00–FB06) as the letters they stand for, and soft hyphens dropped — except at a
/// line end, where a soft hyphen is where a typesetter (TeX, typst) broke a word: it becomes a hyphen there,
/// so line joining rejoins the word.
pub fn expand_ligatures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{00AD}' if matches!(chars.peek(), Some('\n') | Some('\r')) => out.push('-'),
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            '\u{00AD}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Lines of one paragraph become one line: a word hyphenated across a line end is rejoined, CJK lines join
/// without a space, others with one. A line that ends well short of the page's full width ended on purpose
/// (a table row, a list entry, an address line) and keeps its line break. Blank lines stay paragraph breaks.
fn join_paragraph_lines(lines: &[String]) -> String {
    let full_width = lines.iter().map(|l| visual_width(l)).max().unwrap_or(0);
    let mut out = String::new();
    let mut paragraph_open = false;
    let mut prev_width = 0;
    for line in lines {
        if line.is_empty() {
            if paragraph_open {
                out.push_str("\n\n");
                paragraph_open = false;
            }
            continue;
        }
        if paragraph_open {
            let prev = out.chars().last().unwrap_or(' ');
            let next = line.chars().next().unwrap_or(' ');
            let wrapped = prev_width * 10 >= full_width * 7;
            if is_hyphenated_break(&out, next) && wrapped {
                out.pop();
            } else if starts_new_block(line) || !wrapped {
                out.push('\n');
            } else if !(is_cjk_text(prev) && is_cjk_text(next)) {
                out.push(' ');
            }
        }
        out.push_str(line);
        prev_width = visual_width(line);
        paragraph_open = true;
    }
    rejoin_inline_hyphens(out.trim_end())
}

/// Some engines put a blank line after every line of a page (pdf_oxide on pdfLaTeX CJK pages, whose line
/// spacing is wide). On a page where no two text lines touch, a blank line after a line that runs to the full
/// width of the page follows a wrapped line, not the end of a paragraph: it is dropped so the lines join.
///
/// Only where the page's lines are printed lines: several of them wrap at the same full width, and none is
/// longer than a printed line can be. When the engine has already joined each paragraph into one line (the
/// usual case), the longest line is a whole paragraph, alone at its length, and the blank lines are paragraph
/// breaks.
fn undouble_spacing(lines: &[String]) -> Cow<'_, [String]> {
    /// Wider than any printed line: about 6 pt type across a landscape A4 page.
    const MAX_PRINTED_WIDTH: usize = 250;
    let text_lines = lines.iter().filter(|l| !l.is_empty()).count();
    let touching = lines
        .windows(2)
        .any(|w| !w[0].is_empty() && !w[1].is_empty());
    if text_lines < 3 || touching {
        return Cow::Borrowed(lines);
    }
    let full_width = lines.iter().map(|l| visual_width(l)).max().unwrap_or(0);
    let at_full_width = lines
        .iter()
        .filter(|l| visual_width(l) * 10 >= full_width * 9)
        .count();
    if at_full_width < 2 || full_width > MAX_PRINTED_WIDTH {
        return Cow::Borrowed(lines);
    }
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let soft_break = line.is_empty()
            && i > 0
            && visual_width(&lines[i - 1]) * 10 >= full_width * 9
            && lines
                .get(i + 1)
                .is_some_and(|next| !next.is_empty() && !starts_new_block(next));
        if !soft_break {
            out.push(line.clone());
        }
    }
    Cow::Owned(out)
}

/// Width in columns: CJK characters and full-width forms take two.
fn visual_width(line: &str) -> usize {
    line.chars()
        .map(|c| if is_cjk_text(c) { 2 } else { 1 })
        .sum()
}

/// CJK ideographs and kana, and the CJK punctuation and full-width forms that sit between them unspaced.
fn is_cjk_text(c: char) -> bool {
    is_cjk(c) || ('\u{3000}'..='\u{303F}').contains(&c) || ('\u{FF00}'..='\u{FFEF}').contains(&c)
}

/// Some engines join a paragraph's lines themselves, leaving `docu- mented`: a lower-case word part, a hyphen,
/// one space and a lower-case continuation. Suspended compounds (`pre- and post-war`) are left alone.
fn rejoin_inline_hyphens(text: &str) -> String {
    const SUSPENDED: [&str; 8] = ["and", "or", "nor", "to", "und", "oder", "et", "ou"];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("- ") {
        let (head, tail) = rest.split_at(at);
        let after = &tail[2..];
        let part_before = head
            .rsplit(|c: char| !c.is_alphabetic())
            .next()
            .unwrap_or("");
        let next_word: String = after.chars().take_while(|c| c.is_alphabetic()).collect();
        let join = part_before.chars().count() >= 2
            && part_before.chars().all(char::is_lowercase)
            && next_word.chars().next().is_some_and(char::is_lowercase)
            && !SUSPENDED.contains(&next_word.as_str());
        out.push_str(head);
        if !join {
            out.push_str("- ");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `docu-` at a line end followed by `ment`: a letter, a hyphen, and a lower-case continuation.
fn is_hyphenated_break(before: &str, next: char) -> bool {
    let mut rev = before.chars().rev();
    matches!((rev.next(), rev.next()), (Some('-'), Some(c)) if c.is_alphabetic())
        && next.is_lowercase()
}

/// List items, table rows and headings keep their own line.
fn starts_new_block(line: &str) -> bool {
    let first = line.chars().next().unwrap_or(' ');
    matches!(first, '•' | '◦' | '▪' | '-' | '*' | '|')
        || line.split_once(['.', ')', '、']).is_some_and(|(n, _)| {
            !n.is_empty() && n.len() <= 3 && n.chars().all(|c| c.is_ascii_digit())
        })
}

/// Remove lines that recur in the top or bottom band of most pages (digits ignored, so "Page 3" matches
/// "Page 4"), and bare page numbers there. Returns how many lines were removed.
fn strip_running_lines(pages: &mut [Vec<String>]) -> usize {
    let n = pages.len();
    let mut counts: HashMap<String, usize> = HashMap::new();
    for lines in pages.iter() {
        let mut seen = std::collections::HashSet::new();
        for i in band_indices(lines) {
            let key = shape(&lines[i]);
            if !key.is_empty() && seen.insert(key.clone()) {
                *counts.entry(key).or_default() += 1;
            }
        }
    }
    // A line is running when it appears in the band of at least half the pages and of at least two. Digits
    // are ignored in the comparison, so body lines rarely collide; a short document with two pages that open
    // with the same words loses that line, which a user can prevent with `--keep-running-lines`.
    let threshold = n.div_ceil(2).max(2);
    let mut removed = 0;
    for lines in pages.iter_mut() {
        let band: Vec<usize> = band_indices(lines).collect();
        for i in band.into_iter().rev() {
            let running = counts
                .get(&shape(&lines[i]))
                .is_some_and(|&c| c >= threshold);
            if running || (n > 1 && is_page_number(&lines[i])) {
                lines.remove(i);
                removed += 1;
            }
        }
    }
    removed
}

/// Indexes of the first and last `BAND_LINES` non-empty lines.
fn band_indices(lines: &[String]) -> impl Iterator<Item = usize> {
    let filled: Vec<usize> = (0..lines.len()).filter(|&i| !lines[i].is_empty()).collect();
    let mut band: Vec<usize> = filled.iter().take(BAND_LINES).copied().collect();
    for &i in filled.iter().rev().take(BAND_LINES) {
        if !band.contains(&i) {
            band.push(i);
        }
    }
    band.sort_unstable();
    band.into_iter()
}

/// The comparison key of a band line. Digits are ignored in short lines only: running headers and footers are
/// short ("Chapter 3 · Page 12"), while a long body line that differs from another only in its numbers
/// is content, not furniture.
fn shape(line: &str) -> String {
    let short = line.chars().count() <= 100;
    line.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| {
            if short && c.is_ascii_digit() {
                '#'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// "12", "- 12 -", "Page 3", "Page 3 of 10", "3 / 10", "第 3 页", "第3页，共10页".
fn is_page_number(line: &str) -> bool {
    let lower = line.to_lowercase();
    let rest: String = lower
        .replace("page", "")
        .replace("of", "")
        .chars()
        .filter(|c| {
            !c.is_whitespace()
                && !matches!(
                    c,
                    '-' | '–' | '—' | '/' | '|' | '第' | '页' | '共' | '，' | ','
                )
        })
        .collect();
    !rest.is_empty() && rest.len() <= 8 && rest.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(lines: &[&str]) -> String {
        lines.join("\n")
    }

    #[test]
    fn running_headers_footers_and_page_numbers_are_removed() {
        let bodies = [
            "Installation needs two people.",
            "Prime the pump before starting.",
            "Check the seals every month.",
            "Replace the impeller after 5000 hours.",
        ];
        let pages: Vec<String> = (1..=4)
            .map(|i| {
                page(&[
                    "ACME Pump Manual — Rev 2",
                    "",
                    bodies[i - 1],
                    "",
                    &format!("Page {i} of 4"),
                ])
            })
            .collect();
        let out = assemble(&pages, true);
        assert_eq!(out.removed_lines, 8);
        assert!(!out.text.contains("ACME"), "{}", out.text);
        assert!(!out.text.contains("of 4"), "{}", out.text);
        assert_eq!(out.pages.len(), 4);
        let kept = assemble(&pages, false);
        assert!(kept.text.contains("ACME"));
        assert_eq!(kept.removed_lines, 0);
    }

    #[test]
    fn page_offsets_map_back_to_page_text() {
        let pages = vec![
            "First page.".to_string(),
            String::new(),
            "Third page 第三页。".to_string(),
        ];
        let out = assemble(&pages, true);
        let chars: Vec<char> = out.text.chars().collect();
        let slice = |p: &Page| chars[p.start..p.end].iter().collect::<String>();
        assert_eq!(slice(&out.pages[0]), "First page.");
        assert_eq!(out.pages[1].start, out.pages[1].end);
        assert_eq!(slice(&out.pages[2]), "Third page 第三页。");
        assert_eq!(out.pages[2].end, chars.len());
    }

    #[test]
    fn soft_hyphens_at_line_ends_rejoin_words() {
        assert_eq!(
            expand_ligatures("commis\u{00AD}\nsioned co\u{00AD}op"),
            "commis-\nsioned coop"
        );
    }

    #[test]
    fn ligatures_hyphenation_and_cjk_lines_are_joined() {
        let p = page(&[
            "The e\u{FB03}cient centrifugal pump is docu-",
            "mented in the appendix and is well-",
            "Known. Pre- and post-checks are re- quired.",
            "",
            "离心泵的最大工作压力为四点五巴，每次启动",
            "前必须检查密封圈。",
            "1. first item",
            "2. second item",
            "温区 温度范围",
            "冷冻 ≤ −18 ℃",
        ]);
        let out = assemble(&[p], true);
        assert_eq!(
            out.text,
            "The efficient centrifugal pump is documented in the appendix and is well- Known. Pre- and post-checks are \
             required.\n\n离心泵的最大工作压力为四点五巴，每次启动前必须检查密封圈。\n1. first item\n2. second item\n\
             温区 温度范围\n冷冻 ≤ −18 ℃"
        );
    }

    #[test]
    fn lines_an_engine_double_spaced_are_joined_again() {
        let p = page(&[
            "本手册说明了实验室离心机的日常维护流程。离心机每运行五百小时必须更换",
            "",
            "一次密封圈，更换工作由设备管理员负责。 如果转子出现裂纹，应立即停止使",
            "",
            "用并联系供应商。",
            "",
            "传感器校准",
            "",
            "温度传感器的校准周期为六个月。",
        ]);
        assert_eq!(
            assemble(&[p], true).text,
            "本手册说明了实验室离心机的日常维护流程。离心机每运行五百小时必须更换一次密封圈，更换工作由设备管理员负责。 \
             如果转子出现裂纹，应立即停止使用并联系供应商。\n\n传感器校准\n\n温度传感器的校准周期为六个月。"
        );
        // Paragraphs separated by blank lines on a page whose lines touch stay apart.
        let q = page(&[
            "A full line of text that runs across",
            "the page and ends its paragraph here.",
            "",
            "Next paragraph line that is long enough.",
        ]);
        assert_eq!(
            assemble(&[q], true).text,
            "A full line of text that runs across the page and ends its paragraph here.\n\nNext paragraph line \
             that is long enough."
        );
        // Paragraphs the engine already joined into single lines, blank lines between: the longest line is a
        // whole paragraph, not a printed line, so the blank lines are paragraph breaks.
        let shutdown = "The Debian system needs the proper shutdown procedure before power can safely be turned \
                        off. This is to maintain the integrity of files, by forcing all changes in memory to be \
                        written to disk.";
        let r = page(&[
            "1.1.8 How to shutdown the system",
            "",
            shutdown,
            "",
            "You can shutdown the system under the normal multiuser mode from the commandline.",
            "",
            "# shutdown -h now",
        ]);
        assert_eq!(
            assemble(&[r], true).text,
            format!(
                "1.1.8 How to shutdown the system\n\n{shutdown}\n\nYou can shutdown the system under the normal \
                 multiuser mode from the commandline.\n\n# shutdown -h now"
            )
        );
        // Two paragraphs of about the same length, each longer than any printed line: still paragraphs.
        let long = "word ".repeat(60);
        let long = long.trim_end();
        let t = page(&[long, "", long, "", "end"]);
        assert_eq!(
            assemble(&[t], true).text,
            format!("{long}\n\n{long}\n\nend")
        );
    }

    #[test]
    fn page_number_shapes() {
        for yes in [
            "12",
            "- 12 -",
            "Page 3",
            "Page 3 of 10",
            "3 / 10",
            "第 3 页",
            "第3页，共10页",
        ] {
            assert!(is_page_number(yes), "{yes}");
        }
        for no in ["4.5 bar", "Chapter 3", "2024 report", "", "Step 1: open"] {
            assert!(!is_page_number(no), "{no}");
        }
    }
}
