//! The exceptions the Python API raises: `ragtester.Error` and one subclass for each kind of failure a
//! caller handles differently. Each carries the command line's own message.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _native,
    Error,
    PyException,
    "A ragtester command failed; the message is the command line's."
);
create_exception!(
    _native,
    ConfigError,
    Error,
    "An option, the project file or an environment variable is wrong (the command line's exit code 2)."
);
create_exception!(
    _native,
    InputError,
    Error,
    "A file or folder given could not be read, or holds nothing usable."
);
create_exception!(
    _native,
    ProviderError,
    Error,
    "A model provider or service failed after its retries."
);

pub fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ProviderError", py.get_type::<ProviderError>())?;
    Ok(())
}

pub fn usage(message: String) -> PyErr {
    ConfigError::new_err(message.trim_end().to_string())
}

pub fn error(message: String) -> PyErr {
    Error::new_err(message)
}

/// What went wrong, as the exception a caller catches: by the error types in the failure's chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Config,
    Input,
    Provider,
    Other,
}

pub fn kind(failure: &ragtester::Failure) -> Kind {
    let error = match failure {
        ragtester::Failure::Usage(_) => return Kind::Config,
        ragtester::Failure::Interrupted => return Kind::Other,
        ragtester::Failure::Error(error) => error,
    };
    let mut chain = error.chain();
    // A service's refusal, or a connection that failed through every retry.
    if chain
        .clone()
        .any(|e| e.is::<ragtester_http::StatusError>() || e.is::<reqwest::Error>())
    {
        return Kind::Provider;
    }
    if ragtester_core::usage::is_usage(error) || chain.clone().any(|e| e.is::<toml::de::Error>()) {
        return Kind::Config;
    }
    if chain.any(|e| e.is::<std::io::Error>()) {
        return Kind::Input;
    }
    Kind::Other
}

pub fn raised(failure: &ragtester::Failure) -> PyErr {
    let message = failure.message();
    match kind(failure) {
        Kind::Config => ConfigError::new_err(message),
        Kind::Input => InputError::new_err(message),
        Kind::Provider => ProviderError::new_err(message),
        Kind::Other => Error::new_err(message),
    }
}
