//! Test sets in other tools' shapes, both ways: RAGAS (`user_input`, `reference`, `reference_contexts`, and
//! for answered cells `response`, `retrieved_contexts`) and DeepEval goldens (`input`, `expected_output`,
//! `context`, and `actual_output`, `retrieval_context`), in each library's own file shapes, chosen by
//! extension:
//!
//! - `.jsonl` — one JSON object a line (RAGAS's `to_jsonl` / `from_jsonl`);
//! - `.json` — one JSON array of objects (DeepEval's `save_as(file_type="json")` and
//!   `add_goldens_from_json_file`); a `.json` file that is JSON lines is read too;
//! - `.csv` — list fields as each library writes them: RAGAS's `to_csv` (pandas) writes Python literals
//!   (`['…', '…']`), DeepEval joins items with `|`. Reading takes a JSON array, a Python list literal
//!   (parsed as a literal, never evaluated) or, for DeepEval, `|`-joined items.
//!
//! Imported reference contexts are located in the corpus (whitespace-insensitive) to become source spans, so
//! retrieval metrics work for imported suites too; a row whose contexts cannot be found is reported, never
//! silently given no ground truth.

use anyhow::{Context, Result, bail};
use ragtester_core::ids::stable_id;
use ragtester_core::{Answer, Category, Document, Generator, SourceSpan, Strategy, TestCase};
use serde_json::{Map, Value, json};

pub use crate::shape::{READ_FIELDS, Shape, warn_unread_fields};
use crate::tool_rows;

/// One row per case (and per answer, when answers are given: the cells of one configuration); with
/// `conversations`, an answered turn of a conversation as the shape keeps conversations (`conversation_rows`).
pub fn export_rows(
    shape: Shape,
    cases: &[TestCase],
    documents: &[Document],
    answers: Option<&[Answer]>,
    conversations: bool,
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
        if !case.expected_tools.is_empty() {
            let expected = match shape {
                Shape::Ragas => (
                    "reference_tool_calls",
                    tool_rows::ragas_calls(&case.expected_tools),
                ),
                _ => (
                    "expected_tools",
                    tool_rows::deepeval_calls(&case.expected_tools),
                ),
            };
            m.insert(expected.0.into(), expected.1);
        }
        m
    };
    match answers {
        None => cases.iter().map(row).collect(),
        Some(answers) => answers
            .iter()
            .filter_map(|a| {
                let case = cases.iter().find(|c| c.id == a.case_id)?;
                // RAGAS keeps tool calls only on a multi-turn sample: an agent's answer (one whose calls
                // were observed) is one there.
                let agent = shape == Shape::Ragas
                    && a.tool_calls
                        .as_ref()
                        .is_some_and(|calls| !calls.is_empty() || !case.expected_tools.is_empty());
                let simulated = a.simulation.as_ref().is_some_and(|s| !s.turns.is_empty());
                if conversations && (case.turn.is_some() || agent || simulated) {
                    return Some(crate::conversation_rows::conversation_row(
                        shape,
                        case,
                        a,
                        cases,
                        answers,
                        &row(case),
                    ));
                }
                let mut m = row(case);
                m.insert(resp.into(), json!(a.answer));
                let retrieved: Vec<&str> = a.contexts.iter().map(|c| c.text.as_str()).collect();
                m.insert(ret.into(), json!(retrieved));
                // DeepEval's field; a RAGAS single-turn sample has none, and ignores it.
                if let Some(calls) = &a.tool_calls {
                    m.insert("tools_called".into(), tool_rows::deepeval_calls(calls));
                }
                // What the libraries' fields cannot hold, so `import --answers` restores the cell exactly:
                // RAGAS keeps unknown keys out of its samples; DeepEval has a metadata field.
                let meta = json!(crate::row_meta::RowMeta::of(case, a));
                match shape {
                    Shape::Ragas => {
                        m.insert(crate::row_meta::META_KEY.into(), meta);
                    }
                    Shape::DeepEval => {
                        m.insert(
                            "additional_metadata".into(),
                            json!({ crate::row_meta::META_KEY: meta }),
                        );
                    }
                    Shape::Messages => {
                        m.insert(crate::row_meta::META_KEY.into(), meta);
                    }
                }
                Some(m)
            })
            .collect(),
    }
}

