//! Where a provider's model lives and how hard it may be pressed: the config file's `[models."SPEC"]`
//! settings over the environment (`OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OLLAMA_HOST`).

use anyhow::{Result, bail};
use ragtester_core::settings::Environment;
use ragtester_core::{Limits, ModelSettings};
use ragtester_http::{ClientLimits, HttpSettings, MAX_IN_FLIGHT, RateLimits};
use std::sync::Arc;

/// What every provider built from a spec is given besides its config entry, read once by the front end:
/// the environment's defaults (base URLs, keys, hosts, HTTP attempts and timeout) and the limits replies
/// are read under.
#[derive(Debug, Clone)]
pub struct ProviderEnv {
    pub environment: Arc<Environment>,
    pub http: HttpSettings,
    /// What each endpoint was learned to accept as structured output, shared by every client built here.
    pub structured: Arc<crate::structured::StructuredTable>,
}

impl ProviderEnv {
    pub fn new(environment: Arc<Environment>, replies: Limits) -> Self {
        let http = HttpSettings::new(&environment, replies);
        Self {
            environment,
            http,
            structured: Default::default(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Endpoint {
    /// Base URL without a trailing slash.
    pub base_url: String,
    pub api_key: Option<String>,
    pub limits: ClientLimits,
}

impl Endpoint {
    /// An OpenAI-compatible server: `base_url` else `OPENAI_BASE_URL` else OpenAI; the key from the
    /// variable `api_key_env` names, else `OPENAI_API_KEY` (unset or empty: none, as local servers want).
    pub fn openai(settings: &ModelSettings, env: &Environment) -> Result<Self> {
        let api_key = match &settings.api_key_env {
            Some(var) => match ragtester_core::settings::variable(var) {
                Some(key) if !key.is_empty() => Some(key),
                _ => bail!("api_key_env names `{var}`, which is not set in the environment"),
            },
            None => env.openai_api_key.clone(),
        };
        if let Some(key) = &api_key {
            ragtester_core::secrets::remember(key);
        }
        Ok(Self {
            base_url: settings
                .base_url
                .clone()
                .unwrap_or_else(|| env.openai_base_url.clone())
                .trim_end_matches('/')
                .to_string(),
            api_key,
            limits: limits(settings),
        })
    }

    /// An Ollama server: `base_url` else `OLLAMA_HOST` (which may omit the scheme) else Ollama's default.
    pub fn ollama(settings: &ModelSettings, env: &Environment) -> Result<Self> {
        if settings.api_key_env.is_some() {
            bail!(
                "Ollama takes no API key: remove api_key_env, or use openai:MODEL with Ollama's /v1"
            );
        }
        let host = match &settings.base_url {
            Some(url) => url.clone(),
            None => env.ollama_host.clone(),
        };
        Ok(Self {
            base_url: normalise_host(&host),
            api_key: None,
            limits: limits(settings),
        })
    }
}

fn limits(settings: &ModelSettings) -> ClientLimits {
    ClientLimits {
        max_in_flight: settings.max_in_flight.unwrap_or(MAX_IN_FLIGHT),
        rate: RateLimits {
            requests_per_minute: settings.requests_per_minute,
            tokens_per_minute: settings.tokens_per_minute,
        },
    }
}

pub fn normalise_host(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_gain_a_scheme() {
        assert_eq!(normalise_host("127.0.0.1:11434"), "http://127.0.0.1:11434");
        assert_eq!(normalise_host("https://x.example/"), "https://x.example");
    }

    /// An environment as a front end hands it over, with its own defaults.
    fn environment() -> Environment {
        let mut env = Environment::read().unwrap();
        env.openai_base_url = "http://127.0.0.1:8/v1".into();
        env.openai_api_key = Some("env-key".into());
        env.ollama_host = "127.0.0.1:11999".into();
        env
    }

    #[test]
    fn the_handed_environment_fills_what_the_config_leaves_out() {
        let env = environment();
        let e = Endpoint::openai(&ModelSettings::default(), &env).unwrap();
        assert_eq!(e.base_url, "http://127.0.0.1:8/v1");
        assert_eq!(e.api_key.as_deref(), Some("env-key"));
        let o = Endpoint::ollama(&ModelSettings::default(), &env).unwrap();
        assert_eq!(o.base_url, "http://127.0.0.1:11999");
    }

    #[test]
    fn settings_override_the_environment() {
        let env = environment();
        let settings = ModelSettings {
            base_url: Some("http://127.0.0.1:9/v1/".into()),
            requests_per_minute: Some(30),
            max_in_flight: Some(4),
            ..Default::default()
        };
        let e = Endpoint::openai(&settings, &env).unwrap();
        assert_eq!(e.base_url, "http://127.0.0.1:9/v1");
        assert_eq!(e.limits.max_in_flight, 4);
        assert_eq!(e.limits.rate.requests_per_minute, Some(30));
        let missing = ModelSettings {
            api_key_env: Some("RAGTESTER_TEST_KEY_THAT_IS_NEVER_SET".into()),
            ..Default::default()
        };
        let err = Endpoint::openai(&missing, &env).unwrap_err().to_string();
        assert!(
            err.contains("RAGTESTER_TEST_KEY_THAT_IS_NEVER_SET"),
            "{err}"
        );
        assert!(Endpoint::ollama(&missing, &env).is_err());
        let ollama = Endpoint::ollama(
            &ModelSettings {
                base_url: Some("http://127.0.0.1:11500".into()),
                ..Default::default()
            },
            &env,
        )
        .unwrap();
        assert_eq!(ollama.base_url, "http://127.0.0.1:11500");
    }
}
