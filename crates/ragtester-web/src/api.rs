//! The HTTP API under `/api`, and the embedded page.

use crate::AppState;
use crate::jobs::{DocgenForm, JudgeForm, RunForm, SuiteForm};
use crate::results::{Filter, RunIndex};
use anyhow::Context;
use axum::Json;
use axum::extract::{Multipart, Path as UrlPath, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use ragtester_stages::run_dir::{self, RunDir};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// An error as the UI shows it: a status and a sentence.
pub struct ApiError(StatusCode, String);

impl ApiError {
    fn bad(e: impl std::fmt::Display) -> Self {
        Self(StatusCode::BAD_REQUEST, e.to_string())
    }
    fn not_found(e: impl std::fmt::Display) -> Self {
        Self(StatusCode::NOT_FOUND, e.to_string())
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        Self(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}"))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let error = ragtester_core::secrets::redact(&self.1);
        (self.0, Json(json!({ "error": error }))).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;
type Shared = State<Arc<AppState>>;

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
                   frame-src 'self'; object-src 'none'; base-uri 'none'";

fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut r = ([(header::CONTENT_TYPE, kind)], body).into_response();
    r.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    r
}

/// The page, with this session's CSRF token in a `<meta>` for its script to send back (hex: nothing to escape).
pub async fn index(State(s): Shared) -> Response {
    let page = include_str!("../assets/index.html").replace("{{csrf}}", s.guard.csrf_token());
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page).into_response();
    let headers = r.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The CSRF token for clients other than the page (scripts, tests). Other sites cannot read it: the server
/// grants no CORS, and a rebound name fails the Host check.
pub async fn session(State(s): Shared) -> Json<Value> {
    Json(json!({ "csrf": s.guard.csrf_token() }))
}
pub async fn script() -> Response {
    asset(
        include_str!("../assets/app.js"),
        "text/javascript; charset=utf-8",
    )
}
pub async fn style() -> Response {
    asset(include_str!("../assets/app.css"), "text/css; charset=utf-8")
}

pub async fn workspace(State(s): Shared) -> ApiResult<Json<Value>> {
    let ws = &s.workspace;
    Ok(Json(json!({
        "documents": ws.documents()?,
        "suites": ws.suites()?,
        "runs": ws.runs()?,
        "opened": ws.opened_run(),
        "jobs": s.jobs.list(),
    })))
}

/// Multipart upload of documents (field name free). Each file is named by its last path component, checked;
/// refused ones are listed with the reason (a name the workspace has already, or uses itself), the others
/// saved. Each file streams to a hidden temporary file under the size limit and takes its name only once
/// the whole request has arrived, so a request cut off or over `request_mb` keeps nothing, and nothing
/// already there is replaced.
pub async fn upload(State(s): Shared, mut form: Multipart) -> ApiResult<Json<Value>> {
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    let too_large = |status: StatusCode, e: String| {
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            let why = format!("the request is larger ({e})");
            ApiError(
                status,
                ragtester_core::limits::exceeded("request_mb", s.limits.request_mb, &why),
            )
        } else {
            ApiError::bad(e)
        }
    };
    let multipart =
        |e: axum::extract::multipart::MultipartError| too_large(e.status(), e.body_text());
    let docs = s.workspace.docs_dir();
    while let Some(mut field) = form.next_field().await.map_err(multipart)? {
        let sent = field.file_name().unwrap_or_default().to_string();
        let name = crate::workspace::upload_name(&sent).and_then(|n| {
            s.workspace.check_new_document(&n)?;
            if accepted.iter().any(|(a, _)| *a == n) {
                anyhow::bail!("`{n}` comes twice in this upload");
            }
            Ok(n)
        });
        let name = match name {
            Ok(n) => n,
            Err(e) => {
                refused.push(json!({ "name": sent, "error": format!("{e:#}") }));
                continue;
            }
        };
        let file = ragtester_core::record::new_file_beside(&docs.join(&name))
            .with_context(|| format!("cannot write into {}", docs.display()))?;
        let Some(file) = stream_capped(&mut field, file, s.limits.file_bytes())
            .await
            .map_err(|e| match e {
                Streamed::Request(e) => multipart(e),
                Streamed::Disk(e) => {
                    ApiError::from(anyhow::Error::from(e).context("cannot store the upload"))
                }
            })?
        else {
            let error =
                ragtester_core::limits::exceeded("file_mb", s.limits.file_mb, "the file is larger");
            refused.push(json!({ "name": sent, "error": error }));
            continue;
        };
        accepted.push((name, file));
    }
    let mut saved = Vec::new();
    for (name, file) in accepted {
        match ragtester_core::record::persist_new(file, &docs.join(&name)) {
            Ok(()) => saved.push(name),
            // Taken while this request arrived (another upload, a job).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let error = crate::workspace::taken(&name);
                refused.push(json!({ "name": name, "error": error }));
            }
            Err(e) => {
                return Err(anyhow::Error::from(e)
                    .context("cannot store the upload")
                    .into());
            }
        }
    }
    Ok(Json(json!({ "saved": saved, "refused": refused })))
}

