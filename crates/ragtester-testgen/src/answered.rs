//! Answered records: another tool's dataset with its responses (RAGAS `response` / `retrieved_contexts`,
//! DeepEval `actual_output` / `retrieval_context`) or a team's own logs as JSON lines (`query`, `answer`,
//! `contexts`, `reference`, optional `latency_ms` and token counts), read into the cases and answers of one
//! system, so answers that exist already are judged without re-running the system that wrote them.
//!
//! Every row that cannot be used is named with its place in the file (line, item or CSV row) and why; the
//! rest proceed. A row ragtester exported itself carries a `ragtester` object (for DeepEval inside
//! `additional_metadata`) holding the case and where each passage came from, so exporting a run and importing
//! it back restores its cells exactly — and the same judge gives the same verdicts.

use crate::interop::{Shape, imported_case, list_cell, locate_spans};
pub use crate::row_meta::{ContextPlace, META_KEY, RowMeta};
use anyhow::Result;
use ragtester_core::ToolCall;
use ragtester_core::ids::stable_id;
use ragtester_core::{Answer, Document, Latency, Limits, RetrievedContext, TestCase, Usage};
use serde_json::{Map, Value};
use std::path::Path;

/// Names each field goes by, in the order they are looked for: RAGAS's, DeepEval's, then plain names.
const QUERY: &[&str] = &["user_input", "input", "query", "question"];
const ANSWER: &[&str] = &["response", "actual_output", "answer", "output"];
const CONTEXTS: &[&str] = &[
    "retrieved_contexts",
    "retrieval_context",
    "contexts",
    "retrieved",
];
const REFERENCE: &[&str] = &[
    "reference",
    "expected_output",
    "ground_truth",
    "expected_answer",
];
const REFERENCE_CONTEXTS: &[&str] = &["reference_contexts", "context"];
/// One passage the system retrieved, as the row gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct RowContext {
    pub text: String,
    pub score: Option<f64>,
}

/// One usable row.
#[derive(Debug, Clone, PartialEq)]
pub struct AnsweredRow {
    /// Where the row is in its file: `line 3`, `item 3`, `row 3`.
    pub place: String,
    pub query: String,
    pub reference: String,
    pub reference_contexts: Vec<String>,
    pub answer: String,
    /// The row records that the system failed on this question.
    pub error: Option<String>,
    pub contexts: Vec<RowContext>,
    pub latency_ms: Option<f64>,
    pub usage: Usage,
    pub meta: Option<RowMeta>,
    /// The answer was longer than `answer_kb` and cut there: its length in bytes before the cut.
    pub truncated_from: Option<u64>,
    /// The row's own `id`.
    pub id: Option<String>,
    /// The conversation the row is a turn of (`conversation_id`, …) and its turn number, when given.
    pub conversation: Option<(String, Option<usize>)>,
    /// The earlier turns the row's own messages give (`messages`, RAGAS's `user_input` list, DeepEval's
    /// `turns`).
    pub history: Vec<ragtester_core::Message>,
    /// The tools the row expects (RAGAS `reference_tool_calls`, DeepEval `expected_tools`).
    pub expected_tools: Vec<ragtester_core::ToolCall>,
    /// The tools the system called, where the row records them (DeepEval `tools_called`, the AI
    /// messages' `tool_calls`).
    pub tool_calls: Option<Vec<ragtester_core::ToolCall>>,
}

/// A file's rows: the usable ones, and `place: why` for each one that is not.
#[derive(Debug, Default)]
pub struct AnsweredFile {
    pub rows: Vec<AnsweredRow>,
    pub rejected: Vec<String>,
}

/// Read an answered-records file: JSON lines (`.jsonl`, anything else), a JSON array (`.json`) or CSV
/// (`.csv`, list cells in RAGAS's or DeepEval's convention, chosen by its columns).
pub fn read_answered(path: &Path, limits: &Limits) -> Result<AnsweredFile> {
    let text = ragtester_core::limits::read_text_file(path, limits)?;
    parse_answered(&text, crate::interop::FileFormat::of(path), path, limits)
}

