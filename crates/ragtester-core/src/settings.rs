//! The process's environment, read in one place. Every variable ragtester itself knows by name is read here,
//! checked, and handed to the libraries as a plain value: the binary reads it once at start (a bad value is an
//! error before any stage runs) and hands it to the model registry; no library reads it on its own.
//! Variables a user's configuration names (`api_key_env`, a target's `${VAR}` headers) are read through
//! [`variable`] when that configuration is used, so a key set after start is still seen.

use anyhow::{Result, anyhow};
use std::path::PathBuf;
use std::time::Duration;

/// What the environment says, every field already parsed.
#[derive(Debug, Clone)]
pub struct Environment {
    /// `RAGTESTER_HTTP_ATTEMPTS`: attempts per HTTP request (≥ 1).
    pub http_attempts: Option<u32>,
    /// `RAGTESTER_HTTP_TIMEOUT_S`: per-request timeout.
    pub http_timeout: Option<Duration>,
    /// `RAGTESTER_ANN_THRESHOLD`: chunks from which dense search uses the HNSW graph.
    pub ann_threshold: Option<usize>,
    /// `RAGTESTER_EMBED_WORKERS`: embedding batches run at once.
    pub embed_workers: Option<usize>,
    /// `RAGTESTER_CACHE_DIR`, else `$XDG_CACHE_HOME/ragtester`, else `~/.cache/ragtester`.
    pub cache_dir: PathBuf,
    pub hub: HubEnvironment,
    /// `OPENAI_BASE_URL`, OpenAI's own when unset.
    pub openai_base_url: String,
    /// `OPENAI_API_KEY` (unset or empty: none, as local servers want).
    pub openai_api_key: Option<String>,
    /// `OLLAMA_HOST`, Ollama's own default when unset (may omit the scheme).
    pub ollama_host: String,
    /// `RAGTESTER_TOKEN`: the web UI's access token (trimmed; unset or blank: none, and `serve` makes one).
    pub ui_token: Option<String>,
}

/// The Hugging Face hub as the environment sets it up.
#[derive(Debug, Clone)]
pub struct HubEnvironment {
    /// `HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub` (None with no home folder).
    pub cache: Option<PathBuf>,
    /// `HF_ENDPOINT`, the public hub when unset.
    pub endpoint: String,
    /// `HF_TOKEN`.
    pub token: Option<String>,
    /// `HF_HUB_OFFLINE`: never download.
    pub offline: bool,
}

impl Environment {
    /// Read and check every variable now.
    pub fn read() -> Result<Self> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let token = set("HF_TOKEN");
        if let Some(t) = &token {
            crate::secrets::remember(t);
        }
        let openai_api_key = set("OPENAI_API_KEY");
        if let Some(k) = &openai_api_key {
            crate::secrets::remember(k);
        }
        Ok(Self {
            http_attempts: parsed("RAGTESTER_HTTP_ATTEMPTS", "a whole number ≥ 1", |v| {
                v.parse::<u32>().ok().filter(|n| *n >= 1)
            })?,
            http_timeout: parsed("RAGTESTER_HTTP_TIMEOUT_S", "a positive number", |v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|s| s.is_finite() && *s > 0.0)
                    .map(Duration::from_secs_f64)
            })?,
            ann_threshold: parsed("RAGTESTER_ANN_THRESHOLD", "a whole number", |v| {
                v.parse().ok()
            })?,
            embed_workers: parsed("RAGTESTER_EMBED_WORKERS", "a whole number ≥ 1", |v| {
                v.parse::<usize>().ok().filter(|n| *n > 0)
            })?,
            cache_dir: os_path("RAGTESTER_CACHE_DIR")
                .or_else(|| os_path("XDG_CACHE_HOME").map(|d| d.join("ragtester")))
                .or_else(|| home.as_ref().map(|h| h.join(".cache/ragtester")))
                .unwrap_or_else(|| PathBuf::from(".ragtester-cache")),
            hub: HubEnvironment {
                cache: os_path("HF_HUB_CACHE")
                    .or_else(|| os_path("HF_HOME").map(|h| h.join("hub")))
                    .or_else(|| home.as_ref().map(|h| h.join(".cache/huggingface/hub"))),
                endpoint: set("HF_ENDPOINT").unwrap_or_else(|| "https://huggingface.co".into()),
                token,
                offline: set("HF_HUB_OFFLINE")
                    .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true")),
            },
            openai_base_url: set("OPENAI_BASE_URL")
                .unwrap_or_else(|| "https://api.openai.com/v1".into()),
            openai_api_key,
            ollama_host: set("OLLAMA_HOST").unwrap_or_else(|| "127.0.0.1:11434".into()),
            ui_token: set("RAGTESTER_TOKEN")
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty()),
        })
    }
}

/// A variable a user's configuration names (an API key's, a header template's `${VAR}`), read when used.
pub fn variable(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// A variable's value; unset and empty alike are none.
fn set(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn os_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn parsed<T>(name: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Option<T>> {
    match set(name) {
        None => Ok(None),
        Some(v) => parse(v.trim())
            .map(Some)
            .ok_or_else(|| anyhow!("{name} must be {what} (got `{v}`)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_that_does_not_parse_names_its_variable() {
        let err = parsed("RAGTESTER_TEST_SETTINGS_UNUSED", "x", |_| None::<u32>);
        assert!(err.unwrap().is_none(), "unset is none");
        let err = super::parsed::<u32>("PATH", "a whole number", |v| v.parse().ok()).unwrap_err();
        assert!(
            err.to_string().starts_with("PATH must be a whole number"),
            "{err}"
        );
    }
}