/// Why streaming an upload stopped: the request (cut off, over `request_mb`) or the disk.
enum Streamed {
    Request(axum::extract::multipart::MultipartError),
    Disk(std::io::Error),
}

/// A multipart field streamed into `file` chunk by chunk, never held whole; `None` once it passes `max`
/// bytes (the file is dropped, so removed, and the rest of the field skipped).
async fn stream_capped(
    field: &mut axum::extract::multipart::Field<'_>,
    mut file: tempfile::NamedTempFile,
    max: u64,
) -> Result<Option<tempfile::NamedTempFile>, Streamed> {
    use std::io::Write;
    let mut written = 0u64;
    while let Some(chunk) = field.chunk().await.map_err(Streamed::Request)? {
        written += chunk.len() as u64;
        if written > max {
            return Ok(None);
        }
        file.write_all(&chunk).map_err(Streamed::Disk)?;
    }
    Ok(Some(file))
}

/// The bundled samples, each under its own name; a name the workspace has already is kept as it is and
/// listed as skipped.
pub async fn samples(State(s): Shared) -> ApiResult<Json<Value>> {
    let (written, skipped) = s.stages.write_samples(&s.workspace.docs_dir())?;
    Ok(Json(json!({ "written": written, "skipped": skipped })))
}

fn started(id: usize) -> Json<Value> {
    Json(json!({ "job": id }))
}

fn claim(s: &AppState, target: &str) -> ApiResult<()> {
    if s.jobs.busy(target) {
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!("a job is writing `{target}` now"),
        ));
    }
    Ok(())
}

pub async fn docgen(State(s): Shared, Json(req): Json<DocgenForm>) -> ApiResult<Json<Value>> {
    if req.count == 0 || req.count > 200 {
        return Err(ApiError::bad("count must be between 1 and 200"));
    }
    let dir = s.workspace.docs_dir();
    let stages = s.stages.clone();
    let id = s.jobs.spawn("docgen", "docs", move |job| {
        Box::pin(async move { stages.generate_documents(&req, &dir, job).await })
    });
    Ok(started(id))
}

pub async fn suite(State(s): Shared, Json(req): Json<SuiteForm>) -> ApiResult<Json<Value>> {
    let out = s.workspace.suite_path(&req.name).map_err(ApiError::bad)?;
    claim(&s, &format!("suite:{}", req.name))?;
    // Suites are never overwritten, as runs are not.
    if std::fs::symlink_metadata(&out).is_ok() {
        return Err(ApiError(
            StatusCode::CONFLICT,
            format!(
                "a suite named `{}` exists already: choose another name",
                req.name
            ),
        ));
    }
    let docs = s
        .workspace
        .document_paths(&req.documents)
        .map_err(ApiError::bad)?;
    let earlier = match req.update.as_deref().filter(|n| !n.is_empty()) {
        None => None,
        Some(name) => {
            let path = s.workspace.suite_path(name).map_err(ApiError::bad)?;
            if !path.is_file() {
                return Err(ApiError::not_found(format!("no suite `{name}` to update")));
            }
            Some(path)
        }
    };
    if req.n_test == 0 || req.strategies.is_empty() {
        return Err(ApiError::bad(
            "choose at least one strategy and at least one test per document",
        ));
    }
    // The run needs exactly the documents the suite was written from.
    let names: Vec<String> = docs
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let docs_list = s
        .workspace
        .suite_docs_path(&req.name)
        .map_err(ApiError::bad)?;
    let stages = s.stages.clone();
    let target = format!("suite:{}", req.name);
    let id = s.jobs.spawn("suite", &target, move |job| {
        Box::pin(async move {
            let made = stages
                .generate_suite(&req, &docs, earlier, &out, job)
                .await?;
            ragtester_core::record::write_atomic(&docs_list, &serde_json::to_vec(&names)?)?;
            Ok(made)
        })
    });
    Ok(started(id))
}