/// An answered-records file's text in `format` (`path` names it in errors): what [`read_answered`] reads,
/// and what the fuzz target `dataset_rows` feeds arbitrary bytes.
pub fn parse_answered(
    text: &str,
    format: crate::interop::FileFormat,
    path: &Path,
    limits: &Limits,
) -> Result<AnsweredFile> {
    let text = text.trim_start_matches('\u{feff}');
    let mut out = AnsweredFile::default();
    let rows: Vec<(String, Map<String, Value>)> = match format {
        crate::interop::FileFormat::JsonLines => {
            let mut rows = Vec::new();
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let place = format!("line {}", i + 1);
                let parsed = limits.check_json_depth(line, &place).and_then(|()| {
                    serde_json::from_str::<Map<String, Value>>(line).map_err(Into::into)
                });
                match parsed {
                    Ok(row) => rows.push((place, row)),
                    Err(e) => out
                        .rejected
                        .push(format!("{place}: not a JSON object ({e:#})")),
                }
            }
            rows
        }
        crate::interop::FileFormat::JsonArray | crate::interop::FileFormat::Csv => {
            let shape = csv_shape(text);
            let (label, first) = match format {
                crate::interop::FileFormat::Csv => ("row", 2),
                _ => ("item", 1),
            };
            crate::interop::parse_rows(text, format, shape, path, limits)?
                .into_iter()
                .enumerate()
                .map(|(i, row)| (format!("{label} {}", i + first), row))
                .collect()
        }
    };
    crate::shape::warn_unread_fields(path, rows.iter().map(|(_, row)| row));
    let shape = csv_shape(text);
    for (place, row) in rows {
        match answered_row(&row, shape, limits) {
            Ok(mut r) => {
                r.place = place;
                out.rows.push(r);
            }
            Err(why) => out.rejected.push(format!("{place}: {why}")),
        }
    }
    Ok(out)
}

/// Which library's list convention a file's list cells follow: DeepEval's when its fields are DeepEval's.
fn csv_shape(text: &str) -> Shape {
    let head = text.lines().next().unwrap_or("");
    if head.contains("actual_output") || head.contains("expected_output") {
        Shape::DeepEval
    } else {
        Shape::Ragas
    }
}

fn field<'a>(
    row: &'a Map<String, Value>,
    names: &[&'static str],
) -> Option<(&'static str, &'a Value)> {
    names
        .iter()
        .find_map(|n| row.get(*n).filter(|v| !v.is_null()).map(|v| (*n, v)))
}

fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn names(list: &[&str]) -> String {
    list.iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A list field: an array (of strings, or of objects with the text under `text`, `content`,
/// `page_content` or `context` and an optional `score`), or a string in the library's list convention.
fn contexts_of(value: &Value, shape: Shape) -> Result<Vec<RowContext>, String> {
    let listed = match value {
        Value::String(s) => list_cell(s, shape).map_err(|e| format!("{e:#}"))?,
        other => other.clone(),
    };
    let Value::Array(items) = listed else {
        return Err("a list of passages was expected".into());
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) => Ok(RowContext {
                text: s.clone(),
                score: None,
            }),
            Value::Object(m) => {
                let text = ["text", "content", "page_content", "context"]
                    .iter()
                    .find_map(|k| m.get(*k).and_then(Value::as_str))
                    .ok_or("a passage object has no `text`, `content` or `page_content`")?;
                Ok(RowContext {
                    text: text.to_string(),
                    score: m.get("score").and_then(Value::as_f64),
                })
            }
            _ => Err("a passage is neither a string nor an object".to_string()),
        })
        .collect()
}

/// A number as JSON gives it or as a CSV cell spells it; `Ok(None)` when absent or blank.
fn number_of(name: &str, value: Option<&Value>) -> Result<Option<f64>, String> {
    let parsed = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    match parsed {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err(format!("`{name}` is negative or not a number")),
    }
}

/// The row's latency in milliseconds, from `latency_ms` or `latency_s`.
fn latency_of(row: &Map<String, Value>) -> Result<Option<f64>, String> {
    match number_of("latency_ms", row.get("latency_ms"))? {
        Some(ms) => Ok(Some(ms)),
        None => Ok(number_of("latency_s", row.get("latency_s"))?.map(|s| s * 1e3)),
    }
}

