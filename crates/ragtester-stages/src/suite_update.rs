//! `generate --update`: an earlier suite brought in step with its documents as they are now — untouched
//! cases kept by id, changed ones written again, removed ones retired, new sections and documents asked
//! about, unparsable documents' cases kept and marked stale — written to a new file beside its snapshot of
//! the documents and its report, which lists every change with its reason. The earlier suite is never
//! written over.

use crate::context::StageContext;
use crate::events::Events;
use crate::generate::{GenerateArgs, Generated, SuiteOutcome, SuiteRequest, Writers};
use anyhow::{Context, Result, bail};
use ragtester_core::{Document, TestCase, read_jsonl, write_jsonl_atomic};
use ragtester_testgen::GenerationReport;
use ragtester_testgen::update::{Change, Earlier, Unparsed, UpdateReport};
use std::path::Path;

/// Changes of one kind listed on the console before "… N more" (the report lists them all).
const LISTED: usize = 5;

/// Update the suite at `earlier` against the request's documents, writing the request's `out`.
pub async fn update_request(
    req: &SuiteRequest<'_>,
    args: &GenerateArgs,
    earlier: &Path,
    cx: &StageContext<'_>,
) -> Result<SuiteOutcome> {
    let events = cx.events();
    refuse_to_overwrite(earlier, req.out)?;
    let cases: Vec<TestCase> = read_jsonl(earlier)
        .with_context(|| format!("cannot read the suite to update, {}", earlier.display()))?;
    let snapshot_path = crate::run_dir::suite_documents_path(earlier);
    let snapshot: Vec<Document> = if snapshot_path.exists() {
        read_jsonl(&snapshot_path)?
    } else {
        events.warning(format!(
            "{} has no documents snapshot ({}): only cases whose documents are unchanged can be told \
             apart; the rest are kept and marked stale",
            earlier.display(),
            snapshot_path.display()
        ));
        Vec::new()
    };
    let options = crate::ingest::options_of(cx);
    let (docs, failures) = crate::ingest::ingest_naming_failures(&req.docs, &options, events)?;
    let unparsed: Vec<Unparsed> = failures
        .iter()
        .map(|f| Unparsed {
            source: f.path.display().to_string(),
            reason: f.error.clone(),
        })
        .collect();
    events.stage("generate");
    let writers = Writers::prepare(&docs, args, cx)?;
    let gate = writers.gate();
    // Each case is written again by its own generator; this one writes for new documents.
    let generation = args.options(ragtester_core::Generator::Ragtester, &writers);
    let updated = ragtester_testgen::update::update(
        Earlier {
            cases: &cases,
            documents: &snapshot,
        },
        &docs,
        &unparsed,
        &generation,
        writers.model.as_ref(),
        gate.as_ref(),
    )
    .await?;
    tell(&updated.report, events);
    if updated.cases.is_empty() {
        bail!("the updated suite would hold no case (see the changes above)");
    }
    let mut updated = updated;
    args.expect_tools(&mut updated.cases);
    write_jsonl_atomic(req.out, &updated.cases)?;
    write_jsonl_atomic(&crate::run_dir::suite_documents_path(req.out), &docs)?;
    let reports: Vec<GenerationReport> = vec![updated.generation];
    crate::generate::write_report(
        req.out,
        &updated.cases,
        &reports,
        &[],
        Some(&updated.report),
        events,
    )?;
    Ok(SuiteOutcome {
        generated: Generated {
            cases: updated.cases,
            halted: 0,
        },
        documents: docs.len(),
        failed_documents: failures.len(),
    })
}

/// An update writes a new suite: never the earlier one, nor the snapshot or report beside it.
fn refuse_to_overwrite(earlier: &Path, out: &Path) -> Result<()> {
    let resolved = |p: &Path| -> std::path::PathBuf {
        let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = parent
            .unwrap_or(Path::new("."))
            .canonicalize()
            .unwrap_or_else(|_| parent.unwrap_or(Path::new(".")).to_path_buf());
        dir.join(p.file_name().unwrap_or_default())
    };
    if !earlier.exists() {
        bail!("the suite to update, {}, does not exist", earlier.display());
    }
    let (a, b) = (resolved(earlier), resolved(out));
    if a == b {
        bail!(
            "an update never writes over the suite it updates: give --out another file than {}",
            earlier.display()
        );
    }
    Ok(())
}

/// The counts, then each change that is not a kept case, with its reason.
fn tell(report: &UpdateReport, events: &dyn Events) {
    for d in report.documents.iter().filter(|d| d.status != "unchanged") {
        let why = d
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        events.info(format!("document {}: {}{why}", d.source, d.status));
    }
    events.info(report.summary());
    for change in [
        Change::Rewritten,
        Change::Retired,
        Change::New,
        Change::Stale,
    ] {
        let of_kind: Vec<_> = report.cases.iter().filter(|c| c.change == change).collect();
        for c in of_kind.iter().take(LISTED) {
            events.info(format!(
                "  {:<9} [{}] {} — {}",
                change.as_str(),
                c.generator.as_str(),
                clip(&c.query, 70),
                c.reason
            ));
        }
        if of_kind.len() > LISTED {
            events.info(format!(
                "  … {} more {} (the suite's report lists them all)",
                of_kind.len() - LISTED,
                change.as_str()
            ));
        }
    }
}

fn clip(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(n).collect::<String>())
    }
}
