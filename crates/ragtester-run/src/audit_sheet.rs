//! The audit sheet (`RUN/audit.csv`): drawn by `ragtester audit`, labelled by a person in a spreadsheet or in
//! the UI one `label` cell at a time, read back by `ragtester audit --labels`. Written here alone, always
//! whole and atomically, every cell inert for spreadsheets (`ragtester_core::spreadsheet`) and read back as
//! it was. Columns are taken from the file, so a sheet a person reordered stays readable.

use crate::{AUDIT_SHEET, RunDir};
use anyhow::{Context, Result, bail};
use ragtester_core::spreadsheet::{inert_row, restore};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sheet {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl RunDir {
    /// The audit sheet, or `None` when no audit sample has been drawn.
    pub fn audit_sheet(&self) -> Result<Option<Sheet>> {
        let path = self.file(AUDIT_SHEET);
        if !path.is_file() {
            return Ok(None);
        }
        let mut reader = csv::Reader::from_path(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let headers = reader.headers()?.iter().map(str::to_string).collect();
        let rows = reader
            .records()
            .map(|r| Ok(r?.iter().map(|c| restore(c).into_owned()).collect()))
            .collect::<Result<_>>()
            .with_context(|| format!("{} is not a readable CSV", path.display()))?;
        Ok(Some(Sheet { headers, rows }))
    }

    /// Write the audit sheet whole, replacing any earlier one.
    pub fn save_audit_sheet(&self, sheet: &Sheet) -> Result<()> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        writer.write_record(&sheet.headers)?;
        for r in &sheet.rows {
            writer.write_record(inert_row(r))?;
        }
        let bytes = writer
            .into_inner()
            .context("cannot write the audit sheet")?;
        ragtester_core::record::write_atomic(&self.file(AUDIT_SHEET), &bytes)
    }

    /// Set row `row`'s label (`true` real failure, `false` false alarm, `None` not labelled yet).
    pub fn set_audit_label(&self, row: usize, label: Option<bool>) -> Result<()> {
        let Some(mut sheet) = self.audit_sheet()? else {
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
        self.save_audit_sheet(&sheet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_and_other_cells_survive() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        assert!(run.audit_sheet().unwrap().is_none());
        std::fs::write(
            run.file(AUDIT_SHEET),
            "case_id,answer,label\nc1,\"a, with comma\",\nc2,\"多行\n回答\",\nc3,'=HYPERLINK(\"http://x\"),\n",
        )
        .unwrap();
        run.set_audit_label(1, Some(false)).unwrap();
        run.set_audit_label(0, Some(true)).unwrap();
        run.set_audit_label(0, None).unwrap();
        let sheet = run.audit_sheet().unwrap().unwrap();
        assert_eq!(sheet.rows[0], ["c1", "a, with comma", ""]);
        assert_eq!(sheet.rows[1], ["c2", "多行\n回答", "false"]);
        // A formula cell is shown as it was written and stays inert in the file.
        assert_eq!(sheet.rows[2][1], "=HYPERLINK(\"http://x\")");
        let text = std::fs::read_to_string(run.file(AUDIT_SHEET)).unwrap();
        assert!(text.contains("c3,\"'=HYPERLINK"), "{text}");
        assert!(run.set_audit_label(5, Some(true)).is_err());
    }
}
