//! A Python callable as the system under test. The Python package wraps the user's function in a host
//! object (`ragtester._target.Host`) whose `submit(question, history_json, session, done)` starts one call —
//! a sync function on a worker thread of the host's pool, an async one on the host's event loop — and
//! returns at once; when the call ends the host calls `done(reply_json, None)` or `done(None, message)`.
//! The engine waits on that without holding the GIL, so as many calls run at once as the run's
//! concurrency lets in.

use anyhow::{Result, anyhow};
use pyo3::prelude::*;
use ragtester_core::config::TargetSettings;
use ragtester_llm::{RagTarget, TargetReply, TargetRequest};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::oneshot;

/// What one call of the function came to: its reply as JSON, or the message of what it raised.
type Outcome = std::result::Result<String, String>;

/// The callback a host calls once with a call's outcome.
#[pyclass(module = "ragtester._native")]
pub struct Done {
    sender: Mutex<Option<oneshot::Sender<Outcome>>>,
}

#[pymethods]
impl Done {
    #[pyo3(signature = (reply, error = None))]
    fn __call__(&self, reply: Option<String>, error: Option<String>) {
        let outcome = match (reply, error) {
            (_, Some(message)) => Err(message),
            (Some(reply), None) => Ok(reply),
            (None, None) => Err("the function's host gave neither a reply nor an error".into()),
        };
        let sender = self
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            // The run may have stopped waiting (Ctrl-C, a timeout): the outcome has nowhere to go.
            let _ = sender.send(outcome);
        }
    }
}

struct FunctionTarget {
    settings: TargetSettings,
    host: Arc<Py<PyAny>>,
}

/// Register `host` as the function target `name` until the returned guard is dropped.
pub fn register(name: &str, host: Py<PyAny>) -> PyResult<ragtester_llm::functions::Registered> {
    let timeout_s =
        Python::attach(|py| -> PyResult<f64> { host.bind(py).getattr("timeout_s")?.extract() })?;
    let target = FunctionTarget {
        settings: TargetSettings::function(name, timeout_s),
        host: Arc::new(host),
    };
    Ok(ragtester_llm::functions::register(name, Arc::new(target)))
}

#[async_trait::async_trait]
impl RagTarget for FunctionTarget {
    fn name(&self) -> String {
        self.settings.name.clone()
    }

    async fn ask(&self, request: &TargetRequest<'_>) -> Result<TargetReply> {
        let (sender, outcome) = oneshot::channel();
        let done = Done {
            sender: Mutex::new(Some(sender)),
        };
        // The turns before, as JSON chat messages (`[{"role", "content"}]`, oldest first).
        let history = serde_json::to_string(request.history)?;
        let call = (
            request.query.to_string(),
            history,
            request.session.map(str::to_string),
            done,
        );
        let host = self.host.clone();
        // Submitting takes the GIL, which a Python thread may hold for its switch interval: on a blocking
        // thread, never a runtime worker.
        tokio::task::spawn_blocking(move || {
            Python::attach(|py| {
                host.call_method1(py, "submit", call)
                    .map(drop)
                    .map_err(|e| anyhow!("the function could not be called: {e}"))
            })
        })
        .await??;
        let timeout = Duration::from_secs_f64(self.settings.timeout_s);
        let json = tokio::time::timeout(timeout, outcome)
            .await
            .map_err(|_| {
                anyhow!(
                    "the function did not return within {} s (timeout_s)",
                    self.settings.timeout_s
                )
            })?
            .map_err(|_| anyhow!("the function's call ended without an outcome"))?
            .map_err(|message| anyhow!(message))?;
        let reply: serde_json::Value = serde_json::from_str(&json)?;
        let mut read = ragtester_llm::rag_target::extract(&self.settings, &reply)?;
        // A function that does not report tool calls has not said it called none.
        if reply.get("tool_calls").is_none() {
            read.tool_calls = None;
        }
        Ok(read)
    }
}
