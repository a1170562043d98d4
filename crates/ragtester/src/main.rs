//! The `ragtester` binary: the command line of the library beside it (`lib.rs`).

use std::process::ExitCode;

/// Model inference allocates and frees large tensors on every operation; the system allocator hands them
/// back to the kernel each time and pays page faults to get them again. mimalloc keeps them: indexing Vaswani
/// with MiniLM took 254 s against 298 s, system time 29 s against 71 s (docs/benchmarks.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    ragtester::end_quietly_when_stdout_closes();
    let given: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(ragtester::main_with(&given))
}
