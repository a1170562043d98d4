//! Test sets in other tools' shapes, both ways: RAGAS (`user_input`, `reference`, `reference_contexts`, and
//! for answered cells `response`, `retrieved_contexts`) and DeepEval goldens (`input`, `expected_output`,
//! `context`, and `actual_output`, `retrieval_context`), as JSONL or CSV (list fields as JSON arrays).
//!
//! Imported reference contexts are located in the corpus (whitespace-insensitive) to become source spans, so
//! retrieval metrics work for imported suites too; a row whose contexts cannot be found is reported, never
//! silently given no ground truth.

use anyhow::{Context, Result, bail};
use ragtester_core::ids::stable_id;
use ragtester_core::{Answer, Category, Document, Generator, SourceSpan, Strategy, TestCase};
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Ragas,
    DeepEval,
}

impl Shape {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "ragas" => Ok(Self::Ragas),
            "deepeval" => Ok(Self::DeepEval),
            other => bail!("unknown dataset format `{other}`: expected ragas or deepeval"),
        }
    }

    /// (query, reference, reference contexts, response, retrieved contexts) field names.
    fn fields(self) -> [&'static str; 5] {
        match self {
            Self::Ragas => [
                "user_input",
                "reference",
                "reference_contexts",
                "response",
                "retrieved_contexts",
            ],
            Self::DeepEval => [
                "input",
                "expected_output",
                "context",
                "actual_output",
                "retrieval_context",
            ],
        }
    }
}

/// One row per case (and per answer, when answers are given: the cells of one configuration).
pub fn export_rows(
    shape: Shape,
    cases: &[TestCase],
    documents: &[Document],
    answers: Option<&[Answer]>,
) -> Vec<Map<String, Value>> {
    let [q, r, rc, resp, ret] = shape.fields();
    let doc_of = |id: &str| documents.iter().find(|d| d.id == id);
    let row = |case: &TestCase| {
        let contexts: Vec<String> = case
            .source_spans
            .iter()
            .filter_map(|s| doc_of(&s.document_id).map(|d| d.slice(s.start, s.end)))
            .collect();
        let mut m = Map::new();
        m.insert(q.into(), json!(case.query));
        m.insert(r.into(), json!(case.expected_answer));
        m.insert(rc.into(), json!(contexts));
        m
    };
    match answers {
        None => cases.iter().map(row).collect(),
        Some(answers) => answers
            .iter()
            .filter_map(|a| {
                let case = cases.iter().find(|c| c.id == a.case_id)?;
                let mut m = row(case);
                m.insert(resp.into(), json!(a.answer));
                let retrieved: Vec<&str> = a.contexts.iter().map(|c| c.text.as_str()).collect();
                m.insert(ret.into(), json!(retrieved));
                Some(m)
            })
            .collect(),
    }
}

/// Rows as JSONL, or as CSV with list fields written as JSON arrays.
pub fn write_rows(rows: &[Map<String, Value>], csv_out: bool) -> Result<Vec<u8>> {
    if !csv_out {
        let mut out = Vec::new();
        for r in rows {
            serde_json::to_writer(&mut out, r)?;
            out.push(b'\n');
        }
        return Ok(out);
    }
    let columns: Vec<String> = rows
        .first()
        .map_or_else(Vec::new, |r| r.keys().cloned().collect());
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&columns)?;
    for r in rows {
        w.write_record(columns.iter().map(|c| match &r[c] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }))?;
    }
    w.into_inner().context("cannot write CSV")
}

/// Whether a dataset path is CSV (by extension); anything else is JSONL.
pub fn is_csv(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// Rows of a JSONL or CSV file (by extension). CSV cells that hold a JSON array are read as lists.
pub fn read_rows(path: &std::path::Path) -> Result<Vec<Map<String, Value>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if !is_csv {
        return text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str::<Map<String, Value>>(l).with_context(|| {
                    format!("{}: line {} is not a JSON object", path.display(), i + 1)
                })
            })
            .collect();
    }
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        let mut m = Map::new();
        for (h, cell) in headers.iter().zip(record.iter()) {
            let value = if cell.trim_start().starts_with('[') {
                serde_json::from_str(cell).unwrap_or_else(|_| json!(cell))
            } else {
                json!(cell)
            };
            m.insert(h.to_string(), value);
        }
        rows.push(m);
    }
    Ok(rows)
}

/// What an import made of each row.
pub struct Imported {
    pub cases: Vec<TestCase>,
    /// "row N: why" for every row not imported.
    pub rejected: Vec<String>,
}

