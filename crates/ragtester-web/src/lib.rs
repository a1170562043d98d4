//! `ragtester serve`: a local web UI over a workspace folder that drives all four stages — documents
//! (upload, bundled samples, generation), suites, matrix runs with live progress, judging — and browses the
//! results: filters and paging done on the server (smooth at 50,000 results), a case detail view, run
//! comparison and audit labelling. Page, script and style are embedded in the binary; the page builds every
//! element with text nodes, never HTML from data, and a Content-Security-Policy forbids inline script.
//!
//! This crate knows HTTP, the workspace layout and the records; its jobs call the stages of
//! `ragtester-stages` directly ([`Stages`]), with the pipeline's events on the job the page polls.
//!
//! # Map
//!
//! `ragtester serve`: an axum server over a workspace folder (`workspace.rs`: `docs/`, `suites/`, `runs/`,
//! names checked to one path component, plus read-only `--run` directories). Jobs (`jobs.rs`) run each on
//! their own thread and runtime and report stage, cells done and a log, which the page polls; `stages.rs`
//! carries each job out with the stages' request functions, the stages' events landing on the job (stage,
//! progress, and every error, warning and note, so a job shows why a document failed). `results.rs` loads a
//! run once (reloaded when its records change) into rows with filter fields precomputed, and filters, sorts
//! and pages them on the server; a cell's detail gathers case, configuration, answer and every verdict, and
//! for a turn its whole conversation as that configuration answered it. The audit CSV is labelled in place
//! through `RunDir::set_audit_label`. The page (`assets/`: HTML, CSS, vanilla JS) is embedded with
//! `include_str!` and builds every element from text nodes; a Content-Security-Policy forbids inline script.
//! `guard.rs` is the outermost layer: `Host` must name an address the server serves (DNS rebinding); the
//! access token is required on every address (a random one unless given by `RAGTESTER_TOKEN` or
//! `--token-file`; constant-time compare) as `?token=`, `Authorization: Bearer` or the session cookie — named
//! for the port, holding a per-start session secret rather than the token — and a browser's navigation with
//! `?token=` is redirected without it; every change needs a same-origin `Origin` (or none), the session's
//! CSRF token in `x-ragtester-csrf` (in the page's `<meta>`; `GET /api/session` for scripts) and a JSON or
//! multipart body — refusals are 403 with the reason, before any route runs. `served.rs` reads a run
//! directory as data: a run file that is a symbolic link out of the directory or not a regular file is
//! refused by name, and report.html is read up to `file_mb` and served under a CSP `sandbox` with `script-src
//! 'none'`. Uploads stream to hidden temporary files under `file_mb` per file and `request_mb` per request
//! and take their names (`ragtester_core::record::persist_new`, never replacing a file or writing through a
//! link) only once the whole request arrived; a name the workspace has, or uses itself (`docgen.json`), is
//! refused. The workspace is created private to its account.

mod api;
pub mod guard;
pub mod jobs;
pub mod results;
pub mod served;
mod stages;
pub mod workspace;

pub use guard::Guard;
pub use jobs::{DocgenForm, Job, JudgeForm, RunForm, SuiteForm};
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
    // The command's limits, as the registry was built under them: its jobs' stages are handed them.
    let limits = models.limits();
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
