//! Downloading a model the local Hugging Face cache does not hold, through hf-hub, into that cache (the
//! layout other tools share: `models--ORG--NAME/{blobs,snapshots,refs}`), so the next run, and Python tools,
//! find it in place. `hf:` means this for every kind of model: for a BERT-family embedder or
//! cross-encoder only the files the loaders read are fetched (the configuration, the tokenizer, the
//! weights — safetensors, else the PyTorch file — and the sentence-transformers files that exist); for a
//! GGUF chat model, the one file the spec names.
//! `HF_ENDPOINT` names a mirror, `HF_TOKEN` authenticates, `HF_HUB_OFFLINE=1` never downloads.

use anyhow::{Context, Result, bail};
use hf_hub::api::sync::{ApiBuilder, ApiError};
use hf_hub::{Cache, Repo, RepoType};
use std::path::{Path, PathBuf};

const REQUIRED: [&str; 2] = ["config.json", "tokenizer.json"];
const WEIGHTS: [&str; 2] = ["model.safetensors", "pytorch_model.bin"];
const OPTIONAL: [&str; 4] = [
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
];

/// Where models are cached and fetched from.
#[derive(Debug, Clone)]
pub struct HubSettings {
    /// The hub cache folder (None when no home folder is known).
    pub cache: Option<PathBuf>,
    pub endpoint: String,
    pub token: Option<String>,
    /// Never download.
    pub offline: bool,
}

impl HubSettings {
    /// The hub as the environment sets it up (`HF_HUB_CACHE` / `HF_HOME` / `~/.cache`, `HF_ENDPOINT`,
    /// `HF_TOKEN`, `HF_HUB_OFFLINE`; read by core's settings layer, handed over by the front end).
    pub fn from_environment(env: &ragtester_core::settings::Environment) -> Self {
        let hub = env.hub.clone();
        Self {
            cache: hub.cache,
            endpoint: hub.endpoint,
            token: hub.token,
            offline: hub.offline,
        }
    }
}

/// The cache folder of `hf:ORG/NAME`, downloading the model first when the cache does not hold it.
pub fn locate(repo: &str, settings: &HubSettings) -> Result<PathBuf> {
    let where_ = "HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub";
    let hub = settings.cache.as_deref().with_context(|| {
        format!("hf:{repo}: no Hugging Face cache folder (set HF_HUB_CACHE or HOME)")
    })?;
    if let Some(folder) = ragtester_core::hf_cache::repo_folder_in(hub, repo) {
        return Ok(folder);
    }
    if settings.offline {
        bail!(
            "hf:{repo} is not in the Hugging Face cache ({where_}) and HF_HUB_OFFLINE is set: \
             download it there, or pass local:DIR"
        );
    }
    download(repo, &settings.endpoint, hub, settings.token.clone()).with_context(|| {
        format!(
            "hf:{repo} is not in the Hugging Face cache ({where_}) and could not be downloaded from {}; \
             download it there, or pass local:DIR",
            settings.endpoint
        )
    })
}

/// The cache path of one file of `repo` (a GGUF chat model), downloading it first when the cache does
/// not hold it.
pub fn cached_or_downloaded_file(
    repo: &str,
    file: &str,
    settings: &HubSettings,
) -> Result<PathBuf> {
    let where_ = "HF_HUB_CACHE, HF_HOME/hub or ~/.cache/huggingface/hub";
    let hub = settings.cache.as_deref().with_context(|| {
        format!("hf:{repo}: no Hugging Face cache folder (set HF_HUB_CACHE or HOME)")
    })?;
    let cached = ragtester_core::hf_cache::repo_folder_in(hub, repo)
        .and_then(|folder| {
            ragtester_core::hf_cache::snapshot_of(&folder)
                .ok()
                .flatten()
        })
        .map(|snapshot| snapshot.join(file))
        .filter(|path| path.is_file());
    if let Some(path) = cached {
        return Ok(path);
    }
    if settings.offline {
        bail!(
            "hf:{repo}/{file} is not in the Hugging Face cache ({where_}) and HF_HUB_OFFLINE is set"
        );
    }
    client(&settings.endpoint, hub, settings.token.clone())?
        .repo(Repo::new(repo.to_string(), RepoType::Model))
        .get(file)
        .with_context(|| {
            format!(
                "hf:{repo}/{file} is not in the Hugging Face cache ({where_}) and could not be downloaded \
                 from {}",
                settings.endpoint
            )
        })
}

fn client(endpoint: &str, hub: &Path, token: Option<String>) -> Result<hf_hub::api::sync::Api> {
    ApiBuilder::from_cache(Cache::new(hub.to_path_buf()))
        .with_endpoint(endpoint.to_string())
        .with_token(token)
        .with_progress(false)
        .build()
        .context("cannot set up the Hugging Face client")
}

/// Download the files of `repo` from `endpoint` into the hub cache folder `hub`; the repository folder.
pub fn download(repo: &str, endpoint: &str, hub: &Path, token: Option<String>) -> Result<PathBuf> {
    let api = client(endpoint, hub, token)?;
    let remote = api.repo(Repo::new(repo.to_string(), RepoType::Model));
    for file in REQUIRED {
        remote
            .get(file)
            .with_context(|| format!("cannot download {file}"))?;
    }
    let mut weights = Vec::new();
    for file in WEIGHTS {
        match remote.get(file) {
            Ok(_) => break,
            Err(e) if is_missing(&e) => weights.push(file),
            Err(e) => return Err(e).with_context(|| format!("cannot download {file}")),
        }
    }
    if weights.len() == WEIGHTS.len() {
        bail!("{repo} holds neither {} nor {}", WEIGHTS[0], WEIGHTS[1]);
    }
    for file in OPTIONAL {
        match remote.get(file) {
            Ok(_) => {}
            Err(e) if is_missing(&e) => {}
            Err(e) => return Err(e).with_context(|| format!("cannot download {file}")),
        }
    }
    ragtester_core::hf_cache::repo_folder_in(hub, repo)
        .with_context(|| format!("the download of {repo} left no folder in {}", hub.display()))
}

/// A 404: the repository has no such file (optional files often do not exist).
fn is_missing(e: &ApiError) -> bool {
    matches!(e, ApiError::RequestError(inner) if matches!(**inner, ureq::Error::Status(404, _)))
}