pub async fn run(State(s): Shared, Json(req): Json<RunForm>) -> ApiResult<Json<Value>> {
    let suite = s.workspace.suite_path(&req.suite).map_err(ApiError::bad)?;
    if !suite.is_file() {
        return Err(ApiError::not_found(format!("no suite `{}`", req.suite)));
    }
    let names: Vec<String> = std::fs::read(s.workspace.suite_docs_path(&req.suite)?)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let docs = s.workspace.document_paths(&names).map_err(ApiError::bad)?;
    let target = format!("run:{}", req.name);
    claim(&s, &target)?;
    let run_dir = s.workspace.new_run_dir(&req.name).map_err(ApiError::bad)?;
    if req.retrievers.is_empty() || req.top_k.is_empty() || req.llms.is_empty() {
        return Err(ApiError::bad(
            "choose at least one retriever, one top-k and one model",
        ));
    }
    let stages = s.stages.clone();
    let id = s.jobs.spawn("run", &target, move |job| {
        Box::pin(async move { stages.run_matrix(&req, &docs, &suite, &run_dir, job).await })
    });
    Ok(started(id))
}

fn writable_run(s: &AppState, name: &str) -> ApiResult<PathBuf> {
    let (dir, writable) = s.workspace.run_dir(name).map_err(ApiError::not_found)?;
    if !writable {
        return Err(ApiError(
            StatusCode::FORBIDDEN,
            format!("`{name}` was opened with --run and is read-only here"),
        ));
    }
    claim(s, &format!("run:{name}"))?;
    Ok(dir)
}

pub async fn judge(State(s): Shared, Json(req): Json<JudgeForm>) -> ApiResult<Json<Value>> {
    let dir = writable_run(&s, &req.run)?;
    if req.judges.is_empty() {
        return Err(ApiError::bad("name at least one judge"));
    }
    let stages = s.stages.clone();
    let id = s
        .jobs
        .spawn("judge", &format!("run:{}", req.run), move |job| {
            Box::pin(async move { stages.judge(&req.judges, &dir, job).await })
        });
    Ok(started(id))
}

#[derive(Deserialize)]
pub struct RunName {
    run: String,
}

pub async fn audit_sample(State(s): Shared, Json(req): Json<RunName>) -> ApiResult<Json<Value>> {
    let dir = writable_run(&s, &req.run)?;
    let stages = s.stages.clone();
    let id = s
        .jobs
        .spawn("audit", &format!("run:{}", req.run), move |job| {
            Box::pin(async move { stages.audit_sample(&dir, job).await })
        });
    Ok(started(id))
}

#[derive(Deserialize)]
pub struct PairwiseRequest {
    run: String,
    a: String,
    b: String,
}

pub async fn pairwise(
    State(s): Shared,
    Json(req): Json<PairwiseRequest>,
) -> ApiResult<Json<Value>> {
    let dir = writable_run(&s, &req.run)?;
    let stages = s.stages.clone();
    let id = s
        .jobs
        .spawn("pairwise", &format!("run:{}", req.run), move |job| {
            Box::pin(async move { stages.pairwise(&dir, &req.a, &req.b, job).await })
        });
    Ok(started(id))
}

pub async fn audit_score(State(s): Shared, Json(req): Json<RunName>) -> ApiResult<Json<Value>> {
    let dir = writable_run(&s, &req.run)?;
    let stages = s.stages.clone();
    let id = s
        .jobs
        .spawn("audit", &format!("run:{}", req.run), move |job| {
            Box::pin(async move { stages.audit_score(&dir, job).await })
        });
    Ok(started(id))
}

pub async fn jobs(State(s): Shared) -> Json<Value> {
    Json(json!(s.jobs.list()))
}

pub async fn job(State(s): Shared, UrlPath(id): UrlPath<usize>) -> ApiResult<Json<Value>> {
    let job = s
        .jobs
        .get(id)
        .ok_or_else(|| ApiError::not_found(format!("no job {id}")))?;
    Ok(Json(json!(job)))
}

/// Stop a running job; 409 when it has already ended.
pub async fn cancel(State(s): Shared, UrlPath(id): UrlPath<usize>) -> ApiResult<Json<Value>> {
    match s.jobs.cancel(id) {
        None => Err(ApiError::not_found(format!("no job {id}"))),
        Some(false) => Err(ApiError(
            StatusCode::CONFLICT,
            format!("job {id} is not running"),
        )),
        Some(true) => Ok(Json(json!({ "cancelling": id }))),
    }
}

async fn index_of(s: &AppState, name: &str) -> ApiResult<Arc<RunIndex>> {
    let (dir, _) = s.workspace.run_dir(name).map_err(ApiError::not_found)?;
    s.runs.get(&dir).await.map_err(ApiError::from)
}

