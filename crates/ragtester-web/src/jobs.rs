//! Jobs the UI starts (generate documents, a suite, a matrix run, judging, an audit), each on its own thread,
//! with progress the UI polls. The page's forms (`DocgenForm`, `SuiteForm`, `RunForm`, `JudgeForm`) are the
//! JSON bodies it posts; `stages.rs` fills the stages' own requests from them, as the command line fills
//! them from flags. This module knows threads and job state, never how a model is called.

use anyhow::Result;
use ragtester_core::config::{GenerationSettings, JudgeSettings, RunSettings};
use ragtester_core::secrets::redact;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// Generate test documents into the workspace.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct DocgenForm {
    /// Model spec that writes them; `offline` plants facts from templates.
    #[serde(default = "writer_of_documents")]
    pub llm: String,
    pub count: usize,
    #[serde(default)]
    pub topic: Option<String>,
    /// `en` or `zh`.
    #[serde(default = "english")]
    pub language: String,
    #[serde(default)]
    pub seed: u64,
    /// `markdown`, `pdf`, or `pdf-noise` (typeset with layout noise).
    #[serde(default = "markdown")]
    pub format: String,
}

/// Generate a suite from workspace documents.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct SuiteForm {
    pub name: String,
    /// Document file names; empty means every document in the workspace.
    #[serde(default)]
    pub documents: Vec<String>,
    /// `ragtester`, `baseline` (the paper's generators).
    #[serde(default = "strategies")]
    pub strategies: Vec<String>,
    #[serde(default = "n_test")]
    pub n_test: usize,
    #[serde(default)]
    pub n_complex: Option<usize>,
    /// Conversations per document; the project default when unset.
    #[serde(default)]
    pub conversations: Option<usize>,
    #[serde(default = "writer")]
    pub llm: String,
    /// The quality gate's critic: unset for the question writer itself, `none` for no gate.
    #[serde(default)]
    pub critic: Option<String>,
    /// An earlier suite of the workspace to bring in step with the documents (`generate --update`): the
    /// new suite keeps its untouched cases and lists every change in its report.
    #[serde(default)]
    pub update: Option<String>,
}

/// Run a suite against a matrix, then judge and report it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct RunForm {
    pub name: String,
    pub suite: String,
    /// `bm25`, `dense`, `hybrid`, `hybrid-rerank`.
    pub retrievers: Vec<String>,
    pub top_k: Vec<usize>,
    pub llms: Vec<String>,
    #[serde(default)]
    pub embedders: Vec<String>,
    #[serde(default = "judges")]
    pub judges: Vec<String>,
    #[serde(default = "concurrency")]
    pub concurrency: usize,
}

/// Judge (again) a run's answers, then report it.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct JudgeForm {
    pub run: String,
    pub judges: Vec<String>,
}

