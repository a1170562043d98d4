//! The web UI's jobs, carried out by the pipeline's stages — the same as the commands run — with the
//! pipeline's events landing on the job the page polls: its stage, progress, and every message.

use crate::jobs::{DocgenForm, Job, RunForm, SuiteForm};
use anyhow::{Context, Result, bail};
use ragtester_core::config::{GenerationSettings, JudgeSettings, RunSettings};
use ragtester_stages::generate::parse_generators;
use ragtester_stages::ingest::Input;
use ragtester_stages::judge::{JudgeArgs, JudgeRequest, judge_request};
use ragtester_stages::plan::{MatrixOverrides, PlanArgs, plan};
use ragtester_stages::report::report;
use ragtester_stages::run::{MatrixOutcome, MatrixRequest, run_request};
use ragtester_stages::run_dir::RunDir;
use ragtester_stages::{Event, Events, Level, Models, StageContext};
use std::path::{Path, PathBuf};

/// The stages as the UI drives them. Each returns a one-line description of what it made. Futures need
/// not be `Send`: every job runs on its own thread and runtime.
pub struct Stages {
    pub models: Models,
    /// The server's limits, read once when it started.
    pub limits: ragtester_core::Limits,
}

/// Judge and report a run directory: the UI's last two stages of every run.
async fn judge_and_report(
    judges: &[String],
    run_dir: &Path,
    (models, limits): (&Models, ragtester_core::Limits),
    job: &Job,
) -> Result<String> {
    let events = JobEvents(job);
    let cx = StageContext::new(models, &events, limits);
    // The project file's judging settings, with the judges the page chose.
    let settings = JudgeSettings {
        judges: judges.to_vec(),
        ..Default::default()
    };
    let request = JudgeRequest {
        run_dir,
        args: JudgeArgs::from_settings(&settings, RunSettings::default().concurrency)?,
        pairwise: None,
    };
    let errors = judge_request(&request, &cx).await?.errors;
    let summary = report(run_dir, &events)?;
    let judged: usize = summary.configs.iter().map(|c| c.passed + c.failed).sum();
    let passed: usize = summary.configs.iter().map(|c| c.passed).sum();
    Ok(format!(
        "judged {judged} answers: {passed} passed, {} failed, {errors} judge or run errors",
        judged - passed
    ))
}

