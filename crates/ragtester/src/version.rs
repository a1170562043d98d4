//! `ragtester --version --verbose`: the version, licence and what the binary carries (`ragtester_stages::about`).

/// Whether the arguments ask for the long version: `--version` (or `-V`) with `--verbose` (or `-v`) and
/// nothing else. clap answers a plain `--version` itself.
pub fn asked(args: &[String]) -> bool {
    let version = args.iter().any(|a| a == "--version" || a == "-V");
    let verbose = args.iter().any(|a| a == "--verbose" || a == "-v");
    let only_those = args
        .iter()
        .all(|a| matches!(a.as_str(), "--version" | "-V" | "--verbose" | "-v"));
    version && verbose && only_those
}

pub fn text() -> String {
    ragtester_stages::about::about(env!("CARGO_PKG_VERSION"), env!("CARGO_PKG_LICENSE"))
}
