//! Chat models by spec: the one place that knows which crate serves which spec.

use anyhow::{Result, bail};
use ragtester_core::{ChatModel, ModelSettings, ModelSpec};
use ragtester_llm::{OllamaChat, OpenAiChat, ProviderEnv};
use std::sync::Arc;

/// The chat model a spec names, with the config's provider settings for it (base URL, key variable,
/// rate limits) over the environment's defaults. Settings that only a server can use are refused for
/// in-process models.
pub(super) fn build_chat(
    spec: &str,
    settings: &ModelSettings,
    env: &ProviderEnv,
) -> Result<Arc<dyn ChatModel>> {
    let parsed = ModelSpec::parse(spec)?;
    let in_process = matches!(
        parsed,
        ModelSpec::Offline | ModelSpec::Local(_) | ModelSpec::Hf(_)
    );
    if in_process
        && (settings.base_url.is_some()
            || !settings.base_urls.is_empty()
            || settings.api_key_env.is_some())
    {
        bail!(
            "`{spec}` runs in-process: base_url, base_urls and api_key_env apply to openai: and ollama: models"
        );
    }
    if !settings.base_urls.is_empty() {
        return pool(spec, settings, env);
    }
    Ok(match parsed {
        ModelSpec::Offline => Arc::new(ragtester_offline::OfflineModel),
        ModelSpec::OpenAi(model) => Arc::new(OpenAiChat::configured(model, settings, env)?),
        ModelSpec::Ollama(model) => Arc::new(OllamaChat::configured(model, settings, env)?),
        ModelSpec::Local(path) => crate::local::gguf_chat(path.as_ref(), None)?,
        ModelSpec::Hf(rest) => {
            if !crate::local::BUILT_IN {
                bail!("chat model hf:{rest}: {}", crate::local::MISSING);
            }
            download_named_gguf(&rest, env)?;
            let file = crate::local::hf_gguf_resolve(&rest, env.environment.hub.cache.as_deref())?;
            crate::local::gguf_chat(&file, Some(format!("hf:{rest}")))?
        }
        ModelSpec::Hash => bail!(
            "`hash` is an embedder, not a chat model: use `offline` for the heuristic LLM roles"
        ),
        ModelSpec::Url(url) => bail!(
            "`{url}` is an endpoint URL: chat models are openai:MODEL (with OPENAI_BASE_URL) or ollama:MODEL"
        ),
    })
}

/// `hf:ORG/NAME/FILE.gguf` that the hub cache does not hold is downloaded into it first, as `hf:`
/// embedders and cross-encoders are; a spec that names no file must already be in the cache (which file
/// to fetch is the user's choice among a repository's quantisations).
fn download_named_gguf(rest: &str, env: &ProviderEnv) -> Result<()> {
    if let (repo, Some(file)) = crate::local::hf_gguf_split(rest) {
        let settings = crate::hub::HubSettings::from_environment(&env.environment);
        crate::hub::cached_or_downloaded_file(repo, file, &settings)?;
    }
    Ok(())
}

/// A serving pool: the same model at each of `base_urls`, each replica with a client (and limits) of its own.
fn pool(spec: &str, settings: &ModelSettings, env: &ProviderEnv) -> Result<Arc<dyn ChatModel>> {
    let replicas = settings
        .base_urls
        .iter()
        .map(|url| {
            let one = ModelSettings {
                base_url: Some(url.clone()),
                base_urls: Vec::new(),
                ..settings.clone()
            };
            Ok((url.clone(), build_chat(spec, &one, env)?))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(crate::PooledChat::new(
        spec.to_string(),
        replicas,
    )?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> ProviderEnv {
        ProviderEnv::new(ragtester_testkit::environment(), Default::default())
    }

    #[test]
    fn specs_resolve_or_explain() {
        let settings = ModelSettings::default();
        assert_eq!(
            build_chat("offline", &settings, &env()).unwrap().name(),
            "offline"
        );
        let err = build_chat("gpt4", &settings, &env())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("unknown model spec `gpt4`"), "{err}");
        assert!(build_chat("hash", &settings, &env()).is_err());
        let remote = ModelSettings {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            ..Default::default()
        };
        let err = build_chat("offline", &remote, &env())
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("runs in-process"), "{err}");
    }

    #[test]
    fn several_base_urls_make_a_serving_pool() {
        let replicas = ModelSettings {
            base_urls: vec![
                "http://127.0.0.1:9/v1".into(),
                "http://127.0.0.1:10/v1".into(),
            ],
            ..Default::default()
        };
        let pool = build_chat("openai:m", &replicas, &env()).unwrap();
        assert_eq!(pool.name(), "openai:m");
        assert!(
            pool.identity()
                .contains("pool[http://127.0.0.1:10/v1, http://127.0.0.1:9/v1]"),
            "{}",
            pool.identity()
        );
        let both = ModelSettings {
            base_url: Some("http://127.0.0.1:8/v1".into()),
            ..replicas.clone()
        };
        let err = both.validate("openai:m").unwrap_err().to_string();
        assert!(err.contains("not both"), "{err}");
        let bad = ModelSettings {
            base_urls: vec!["127.0.0.1:9".into()],
            ..Default::default()
        };
        assert!(bad.validate("openai:m").is_err());
        assert!(build_chat("offline", &replicas, &env()).is_err());
    }
}