/// Where an export puts the conversations a shape cannot mix with single turns in one file: beside `out`,
/// `NAME.conversations.EXT` (RAGAS's `EvaluationDataset` holds single-turn or multi-turn samples, never
/// both; DeepEval keeps goldens and conversational goldens in datasets of their own). `import --answers
/// NAME.EXT` reads it back with `NAME.EXT`.
pub fn conversations_file(out: &std::path::Path) -> std::path::PathBuf {
    let stem = out
        .file_stem()
        .map_or_else(|| "export".into(), |s| s.to_string_lossy().into_owned());
    let name = match out.extension() {
        Some(ext) => format!("{stem}.conversations.{}", ext.to_string_lossy()),
        None => format!("{stem}.conversations"),
    };
    out.with_file_name(name)
}

/// Whether a path is the conversations file of another export ([`conversations_file`]).
pub fn is_conversations_file(path: &std::path::Path) -> bool {
    path.file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| s.ends_with(".conversations"))
}

/// Whether an exported row is a conversation's turn (its messages, not a single question).
pub fn is_conversation_row(row: &Map<String, Value>) -> bool {
    ["user_input", "turns", "messages"]
        .iter()
        .any(|k| row.get(*k).is_some_and(Value::is_array))
}

impl Shape {
    /// Whether the shape's library reads single turns and conversations from one file: ours does, RAGAS's
    /// and DeepEval's loaders take one kind of sample a dataset.
    pub fn mixes_conversations(self) -> bool {
        self == Shape::Messages
    }
}

/// A dataset file's shape on disk, by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileFormat {
    JsonLines,
    JsonArray,
    Csv,
}

impl FileFormat {
    /// `.csv` → CSV, `.json` → a JSON array, anything else (`.jsonl`, `.ndjson`) → JSON lines.
    pub fn of(path: &std::path::Path) -> Self {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("csv") => Self::Csv,
            Some("json") => Self::JsonArray,
            _ => Self::JsonLines,
        }
    }
}

/// The separator DeepEval's CSV reader and writer put between the items of a list field.
const DEEPEVAL_LIST_SEPARATOR: &str = "|";

/// Rows in `format`, list fields in CSV written as `shape`'s library writes them.
pub fn write_rows(
    rows: &[Map<String, Value>],
    format: FileFormat,
    shape: Shape,
) -> Result<Vec<u8>> {
    match format {
        FileFormat::JsonLines => {
            let mut out = Vec::new();
            for r in rows {
                serde_json::to_writer(&mut out, r)?;
                out.push(b'\n');
            }
            Ok(out)
        }
        FileFormat::JsonArray => Ok(serde_json::to_vec_pretty(rows)?),
        FileFormat::Csv => {
            // Every row's fields, in the order they first appear (rows may differ: a failed cell has no
            // answer of its own).
            let mut columns: Vec<String> = Vec::new();
            for r in rows {
                for k in r.keys() {
                    if !columns.contains(k) {
                        columns.push(k.clone());
                    }
                }
            }
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(&columns)?;
            for r in rows {
                let cells = columns
                    .iter()
                    .map(|c| csv_cell(r.get(c).unwrap_or(&Value::Null), shape))
                    .collect::<Result<Vec<_>>>()?;
                // Inert in a spreadsheet (a leading `=` is shown, not run); our reader undoes it.
                w.write_record(ragtester_core::spreadsheet::inert_row(&cells))?;
            }
            w.into_inner().context("cannot write CSV")
        }
    }
}

