//! The `ragtester` binary: the command line of the library beside it (`lib.rs`).

use std::process::ExitCode;

/// Model inference allocates and frees large tensors on every operation; the system allocator hands them
/// back to the kernel each time and pays page faults to get them again. mimalloc keeps them: indexing Vaswani
/// with MiniLM took 254 s against 298 s, system time 29 s against 71 s (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let given: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(ragtester::main_with(&given))
}

/// A reader that stops early (`ragtester generate … | head -2`) ends this process as it ends coreutils':
/// by SIGPIPE, quietly. Rust's runtime ignores SIGPIPE, which turns the next write into an error that
/// `print!` answers with a panic and an abort.
#[cfg(unix)]
fn quiet_on_closed_pipe() {
    // SAFETY: the first thing `main` does, before any thread exists; SIG_DFL is always a valid disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn quiet_on_closed_pipe() {}
