//! The whole pipeline from a project file, as `ragtester test` and `demo` run it.

use crate::context::StageContext;
use crate::generate::SuiteRequest;
use crate::ingest::{IngestRequest, Input, ingest_request};
use crate::judge::{JudgeRequest, judge_request};
use crate::plan::RunPlan;
use crate::report::report;
use crate::run::{MatrixOutcome, MatrixRequest, run_request};
use crate::run_dir::{RunDir, SUITE};
use crate::suite::generate_request;
use anyhow::{Context, Result, bail};
use ragtester_core::config::ProjectConfig;
use ragtester_report::Summary;
use std::path::{Path, PathBuf};

/// How a whole pipeline ended.
pub struct PipelineOutcome {
    pub summary: Summary,
    /// Inputs that could not be read, cells that ended in an error, verdicts that are errors: the report is
    /// of what remained.
    pub failed_inputs: usize,
    pub run_errors: usize,
    pub judge_errors: usize,
}

impl PipelineOutcome {
    /// Whether anything was left out of the report.
    pub fn partial(&self) -> bool {
        self.failed_inputs + self.run_errors + self.judge_errors > 0
    }
}

/// `ragtester test`: the whole pipeline the project file at `config` declares, over its `[corpus]`.
pub async fn test_project(
    config: &Path,
    judge_profile: Option<PathBuf>,
    out: &Path,
    cx: &StageContext<'_>,
) -> Result<PipelineOutcome> {
    let mut project = ProjectConfig::load(config)?;
    if judge_profile.is_some() {
        project.judge.profile = judge_profile;
    }
    let corpus = project
        .corpus
        .as_ref()
        .with_context(|| format!("config file {} has no [corpus] paths", config.display()))?;
    full_pipeline(&corpus.paths, &project, out, cx).await
}

/// ingest → generate → run → judge → report, from a project config, into `out` (cleared first): each stage's
/// request built from the project, each reading what the one before wrote. The stages run under the
/// project's model table and one budget for the whole command: generation spends from it first, the run
/// from what is left.
pub async fn full_pipeline(
    corpus: &[PathBuf],
    project: &ProjectConfig,
    out: &Path,
    cx: &StageContext<'_>,
) -> Result<PipelineOutcome> {
    project.validate()?;
    let plan = RunPlan::of_project(project)?;
    let cx = &cx.clone().planned(&plan)?;
    let run_dir = RunDir::new(out);
    run_dir.clear()?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let ingest = IngestRequest {
        inputs: Input::of_paths(corpus),
        options: crate::ingest::options_of(cx),
        out,
    };
    let ingested = ingest_request(&ingest, cx)?;
    let documents = [ingested.path.clone()];
    let suite = run_dir.file(SUITE);
    let inputs = vec![Input::Records(ingested.path)];
    let generated = generate_request(&SuiteRequest::from_project(project, inputs, &suite), cx)
        .await?
        .generated;
    if generated.halted > 0 {
        bail!(
            "generation stopped at the budget; raise [run] budget_tokens / budget_usd and run again (replies \
             already paid for come from the response cache)"
        );
    }
    let request = MatrixRequest::from_plan(&plan, &documents, &suite, out);
    let MatrixOutcome::Ran { outcome, .. } = run_request(&request, cx).await? else {
        bail!("a pipeline run is never a dry run");
    };
    if outcome.over_budget > 0 {
        // Judging a partial run would report a matrix that was not run: stop, so the run can be resumed.
        bail!(
            "the run stopped at its budget with {} cells unrun; resume it with `ragtester run --resume`, \
             then judge and report",
            outcome.over_budget
        );
    }
    let judged = judge_request(&JudgeRequest::from_project(project, out)?, cx).await?;
    Ok(PipelineOutcome {
        summary: report(out, cx.events())?,
        failed_inputs: ingested.failed,
        run_errors: outcome.errors,
        judge_errors: judged.errors,
    })
}