fn csv_cell(value: &Value, shape: Shape) -> Result<String> {
    Ok(match value {
        Value::String(s) => s.clone(),
        // Tool calls: a list of objects, which neither library's list convention holds, as JSON.
        Value::Array(items) if items.iter().any(Value::is_object) => value.to_string(),
        Value::Array(items) => {
            let texts: Vec<String> = items
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect();
            match shape {
                Shape::Ragas => {
                    let list = py_literal::Value::List(
                        texts.into_iter().map(py_literal::Value::String).collect(),
                    );
                    let mut out = Vec::new();
                    list.write_ascii(&mut out)
                        .context("cannot write a Python list literal")?;
                    String::from_utf8(out)?
                }
                // DeepEval's `|` cannot hold an item that contains `|` or is blank: such a list is
                // written as a JSON array, which our reader takes back whole.
                Shape::DeepEval
                    if texts
                        .iter()
                        .any(|t| t.contains(DEEPEVAL_LIST_SEPARATOR) || t.trim().is_empty()) =>
                {
                    serde_json::to_string(&texts)?
                }
                Shape::DeepEval => texts.join(DEEPEVAL_LIST_SEPARATOR),
                Shape::Messages => serde_json::to_string(&texts)?,
            }
        }
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

/// Rows of a dataset file in `shape`, read by its extension (see the module's list).
pub fn read_rows(
    path: &std::path::Path,
    shape: Shape,
    limits: &ragtester_core::Limits,
) -> Result<Vec<Map<String, Value>>> {
    let text = ragtester_core::limits::read_text_file(path, limits)?;
    parse_rows(&text, FileFormat::of(path), shape, path, limits)
}

/// Rows of a dataset's text in `format` (`path` names it in errors): what [`read_rows`] reads, and what the
/// fuzz target `dataset_rows` feeds arbitrary bytes.
pub fn parse_rows(
    text: &str,
    format: FileFormat,
    shape: Shape,
    path: &std::path::Path,
    limits: &ragtester_core::Limits,
) -> Result<Vec<Map<String, Value>>> {
    limits.check_json_depth(text, path.display())?;
    let text = text.trim_start_matches('\u{feff}');
    match format {
        FileFormat::JsonArray if text.trim_start().starts_with('[') => {
            let rows: Vec<Value> = serde_json::from_str(text)
                .with_context(|| format!("{} is not a JSON array", path.display()))?;
            rows.into_iter()
                .enumerate()
                .map(|(i, row)| match row {
                    Value::Object(m) => Ok(m),
                    other => bail!(
                        "{}: item {} of the array is not a JSON object but {}",
                        path.display(),
                        i + 1,
                        json_kind(&other)
                    ),
                })
                .collect()
        }
        FileFormat::JsonArray | FileFormat::JsonLines => text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str::<Map<String, Value>>(l).with_context(|| {
                    format!(
                        "{}: line {} is not a JSON object (a .jsonl file holds one object a line; \
                         name a file holding one JSON array .json)",
                        path.display(),
                        i + 1
                    )
                })
            })
            .collect(),
        FileFormat::Csv => read_csv(path, text, shape),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn read_csv(path: &std::path::Path, text: &str, shape: Shape) -> Result<Vec<Map<String, Value>>> {
    let [_, _, reference_contexts, _, retrieved_contexts] = shape.fields();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers()?.clone();
    let mut rows = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("{}: row {}", path.display(), i + 2))?;
        let mut m = Map::new();
        for (h, cell) in headers.iter().zip(record.iter()) {
            // A cell we exported was made inert for spreadsheets; take that back.
            let cell = &*ragtester_core::spreadsheet::restore(cell);
            let is_list = h == reference_contexts || h == retrieved_contexts;
            let value = if is_list {
                list_cell(cell, shape)
                    .with_context(|| format!("{}: row {}, column `{h}`", path.display(), i + 2))?
            } else {
                json!(cell)
            };
            m.insert(h.to_string(), value);
        }
        rows.push(m);
    }
    Ok(rows)
}

/// A list field's CSV cell: a JSON array, a Python list literal, DeepEval's `|`-joined items, or one item.
pub(crate) fn list_cell(cell: &str, shape: Shape) -> Result<Value> {
    let trimmed = cell.trim();
    if trimmed.is_empty() {
        return Ok(json!([]));
    }
    if trimmed.starts_with('[') {
        if let Ok(v @ Value::Array(_)) = serde_json::from_str::<Value>(trimmed) {
            return Ok(v);
        }
        // A list of strings nests one level. py_literal's parser backtracks exponentially on nested
        // unclosed brackets (fuzzing found 60 `[` taking minutes), so deeper cells never reach it.
        let flat = python_bracket_depth(trimmed) <= 1;
        if flat
            && let Ok(py_literal::Value::List(items) | py_literal::Value::Tuple(items)) =
                trimmed.parse::<py_literal::Value>()
        {
            return items
                .into_iter()
                .map(|item| match item {
                    py_literal::Value::String(s) => Ok(json!(s)),
                    other => bail!("a list item is not a string: {other}"),
                })
                .collect::<Result<Vec<_>>>()
                .map(Value::Array);
        }
        if shape == Shape::Ragas {
            bail!(
                "the cell starts like a list but is neither a JSON array nor a Python list literal"
            );
        }
    }
    Ok(match shape {
        Shape::DeepEval => json!(
            cell.split(DEEPEVAL_LIST_SEPARATOR)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        ),
        Shape::Ragas | Shape::Messages => json!([cell]),
    })
}

/// How deep `[` and `(` nest in a Python literal, outside its quoted strings (single or double quotes,
/// backslash escapes).
fn python_bracket_depth(literal: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in literal.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '[' | '(' => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                ']' | ')' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    deepest
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
        // A list, or a string in the library's list convention (DeepEval's JSONL joins with `|`).
        let listed = match row.get(rc) {
            Some(Value::String(s)) => list_cell(s, shape).unwrap_or_else(|_| json!([s])),
            Some(other) => other.clone(),
            None => Value::Null,
        };
        let contexts: Vec<String> = match listed {
            Value::Array(items) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let negative = ragtester_text::is_refusal(&reference);
        let spans = locate_spans(&contexts, documents);
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
        let provenance = match shape {
            Shape::Ragas => "ragas",
            Shape::DeepEval => "deepeval",
            Shape::Messages => "messages",
        };
        let expected_tools = match tool_rows::expected_of(row) {
            Ok(tools) => tools,
            Err(e) => {
                out.rejected.push(format!("row {n}: {e}"));
                continue;
            }
        };
        let mut case = imported_case(query, reference, spans, provenance);
        case.expected_tools = expected_tools;
        out.cases.push(case);
    }
    out
}

/// Where each reference context occurs in the corpus, as source spans (contexts not found are left out).
pub(crate) fn locate_spans(contexts: &[String], documents: &[Document]) -> Vec<SourceSpan> {
    let locator = ragtester_core::document::TextLocator::new(documents);
    contexts
        .iter()
        .filter_map(|c| locator.find(c))
        .filter_map(|(document_id, start, end)| {
            let doc = documents.iter().find(|d| d.id == document_id)?;
            Some(SourceSpan::in_document(doc, start, end))
        })
        .collect()
}

/// A case read from another tool's row: negative when its reference refuses, its id a hash of the question
/// and reference (so the same question imported as a suite or with answers is the same case).
pub fn imported_case(
    query: String,
    reference: String,
    spans: Vec<SourceSpan>,
    provenance: &str,
) -> TestCase {
    let negative = ragtester_text::is_refusal(&reference);
    let language = ragtester_text::question_language(&query, &reference).to_string();
    TestCase {
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
        prompt_version: provenance.into(),
        false_premise: None,
        injected_documents: Vec::new(),
        critic: None,
        unanswerable_in_corpus: None,
        section_class: None,
        turn: None,
        row_id: None,
        conflict: None,
        lineage: None,
        stale: None,
        expected_tools: Vec::new(),
        tools_in_order: false,
        goal: None,
    }
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
            for name in ["set.jsonl", "set.json", "set.csv"] {
                let out = export_rows(shape, &imported.cases, std::slice::from_ref(&d), None, true);
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join(name);
                let bytes = write_rows(&out, FileFormat::of(&path), shape).unwrap();
                std::fs::write(&path, bytes).unwrap();
                let back = import_rows(
                    shape,
                    &read_rows(&path, shape, &ragtester_core::Limits::default()).unwrap(),
                    std::slice::from_ref(&d),
                );
                assert!(back.rejected.is_empty(), "{:?}", back.rejected);
                // Equal but for the recorded provenance (ragas / deepeval).
                let mut expected = imported.cases.clone();
                for c in &mut expected {
                    c.prompt_version = back.cases[0].prompt_version.clone();
                }
                assert_eq!(back.cases, expected, "{shape:?} {name}");
            }
        }
        let deepeval = export_rows(Shape::DeepEval, &imported.cases, &[d], None, true);
        assert_eq!(deepeval[0]["input"], "When does the valve open?");
        assert_eq!(
            deepeval[0]["context"][0],
            "The relief valve\nopens at 4.5 bar."
        );
    }

    #[test]
    fn nested_list_cells_are_refused_without_backtracking() {
        // The fuzz target dataset_rows timed out on this CSV: 60 unclosed `[` in a RAGAS list cell.
        let csv = include_bytes!("../tests/fixtures/fuzz-dataset_rows-timeout.csv");
        let (tx, rx) = std::sync::mpsc::channel();
        let text = String::from_utf8_lossy(csv).into_owned();
        std::thread::spawn(move || {
            for format in [
                FileFormat::JsonLines,
                FileFormat::JsonArray,
                FileFormat::Csv,
            ] {
                for shape in [Shape::Ragas, Shape::DeepEval] {
                    if let Ok(rows) = parse_rows(
                        &text,
                        format,
                        shape,
                        std::path::Path::new("x"),
                        &ragtester_core::Limits::default(),
                    ) {
                        let _ = import_rows(shape, &rows, &[]);
                    }
                }
            }
            let _ = tx.send(());
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_secs(30)).is_ok(),
            "reading the fuzzer's input did not finish"
        );
        let deep = format!("{}'x'", "[".repeat(60));
        assert!(list_cell(&deep, Shape::Ragas).is_err());
        assert_eq!(python_bracket_depth("['a[(b', \"c]\\\"[\", ('d',)]"), 2);
        assert_eq!(python_bracket_depth("['x', 'y']"), 1);
    }

    #[test]
    fn list_cells_in_each_librarys_convention() {
        let ragas = list_cell(r#"['it\'s "quoted"', "二号 'x'", 'a, b']"#, Shape::Ragas).unwrap();
        assert_eq!(ragas, json!(["it's \"quoted\"", "二号 'x'", "a, b"]));
        assert_eq!(
            list_cell(r#"["json", "array"]"#, Shape::Ragas).unwrap(),
            json!(["json", "array"])
        );
        assert_eq!(
            list_cell("first part|second part", Shape::DeepEval).unwrap(),
            json!(["first part", "second part"])
        );
        assert_eq!(
            list_cell("one context", Shape::Ragas).unwrap(),
            json!(["one context"])
        );
        // A literal is parsed, never evaluated: a call is an error, not a result.
        assert!(list_cell("[__import__('os').getcwd()]", Shape::Ragas).is_err());
        // What we write, Python literals with every character escaped to ASCII, reads back.
        let row = Map::from_iter([(
            "reference_contexts".to_string(),
            json!(["泵的 'max' 压力\n4.5 bar", "b|c"]),
        )]);
        let bytes = write_rows(std::slice::from_ref(&row), FileFormat::Csv, Shape::Ragas).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(
            read_rows(&path, Shape::Ragas, &ragtester_core::Limits::default()).unwrap(),
            vec![row]
        );
    }

    #[test]
    fn a_json_array_file_is_read_and_a_bad_item_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("goldens.json");
        std::fs::write(&path, r#"[{"input": "q"}, 3]"#).unwrap();
        let err = format!(
            "{:#}",
            read_rows(&path, Shape::DeepEval, &ragtester_core::Limits::default()).unwrap_err()
        );
        assert!(err.contains("item 2") && err.contains("a number"), "{err}");
        std::fs::write(&path, r#"[{"input": "q", "expected_output": "a"}]"#).unwrap();
        assert_eq!(
            read_rows(&path, Shape::DeepEval, &ragtester_core::Limits::default()).unwrap()[0]["input"],
            "q"
        );
        let jsonl = dir.path().join("goldens.jsonl");
        std::fs::write(&jsonl, r#"[{"input": "q"}]"#).unwrap();
        let err = format!(
            "{:#}",
            read_rows(&jsonl, Shape::DeepEval, &ragtester_core::Limits::default()).unwrap_err()
        );
        assert!(err.contains(".json"), "{err}");
    }
}
