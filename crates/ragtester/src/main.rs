//! The `ragtester` command line: the only crate that knows the terminal, argument parsing and exit codes.
//! Each command is a thin wrapper over the stages of `ragtester-stages`, whose events `render.rs` draws;
//! `exit.rs` names the exit codes.

mod args;
mod cli;
mod exit;
mod render;
mod version;

use anyhow::Context;
use clap::Parser;
use std::process::ExitCode;

/// Model inference allocates and frees large tensors on every operation; the system allocator hands them
/// back to the kernel each time and pays page faults to get them again. mimalloc keeps them: indexing Vaswani
/// with MiniLM took 254 s against 298 s, system time 29 s against 71 s (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RAGTESTER_LOG")
                // The document parsers warn about every odd font or object they work around; what matters to
                // a user is the per-file error they end in, which ingest prints itself.
                .unwrap_or_else(|_| "warn,pdf_oxide=error,office_oxide=error".into()),
        )
        .with_writer(|| ragtester_core::secrets::Redacting(std::io::stderr()))
        .init();
    redact_panics();
    let given: Vec<String> = std::env::args().skip(1).collect();
    if version::asked(&given) {
        print!("{}", version::text());
        return ExitCode::SUCCESS;
    }
    let cli = args::Cli::parse();
    // Every variable ragtester knows by name, read and checked once: a bad value stops here, not mid-run.
    let environment = match ragtester_core::settings::Environment::read() {
        Ok(environment) => environment,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let ran = tokio::runtime::Runtime::new()
        .context("cannot start the async runtime")
        .and_then(|runtime| runtime.block_on(cli::dispatch(cli, environment)));
    match ran {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", ragtester_core::secrets::error_text(&e));
            ExitCode::from(1)
        }
    }
}

/// Panic messages go through the same redaction as everything else this process prints.
fn redact_panics() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("{}", ragtester_core::secrets::panic_text(info));
    }));
}
