//! Cells of the CSV files ragtester writes (results.csv, audit.csv, exports for other tools) are opened in
//! spreadsheets, and a spreadsheet evaluates a cell that starts with `=`, `+`, `-` or `@` as a formula —
//! `=HYPERLINK(…)` or a DDE call written by a model or planted in a document runs when the file is opened.
//! [`inert`] prefixes such a cell with `'`, the OWASP rule for CSV injection, so it is shown as text; a plain
//! number (`-0.5`) is left as it is. [`restore`] undoes exactly that, so a sheet written and read back (audit
//! labelling, an export imported again) keeps every cell as it was.

use std::borrow::Cow;

/// Leading characters a spreadsheet treats as the start of a formula (tab and CR: some strip them first).
const TRIGGERS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

fn triggers(cell: &str) -> bool {
    cell.starts_with(TRIGGERS)
}

/// A cell whose first character starts a formula, but which is just a number (`-3`, `+1.5e3`).
fn plain_number(cell: &str) -> bool {
    cell.get(1..)
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
        && cell.parse::<f64>().is_ok_and(f64::is_finite)
}

/// `cell` as a spreadsheet shows it as text: prefixed with `'` when it would be evaluated, and when it
/// already starts with a `'` that [`restore`] would take off (so the two are exact inverses).
pub fn inert(cell: &str) -> Cow<'_, str> {
    let escaped_already = cell
        .strip_prefix('\'')
        .is_some_and(|rest| triggers(rest) || rest.starts_with('\''));
    if (triggers(cell) && !plain_number(cell)) || escaped_already {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// A cell read back from a sheet [`inert`] wrote: its one added `'` taken off.
pub fn restore(cell: &str) -> Cow<'_, str> {
    match cell.strip_prefix('\'') {
        Some(rest) if triggers(rest) || rest.starts_with('\'') => Cow::Borrowed(rest),
        _ => Cow::Borrowed(cell),
    }
}

/// Every cell of a row made inert, as `csv::Writer::write_record` takes them.
pub fn inert_row<'a, I, S>(cells: I) -> Vec<Cow<'a, [u8]>>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + ?Sized + 'a,
{
    cells
        .into_iter()
        .map(|c| match inert(c.as_ref()) {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_are_prefixed_and_restored_exactly() {
        for (cell, written) in [
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "'=HYPERLINK(\"http://x\",\"y\")",
            ),
            ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("'=already", "''=already"),
            ("''", "'''"),
            ("-", "'-"),
            ("-inf", "'-inf"),
        ] {
            assert_eq!(inert(cell), written, "{cell:?}");
            assert_eq!(restore(written), cell, "{cell:?}");
        }
        for kept in [
            "-0.5",
            "+3",
            "-12e3",
            "plain",
            "",
            "'quoted",
            "a=b",
            "2024-01-01",
            "答案",
        ] {
            assert_eq!(inert(kept), kept);
            assert_eq!(restore(kept), kept);
        }
    }
}