// What a request leaves out takes the project file's defaults (`ragtester_core::config`), as the command
// line does.
fn strategies() -> Vec<String> {
    GenerationSettings::default()
        .strategies
        .iter()
        .map(|g| g.as_str().to_string())
        .collect()
}
fn n_test() -> usize {
    GenerationSettings::default().n_test
}
fn writer() -> String {
    GenerationSettings::default().llm
}
fn judges() -> Vec<String> {
    JudgeSettings::default().judges
}
fn concurrency() -> usize {
    RunSettings::default().concurrency
}
fn writer_of_documents() -> String {
    ragtester_stages::docgen::DEFAULT_WRITER.into()
}
fn markdown() -> String {
    "markdown".into()
}
fn english() -> String {
    ragtester_stages::front::DocRequest::default().language
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Running,
    Done,
    Failed,
    /// Stopped on request; what its stage committed stays (a run resumes from it).
    Cancelled,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobState {
    pub id: usize,
    pub kind: String,
    /// What the job writes: a suite or run name, or `docs`.
    pub target: String,
    pub status: JobStatus,
    /// The stage now running (ingest, generate, run, judge, report…).
    pub stage: String,
    pub done: usize,
    pub total: usize,
    /// What `done` and `total` count: cells, verdicts, documents.
    pub unit: String,
    pub errors: usize,
    pub log: Vec<String>,
    /// The errors and warnings among the log lines (a document that could not be read, a budget spent),
    /// kept apart so they stay in view however long the log grows.
    pub problems: Vec<String>,
    pub result: Option<String>,
    pub error: Option<String>,
    pub started_unix: u64,
}

/// A running job's handle: stages report through it.
#[derive(Clone)]
pub struct Job {
    state: Arc<Mutex<JobState>>,
    /// Told once when the job is to stop.
    cancel: Arc<tokio::sync::Notify>,
}

const LOG_LINES: usize = 200;
const PROBLEM_LINES: usize = 50;

impl Job {
    fn with<R>(&self, f: impl FnOnce(&mut JobState) -> R) -> R {
        // A panic while holding the lock only loses progress text; keep serving it.
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s)
    }
    pub fn stage(&self, stage: &str) {
        self.with(|s| {
            s.stage = stage.to_string();
            s.done = 0;
            s.total = 0;
            s.log.push(format!("{stage}…"));
        });
    }
    pub fn progress(&self, unit: &str, done: usize, total: usize, errors: usize) {
        self.with(|s| {
            if s.unit != unit {
                s.unit = unit.to_string();
            }
            s.done = done;
            s.total = total;
            s.errors = errors;
        });
    }
    pub fn log(&self, line: impl Into<String>) {
        let line = redact(&line.into()).into_owned();
        self.with(|s| {
            s.log.push(line);
            let over = s.log.len().saturating_sub(LOG_LINES);
            s.log.drain(..over);
        });
    }
    /// An error or warning: in the log and among the problems.
    pub fn problem(&self, line: impl Into<String>) {
        let line = redact(&line.into()).into_owned();
        self.with(|s| {
            if s.problems.len() < PROBLEM_LINES {
                s.problems.push(line.clone());
            }
        });
        self.log(line);
    }
    pub fn state(&self) -> JobState {
        self.with(|s| s.clone())
    }
}

/// Every job of this server's life, newest last.
#[derive(Default)]
pub struct Jobs {
    all: Mutex<Vec<Job>>,
}

impl Jobs {
    /// Is a job writing `target` now? Two jobs never write the same suite or run.
    pub fn busy(&self, target: &str) -> bool {
        self.list()
            .iter()
            .any(|j| j.status == JobStatus::Running && j.target == target)
    }

    pub fn list(&self) -> Vec<JobState> {
        let all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        all.iter().map(Job::state).collect()
    }

    pub fn get(&self, id: usize) -> Option<JobState> {
        let all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        all.get(id).map(Job::state)
    }

    /// Ask a running job to stop: its work is dropped at its next await, and what it committed stays.
    /// `None` when there is no such job, `Some(false)` when it is no longer running.
    pub fn cancel(&self, id: usize) -> Option<bool> {
        let all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        let job = all.get(id)?;
        let running = job.state().status == JobStatus::Running;
        if running {
            job.cancel.notify_one();
        }
        Some(running)
    }

    /// Start `work` on its own thread and runtime; its error, or a panic, fails the job with the message.
    pub fn spawn<F>(&self, kind: &str, target: &str, work: F) -> usize
    where
        F: for<'a> FnOnce(&'a Job) -> std::pin::Pin<Box<dyn Future<Output = Result<String>> + 'a>>
            + Send
            + 'static,
    {
        let mut all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        let id = all.len();
        let job = Job::started(id, kind, target);
        all.push(job.clone());
        drop(all);
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()?;
                let outcome = runtime.block_on(async {
                    tokio::select! {
                        outcome = work(&job) => Some(outcome),
                        () = job.cancel.notified() => None,
                    }
                });
                // Tasks the stage spawned stop with the runtime; a model call on a blocking thread is
                // left to finish in the background rather than holding the job open.
                runtime.shutdown_background();
                anyhow::Ok(outcome)
            }));
            job.end(outcome);
        });
        id
    }
}

