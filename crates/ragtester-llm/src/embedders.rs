//! HTTP embedders: OpenAI-compatible `POST {base}/embeddings` and Ollama's `POST {host}/api/embed`, batched
//! and sent concurrently, with the shared client's retries. Replies are checked (count, dimension, finite
//! values) and vectors L2-normalised, so a bad server is an error, never a silently wrong index.

use crate::endpoint::{Endpoint, ProviderEnv, normalise_host};
use crate::openai::snippet;
use anyhow::{Result, anyhow, bail};
use ragtester_core::{EmbedKind, Embedder, ModelSettings};
use ragtester_http::Bridge;
use ragtester_http::{HttpClient, RetryPolicy};
use serde_json::{Value, json};
use std::sync::Arc;

/// Texts per request: OpenAI accepts up to 2,048 inputs, but smaller batches retry cheaper.
pub const EMBED_BATCH: usize = 64;

#[derive(Clone)]
enum Api {
    OpenAi { base: String, key: Option<String> },
    Ollama { host: String },
}

pub struct HttpEmbedder {
    api: Api,
    model: String,
    http: Arc<HttpClient>,
    bridge: Bridge,
    dimension: usize,
}

impl HttpEmbedder {
    /// `openai:MODEL`: the config's settings for it over `OPENAI_BASE_URL` / `OPENAI_API_KEY`.
    pub fn openai_configured(
        model: String,
        settings: &ModelSettings,
        env: &ProviderEnv,
    ) -> Result<Self> {
        let endpoint = Endpoint::openai(settings, &env.environment)?;
        let api = Api::OpenAi {
            base: endpoint.base_url,
            key: endpoint.api_key,
        };
        Self::connect(
            api,
            model,
            HttpClient::configured(&env.http, endpoint.limits)?,
        )
    }

    pub fn openai(
        model: String,
        base: &str,
        key: Option<String>,
        policy: RetryPolicy,
    ) -> Result<Self> {
        let api = Api::OpenAi {
            base: base.trim_end_matches('/').to_string(),
            key,
        };
        Self::connect(api, model, HttpClient::new(policy)?)
    }

    /// `ollama:MODEL`: the config's settings for it over `OLLAMA_HOST`.
    pub fn ollama_configured(
        model: String,
        settings: &ModelSettings,
        env: &ProviderEnv,
    ) -> Result<Self> {
        let endpoint = Endpoint::ollama(settings, &env.environment)?;
        let api = Api::Ollama {
            host: endpoint.base_url,
        };
        Self::connect(
            api,
            model,
            HttpClient::configured(&env.http, endpoint.limits)?,
        )
    }

    pub fn ollama(model: String, host: &str, policy: RetryPolicy) -> Result<Self> {
        let api = Api::Ollama {
            host: normalise_host(host),
        };
        Self::connect(api, model, HttpClient::new(policy)?)
    }

    /// Build and learn the model's dimension with one short request, so a wrong URL or model fails here,
    /// before any index is built.
    fn connect(api: Api, model: String, http: HttpClient) -> Result<Self> {
        let mut embedder = Self {
            api,
            model,
            http: Arc::new(http),
            bridge: Bridge::new("embedder")?,
            dimension: 0,
        };
        let probe = embedder.embed(&["dimension probe"], EmbedKind::Passage)?;
        embedder.dimension = probe[0].len();
        Ok(embedder)
    }

    fn url(&self) -> String {
        match &self.api {
            Api::OpenAi { base, .. } => format!("{base}/embeddings"),
            Api::Ollama { host } => format!("{host}/api/embed"),
        }
    }
}

