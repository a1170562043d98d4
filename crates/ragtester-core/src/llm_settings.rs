//! Settings of the LLM calls, as the config file declares them: sampling per role (generator, system under
//! test, judge) and, per model spec, where the provider lives and how fast it may be called.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Sampling for one LLM role; `None` leaves the request (or the provider's default) alone.
///
/// In the config file: `[generation.sampling]`, `[run.sampling]` (the system under test) and
/// `[judge.sampling]`; the command-line flags `--temperature`, `--max-tokens`, `--llm-seed` override them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Upper bound on reply tokens, applied where the request names none or a larger one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Sampling seed, for providers that accept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Sampling {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// These settings where given, `fallback`'s elsewhere.
    pub fn or(self, fallback: Sampling) -> Sampling {
        Sampling {
            max_tokens: self.max_tokens.or(fallback.max_tokens),
            temperature: self.temperature.or(fallback.temperature),
            seed: self.seed.or(fallback.seed),
        }
    }

    pub fn validate(&self, role: &str) -> Result<()> {
        if let Some(t) = self.temperature
            && !(t.is_finite() && (0.0..=2.0).contains(&t))
        {
            bail!("{role}: temperature must be between 0 and 2 (got {t})");
        }
        if self.max_tokens == Some(0) {
            bail!("{role}: max_tokens must be at least 1");
        }
        Ok(())
    }
}

/// One model's provider settings: `[models."openai:gpt-4o-mini"]` in the config file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSettings {
    /// The server's base URL (`http://127.0.0.1:8000/v1`; for Ollama `http://host:11434`), instead of
    /// `OPENAI_BASE_URL` / `OLLAMA_HOST`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Several replicas serving this model (vLLM, TGI, llama.cpp servers): a serving pool, each call to the
    /// least-loaded healthy replica, rate limits per replica. Instead of `base_url`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub base_urls: Vec<String>,
    /// The environment variable holding this model's API key, instead of `OPENAI_API_KEY`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Requests per minute the provider allows this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_minute: Option<u32>,
    /// Tokens per minute (prompt plus the reply cap) the provider allows this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_minute: Option<u32>,
    /// Most requests in flight at once; halved on 429 and grown back on success from there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<usize>,
}

impl ModelSettings {
    /// These settings where given, `fallback`'s elsewhere.
    pub fn or(&self, fallback: &ModelSettings) -> ModelSettings {
        ModelSettings {
            base_url: self.base_url.clone().or_else(|| fallback.base_url.clone()),
            base_urls: if self.base_urls.is_empty() {
                fallback.base_urls.clone()
            } else {
                self.base_urls.clone()
            },
            api_key_env: self
                .api_key_env
                .clone()
                .or_else(|| fallback.api_key_env.clone()),
            requests_per_minute: self.requests_per_minute.or(fallback.requests_per_minute),
            tokens_per_minute: self.tokens_per_minute.or(fallback.tokens_per_minute),
            max_in_flight: self.max_in_flight.or(fallback.max_in_flight),
        }
    }

    pub fn validate(&self, model: &str) -> Result<()> {
        for url in self.base_url.iter().chain(&self.base_urls) {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                bail!(
                    "models.\"{model}\": base URLs must start with http:// or https:// (got `{url}`)"
                );
            }
        }
        if self.base_url.is_some() && !self.base_urls.is_empty() {
            bail!(
                "models.\"{model}\": give either base_url (one server) or base_urls (a pool of replicas), not both"
            );
        }
        if self.requests_per_minute == Some(0) || self.tokens_per_minute == Some(0) {
            bail!("models.\"{model}\": per-minute limits must be at least 1");
        }
        if self.max_in_flight == Some(0) {
            bail!("models.\"{model}\".max_in_flight must be at least 1");
        }
        Ok(())
    }
}

/// Provider settings by model spec.
pub type ModelTable = BTreeMap<String, ModelSettings>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_settings_win_over_fallbacks() {
        let flags = Sampling {
            temperature: Some(0.5),
            ..Default::default()
        };
        let role = Sampling {
            temperature: Some(0.0),
            seed: Some(7),
            max_tokens: None,
        };
        assert_eq!(
            flags.or(role),
            Sampling {
                temperature: Some(0.5),
                seed: Some(7),
                max_tokens: None
            }
        );
        assert!(
            Sampling {
                temperature: Some(3.0),
                ..Default::default()
            }
            .validate("judge")
            .is_err()
        );
        let model = ModelSettings {
            requests_per_minute: Some(60),
            ..Default::default()
        };
        let global = ModelSettings {
            requests_per_minute: Some(10),
            tokens_per_minute: Some(1000),
            ..Default::default()
        };
        let merged = model.or(&global);
        assert_eq!(merged.requests_per_minute, Some(60));
        assert_eq!(merged.tokens_per_minute, Some(1000));
        assert!(
            ModelSettings {
                base_url: Some("localhost:8000".into()),
                ..Default::default()
            }
            .validate("openai:x")
            .is_err()
        );
    }
}