pub async fn run_overview(State(s): Shared, UrlPath(name): UrlPath<String>) -> ApiResult<Response> {
    let index = index_of(&s, &name).await?;
    let (_, writable) = s.workspace.run_dir(&name).map_err(ApiError::not_found)?;
    Ok(Json(json!({
        "name": name,
        "writable": writable,
        "cases": index.cases.len(),
        "configs": index.configs.len(),
        "answers": index.answers.len(),
        "summary": index.brief_summary(),
        "facets": index.facets(),
    }))
    .into_response())
}

pub async fn results(
    State(s): Shared,
    UrlPath(name): UrlPath<String>,
    Query(filter): Query<Filter>,
) -> ApiResult<Response> {
    let index = index_of(&s, &name).await?;
    let page = tokio::task::spawn_blocking(move || serde_json::to_vec(&index.page(&filter)))
        .await
        .map_err(|e| anyhow::anyhow!(e))?
        .map_err(anyhow::Error::from)?;
    Ok(([(header::CONTENT_TYPE, "application/json")], page).into_response())
}

pub async fn cell(
    State(s): Shared,
    UrlPath((name, case, config)): UrlPath<(String, String, String)>,
) -> ApiResult<Response> {
    let index = index_of(&s, &name).await?;
    let detail = index
        .detail(&case, &config)
        .ok_or_else(|| ApiError::not_found(format!("no cell {case} × {config} in `{name}`")))?;
    Ok(Json(json!(detail)).into_response())
}

/// How a run's report.html is served: as data, never as this UI's page. `sandbox` gives it an opaque
/// origin (no cookie, no same-origin request, no storage of this UI), and it may run no script at all — ours
/// has none — submit no form and load nothing but its own inline styles and images.
pub const REPORT_CSP: &str = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                              script-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/// The run's single-file report, as `ragtester report` wrote it (every model output escaped there) — or as
/// anyone wrote it, for a run directory from elsewhere: read up to `file_mb`, only from inside the run
/// directory, and served under [`REPORT_CSP`].
pub async fn report(State(s): Shared, UrlPath(name): UrlPath<String>) -> ApiResult<Response> {
    let (dir, _) = s.workspace.run_dir(&name).map_err(ApiError::not_found)?;
    let max = s.limits.file_bytes();
    let html = tokio::task::spawn_blocking(move || {
        crate::served::read_bounded(&dir, run_dir::REPORT_HTML, max, "file_mb")
    })
    .await
    .map_err(|e| anyhow::anyhow!(e))?
    .map_err(ApiError::bad)?
    .ok_or_else(|| ApiError::not_found(format!("`{name}` has no report yet: judge it first")))?;
    let mut r = ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let headers = r.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(REPORT_CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

#[derive(Deserialize)]
pub struct ComparePair {
    before: String,
    after: String,
}

pub async fn compare(State(s): Shared, Query(q): Query<ComparePair>) -> ApiResult<Json<Value>> {
    let (a, b) = (
        index_of(&s, &q.before).await?,
        index_of(&s, &q.after).await?,
    );
    if a.verdicts.is_empty() || b.verdicts.is_empty() {
        return Err(ApiError::bad("both runs must be judged to be compared"));
    }
    let diff = ragtester_report::diff_runs(
        ragtester_report::RunSide {
            cases: &a.cases,
            configs: &a.configs,
            verdicts: &a.verdicts,
        },
        ragtester_report::RunSide {
            cases: &b.cases,
            configs: &b.configs,
            verdicts: &b.verdicts,
        },
    );
    Ok(Json(json!(diff)))
}

fn run_path(s: &AppState, name: &str) -> ApiResult<PathBuf> {
    Ok(s.workspace.run_dir(name).map_err(ApiError::not_found)?.0)
}

pub async fn audit(State(s): Shared, UrlPath(name): UrlPath<String>) -> ApiResult<Json<Value>> {
    let dir = run_path(&s, &name)?;
    crate::served::check_run(&dir).map_err(ApiError::bad)?;
    let run = RunDir::new(&dir);
    let sheet = run.audit_sheet()?;
    let summary = run.audit()?;
    Ok(Json(json!({ "sheet": sheet, "summary": summary })))
}

#[derive(Deserialize)]
pub struct Label {
    label: Option<bool>,
}

pub async fn label(
    State(s): Shared,
    UrlPath((name, row)): UrlPath<(String, usize)>,
    Json(l): Json<Label>,
) -> ApiResult<Json<Value>> {
    let dir = writable_run(&s, &name)?;
    (RunDir::new(&dir).set_audit_label(row, l.label)).map_err(ApiError::bad)?;
    Ok(Json(json!({ "ok": true })))
}