impl Embedder for HttpEmbedder {
    fn id(&self) -> String {
        // The endpoint is part of the identity: two servers may serve different weights under one name.
        match &self.api {
            Api::OpenAi { base, .. } => format!("openai:{}@{base}", self.model),
            Api::Ollama { host } => format!("ollama:{}@{host}", self.model),
        }
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed(&self, texts: &[&str], _kind: EmbedKind) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let url = self.url();
        let batches: Vec<Vec<String>> = texts
            .chunks(EMBED_BATCH)
            .map(|b| b.iter().map(|t| t.to_string()).collect())
            .collect();
        let (api, model, http) = (self.api.clone(), self.model.clone(), self.http.clone());
        let replies = self.bridge.run(async move {
            let calls = batches.into_iter().map(|batch| {
                let (api, model, http, url) =
                    (api.clone(), model.clone(), http.clone(), url.clone());
                async move { request(&api, &model, &http, &url, batch).await }
            });
            futures::future::join_all(calls).await
        })?;
        let mut out = Vec::with_capacity(texts.len());
        for reply in replies {
            out.extend(reply?);
        }
        if self.dimension > 0
            && let Some(v) = out.iter().find(|v| v.len() != self.dimension)
        {
            bail!(
                "{}: returned a vector of dimension {} (expected {})",
                self.url(),
                v.len(),
                self.dimension
            );
        }
        Ok(out)
    }
}

async fn request(
    api: &Api,
    model: &str,
    http: &HttpClient,
    url: &str,
    batch: Vec<String>,
) -> Result<Vec<Vec<f32>>> {
    let expected = batch.len();
    let (reply, bearer) = match api {
        Api::OpenAi { key, .. } => (json!({ "model": model, "input": batch }), key.as_deref()),
        Api::Ollama { .. } => (json!({ "model": model, "input": batch }), None),
    };
    let reply = http.post_json(url, bearer, &reply).await?;
    let vectors = match api {
        Api::OpenAi { .. } => openai_vectors(&reply),
        Api::Ollama { .. } => ollama_vectors(&reply),
    }
    .map_err(|e| anyhow!("{url}: {e}: {}", snippet(&reply)))?;
    if vectors.len() != expected {
        bail!(
            "{url}: {} vectors for {expected} inputs: {}",
            vectors.len(),
            snippet(&reply)
        );
    }
    vectors.into_iter().map(normalised).collect()
}

/// `{"data": [{"index": i, "embedding": [...]}, ...]}`, put back in input order by `index`.
fn openai_vectors(reply: &Value) -> Result<Vec<Vec<f32>>> {
    let data = reply["data"]
        .as_array()
        .ok_or_else(|| anyhow!("reply has no data array"))?;
    let mut indexed = Vec::with_capacity(data.len());
    for (position, item) in data.iter().enumerate() {
        let index = item["index"].as_u64().map_or(position, |i| i as usize);
        indexed.push((index, floats(&item["embedding"])?));
    }
    indexed.sort_by_key(|(i, _)| *i);
    Ok(indexed.into_iter().map(|(_, v)| v).collect())
}

/// `{"embeddings": [[...], ...]}`.
fn ollama_vectors(reply: &Value) -> Result<Vec<Vec<f32>>> {
    reply["embeddings"]
        .as_array()
        .ok_or_else(|| anyhow!("reply has no embeddings array"))?
        .iter()
        .map(floats)
        .collect()
}

fn floats(v: &Value) -> Result<Vec<f32>> {
    v.as_array()
        .ok_or_else(|| anyhow!("an embedding is not an array of numbers"))?
        .iter()
        .map(|x| {
            x.as_f64()
                .map(|f| f as f32)
                .ok_or_else(|| anyhow!("an embedding holds a non-number"))
        })
        .collect()
}

fn normalised(mut v: Vec<f32>) -> Result<Vec<f32>> {
    if v.is_empty() {
        bail!("an embedding is empty");
    }
    if v.iter().any(|x| !x.is_finite()) {
        bail!("an embedding holds NaN or infinity");
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_replies_are_reordered_by_index() {
        let reply = json!({"data": [
            {"index": 1, "embedding": [0.0, 2.0]},
            {"index": 0, "embedding": [3.0, 4.0]}
        ]});
        let v = openai_vectors(&reply).unwrap();
        assert_eq!(v, vec![vec![3.0, 4.0], vec![0.0, 2.0]]);
        assert_eq!(normalised(v[0].clone()).unwrap(), vec![0.6, 0.8]);
        assert!(normalised(vec![f32::NAN]).is_err());
        assert!(ollama_vectors(&json!({"embeddings": [[1, "x"]]})).is_err());
    }
}