impl Stages {
    /// Write the bundled sample documents into `dir`: how many were written, and the names kept as they
    /// were because the workspace has something under them already (never replaced, never written through
    /// a symbolic link).
    pub fn write_samples(&self, dir: &Path) -> Result<(usize, Vec<String>)> {
        let staging = tempfile::tempdir()?;
        let corpus = ragtester_stages::bundled::write_corpus(staging.path())?;
        let mut written = 0;
        let mut skipped = Vec::new();
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&corpus)?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?;
        entries.sort();
        for path in entries {
            let Some(name) = path.file_name() else {
                continue;
            };
            let bytes =
                std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
            match ragtester_core::record::write_new(&dir.join(name), &bytes) {
                Ok(()) => written += 1,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    skipped.push(name.to_string_lossy().into_owned());
                }
                Err(e) => {
                    return Err(anyhow::Error::from(e)
                        .context(format!("cannot write {}", dir.join(name).display())));
                }
            }
        }
        Ok((written, skipped))
    }

    pub async fn generate_documents(
        &self,
        req: &DocgenForm,
        dir: &Path,
        job: &Job,
    ) -> Result<String> {
        let request = ragtester_stages::front::DocRequest {
            topic: req.topic.clone(),
            language: req.language.clone(),
            seed: req.seed,
            ..Default::default()
        };
        let count = req.count;
        let events = JobEvents(job);
        let written = ragtester_stages::docgen::docgen(
            &ragtester_stages::docgen::DocgenRequest {
                request,
                llm: &req.llm,
                count,
                out: dir,
                prompts: None,
                format: ragtester_stages::docgen::format_named(&req.format)?,
            },
            &StageContext::new(&self.models, &events, self.limits),
        )
        .await?;
        let names: Vec<String> = written
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        Ok(format!(
            "wrote {} documents: {}",
            names.len(),
            names.join(", ")
        ))
    }

    pub async fn generate_suite(
        &self,
        req: &SuiteForm,
        docs: &[PathBuf],
        update: Option<PathBuf>,
        out: &Path,
        job: &Job,
    ) -> Result<String> {
        // The project file's generation settings, with what the page chose over them; the workspace's
        // document folders hold the user's files, whatever their names.
        let inputs = docs.iter().cloned().map(Input::Sources).collect();
        let project = ragtester_core::config::ProjectConfig::default();
        let mut request =
            ragtester_stages::generate::SuiteRequest::from_project(&project, inputs, out);
        request.settings = GenerationSettings {
            strategies: parse_generators(&req.strategies)?,
            n_test: req.n_test,
            n_complex: req.n_complex,
            conversations: req.conversations.unwrap_or(request.settings.conversations),
            llm: req.llm.clone(),
            critic: req.critic.clone(),
            update,
            ..request.settings
        };
        let events = JobEvents(job);
        let cx = StageContext::new(&self.models, &events, self.limits);
        let outcome = ragtester_stages::suite::generate_request(&request, &cx).await?;
        Ok(format!(
            "{} cases from {} documents",
            outcome.generated.cases.len(),
            outcome.documents
        ))
    }

    pub async fn run_matrix(
        &self,
        req: &RunForm,
        docs: &[PathBuf],
        suite: &Path,
        run_dir: &Path,
        job: &Job,
    ) -> Result<String> {
        let plan = plan(&PlanArgs {
            overrides: MatrixOverrides {
                llms: req.llms.clone(),
                embedders: req.embedders.clone(),
                retrievers: req.retrievers.clone(),
                top_k: req.top_k.clone(),
                ..Default::default()
            },
            concurrency: Some(req.concurrency),
            ..Default::default()
        })?;
        let events = JobEvents(job);
        std::fs::create_dir_all(run_dir)?;
        let request = MatrixRequest::from_plan(&plan, docs, suite, run_dir);
        let cx = StageContext::new(&self.models, &events, self.limits).planned(&plan)?;
        let MatrixOutcome::Ran { outcome, .. } = run_request(&request, &cx).await? else {
            bail!("a web run is never a dry run");
        };
        if outcome.errors > 0 {
            job.log(format!(
                "{} cells ended in an error (recorded on each)",
                outcome.errors
            ));
        }
        judge_and_report(&req.judges, run_dir, (&self.models, self.limits), job).await
    }

    pub async fn judge(&self, judges: &[String], run_dir: &Path, job: &Job) -> Result<String> {
        judge_and_report(judges, run_dir, (&self.models, self.limits), job).await
    }

    /// Two configurations of a judged run compared answer by answer (the offline judge's claim-level
    /// comparison), then the report rebuilt so the results show the win rates.
    pub async fn pairwise(&self, run_dir: &Path, a: &str, b: &str, job: &Job) -> Result<String> {
        let judge = ragtester_stages::judge::judge_of(&self.models, "offline")?;
        let summary =
            ragtester_stages::pairwise::compare(run_dir, a, b, judge, 4, &JobEvents(job)).await?;
        ragtester_stages::report::report(run_dir, &JobEvents(job))?;
        let rate = summary
            .overall
            .a_win_rate
            .map_or("–".to_string(), |r| format!("{:.1}%", r.estimate * 100.0));
        Ok(format!(
            "{} wins {rate} of cases against {}",
            summary.a_label, summary.b_label
        ))
    }

    pub async fn audit_sample(&self, run_dir: &Path, job: &Job) -> Result<String> {
        self.audit(run_dir, None, job).await?;
        Ok("audit sample drawn: label it, then score it".into())
    }

    pub async fn audit_score(&self, run_dir: &Path, job: &Job) -> Result<String> {
        let sheet = RunDir::new(run_dir).file(ragtester_stages::run_dir::AUDIT_SHEET);
        if !sheet.is_file() {
            bail!("draw an audit sample first");
        }
        self.audit(run_dir, Some(&sheet), job).await?;
        Ok("audit scored; the report shows the oracle's precision".into())
    }

    async fn audit(&self, run_dir: &Path, labels: Option<&Path>, job: &Job) -> Result<()> {
        let request = ragtester_stages::audit::AuditRequest {
            labels,
            ..ragtester_stages::audit::AuditRequest::new(run_dir)
        };
        let events = JobEvents(job);
        let cx = StageContext::new(&self.models, &events, self.limits);
        ragtester_stages::audit::audit(&request, &cx).await?;
        Ok(())
    }
}

/// A web job as the pipeline's event sink: the stage, progress and every message land on the job the
/// page polls.
struct JobEvents<'a>(&'a Job);

impl Events for JobEvents<'_> {
    fn event(&self, event: Event) {
        match event {
            Event::Stage(stage) => self.0.stage(stage),
            Event::Progress { unit, counts, .. } => {
                self.0
                    .progress(unit, counts.done, counts.total, counts.errors)
            }
            Event::Message { level, text } => match level {
                Level::Error | Level::Warning => self.0.problem(level.line(&text)),
                Level::Note | Level::Info => self.0.log(level.line(&text)),
            },
        }
    }
}