/// Token counts under any of the names tools write them: `usage.{prompt,completion}_tokens`, the same at
/// the top level, or DeepEval's `input_token_count` / `output_token_count`. A count must be a whole number,
/// not negative; one beyond `u64` stops there.
fn usage_of(row: &Map<String, Value>) -> Result<Usage, String> {
    let usage = row.get("usage").and_then(Value::as_object);
    let count = |names: &[&str]| -> Result<u64, String> {
        let Some((name, value)) = names.iter().find_map(|n| {
            usage
                .and_then(|u| u.get(*n))
                .or_else(|| row.get(*n))
                .map(|v| (*n, v))
        }) else {
            return Ok(0);
        };
        match number_of(name, Some(value))? {
            None => Ok(0),
            Some(x) if x.fract() == 0.0 => Ok(if x >= u64::MAX as f64 {
                u64::MAX
            } else {
                x as u64
            }),
            Some(_) => Err(format!("`{name}` is not a whole number of tokens")),
        }
    };
    Ok(Usage {
        prompt_tokens: count(&["prompt_tokens", "input_tokens", "input_token_count"])?,
        completion_tokens: count(&["completion_tokens", "output_tokens", "output_token_count"])?,
    })
}

/// ragtester's metadata on a row it exported (an object, or its JSON text in a CSV cell); None when absent
/// or not ours.
fn meta_of(row: &Map<String, Value>) -> Option<RowMeta> {
    let parsed = |v: &Value| match v {
        Value::String(s) => serde_json::from_str::<Value>(s).ok(),
        other => Some(other.clone()),
    };
    // Ours at the top (RAGAS, plain rows), in DeepEval's `additional_metadata` (a golden) or `metadata`
    // (a conversational test case).
    let value = match row.get(META_KEY) {
        Some(v) => parsed(v)?,
        None => ["additional_metadata", "metadata"]
            .iter()
            .find_map(|k| parsed(row.get(*k)?)?.get(META_KEY).cloned())?,
    };
    serde_json::from_value(value).ok()
}

fn answered_row(
    row: &Map<String, Value>,
    shape: Shape,
    limits: &Limits,
) -> Result<AnsweredRow, String> {
    let required = |list: &[&'static str], what: &str| -> Result<String, String> {
        field(row, list)
            .and_then(|(_, v)| text_of(v))
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("no {what} ({})", names(list)))
    };
    let logged = crate::logged::logged_turn(row).transpose()?;
    let query = match &logged {
        Some(turn) => turn.query.clone(),
        None => required(QUERY, "question")?,
    };
    let reference = match logged.as_ref().and_then(|t| t.reference.clone()) {
        Some(r) if field(row, REFERENCE).is_none() && !r.is_empty() => r,
        _ => required(
            REFERENCE,
            "reference answer: the judge compares each answer with one",
        )?,
    };
    let error = row
        .get("error")
        .and_then(Value::as_str)
        .filter(|e| !e.trim().is_empty())
        .map(str::to_string);
    let answer = match (
        field(row, ANSWER),
        logged.as_ref().and_then(|t| t.answer.clone()),
    ) {
        (Some((name, v)), _) => text_of(v).ok_or_else(|| format!("`{name}` is not text"))?,
        (None, Some(answer)) => answer,
        (None, None) if error.is_some() => String::new(),
        (None, None) if logged.is_some() => {
            return Err(format!(
                "a turn without an answer: the conversation ends with its question and the row gives none ({})",
                names(ANSWER)
            ));
        }
        (None, None) => return Err(format!("no answer ({})", names(ANSWER))),
    };
    let list = |names: &[&'static str]| -> Result<Vec<RowContext>, String> {
        match field(row, names) {
            Some((name, v)) => contexts_of(v, shape).map_err(|e| format!("`{name}`: {e}")),
            None => Ok(Vec::new()),
        }
    };
    let contexts = match (
        field(row, CONTEXTS),
        logged.as_ref().and_then(|t| t.contexts.as_ref()),
    ) {
        (None, Some(carried)) => {
            contexts_of(carried, shape).map_err(|e| format!("the last answer's passages: {e}"))?
        }
        _ => list(CONTEXTS)?,
    };
    let reference_contexts = list(REFERENCE_CONTEXTS)?
        .into_iter()
        .map(|c| c.text)
        .collect();
    let latency_ms = latency_of(row)?;
    let (expected_tools, tool_calls) = tools_of(row, logged.as_ref())?;
    let meta = meta_of(row);
    // Our own metadata is another tool's input by the time it comes back: checked like the row's fields.
    if meta.as_ref().is_some_and(|m| !m.latency.is_valid()) {
        return Err(
            "its `ragtester` metadata gives a latency that is negative or not a number".into(),
        );
    }
    // The same cut as a live answer gets (`answer_kb`), so an imported answer costs no more to judge.
    let mut answer = answer;
    let full = answer.len() as u64;
    let max = usize::try_from(limits.answer_bytes()).unwrap_or(usize::MAX);
    let cut = ragtester_core::limits::truncate_to(&answer, max).map(str::len);
    let truncated_from = cut.map(|cut| {
        answer.truncate(cut);
        full
    });
    Ok(AnsweredRow {
        place: String::new(),
        query,
        reference,
        reference_contexts,
        answer,
        error,
        contexts,
        latency_ms,
        usage: usage_of(row)?,
        meta,
        truncated_from,
        id: crate::logged::row_id(row),
        conversation: crate::logged::place_in_conversation(row)?,
        history: logged.map(|t| t.history).unwrap_or_default(),
        expected_tools,
        tool_calls,
    })
}

