//! A loopback stand-in for the Hugging Face Hub's file endpoint: `GET /{org}/{name}/resolve/{rev}/{file}`
//! serves the files of one local folder with the headers hub clients rely on (`ETag`, `X-Repo-Commit`,
//! `Content-Range` for range requests), and 404 for anything else. Every request path is recorded.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::get;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The commit every file is served at.
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

struct Shared {
    repo: String,
    folder: PathBuf,
    seen: Mutex<Vec<String>>,
}

pub struct HubServer {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl HubServer {
    /// Serve `folder` as the model repository `repo` (`org/name`), on a runtime of its own thread.
    pub fn start(repo: &str, folder: PathBuf) -> Self {
        let shared = Arc::new(Shared {
            repo: repo.to_string(),
            folder,
            seen: Mutex::new(Vec::new()),
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let state = shared.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let app = Router::new()
                    .route("/{org}/{name}/resolve/{rev}/{*file}", get(file))
                    .with_state(state);
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind loopback");
                tx.send(listener.local_addr().expect("addr")).expect("send");
                let _ = axum::serve(listener, app).await;
            });
        });
        let addr = rx.recv().expect("hub started");
        Self { addr, shared }
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The files requested so far (`config.json`, …), one entry per request.
    pub fn seen(&self) -> Vec<String> {
        self.shared.seen.lock().unwrap().clone()
    }
}

async fn file(
    State(shared): State<Arc<Shared>>,
    Path((org, name, _rev, file)): Path<(String, String, String, String)>,
    headers: HeaderMap,
) -> Response {
    shared.seen.lock().unwrap().push(file.clone());
    let not_found = || {
        Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::from("Entry not found"))
            .expect("response")
    };
    if format!("{org}/{name}") != shared.repo || file.contains("..") {
        return not_found();
    }
    let Ok(bytes) = std::fs::read(shared.folder.join(&file)) else {
        return not_found();
    };
    let size = bytes.len();
    // `bytes=A-B` or `bytes=A-`: the part asked for, else the whole file.
    let range = headers
        .get("range")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes="))
        .and_then(|v| v.split_once('-'))
        .and_then(|(a, b)| {
            let start: usize = a.parse().ok()?;
            let end: usize = if b.is_empty() {
                size.saturating_sub(1)
            } else {
                b.parse().ok()?
            };
            (start < size).then_some((start, end.min(size - 1)))
        });
    let etag = format!(
        "\"{:x}-{size}\"",
        bytes
            .iter()
            .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(*b))
    );
    let builder = Response::builder()
        .header("etag", etag)
        .header("x-repo-commit", COMMIT);
    match range {
        Some((start, end)) => builder
            .status(StatusCode::PARTIAL_CONTENT)
            .header("content-range", format!("bytes {start}-{end}/{size}"))
            .body(Body::from(bytes[start..=end].to_vec())),
        None => builder.status(StatusCode::OK).body(Body::from(bytes)),
    }
    .expect("response")
}
