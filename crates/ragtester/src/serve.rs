//! `ragtester serve`: the web UI's jobs, carried out by the same stages as the commands.

use crate::stages::{self, GenerateArgs, JudgeArgs, Models, RunArgs};
use anyhow::{Context, Result, bail};
use ragtester_core::config::{MatrixSettings, ProjectConfig};
use ragtester_core::{RetrieverKind, TestCase, read_jsonl};
use ragtester_web::{DocgenRequest, Job, RunRequest, Stages, SuiteRequest};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub struct CliStages {
    pub models: Arc<Models>,
}

fn judge_args(judges: &[String]) -> JudgeArgs<'_> {
    JudgeArgs {
        judges,
        quiet: true,
        samples: 1,
        panel: ragtester_judge::PanelMethod::Majority,
        concurrency: 4,
        sampling: Default::default(),
        prompts: None,
    }
}

/// Judge and report a run directory: the UI's last two stages of every run.
async fn judge_and_report(
    judges: &[String],
    run_dir: &Path,
    models: &Models,
    job: &Job,
) -> Result<String> {
    job.stage("judge");
    let errors = stages::judge(run_dir, &judge_args(judges), models).await?;
    job.stage("report");
    let summary = stages::report(run_dir)?;
    let judged: usize = summary.configs.iter().map(|c| c.passed + c.failed).sum();
    let passed: usize = summary.configs.iter().map(|c| c.passed).sum();
    Ok(format!(
        "judged {judged} answers: {passed} passed, {} failed, {errors} judge or run errors",
        judged - passed
    ))
}

#[async_trait::async_trait(?Send)]
impl Stages for CliStages {
    fn write_samples(&self, dir: &Path) -> Result<usize> {
        let staging = tempfile::tempdir()?;
        let corpus = crate::bundled::write_corpus(staging.path())?;
        let mut n = 0;
        for entry in std::fs::read_dir(&corpus)? {
            let path = entry?.path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, dir.join(name))
                    .with_context(|| format!("cannot copy {}", path.display()))?;
                n += 1;
            }
        }
        Ok(n)
    }

    async fn generate_documents(
        &self,
        req: &DocgenRequest,
        dir: &Path,
        job: &Job,
    ) -> Result<String> {
        job.stage("docgen");
        let request = ragtester_docgen::DocRequest {
            topic: req.topic.clone(),
            language: req.language.clone(),
            seed: req.seed,
            ..Default::default()
        };
        let count = req.count;
        let written = crate::docgen::docgen(
            &crate::docgen::DocgenArgs {
                request,
                llm: &req.llm,
                count,
                out: dir,
                prompts: None,
                format: match req.format.as_str() {
                    "markdown" => ragtester_docgen::OutputFormat::Markdown,
                    #[cfg(feature = "pdf")]
                    "pdf" => ragtester_docgen::OutputFormat::Pdf { noise: false },
                    #[cfg(feature = "pdf")]
                    "pdf-noise" => ragtester_docgen::OutputFormat::Pdf { noise: true },
                    other => bail!("unknown document format `{other}` (markdown, pdf, pdf-noise)"),
                },
            },
            &self.models,
            &|made| job.progress(made, count, 0),
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

    async fn generate_suite(
        &self,
        req: &SuiteRequest,
        docs: &[PathBuf],
        out: &Path,
        job: &Job,
    ) -> Result<String> {
        job.stage("ingest");
        let (documents, failed) = stages::ingest(docs)?;
        if failed > 0 {
            job.log(format!(
                "{failed} documents could not be read (see the server log)"
            ));
        }
        job.stage("generate");
        let cases = stages::generate(
            &documents,
            &GenerateArgs {
                generators: crate::cli::parse_generators(&req.strategies)?,
                n_test: req.n_test,
                n_complex: req.n_complex,
                llm: req.llm.clone(),
                section_tokens: 96,
                seed: 0,
                concurrency: 4,
                sampling: Default::default(),
                prompts: None,
                critic: ragtester_core::config::critic_spec(req.critic.as_deref(), &req.llm),
                budget: None,
            },
            out,
            &self.models,
        )
        .await?
        .cases;
        Ok(format!(
            "{} cases from {} documents",
            cases.len(),
            documents.len()
        ))
    }

    async fn run_matrix(
        &self,
        req: &RunRequest,
        docs: &[PathBuf],
        suite: &Path,
        run_dir: &Path,
        job: &Job,
    ) -> Result<String> {
        let retrievers = req
            .retrievers
            .iter()
            .map(|r| RetrieverKind::parse(r))
            .collect::<Result<Vec<_>>>()?;
        let project = ProjectConfig {
            matrix: Some(MatrixSettings {
                llm: req.llms.clone(),
                embedder: if req.embedders.is_empty() {
                    vec!["hash".into()]
                } else {
                    req.embedders.clone()
                },
                retriever: retrievers,
                top_k: req.top_k.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let configs = project.configurations()?;
        job.stage("ingest");
        let (documents, _) = stages::ingest(docs)?;
        let cases: Vec<TestCase> = read_jsonl(suite)?;
        std::fs::create_dir_all(run_dir)?;
        job.stage("run");
        let observer = |c: &ragtester_exec::Counts| job.progress(c.done, c.total, c.errors);
        let outcome = stages::run(
            &RunArgs {
                quiet: true,
                observer: Some(&observer),
                docs: &documents,
                cases: &cases,
                configs: &configs,
                out: run_dir,
                concurrency: req.concurrency.max(1),
                resume: false,
                sampling: Default::default(),
                replay_answers: false,
                budget: None,
            },
            &self.models,
        )
        .await?;
        if outcome.errors > 0 {
            job.log(format!(
                "{} cells ended in an error (recorded on each)",
                outcome.errors
            ));
        }
        judge_and_report(&req.judges, run_dir, &self.models, job).await
    }

    async fn judge(&self, judges: &[String], run_dir: &Path, job: &Job) -> Result<String> {
        judge_and_report(judges, run_dir, &self.models, job).await
    }

    async fn audit_sample(&self, run_dir: &Path, job: &Job) -> Result<String> {
        job.stage("audit");
        self.audit(run_dir, None).await?;
        Ok("audit sample drawn: label it, then score it".into())
    }

    async fn audit_score(&self, run_dir: &Path, job: &Job) -> Result<String> {
        job.stage("audit");
        let sheet = run_dir.join("audit.csv");
        if !sheet.is_file() {
            bail!("draw an audit sample first");
        }
        self.audit(run_dir, Some(&sheet)).await?;
        job.stage("report");
        stages::report(run_dir)?;
        Ok("audit scored; the report shows the oracle's precision".into())
    }
}

impl CliStages {
    async fn audit(&self, run_dir: &Path, labels: Option<&Path>) -> Result<u8> {
        crate::audit::audit(
            &crate::audit::AuditArgs {
                run_dir,
                confidence: 0.95,
                margin: 0.05,
                seed: 0,
                labels,
                judges: &[],
                concurrency: 4,
            },
            &self.models,
        )
        .await
    }
}
