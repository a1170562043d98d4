//! The `ragtester` command line: the only crate that knows the terminal, argument parsing and exit codes.
//! Each command is a thin wrapper over the stages of `ragtester-stages`, whose events `render.rs` draws;
//! `exit.rs` names the exit codes. The binary (`main.rs`) and the Python module (`ragtester-python`,
//! whose `ragtester` console script and `ragtester.run(...)` calls go through [`execute`]) share it.

mod args;
mod cli;
pub mod exit;
mod render;
mod version;

use anyhow::Context;
use clap::Parser;

pub use args::Cli;

/// The log filter when neither `-v` nor `RAGTESTER_LOG` says otherwise: our own warnings (a field
/// ignored, a file readable by others) and nothing of the libraries — the document parsers log every odd
/// font or object they work around, even as errors, and what matters to a user is the per-file error they
/// end in, which ingest prints itself.
const QUIET: &str = "off,ragtester=warn";

/// The log filter, swapped once the command line is read (`-v`).
static LOG_FILTER: std::sync::OnceLock<
    tracing_subscriber::reload::Handle<tracing_subscriber::EnvFilter, tracing_subscriber::Registry>,
> = std::sync::OnceLock::new();

/// Logging to stderr through the redaction everything else this process prints goes through, with panic
/// messages redacted too. Safe to call more than once (a host process may call in many times).
pub fn init_process() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use std::io::IsTerminal;
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        let filter = tracing_subscriber::EnvFilter::try_from_env("RAGTESTER_LOG")
            .unwrap_or_else(|_| QUIET.into());
        let (filter, handle) = tracing_subscriber::reload::Layer::new(filter);
        let printed = tracing_subscriber::fmt::layer()
            // A line a person reads: no timestamp or module path, colour only on a terminal.
            .without_time()
            .with_target(false)
            .with_ansi(std::io::stderr().is_terminal())
            .with_writer(|| ragtester_core::secrets::Redacting(std::io::stderr()));
        if tracing_subscriber::registry()
            .with(filter)
            .with(printed)
            .try_init()
            .is_ok()
        {
            let _ = LOG_FILTER.set(handle);
        }
        std::panic::set_hook(Box::new(|info| {
            if QUIET_ON_CLOSED_STDOUT.load(std::sync::atomic::Ordering::Relaxed)
                && stdout_closed(info)
            {
                end_by_sigpipe();
            }
            eprintln!("{}", ragtester_core::secrets::panic_text(info));
        }));
    });
}

