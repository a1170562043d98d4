//! The audit sheet (`RUN/audit.csv`, written by `ragtester audit`) as the UI labels it: read as a table,
//! one `label` cell changed at a time, written back atomically. Columns are taken from the file, so the sheet
//! stays the one `ragtester audit --labels` reads. Cells are stored inert for spreadsheets
//! (`ragtester_core::spreadsheet`): read back as they were, written inert again.

use anyhow::{Context, Result, bail};
use ragtester_core::spreadsheet::{inert_row, restore};
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Serialize)]
pub struct Sheet {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// The sheet, or `None` when no audit sample has been drawn.
pub fn read(path: &Path) -> Result<Option<Sheet>> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let headers = reader.headers()?.iter().map(str::to_string).collect();
    let rows = reader
        .records()
        .map(|r| Ok(r?.iter().map(|c| restore(c).into_owned()).collect()))
        .collect::<Result<_>>()
        .with_context(|| format!("{} is not a readable CSV", path.display()))?;
    Ok(Some(Sheet { headers, rows }))
}

/// Set row `row`'s label (`true` real failure, `false` false alarm, `None` not labelled yet).
pub fn set_label(path: &Path, row: usize, label: Option<bool>) -> Result<()> {
    let Some(mut sheet) = read(path)? else {
        bail!("no audit sample has been drawn for this run");
    };
    let col = sheet
        .headers
        .iter()
        .position(|h| h.trim() == "label")
        .context("the audit sheet has no `label` column")?;
    let Some(cells) = sheet.rows.get_mut(row) else {
        bail!("the audit sheet has no row {row}");
    };
    cells.resize(sheet.headers.len(), String::new());
    cells[col] = match label {
        Some(true) => "true".into(),
        Some(false) => "false".into(),
        None => String::new(),
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer.write_record(&sheet.headers)?;
    for r in &sheet.rows {
        writer.write_record(inert_row(r))?;
    }
    ragtester_core::record::write_atomic(path, &writer.into_inner()?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_and_other_cells_survive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.csv");
        std::fs::write(
            &path,
            "case_id,answer,label\nc1,\"a, with comma\",\nc2,\"多行\n回答\",\nc3,'=HYPERLINK(\"http://x\"),\n",
        )
        .unwrap();
        set_label(&path, 1, Some(false)).unwrap();
        set_label(&path, 0, Some(true)).unwrap();
        set_label(&path, 0, None).unwrap();
        let sheet = read(&path).unwrap().unwrap();
        assert_eq!(sheet.rows[0], ["c1", "a, with comma", ""]);
        assert_eq!(sheet.rows[1], ["c2", "多行\n回答", "false"]);
        // A formula cell is shown as it was written and stays inert in the file.
        assert_eq!(sheet.rows[2][1], "=HYPERLINK(\"http://x\")");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("c3,\"'=HYPERLINK"), "{text}");
        assert!(set_label(&path, 5, Some(true)).is_err());
        assert!(read(&dir.path().join("none.csv")).unwrap().is_none());
    }
}
