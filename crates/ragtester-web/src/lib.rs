//! `ragtester serve`: a local web UI over a workspace folder that drives all four stages — documents
//! (upload, bundled samples, generation), suites, matrix runs with live progress, judging — and browses the
//! results: filters and paging done on the server (smooth at 50,000 results), a case detail view, run
//! comparison and audit labelling. Page, script and style are embedded in the binary; the page builds every
//! element with text nodes, never HTML from data, and a Content-Security-Policy forbids inline script.
//!
//! This crate knows HTTP, the workspace layout and the records; its jobs call the stages of
//! `ragtester-stages` directly ([`Stages`]), with the pipeline's events on the job the page polls.

mod api;
pub mod audit_sheet;
pub mod guard;
pub mod jobs;
pub mod results;
pub mod served;
mod stages;
pub mod workspace;

pub use guard::Guard;
pub use jobs::{DocgenRequest, Job, JudgeRequest, RunRequest, SuiteRequest};
pub use stages::Stages;
pub use workspace::Workspace;

use anyhow::{Context, Result};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use ragtester_stages::run_dir;
use results::RunIndex;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// When each watched record file of a run was last modified (`None`: absent).
type Stamp = Vec<Option<SystemTime>>;

/// Loaded runs, reloaded when their records change on disk (a job judged them again, say).
#[derive(Default)]
pub struct RunCache {
    loaded: tokio::sync::Mutex<HashMap<PathBuf, (Stamp, Arc<RunIndex>)>>,
}

const WATCHED: [&str; 5] = [
    run_dir::SUITE,
    run_dir::CONFIGS,
    run_dir::ANSWERS,
    run_dir::VERDICTS,
    run_dir::SUMMARY,
];

impl RunCache {
    pub async fn get(&self, dir: &Path) -> Result<Arc<RunIndex>> {
        // A run directory is data from anywhere: its files are read only where they really are in it.
        served::check_run(dir)?;
        let stamp: Stamp = WATCHED
            .iter()
            .map(|f| {
                std::fs::metadata(dir.join(f))
                    .and_then(|m| m.modified())
                    .ok()
            })
            .collect();
        // One load at a time: a second request for the same run waits for the first instead of loading twice.
        let mut loaded = self.loaded.lock().await;
        if let Some((s, index)) = loaded.get(dir)
            && *s == stamp
        {
            return Ok(index.clone());
        }
        let path = dir.to_path_buf();
        let index = tokio::task::spawn_blocking(move || RunIndex::load(&path))
            .await
            .context("loading the run stopped")?
            .with_context(|| format!("cannot read the run in {}", dir.display()))?;
        let index = Arc::new(index);
        loaded.insert(dir.to_path_buf(), (stamp, index.clone()));
        Ok(index)
    }
}

pub struct AppState {
    pub workspace: Workspace,
    pub jobs: jobs::Jobs,
    pub stages: Arc<Stages>,
    pub runs: RunCache,
    /// Who may drive this server (Host, access token, CSRF token).
    pub guard: Arc<Guard>,
    /// Sizes of requests and uploaded files, among the process's other limits.
    pub limits: ragtester_core::Limits,
}

pub fn router(state: Arc<AppState>) -> Router {
    let max_request = usize::try_from(state.limits.request_bytes()).unwrap_or(usize::MAX);
    let guard = state.guard.clone();
    Router::new()
        .route("/", get(api::index))
        .route("/api/session", get(api::session))
        .route("/assets/app.js", get(api::script))
        .route("/assets/app.css", get(api::style))
        .route("/api/workspace", get(api::workspace))
        .route(
            "/api/documents",
            post(api::upload).layer(DefaultBodyLimit::max(max_request)),
        )
        .route("/api/documents/samples", post(api::samples))
        .route("/api/jobs", get(api::jobs))
        .route("/api/jobs/{id}", get(api::job))
        .route("/api/jobs/{id}/cancel", post(api::cancel))
        .route("/api/jobs/docgen", post(api::docgen))
        .route("/api/jobs/suite", post(api::suite))
        .route("/api/jobs/run", post(api::run))
        .route("/api/jobs/judge", post(api::judge))
        .route("/api/jobs/audit-sample", post(api::audit_sample))
        .route("/api/jobs/audit-score", post(api::audit_score))
        .route("/api/jobs/pairwise", post(api::pairwise))
        .route("/api/runs/{run}", get(api::run_overview))
        .route("/api/runs/{run}/results", get(api::results))
        .route("/api/runs/{run}/cells/{case}/{config}", get(api::cell))
        .route("/api/runs/{run}/report", get(api::report))
        .route("/api/runs/{run}/audit", get(api::audit))
        .route("/api/runs/{run}/audit/{row}", put(api::label))
        .route("/api/compare", get(api::compare))
        .with_state(state)
        // Outermost: a refused request reaches no route, so it writes nothing.
        .layer(axum::middleware::from_fn_with_state(guard, guard::check))
}

/// Who may reach the UI: other names it answers to (a reverse proxy's), and the access token (a random
/// one when `None`).
pub struct Access {
    pub allow_hosts: Vec<String>,
    pub token: Option<String>,
}

/// `ragtester serve`: the UI over a workspace folder (and read-only runs), its jobs sharing `models`.
/// Serves until the process is stopped. Hands `ready` the address it listens on once, with its access
/// token, for the caller to show as Jupyter does (port 0 picks a free one); the token appears nowhere else.
pub async fn serve_workspace(
    addr: SocketAddr,
    access: Access,
    workspace: &std::path::Path,
    runs: &[std::path::PathBuf],
    models: ragtester_stages::Models,
    ready: &(dyn Fn(&str) + Sync),
) -> Result<()> {
    if let Some(token) = &access.token {
        guard::check_token(token)?;
    }
    let workspace_state = Workspace::open(workspace, runs)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    // The cookie is named for the real port, known once bound.
    let guard = Guard::new(local, &access.allow_hosts, access.token)?;
    // The server's limits, read here once: its jobs' stages are handed them, never read them.
    let limits = ragtester_core::Limits::process();
    let state = AppState {
        workspace: workspace_state,
        jobs: Default::default(),
        limits,
        stages: Arc::new(Stages { models, limits }),
        runs: Default::default(),
        guard: Arc::new(guard),
    };
    tracing::info!("workspace: {}", workspace.display());
    // The address with its token goes to whoever started the server (the binary prints it): this crate
    // never prints.
    ready(&format!(
        "http://{local}/?token={}",
        state.guard.access_token()
    ));
    axum::serve(listener, router(Arc::new(state)))
        .await
        .context("the server stopped")
}
