//! `ragtester._native`: the command line's library inside a Python process. The Python package
//! (`python/ragtester`) builds a command line from keyword arguments and calls [`call`], so every stage
//! runs through the code the `ragtester` command runs — there is no second implementation; the console
//! script `ragtester` calls [`main`]. A Python callable becomes a target of type `function`
//! (`target.rs`), registered for the length of one call.
//!
//! Must not know: any stage's internals (only the command line's arguments and exit codes), how the Python
//! package presents results (it reads the run directory the command wrote).

mod errors;
mod target;

use pyo3::prelude::*;
use std::sync::mpsc;
use std::time::Duration;

// No mimalloc here, unlike the binary: built into a shared object loaded by `dlopen`, its initial-exec
// thread-local storage does not fit the static TLS block ("cannot allocate memory in static TLS block"
// at import), and the interpreter's process keeps the system allocator.

/// The `ragtester` console script: the whole command line, its output on this process's stdout and
/// stderr, the exit code returned. Ctrl-C stops the command cleanly (a run's answers so far are kept for
/// `--resume`) and returns 130.
#[pyfunction]
fn main(py: Python<'_>, args: Vec<String>) -> PyResult<u8> {
    match interruptible(py, move |stop| ragtester::main_until(&args, stop)) {
        Ok(code) => Ok(code),
        // The command has stopped and said so; the shell's code for an interrupted command.
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => Ok(130),
        Err(other) => Err(other),
    }
}

/// One command for the Python API: `args` as the command line's (without the program's name), with each
/// `(name, host)` of `functions` callable as the function target `name` for the length of the call. The
/// exit code (0, or 3, 4 or 5: partial, gate missed, budget) is returned; a usage error or a failure is
/// raised as `ragtester.Error` (its subclass naming what went wrong), and Ctrl-C as KeyboardInterrupt once
/// the command has stopped.
#[pyfunction]
#[pyo3(signature = (args, functions = Vec::new()))]
fn call(py: Python<'_>, args: Vec<String>, functions: Vec<(String, Py<PyAny>)>) -> PyResult<u8> {
    ragtester::init_process();
    let cli = match ragtester::parse(&args) {
        ragtester::Parsed::Print { code: 0, .. } => return Ok(0),
        ragtester::Parsed::Print { text, .. } => return Err(errors::usage(text)),
        ragtester::Parsed::Command(cli) => cli,
    };
    let registered: Vec<_> = functions
        .into_iter()
        .map(|(name, host)| target::register(&name, host))
        .collect::<PyResult<_>>()?;
    let outcome = interruptible(py, move |stop| ragtester::execute_until(*cli, stop));
    drop(registered);
    outcome?.map_err(|failure| errors::raised(&failure))
}

/// The `[[target]]` table of a project file that makes the function registered as `name` the system under
/// test: the pointers its replies are read through (`python/ragtester/_target.py` writes them so).
#[pyfunction]
#[pyo3(signature = (name, timeout_s = 60.0))]
fn function_target(name: &str, timeout_s: f64) -> PyResult<String> {
    let settings = ragtester_core::config::TargetSettings::function(name, timeout_s);
    settings
        .validate()
        .map_err(|e| errors::usage(e.to_string()))?;
    let value = toml::Value::try_from(&settings).map_err(|e| errors::usage(e.to_string()))?;
    let mut project = toml::Table::new();
    project.insert("target".into(), toml::Value::Array(vec![value]));
    toml::to_string(&project).map_err(|e| errors::usage(e.to_string()))
}

/// Run `work` on a thread of its own while this thread, the GIL released, waits for it and checks for
/// signals every tenth of a second: Python's Ctrl-C handler only sets a flag that Python code must read.
/// On KeyboardInterrupt the work is told to stop and waited for, then the interrupt is raised.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce(tokio::sync::oneshot::Receiver<()>) -> T + Send + 'static,
) -> PyResult<T> {
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let (done, finished) = mpsc::channel();
    // Waited on with the GIL released, from whichever thread Python resumes this one on.
    let finished = std::sync::Mutex::new(finished);
    let worker = std::thread::Builder::new()
        .name("ragtester".into())
        .spawn(move || {
            let _ = done.send(work(stopped));
        })
        .map_err(|e| errors::error(format!("cannot start the command's thread: {e}")))?;
    let mut stop = Some(stop);
    let mut interrupt = None;
    loop {
        let waited = py.detach(|| {
            let finished = finished.lock().unwrap_or_else(|p| p.into_inner());
            finished.recv_timeout(Duration::from_millis(100))
        });
        match waited {
            Ok(value) => {
                let _ = worker.join();
                return match interrupt {
                    Some(e) => Err(e),
                    None => Ok(value),
                };
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = worker.join();
                return Err(interrupt.unwrap_or_else(|| {
                    errors::error("the command's thread ended without a result".into())
                }));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    if let Some(stop) = stop.take() {
                        let _ = stop.send(());
                    }
                    interrupt.get_or_insert(e);
                }
            }
        }
    }
}

/// The long flags a command takes (`["run"]`, `["bench", "oracle"]`), the global ones included; None for
/// a command there is not.
#[pyfunction]
fn flags(command: Vec<String>) -> Option<Vec<String>> {
    let command: Vec<&str> = command.iter().map(String::as_str).collect();
    ragtester::long_flags(&command)
}

/// Write the sample corpus the demo runs on (English and Chinese: Markdown, text, HTML and PDF) into
/// `dir`; its path.
#[pyfunction]
fn sample_corpus(dir: std::path::PathBuf) -> PyResult<std::path::PathBuf> {
    ragtester_stages::bundled::write_corpus(&dir)
        .map_err(|e| errors::raised(&ragtester::Failure::Error(e)))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(call, m)?)?;
    m.add_function(wrap_pyfunction!(function_target, m)?)?;
    m.add_function(wrap_pyfunction!(flags, m)?)?;
    m.add_function(wrap_pyfunction!(sample_corpus, m)?)?;
    m.add_class::<target::Done>()?;
    errors::add(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