/// The metadata ragtester wrote on a row it exported, when the row still matches it: the same question
/// (a simulated conversation's row asks its last message; its case opened with the first), the same
/// reference, and documents the run still has.
fn kept_meta<'r>(row: &'r AnsweredRow, known: &dyn Fn(&str) -> bool) -> Option<&'r RowMeta> {
    let opening = row
        .history
        .iter()
        .find(|m| m.role == ragtester_core::Role::User)
        .map_or(row.query.as_str(), |m| m.content.as_str());
    row.meta.as_ref().filter(|m| {
        (m.case.query == row.query || (m.case.goal.is_some() && m.case.query == opening))
            && m.case.expected_answer == row.reference
            && m.case.source_spans.iter().all(|s| {
                known(&s.document_id)
                    || m.case
                        .injected_documents
                        .iter()
                        .any(|d| d.id == s.document_id)
            })
    })
}

/// A row's expected tools and the calls it records. A conversation's messages record every call: where
/// they hold none and the row expects some, none was made.
fn tools_of(
    row: &Map<String, Value>,
    logged: Option<&crate::logged::LoggedTurn>,
) -> Result<(Vec<ToolCall>, Option<Vec<ToolCall>>), String> {
    let expected = crate::tool_rows::expected_of(row)?;
    let mut called = crate::tool_rows::called_of(row)?;
    if called.is_none()
        && let Some(turn) = logged
    {
        called = turn
            .tool_calls
            .clone()
            .or_else(|| (!expected.is_empty()).then(Vec::new));
    }
    Ok((expected, called))
}

/// One system's rows as records: cases (new ones, by id) and one answer per row under `config_id`.
pub struct AnsweredRecords {
    pub cases: Vec<TestCase>,
    pub answers: Vec<Answer>,
    /// `place: why` for rows left out (a question answered twice) and rows kept with a caveat.
    pub notes: Vec<String>,
    /// Rows kept whose reference contexts were not found in the documents: no retrieval metric for them.
    pub ungrounded: usize,
}

/// The cases and answers of one system's rows. A row ragtester exported keeps its case as it was when its
/// question, reference and documents still match; any other row's case is made as a dataset import makes
/// it. Retrieved passages are located in the documents, so retrieval metrics and attribution work.
pub fn answered_records(
    rows: &[AnsweredRow],
    config_id: &str,
    documents: &[Document],
    locator: &ragtester_core::document::TextLocator<'_>,
) -> AnsweredRecords {
    let mut out = AnsweredRecords {
        cases: Vec::new(),
        answers: Vec::new(),
        notes: Vec::new(),
        ungrounded: 0,
    };
    let mut seen: std::collections::HashMap<String, String> = Default::default();
    let known = |id: &str| documents.iter().any(|d| d.id == id);
    let turns = Conversations::of(rows);
    for &i in &turns.order {
        let row = &rows[i];
        let kept = kept_meta(row, &known);
        let case = match kept {
            Some(meta) => meta.case.clone(),
            None => {
                let spans = locate_spans(&row.reference_contexts, documents);
                let negative = ragtester_text::is_refusal(&row.reference);
                if !negative && spans.len() < row.reference_contexts.len() {
                    out.notes.push(format!(
                        "{}: {} of {} reference contexts found in the documents",
                        row.place,
                        spans.len(),
                        row.reference_contexts.len()
                    ));
                }
                if !negative && spans.is_empty() {
                    out.ungrounded += 1;
                }
                let mut case =
                    imported_case(row.query.clone(), row.reference.clone(), spans, "answers");
                case.expected_tools = row.expected_tools.clone();
                if let Some(turn) = turns.turn_of(i, row) {
                    // A turn's question ("And when does it open?") recurs across conversations: its
                    // case is the conversation's turn, not the question alone.
                    case.id = stable_id(
                        "imported-turn",
                        &(
                            &turn.conversation,
                            turn.index,
                            &case.query,
                            &case.expected_answer,
                        ),
                    );
                    case.turn = Some(turn);
                }
                case
            }
        };
        let mut case = case;
        case.row_id = row.id.clone().or_else(|| {
            let (conversation, turn) = row.conversation.as_ref()?;
            Some(turn.map_or(conversation.clone(), |t| format!("{conversation}#{t}")))
        });
        if let Some(first) = seen.get(&case.id) {
            out.notes.push(format!(
                "{}: left out, the same question and reference as {first}",
                row.place
            ));
            continue;
        }
        seen.insert(case.id.clone(), row.place.clone());
        if let Some(full) = row.truncated_from {
            out.notes.push(format!(
                "{}: the answer ({full} bytes) was cut at the answer_kb limit (raise it with --limit answer_kb=N)",
                row.place
            ));
        }
        let mut answer = answer_of(
            row,
            &case.id,
            config_id,
            kept.map(|m| m.contexts.as_slice()),
            locator,
        );
        answer.simulation = kept.and_then(|m| m.simulation.clone());
        out.answers.push(answer);
        if !out.cases.iter().any(|c| c.id == case.id) {
            out.cases.push(case);
        }
    }
    out
}

