//! Stage 4b: the report — a judged run directory summarised per configuration, category, generator and
//! source into summary.json, report.html, results.csv and junit.xml.

use crate::events::Events;
use crate::run_dir::{self, RunDir};
use anyhow::Result;
use ragtester_core::record::AtomicWriter;
use ragtester_core::{Answer, Configuration, Document, TestCase, Verdict};
use ragtester_report::Summary;
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Per built-in configuration, the share of its chunks that hold some case's source span: how much of the
/// corpus, as that configuration cuts it, the suite tests. Poisoned copies are not the user's corpus and
/// are left out; chunking is deterministic, so cutting the documents again gives the run's chunks.
fn chunk_coverage(
    documents: &[Document],
    cases: &[TestCase],
    configs: &[Configuration],
) -> Result<HashMap<String, f64>> {
    let corpus: Vec<&Document> = documents
        .iter()
        .filter(|d| d.origin != ragtester_core::document::DocumentOrigin::Poisoned)
        .collect();
    let spans: Vec<&ragtester_core::SourceSpan> =
        cases.iter().flat_map(|c| &c.source_spans).collect();
    let mut by_chunking: HashMap<String, f64> = HashMap::new();
    let mut out = HashMap::new();
    for config in configs.iter().filter(|c| c.target.is_none()) {
        let key = serde_json::to_string(&config.chunking)?;
        if !by_chunking.contains_key(&key) {
            let mut total = 0usize;
            let mut covered = 0usize;
            for doc in &corpus {
                for chunk in ragtester_ingest::chunk_document(doc, &config.chunking)? {
                    total += 1;
                    covered += usize::from(
                        spans
                            .iter()
                            .any(|s| s.overlaps(&chunk.document_id, chunk.start, chunk.end)),
                    );
                }
            }
            if total > 0 {
                by_chunking.insert(key.clone(), covered as f64 / total as f64);
            }
        }
        if let Some(share) = by_chunking.get(&key) {
            out.insert(config.id.clone(), *share);
        }
    }
    Ok(out)
}

/// The run's answers as the report needs them, read one at a time: every answer's text, latency and
/// usage, but the retrieved passages' text only for the cells listed as bad cases (a report shows those;
/// every other figure of a passage is in its verdict already). Passages are most of a run's bytes.
fn slim_answers(run: &RunDir, verdicts: &[Verdict]) -> Result<Vec<Answer>> {
    let shown: HashSet<(&str, &str)> = verdicts
        .iter()
        .filter(|v| ragtester_report::is_bad_case(v))
        .map(|v| (v.case_id.as_str(), v.config_id.as_str()))
        .collect();
    let mut answers = Vec::new();
    for answer in run.answer_reader()? {
        let mut answer = answer?;
        if !shown.contains(&(answer.case_id.as_str(), answer.config_id.as_str())) {
            for context in &mut answer.contexts {
                context.text = String::new();
            }
        }
        answers.push(answer);
    }
    Ok(answers)
}

/// Summarise a judged run directory into summary.json, report.html, results.csv and junit.xml.
pub fn report(run_dir: &Path, events: &dyn Events) -> Result<Summary> {
    events.stage("report");
    let run = RunDir::new(run_dir);
    let documents = run.documents()?;
    let cases = run.cases()?;
    let configs = run.configs()?;
    let verdicts = run.verdicts()?;
    let answers = slim_answers(&run, &verdicts)?;
    let prices = run.prices()?;
    let oracle = run.oracle()?;
    let audit = run.audit()?;
    let pairwise = run.pairwise()?;
    let skipped = run.skipped()?;
    let embedder_profiles = run.embedder_profiles()?;
    let chunk_coverage = chunk_coverage(&documents, &cases, &configs)?;
    let inputs = ragtester_report::ReportInputs {
        skipped: &skipped,
        embedder_profiles: &embedder_profiles,
        chunk_coverage: &chunk_coverage,
        prices: &prices,
        documents: &documents,
        cases: &cases,
        configs: &configs,
        answers: &answers,
        verdicts: &verdicts,
        oracle: oracle.as_ref(),
        audit: audit.as_ref(),
        pairwise: pairwise.as_ref(),
    };
    let summary = ragtester_report::summarise(&inputs);
    let mut csv = AtomicWriter::create(&run.file(run_dir::RESULTS_CSV))?;
    ragtester_report::write_csv(&inputs, &mut csv)?;
    csv.finish()?;
    let mut junit = AtomicWriter::create(&run.file(run_dir::JUNIT))?;
    ragtester_report::write_junit(&inputs, &mut junit)?;
    junit.finish()?;
    // The answers and verdicts are done with before the summary is written.
    drop((answers, verdicts));
    run.save_json(run_dir::SUMMARY, &summary)?;
    run.save_text(
        run_dir::REPORT_HTML,
        &ragtester_report::render_html(&summary)?,
    )?;
    run.save_text(
        run_dir::SUMMARY_MD,
        &ragtester_report::summary_markdown(&summary, ragtester_report::GITHUB_COMMENT_LIMIT),
    )?;
    events.info(format!(
        "wrote report.html, summary.json, summary.md, results.csv and junit.xml to {}",
        run_dir.display()
    ));
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{ChunkingSettings, DocumentFormat, SourceSpan};

    #[test]
    fn chunk_coverage_is_the_share_of_chunks_holding_a_span() {
        let text = "First paragraph about valves.\n\nSecond paragraph about pumps.\n\nThird paragraph about seals.\n\nFourth paragraph about gaskets.";
        let doc = Document::new(
            "d.md".into(),
            DocumentFormat::Markdown,
            "d".into(),
            text.into(),
            None,
        );
        let mut poisoned = Document::new(
            "p".into(),
            DocumentFormat::Text,
            "p".into(),
            "Copy.".into(),
            None,
        );
        poisoned.origin = ragtester_core::document::DocumentOrigin::Poisoned;
        let chunking = ChunkingSettings {
            max_tokens: 8,
            ..Default::default()
        };
        let chunks = ragtester_ingest::chunk_document(&doc, &chunking).unwrap();
        assert_eq!(chunks.len(), 4, "one chunk per paragraph");
        // A span inside the second paragraph.
        let start = text.find("Second").unwrap();
        let case = TestCase {
            document_id: doc.id.clone(),
            source_spans: vec![SourceSpan {
                document_id: doc.id.clone(),
                start,
                end: start + 6,
                page: 1,
                hash: None,
            }],
            ..ragtester_testkit::case("c", "q", "a")
        };
        let config = Configuration::new(
            "offline".into(),
            "hash".into(),
            ragtester_core::RetrieverKind::Bm25,
            1,
            chunking,
            Default::default(),
        );
        let config_id = config.id.clone();
        let coverage = chunk_coverage(&[doc, poisoned], &[case], &[config]).unwrap();
        assert_eq!(
            coverage[&config_id], 0.25,
            "one of four chunks; the poisoned copy is not counted"
        );
    }
}