/// Cases from rows. A reference that refuses (the information is absent) makes a negative case; any
/// other row needs at least one reference context found in the corpus.
pub fn import_rows(shape: Shape, rows: &[Map<String, Value>], documents: &[Document]) -> Imported {
    let [q, r, rc, ..] = shape.fields();
    let mut out = Imported {
        cases: Vec::new(),
        rejected: Vec::new(),
    };
    for (i, row) in rows.iter().enumerate() {
        let n = i + 1;
        let text = |k: &str| {
            row.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let (query, reference) = (text(q), text(r));
        if query.is_empty() {
            out.rejected.push(format!("row {n}: no `{q}`"));
            continue;
        }
        let contexts: Vec<String> = match row.get(rc) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            Some(Value::String(s)) if !s.trim().is_empty() => vec![s.clone()],
            _ => Vec::new(),
        };
        let negative = ragtester_core::text::is_refusal(&reference);
        let spans: Vec<SourceSpan> = contexts
            .iter()
            .filter_map(|c| ragtester_core::document::find_text(documents, c))
            .map(|(document_id, start, end)| {
                let page = documents
                    .iter()
                    .find(|d| d.id == document_id)
                    .map_or(1, |d| d.page_of(start));
                SourceSpan {
                    document_id,
                    start,
                    end,
                    page,
                }
            })
            .collect();
        if !negative && spans.is_empty() {
            out.rejected.push(format!(
                "row {n}: {}",
                if contexts.is_empty() {
                    format!("no `{rc}` to ground the answer in")
                } else {
                    format!(
                        "none of its {} `{rc}` occurs in the documents",
                        contexts.len()
                    )
                }
            ));
            continue;
        }
        if !negative && spans.len() < contexts.len() {
            out.rejected.push(format!(
                "row {n}: imported with {} of {} contexts located",
                spans.len(),
                contexts.len()
            ));
        }
        let language = ragtester_core::text::detect_language(&query).to_string();
        out.cases.push(TestCase {
            schema_version: ragtester_core::SCHEMA_VERSION,
            id: stable_id("imported-case", &(&query, &reference)),
            category: if negative {
                Category::Negative
            } else {
                Category::Core
            },
            strategy: Strategy::Imported,
            generator: Generator::Imported,
            document_id: spans
                .first()
                .map_or_else(String::new, |s| s.document_id.clone()),
            source_spans: spans,
            query,
            expected_answer: reference,
            keywords: Vec::new(),
            restrict_to: Vec::new(),
            must_not_contain: Vec::new(),
            language,
            readability: None,
            readability_measure: None,
            generator_model: "imported".into(),
            prompt_version: match shape {
                Shape::Ragas => "ragas".into(),
                Shape::DeepEval => "deepeval".into(),
            },
            false_premise: None,
            injected_documents: Vec::new(),
            critic: None,
            unanswerable_in_corpus: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::DocumentFormat;

    fn doc() -> Document {
        Document::new(
            "manual.md".into(),
            DocumentFormat::Markdown,
            "Manual".into(),
            "The relief valve\nopens at 4.5 bar. The pump runs at 1,200 rpm.".into(),
            None,
        )
    }

    #[test]
    fn round_trip_through_both_shapes_and_formats() {
        let d = doc();
        let rows = vec![
            Map::from_iter([
                ("user_input".to_string(), json!("When does the valve open?")),
                ("reference".to_string(), json!("At 4.5 bar.")),
                (
                    "reference_contexts".to_string(),
                    json!(["The relief valve opens at 4.5 bar."]),
                ),
            ]),
            Map::from_iter([
                ("user_input".to_string(), json!("Who designed the pump?")),
                (
                    "reference".to_string(),
                    json!("The information is not sufficient to answer this question."),
                ),
                ("reference_contexts".to_string(), json!([])),
            ]),
            Map::from_iter([
                ("user_input".to_string(), json!("What colour is the pump?")),
                ("reference".to_string(), json!("Blue.")),
                (
                    "reference_contexts".to_string(),
                    json!(["The pump is blue."]),
                ),
            ]),
        ];
        let imported = import_rows(Shape::Ragas, &rows, std::slice::from_ref(&d));
        assert_eq!(imported.cases.len(), 2);
        assert_eq!(imported.rejected.len(), 1);
        assert!(
            imported.rejected[0].starts_with("row 3"),
            "{:?}",
            imported.rejected
        );
        let located = &imported.cases[0];
        assert_eq!(located.category, Category::Core);
        assert_eq!(
            d.slice(located.source_spans[0].start, located.source_spans[0].end),
            "The relief valve\nopens at 4.5 bar."
        );
        assert_eq!(imported.cases[1].category, Category::Negative);

        for shape in [Shape::Ragas, Shape::DeepEval] {
            for csv_out in [false, true] {
                let out = export_rows(shape, &imported.cases, std::slice::from_ref(&d), None);
                let bytes = write_rows(&out, csv_out).unwrap();
                let dir = tempfile::tempdir().unwrap();
                let path = dir
                    .path()
                    .join(if csv_out { "set.csv" } else { "set.jsonl" });
                std::fs::write(&path, bytes).unwrap();
                let back = import_rows(shape, &read_rows(&path).unwrap(), std::slice::from_ref(&d));
                assert!(back.rejected.is_empty(), "{:?}", back.rejected);
                // Equal but for the recorded provenance (ragas / deepeval).
                let mut expected = imported.cases.clone();
                for c in &mut expected {
                    c.prompt_version = back.cases[0].prompt_version.clone();
                }
                assert_eq!(back.cases, expected, "{shape:?} csv={csv_out}");
            }
        }
        let deepeval = export_rows(Shape::DeepEval, &imported.cases, &[d], None);
        assert_eq!(deepeval[0]["input"], "When does the valve open?");
        assert_eq!(
            deepeval[0]["context"][0],
            "The relief valve\nopens at 4.5 bar."
        );
    }
}
