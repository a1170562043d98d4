//! The whole pipeline from a project file, as `ragtester test` and `demo` run it.

use crate::context::StageContext;
use crate::generate::{GenerateArgs, generate};
use crate::ingest::ingest;
use crate::judge::{JudgeArgs, judge};
use crate::report::report;
use crate::run::{RunArgs, run};
use crate::run_dir::{RunDir, SUITE};
use anyhow::{Result, bail};
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

/// ingest → generate → run → judge → report, from a project config, into `out` (cleared first). The stages
/// run under the project's model table and one budget for the whole command: generation spends from it
/// first, the run from what is left.
pub async fn full_pipeline(
    corpus: &[PathBuf],
    project: &ProjectConfig,
    out: &Path,
    cx: &StageContext<'_>,
) -> Result<PipelineOutcome> {
    project.validate()?;
    let cx = &(cx.clone())
        .with_table(&project.models)
        .with_budget(&project.run, &project.prices)?;
    let events = cx.events();
    let run_dir = RunDir::new(out);
    run_dir.clear()?;
    let (docs, failed) = ingest(corpus, events)?;
    let generated = generate(
        &docs,
        &GenerateArgs::from_settings(&project.generation, project.run.concurrency),
        &run_dir.file(SUITE),
        cx,
    )
    .await?;
    if generated.halted > 0 {
        bail!(
            "generation stopped at the budget; raise [run] budget_tokens / budget_usd and run again (replies \
             already paid for come from the response cache)"
        );
    }
    let cases = generated.cases;
    let configs = project.configurations()?;
    let outcome = run(
        &RunArgs {
            docs: &docs,
            cases: &cases,
            configs: &configs,
            out,
            concurrency: project.run.concurrency,
            resume: false,
            sampling: project.run.sampling,
            replay_answers: project.run.replay_answers,
            shard: None,
            vector_store: project.matrix.as_ref().and_then(|m| m.vector_store.clone()),
        },
        cx,
    )
    .await?;
    run_dir.save_prices(&project.prices)?;
    if outcome.over_budget > 0 {
        // Judging a partial run would report a matrix that was not run: stop, so the run can be resumed.
        bail!(
            "the run stopped at its budget with {} cells unrun; resume it with `ragtester run --resume`, \
             then judge and report",
            outcome.over_budget
        );
    }
    let exec_errors = outcome.errors;
    let judge_errors = judge(
        out,
        &JudgeArgs::from_settings(&project.judge, project.run.concurrency)?,
        cx,
    )
    .await?;
    Ok(PipelineOutcome {
        summary: report(out, events)?,
        failed_inputs: failed,
        run_errors: exec_errors,
        judge_errors,
    })
}