/// The conversations of a file's rows: the order rows are recorded in (each conversation's turns
/// together, by turn number, where the file gives them out of order) and each turn's place.
struct Conversations {
    order: Vec<usize>,
    /// Per conversation id: how many turns it has.
    turns: std::collections::HashMap<String, usize>,
    /// Per row: its turn number in its conversation.
    index: Vec<usize>,
}

impl Conversations {
    fn of(rows: &[AnsweredRow]) -> Self {
        let mut first: std::collections::HashMap<&str, usize> = Default::default();
        let mut counted: std::collections::HashMap<&str, usize> = Default::default();
        let mut index = vec![0; rows.len()];
        for (i, row) in rows.iter().enumerate() {
            if let Some((id, turn)) = &row.conversation {
                first.entry(id.as_str()).or_insert(i);
                let n = counted.entry(id.as_str()).or_default();
                *n += 1;
                // A turn number the row gives, else the rows' order in the file.
                index[i] = turn.unwrap_or(*n);
            } else {
                index[i] = row
                    .history
                    .iter()
                    .filter(|m| m.role == ragtester_core::Role::User)
                    .count()
                    + 1;
            }
        }
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|&i| match &rows[i].conversation {
            Some((id, _)) => (first[id.as_str()], index[i], i),
            None => (i, 0, i),
        });
        let mut turns: std::collections::HashMap<String, usize> = Default::default();
        for (i, row) in rows.iter().enumerate() {
            if let Some((id, _)) = &row.conversation {
                let of = turns.entry(id.clone()).or_default();
                *of = (*of).max(index[i]);
            }
        }
        Self {
            order,
            turns,
            index,
        }
    }

    /// The row's turn: for a row of a conversation (by its id) or with earlier messages of its own.
    fn turn_of(&self, i: usize, row: &AnsweredRow) -> Option<ragtester_core::Turn> {
        let index = self.index[i];
        let (conversation, of) = match &row.conversation {
            Some((id, _)) => (id.clone(), self.turns[id].max(index)),
            None if row.history.is_empty() => return None,
            None => (
                stable_id("logged-conversation", &(&row.history, &row.query)),
                index,
            ),
        };
        Some(ragtester_core::Turn {
            conversation,
            index,
            of,
            kind: ragtester_core::ConversationKind::Logged,
            step: if index == 1 {
                ragtester_core::TurnStep::Opening
            } else {
                ragtester_core::TurnStep::Logged
            },
            standalone: None,
            history: row.history.clone(),
        })
    }
}

