//! Many problems of one kind told in a few lines: a folder of hundreds of broken files, or a dataset of
//! hundreds of unusable rows, would otherwise fill the screen with the same sentence. The first few are
//! named whole; the rest are counted per reason, with a few of their names.

/// Items named one by one before the rest are counted.
pub(crate) const LISTED: usize = 8;
/// Names given with each counted reason.
const NAMED: usize = 3;

/// One problem: where it is in full (`docs/b1.pdf`, `data.jsonl: line 12`), where it is in brief (`b1.pdf`,
/// `line 12`), and why.
pub(crate) struct Problem<'a> {
    pub full: String,
    pub short: String,
    pub why: &'a str,
}

impl<'a> Problem<'a> {
    /// A file's problem: its path in full, its name in brief.
    pub(crate) fn file(path: &std::path::Path, why: &'a str) -> Self {
        Problem {
            full: path.display().to_string(),
            short: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            why,
        }
    }
}

/// `full: why` for the first [`LISTED`], then the others counted per reason with a few of their short
/// names: `52 more files cannot be read: cannot parse PDF (b50.pdf, b51.pdf, b52.pdf, …)`.
pub(crate) fn listed(problems: &[Problem<'_>], nouns: (&str, &str), what: &str) -> Vec<String> {
    let mut lines: Vec<String> = problems
        .iter()
        .take(LISTED)
        .map(|p| format!("{}: {}", p.full, p.why))
        .collect();
    let mut rest: Vec<(&str, Vec<&str>)> = Vec::new();
    for p in problems.iter().skip(LISTED) {
        match rest.iter_mut().find(|(why, _)| *why == p.why) {
            Some((_, names)) => names.push(&p.short),
            None => rest.push((p.why, vec![&p.short])),
        }
    }
    for (why, names) in rest {
        let shown = &names[..names.len().min(NAMED)];
        let more = if names.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        let noun = if names.len() == 1 { nouns.0 } else { nouns.1 };
        lines.push(format!(
            "{} more {noun} {what}: {why} ({}{more})",
            names.len(),
            shown.join(", ")
        ));
    }
    lines
}

/// A row's problem as the readers word it (`line 12: no reference answer …`, `row 3: no `question``): its
/// place and its reason, apart.
pub(crate) fn row_problem<'a>(file: &str, text: &'a str) -> Problem<'a> {
    match text.split_once(": ") {
        Some((place, why)) if place.starts_with("line ") || place.starts_with("row ") => Problem {
            full: format!("{file}: {place}"),
            short: place.to_string(),
            why,
        },
        _ => Problem {
            full: file.to_string(),
            short: file.to_string(),
            why: text,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_problems_are_named_first_then_counted_by_reason() {
        let names: Vec<String> = (0..30).map(|i| format!("b{i:02}.pdf")).collect();
        let problems: Vec<Problem<'_>> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Problem {
                full: format!("docs/{n}"),
                short: n.clone(),
                why: if i % 10 == 9 {
                    "encrypted"
                } else {
                    "cannot parse PDF"
                },
            })
            .collect();
        let lines = listed(&problems, ("file", "files"), "cannot be read");
        assert_eq!(lines.len(), LISTED + 2, "{lines:#?}");
        assert_eq!(lines[0], "docs/b00.pdf: cannot parse PDF");
        assert_eq!(
            lines[LISTED],
            "19 more files cannot be read: cannot parse PDF (b08.pdf, b10.pdf, b11.pdf, …)"
        );
        assert_eq!(
            lines[LISTED + 1],
            "3 more files cannot be read: encrypted (b09.pdf, b19.pdf, b29.pdf)"
        );
    }

    #[test]
    fn a_row_s_place_is_read_apart_from_its_reason() {
        let p = row_problem(
            "a.jsonl",
            "line 12: no reference answer: the judge compares",
        );
        assert_eq!(
            (p.full.as_str(), p.short.as_str(), p.why),
            (
                "a.jsonl: line 12",
                "line 12",
                "no reference answer: the judge compares"
            )
        );
        let p = row_problem("a.jsonl", "unknown field `foo` ignored");
        assert_eq!(
            (p.full.as_str(), p.why),
            ("a.jsonl", "unknown field `foo` ignored")
        );
    }
}
