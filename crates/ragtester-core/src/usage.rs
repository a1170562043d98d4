//! A mistake in what the user asked for — a flag's value, a name nothing answers to — as opposed to a
//! failure while doing it. Front ends tell the two apart by this type in an error's chain: the command
//! line exits 2 on it (a usage error, as clap's own), the Python module raises `ConfigError`.

/// What the user asked for cannot be done as asked; the message says what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Whether `error` is, somewhere in its chain, a usage error or a model spec that does not parse.
pub fn is_usage(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|e| e.is::<UsageError>() || e.is::<crate::spec::SpecError>())
}