fn answer_of(
    row: &AnsweredRow,
    case_id: &str,
    config_id: &str,
    places: Option<&[ContextPlace]>,
    locator: &ragtester_core::document::TextLocator<'_>,
) -> Answer {
    let places = places.filter(|p| p.len() == row.contexts.len());
    let contexts = row
        .contexts
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let place = places.map(|p| p[i].clone()).unwrap_or_else(|| {
                let (document_id, start, end) = locator.find(&c.text).unwrap_or_default();
                ContextPlace {
                    score: c.score.unwrap_or(0.0),
                    chunk_id: stable_id("imported-context", &c.text),
                    document_id,
                    start,
                    end,
                }
            });
            RetrievedContext {
                rank: i + 1,
                score: c.score.unwrap_or(place.score),
                chunk_id: place.chunk_id,
                document_id: place.document_id,
                start: place.start,
                end: place.end,
                text: c.text.clone(),
            }
        })
        .collect();
    let latency = match (&row.meta, row.latency_ms) {
        (Some(meta), _) if places.is_some() => meta.latency,
        (_, Some(ms)) => Latency {
            total_ms: ms,
            ..Default::default()
        },
        _ => Latency::default(),
    };
    let usage = match &row.meta {
        Some(meta) if row.usage == Usage::default() => meta.usage,
        _ => row.usage,
    };
    Answer {
        schema_version: ragtester_core::SCHEMA_VERSION,
        case_id: case_id.to_string(),
        config_id: config_id.to_string(),
        contexts,
        answer: row.answer.clone(),
        latency,
        usage,
        cached: false,
        cached_at: None,
        error: row.error.clone(),
        truncated_from: row.truncated_from,
        context_cut_from: None,
        tool_calls: row.tool_calls.clone(),
        simulation: None,
        citations: Vec::new(),
        rewritten_query: None,
        trace: None,
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

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn each_file_shape_reads_and_a_bad_row_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let plain = write(
            dir.path(),
            "logs.jsonl",
            concat!(
                r#"{"query": "When does the valve open?", "answer": "At 4.5 bar.", "contexts": [{"text": "The relief valve opens at 4.5 bar.", "score": 0.9}], "reference": "At 4.5 bar.", "latency_ms": 812, "usage": {"prompt_tokens": 120, "completion_tokens": 9}}"#,
                "\n",
                "{not json\n",
                r#"{"query": "How fast is the pump?", "contexts": []}"#,
                "\n",
                r#"{"query": "Who made it?", "reference": "Unknown.", "error": "HTTP 503"}"#,
                "\n",
            ),
        );
        let file = read_answered(&plain, &Limits::default()).unwrap();
        assert_eq!(file.rows.len(), 2, "{:?}", file.rejected);
        assert_eq!(file.rejected.len(), 2);
        assert!(file.rejected[0].starts_with("line 2: not a JSON object"));
        assert!(
            file.rejected[1].starts_with("line 3: no reference answer"),
            "{:?}",
            file.rejected
        );
        let first = &file.rows[0];
        assert_eq!(first.place, "line 1");
        assert_eq!(first.latency_ms, Some(812.0));
        assert_eq!(first.usage.prompt_tokens, 120);
        assert_eq!(first.contexts[0].score, Some(0.9));
        assert_eq!(file.rows[1].error.as_deref(), Some("HTTP 503"));

        let ragas_csv = write(
            dir.path(),
            "ragas.csv",
            "user_input,retrieved_contexts,response,reference\n\
             When does the valve open?,\"['The relief valve opens at 4.5 bar.']\",At 4.5 bar.,At 4.5 bar.\n",
        );
        let rows = read_answered(&ragas_csv, &Limits::default()).unwrap();
        assert_eq!(rows.rows[0].place, "row 2");
        assert_eq!(
            rows.rows[0].contexts[0].text,
            "The relief valve opens at 4.5 bar."
        );
        let deepeval = write(
            dir.path(),
            "goldens.json",
            r#"[{"input": "When does the valve open?", "actual_output": "At 4.5 bar.", "expected_output": "At 4.5 bar.", "retrieval_context": ["The relief valve opens at 4.5 bar."], "context": ["The relief valve opens at 4.5 bar."], "output_token_count": 7},
                {"input": "How fast?", "expected_output": "1,200 rpm."}]"#,
        );
        let rows = read_answered(&deepeval, &Limits::default()).unwrap();
        assert_eq!(rows.rows.len(), 1);
        assert_eq!(rows.rows[0].usage.completion_tokens, 7);
        assert_eq!(
            rows.rejected,
            vec!["item 2: no answer (`response`, `actual_output`, `answer`, `output`)"]
        );
    }

    #[test]
    fn hostile_numbers_and_long_answers_obey_the_same_limits_as_live_ones() {
        let dir = tempfile::tempdir().unwrap();
        // A CSV's latency and token columns are read; a bad one names its row.
        let csv = write(
            dir.path(),
            "logs.csv",
            "query,answer,reference,latency_ms,prompt_tokens\n\
             When?,At 4.5 bar.,At 4.5 bar.,812.5,120\n\
             Why?,Because.,Because.,-1e300,3\n\
             Who?,Nobody.,Nobody.,12,-4\n",
        );
        let file = read_answered(&csv, &Limits::default()).unwrap();
        assert_eq!(file.rows.len(), 1, "{:?}", file.rejected);
        assert_eq!(file.rows[0].latency_ms, Some(812.5));
        assert_eq!(file.rows[0].usage.prompt_tokens, 120);
        assert!(
            file.rejected[0].starts_with("row 3: `latency_ms` is negative"),
            "{:?}",
            file.rejected
        );
        assert!(
            file.rejected[1].starts_with("row 4: `prompt_tokens`"),
            "{:?}",
            file.rejected
        );
        // Metadata's latency is checked like the row's; token counts beyond u64 stop there, and sums saturate.
        let meta = serde_json::json!({"ragtester": {"case": serde_json::to_value(crate::interop::imported_case(
            "When?".into(), "At 4.5 bar.".into(), Vec::new(), "answers")).unwrap(),
            "contexts": [], "latency": {"retrieval_ms": 0.0, "generation_ms": 0.0, "total_ms": -1e300},
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}}});
        let mut row = meta.as_object().unwrap().clone();
        for (k, v) in [
            ("query", "When?"),
            ("answer", "At 4.5 bar."),
            ("reference", "At 4.5 bar."),
        ] {
            row.insert(k.into(), v.into());
        }
        let huge = serde_json::json!({"query": "How many?", "answer": "Many.", "reference": "Many.",
            "usage": {"prompt_tokens": 18446744073709551615u64, "completion_tokens": 18446744073709551615u64}});
        let long = "答".repeat(200_000);
        let text = format!(
            "{}\n{}\n{}\n",
            serde_json::Value::Object(row),
            huge,
            serde_json::json!({"query": "Long?", "answer": long, "reference": "Short."})
        );
        let file = parse_answered(
            &text,
            crate::interop::FileFormat::JsonLines,
            Path::new("x.jsonl"),
            &Limits::default(),
        )
        .unwrap();
        assert!(
            file.rejected[0].starts_with("line 1: its `ragtester` metadata"),
            "{:?}",
            file.rejected
        );
        assert_eq!(file.rows[0].usage.total(), u64::MAX);
        let cut = &file.rows[1];
        let max = Limits::default().answer_bytes() as usize;
        assert!(
            cut.answer.len() <= max && cut.answer.len() > max - 4,
            "{}",
            cut.answer.len()
        );
        assert_eq!(cut.truncated_from, Some(long.len() as u64));
        let records = answered_records(
            &file.rows,
            "cfg",
            &[],
            &ragtester_core::document::TextLocator::new(&[]),
        );
        assert_eq!(records.answers[1].truncated_from, Some(long.len() as u64));
        assert!(
            records
                .notes
                .iter()
                .any(|n| n.contains("cut at the answer_kb limit")),
            "{:?}",
            records.notes
        );
    }

    #[test]
    fn records_locate_passages_and_keep_one_answer_per_question() {
        let d = doc();
        let docs = std::slice::from_ref(&d);
        let locator = ragtester_core::document::TextLocator::new(docs);
        let row = |place: &str, answer: &str| AnsweredRow {
            place: place.into(),
            query: "When does the valve open?".into(),
            reference: "At 4.5 bar.".into(),
            reference_contexts: vec!["The relief valve opens at 4.5 bar.".into()],
            answer: answer.into(),
            error: None,
            contexts: vec![RowContext {
                text: "The pump runs at 1,200 rpm.".into(),
                score: None,
            }],
            latency_ms: Some(40.0),
            usage: Usage::default(),
            meta: None,
            truncated_from: None,
            id: None,
            conversation: None,
            history: Vec::new(),
            expected_tools: Vec::new(),
            tool_calls: None,
        };
        let records = answered_records(
            &[row("line 1", "4.5 bar"), row("line 2", "5 bar")],
            "cfg",
            docs,
            &locator,
        );
        assert_eq!(records.cases.len(), 1);
        assert_eq!(records.answers.len(), 1);
        assert_eq!(
            records.notes,
            vec!["line 2: left out, the same question and reference as line 1"]
        );
        let case = &records.cases[0];
        assert_eq!(case.source_spans.len(), 1);
        let answer = &records.answers[0];
        let context = &answer.contexts[0];
        assert_eq!(context.document_id, d.id);
        assert_eq!(
            d.slice(context.start, context.end),
            "The pump runs at 1,200 rpm."
        );
        assert_eq!(answer.latency.total_ms, 40.0);
        // The same question imported as a suite row is the same case.
        let suite = crate::interop::imported_case(
            "When does the valve open?".into(),
            "At 4.5 bar.".into(),
            Vec::new(),
            "ragas",
        );
        assert_eq!(suite.id, case.id);
    }
}