impl Job {
    /// A job that starts now, running.
    fn started(id: usize, kind: &str, target: &str) -> Self {
        Self {
            cancel: Arc::new(tokio::sync::Notify::new()),
            state: Arc::new(Mutex::new(JobState {
                id,
                kind: kind.to_string(),
                target: target.to_string(),
                status: JobStatus::Running,
                stage: "starting".into(),
                done: 0,
                total: 0,
                unit: "cells".into(),
                errors: 0,
                log: Vec::new(),
                problems: Vec::new(),
                result: None,
                error: None,
                started_unix: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            })),
        }
    }

    /// How the job's thread ended: its work's result (None when cancelled), or the panic that stopped it.
    fn end(&self, outcome: std::thread::Result<Result<Option<Result<String>>>>) {
        let outcome = match outcome {
            Ok(Ok(Some(r))) => r,
            Ok(Ok(None)) => {
                self.with(|s| {
                    s.status = JobStatus::Cancelled;
                    s.log
                        .push("cancelled; what was committed stays (a run resumes from it)".into());
                });
                return;
            }
            Ok(Err(e)) => Err(e),
            Err(panic) => Err(anyhow::anyhow!(
                "the job stopped on an internal error: {}",
                panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("panic")
            )),
        };
        self.with(|s| match outcome {
            Ok(result) => {
                s.status = JobStatus::Done;
                s.log.push(result.clone());
                s.result = Some(result);
            }
            Err(e) => {
                s.status = JobStatus::Failed;
                let message = ragtester_core::secrets::error_text(&e);
                s.log.push(format!("error: {message}"));
                s.error = Some(message);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(jobs: &Jobs, id: usize) -> JobState {
        for _ in 0..500 {
            let s = jobs.get(id).unwrap();
            if s.status != JobStatus::Running {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("job {id} never finished");
    }

    #[test]
    fn jobs_report_result_error_and_panic() {
        let jobs = Jobs::default();
        let ok = jobs.spawn("t", "a", |job| {
            Box::pin(async move {
                job.stage("work");
                job.progress("cells", 2, 2, 0);
                Ok("made 2".to_string())
            })
        });
        let bad = jobs.spawn("t", "b", |_| {
            Box::pin(async { Err(anyhow::anyhow!("no documents")) })
        });
        let panics = jobs.spawn("t", "c", |_| Box::pin(async { panic!("boom") }));
        let s = wait(&jobs, ok);
        assert_eq!((s.status, s.done, s.total), (JobStatus::Done, 2, 2));
        assert_eq!(s.result.as_deref(), Some("made 2"));
        let s = wait(&jobs, bad);
        assert_eq!(s.status, JobStatus::Failed);
        assert_eq!(s.error.as_deref(), Some("no documents"));
        let s = wait(&jobs, panics);
        assert_eq!(s.status, JobStatus::Failed);
        assert!(s.error.unwrap().contains("boom"));
        assert!(!jobs.busy("a"));
        assert_eq!(
            jobs.cancel(ok),
            Some(false),
            "a finished job is not cancelled"
        );
        assert_eq!(jobs.cancel(99), None);
    }

    #[test]
    fn a_cancelled_job_stops_and_frees_its_target() {
        let jobs = Jobs::default();
        let id = jobs.spawn("run", "run:r", |job| {
            Box::pin(async move {
                job.stage("run");
                tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                Ok("never".to_string())
            })
        });
        assert!(jobs.busy("run:r"));
        assert_eq!(jobs.cancel(id), Some(true));
        let s = wait(&jobs, id);
        assert_eq!(s.status, JobStatus::Cancelled);
        assert!(
            s.log.last().unwrap().starts_with("cancelled"),
            "{:?}",
            s.log
        );
        assert!(!jobs.busy("run:r"));
    }
}