/// Set by the binary: a reader that stops early ends this process as it ends coreutils'.
static QUIET_ON_CLOSED_STDOUT: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// A reader that stops early (`ragtester generate … | head -2`) ends the command as it ends coreutils': by
/// SIGPIPE, quietly. SIGPIPE itself stays ignored (Rust's default), so that a command target that exits
/// without reading its input is that cell's error, not the end of the run; `print!` meets the closed
/// stdout as a panic, which the panic hook turns into the signal. Only the binary asks for it: a host
/// process (Python) keeps its own way with a closed stdout.
pub fn end_quietly_when_stdout_closes() {
    QUIET_ON_CLOSED_STDOUT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a panic is `print!`'s on a stdout whose reader has gone (EPIPE, os error 32).
fn stdout_closed(info: &std::panic::PanicHookInfo<'_>) -> bool {
    let payload = info.payload();
    let message = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or_default();
    message.starts_with("failed printing to stdout") && message.contains("(os error 32)")
}

/// Die of SIGPIPE with its default action, as a process that never ignored it would have.
#[cfg(unix)]
fn end_by_sigpipe() {
    // SAFETY: restoring a signal's default disposition and raising it are async-signal-safe and take no
    // pointers; the default action of SIGPIPE ends the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
}

#[cfg(not(unix))]
fn end_by_sigpipe() {
    std::process::exit(0);
}

/// `-v`: our own progress notes and the libraries' warnings; `-vv`: their notes and our details too.
/// `RAGTESTER_LOG`, where set, decides instead.
fn set_verbosity(level: u8) {
    if level == 0 || std::env::var_os("RAGTESTER_LOG").is_some() {
        return;
    }
    let filter = if level == 1 {
        "warn,ragtester=info"
    } else {
        "info,ragtester=debug"
    };
    if let Some(handle) = LOG_FILTER.get() {
        let _ = handle.reload(tracing_subscriber::EnvFilter::new(filter));
    }
}

/// What the arguments (without the program's name) ask for: a command to carry out, or text to print
/// and the exit code to end with (`--help`, `--version`, or a usage error, which exits 2).
pub enum Parsed {
    Command(Box<Cli>),
    Print { text: String, code: u8 },
}

pub fn parse(args: &[String]) -> Parsed {
    if version::asked(args) {
        return Parsed::Print {
            text: version::text(),
            code: 0,
        };
    }
    let argv = std::iter::once("ragtester".to_string()).chain(args.iter().cloned());
    match Cli::try_parse_from(argv) {
        Ok(cli) => Parsed::Command(Box::new(cli)),
        Err(e) => Parsed::Print {
            text: e.render().to_string(),
            code: e.exit_code().clamp(0, 255) as u8,
        },
    }
}

/// Carry out a parsed command on a runtime of its own: the environment read and checked first (a bad
/// value is a usage error, exit 2), then the command. The exit code, or the error that stopped it.
pub fn execute(cli: Cli) -> Result<u8, Failure> {
    execute_until(cli, std::future::pending::<()>())
}

/// [`execute`], stopped when `stop` resolves first: the command's future is dropped (a run's answers so
/// far are already committed to its store, so `--resume` continues it) and the runtime shut down,
/// waiting a moment for its blocking work.
pub fn execute_until(
    cli: Cli,
    stop: impl std::future::Future<Output = impl Sized>,
) -> Result<u8, Failure> {
    set_verbosity(cli.verbose);
    // Every variable ragtester knows by name, read and checked once: a bad value stops here, not mid-run.
    let environment =
        ragtester_core::settings::Environment::read().map_err(|e| Failure::Usage(e.to_string()))?;
    let runtime = tokio::runtime::Runtime::new()
        .context("cannot start the async runtime")
        .map_err(Failure::Error)?;
    let ran = runtime.block_on(async {
        tokio::select! {
            ran = cli::dispatch(cli, environment) => Some(ran),
            _ = stop => None,
        }
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(5));
    let Some(ran) = ran else {
        return Err(Failure::Interrupted);
    };
    ran.map_err(|e| {
        if ragtester_core::usage::is_usage(&e) {
            Failure::Usage(ragtester_core::secrets::error_text(&e))
        } else {
            Failure::Error(e)
        }
    })
}

/// Why a command produced nothing usable.
#[derive(Debug)]
pub enum Failure {
    /// The command line or the environment is wrong (exit 2).
    Usage(String),
    /// The command failed (exit 1).
    Error(anyhow::Error),
    /// The caller stopped the command (exit 130).
    Interrupted,
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Error(_) => 1,
            Failure::Interrupted => 130,
        }
    }

    /// The message a person reads, secrets redacted.
    pub fn message(&self) -> String {
        match self {
            Failure::Usage(text) => text.clone(),
            Failure::Error(e) => ragtester_core::secrets::error_text(e),
            Failure::Interrupted => "interrupted".into(),
        }
    }
}

/// The whole command line, as the binary runs it: the exit code.
pub fn main_with(args: &[String]) -> u8 {
    main_until(args, std::future::pending::<()>())
}

/// [`main_with`], the command stopped when `stop` resolves first (the Python console script's Ctrl-C):
/// what it printed so far stands, and the exit code is 130, as a shell reports an interrupted command.
pub fn main_until(args: &[String], stop: impl std::future::Future<Output = impl Sized>) -> u8 {
    init_process();
    match parse(args) {
        Parsed::Print { text, code } => {
            if code == 0 {
                print!("{text}");
            } else {
                eprint!("{text}");
            }
            code
        }
        Parsed::Command(cli) => match execute_until(*cli, stop) {
            Ok(code) => code,
            Err(Failure::Interrupted) => {
                eprintln!("interrupted: what was done is kept (a run continues with --resume)");
                130
            }
            Err(failure) => {
                eprintln!("error: {}", failure.message());
                failure.exit_code()
            }
        },
    }
}

/// The long flags `command` takes (a subcommand path such as `["run"]` or `["bench", "oracle"]`), the
/// global ones included: None for a command there is not. What the Python API checks its keyword
/// arguments against.
pub fn long_flags(command: &[&str]) -> Option<Vec<String>> {
    use clap::CommandFactory;
    let root = Cli::command();
    let mut flags: Vec<String> = root
        .get_arguments()
        .filter(|a| a.is_global_set())
        .filter_map(|a| a.get_long().map(str::to_string))
        .collect();
    let mut current = &root;
    for name in command {
        current = current.find_subcommand(name)?;
    }
    flags.extend(
        current
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string)),
    );
    Some(flags)
}