#[cfg(test)]
mod tool_round_trip {
    use super::*;
    use crate::interop::{FileFormat, Shape, export_rows, write_rows};
    use ragtester_core::{DocumentFormat, ToolCall};

    fn records(shape: Shape, rows: &[Map<String, Value>], doc: &Document) -> AnsweredRecords {
        let text =
            String::from_utf8(write_rows(rows, FileFormat::JsonLines, shape).unwrap()).unwrap();
        let file = parse_answered(
            &text,
            FileFormat::JsonLines,
            Path::new("x.jsonl"),
            &Limits::default(),
        )
        .unwrap();
        assert!(file.rejected.is_empty(), "{:?}", file.rejected);
        let docs = std::slice::from_ref(doc);
        let locator = ragtester_core::document::TextLocator::new(docs);
        answered_records(&file.rows, "cfg", docs, &locator)
    }

    #[test]
    fn expected_and_called_tools_come_back_from_ragas_and_deepeval_unchanged() {
        let doc = Document::new(
            "manual.md".into(),
            DocumentFormat::Markdown,
            "Manual".into(),
            "The relief valve opens at 4.5 bar.".into(),
            None,
        );
        let mut case = ragtester_testkit::case("c1", "When does the valve open?", "At 4.5 bar.");
        case.document_id = doc.id.clone();
        case.source_spans = vec![ragtester_core::SourceSpan::in_document(&doc, 0, 34)];
        case.expected_tools = vec![ToolCall::named("search").with_arg("query", "relief valve")];
        let mut search = ToolCall::named("search").with_arg("query", "relief valve opening");
        search.passages = vec!["The relief valve opens at 4.5 bar.".into()];
        let calls = vec![
            search,
            ToolCall::named("get_weather").with_arg("city", "Oslo"),
        ];
        let answer = Answer {
            schema_version: ragtester_core::SCHEMA_VERSION,
            case_id: "c1".into(),
            config_id: "cfg".into(),
            contexts: Vec::new(),
            answer: "At 4.5 bar.".into(),
            latency: Latency::default(),
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            error: None,
            trace: None,
            rewritten_query: None,
            truncated_from: None,
            context_cut_from: None,
            tool_calls: Some(calls.clone()),
            simulation: None,
            citations: Vec::new(),
        };
        for shape in [Shape::Ragas, Shape::DeepEval] {
            let docs = std::slice::from_ref(&doc);
            let mut rows = export_rows(
                shape,
                std::slice::from_ref(&case),
                docs,
                Some(std::slice::from_ref(&answer)),
                true,
            );
            let ragas_turn = shape == Shape::Ragas;
            assert_eq!(
                crate::interop::is_conversation_row(&rows[0]),
                ragas_turn,
                "{shape:?}"
            );
            let back = records(shape, &rows, &doc);
            assert_eq!(
                back.answers[0].tool_calls.as_ref(),
                Some(&calls),
                "{shape:?}"
            );
            assert_eq!(
                back.cases[0].expected_tools, case.expected_tools,
                "{shape:?}"
            );
            // Without our metadata, the libraries' own fields carry them.
            for row in &mut rows {
                row.remove(crate::row_meta::META_KEY);
                row.remove("additional_metadata");
            }
            let back = records(shape, &rows, &doc);
            assert_eq!(
                back.answers[0].tool_calls.as_ref(),
                Some(&calls),
                "{shape:?} fields alone"
            );
            assert_eq!(
                back.cases[0].expected_tools, case.expected_tools,
                "{shape:?} fields alone"
            );
            assert_eq!(
                back.cases[0].turn, None,
                "{shape:?}: an agent's answer is no conversation"
            );
        }
    }
}
