//! Chroma as the vector store of dense retrieval (the RAG-Tester paper runs its configurations over Chroma):
//! passages embedded by our embedders are upserted into a Chroma collection over its HTTP API (v2), and
//! queries are answered by Chroma's index, with the paper's per-document scope and the hidden poisoned
//! copies expressed as metadata filters.
//!
//! A collection is named from the embedder and the chunks (ids, documents, texts), so the same corpus, cut
//! the same way and embedded by the same model, reuses its collection on the next run, and anything else
//! gets a collection of its own. Distances are cosine (`hnsw:space`), so scores are the in-process dense
//! retriever's cosine similarities.
//!
//! Must not know: cases, answers, judges. Knows chunks, an embedder and Chroma's wire format.

use anyhow::{Context, Result, bail};
use ragtester_core::{Chunk, EmbedKind, Embedder};
use ragtester_http::Bridge;
use ragtester_http::{HttpClient, HttpSettings};
use ragtester_retrieve::{Hit, Retriever, Scope};
use serde_json::{Value, json};
use std::sync::Arc;

/// Chroma's defaults for a server started with `chroma run`.
const TENANT: &str = "default_tenant";
const DATABASE: &str = "default_database";
/// Passages embedded and upserted per request.
const UPSERT_BATCH: usize = 256;

pub struct ChromaStore {
    http: Arc<HttpClient>,
    bridge: Bridge,
    /// `…/collections/{id}`.
    endpoint: String,
    name: String,
    embedder: Arc<dyn Embedder>,
    count: usize,
    /// Whether the collection already held every chunk (nothing was embedded or sent).
    reused: bool,
}

/// `chroma:http://host:port` → `http://host:port`.
pub fn server_of(spec: &str) -> Result<String> {
    let Some(url) = spec.strip_prefix("chroma:") else {
        bail!("unknown vector store `{spec}`: expected chroma:http://HOST:PORT");
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        bail!("vector store `{spec}`: the Chroma server's URL must start with http:// or https://");
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// The collection a corpus cut one way and embedded by one model lives in.
pub fn collection_name(chunks: &[Chunk], embedder: &dyn Embedder) -> String {
    let digest = ragtester_core::ids::stable_id(
        "chroma-collection",
        &(
            embedder.id(),
            chunks
                .iter()
                .map(|c| (&c.id, &c.document_id))
                .collect::<Vec<_>>(),
        ),
    );
    format!("ragtester-{digest}")
}

impl ChromaStore {
    /// Open the collection for these chunks on the server `spec` names (`chroma:URL`), creating and filling
    /// it when it does not hold them all; its requests retried and its replies read under `http`.
    pub fn open(
        spec: &str,
        chunks: &[Chunk],
        embedder: Arc<dyn Embedder>,
        http: &HttpSettings,
    ) -> Result<Self> {
        let server = server_of(spec)?;
        let http = Arc::new(HttpClient::configured(http, Default::default())?);
        let bridge = Bridge::new("chroma")?;
        let name = collection_name(chunks, embedder.as_ref());
        let collections =
            format!("{server}/api/v2/tenants/{TENANT}/databases/{DATABASE}/collections");
        let body = json!({
            "name": name,
            "metadata": {
                "hnsw:space": "cosine",
                "embedder": embedder.id(),
                "chunks": chunks.len(),
                "created_by": "ragtester",
            },
            "get_or_create": true,
        });
        let created = {
            let (http, url) = (http.clone(), collections.clone());
            bridge
                .run(async move { http.post_json(&url, None, &body).await })?
                .with_context(|| {
                    format!("cannot open collection {name} on the Chroma server at {server}")
                })?
        };
        let id = created["id"]
            .as_str()
            .with_context(|| format!("Chroma answered without a collection id: {created}"))?;
        let mut store = Self {
            endpoint: format!("{collections}/{id}"),
            http,
            bridge,
            name,
            embedder,
            count: 0,
            reused: false,
        };
        let held = store.held()?;
        if held == chunks.len() {
            store.reused = true;
        } else {
            tracing::info!(
                "Chroma collection {} holds {held} of {} chunks: embedding and upserting them",
                store.name,
                chunks.len()
            );
            store.fill(chunks)?;
        }
        store.count = chunks.len();
        Ok(store)
    }

    /// The collection's name (`ragtester-` and the hash of embedder and chunks).
    pub fn collection(&self) -> &str {
        &self.name
    }

    /// Whether opening found every chunk already there.
    pub fn reused(&self) -> bool {
        self.reused
    }

    fn held(&self) -> Result<usize> {
        let (http, url) = (self.http.clone(), format!("{}/count", self.endpoint));
        let reply = self
            .bridge
            .run(async move { http.send_json(reqwest::Method::GET, &url, &[], None).await })??;
        reply
            .as_u64()
            .map(|n| n as usize)
            .with_context(|| format!("Chroma's count is not a number: {reply}"))
    }

    /// Embed and upsert every chunk (ids are the chunks' positions; upserting is idempotent, so a fill a
    /// killed run left half done is completed, not duplicated).
    fn fill(&self, chunks: &[Chunk]) -> Result<()> {
        for (n, batch) in chunks.chunks(UPSERT_BATCH).enumerate() {
            let texts: Vec<&str> = batch.iter().map(|c| c.text.as_str()).collect();
            let vectors = self.embedder.embed(&texts, EmbedKind::Passage)?;
            let first = n * UPSERT_BATCH;
            let body = json!({
                "ids": (first..first + batch.len()).map(|i| i.to_string()).collect::<Vec<_>>(),
                "embeddings": vectors,
                "metadatas": batch.iter().map(|c| json!({"document": c.document_id})).collect::<Vec<_>>(),
            });
            let (http, url) = (self.http.clone(), format!("{}/upsert", self.endpoint));
            self.bridge
                .run(async move { http.post_json(&url, None, &body).await })?
                .with_context(|| format!("cannot upsert into Chroma collection {}", self.name))?;
        }
        Ok(())
    }
}

/// The scope as a Chroma `where` filter: only some documents, or all but the hidden ones.
fn filter(scope: Scope<'_>) -> Value {
    if !scope.documents.is_empty() {
        json!({"document": {"$in": scope.documents}})
    } else if !scope.hidden.is_empty() {
        json!({"document": {"$nin": scope.hidden}})
    } else {
        Value::Null
    }
}

impl Retriever for ChromaStore {
    fn retrieve(&self, query: &str, k: usize, scope: Scope<'_>) -> Result<Vec<Hit>> {
        if query.trim().is_empty() || k == 0 || self.count == 0 {
            return Ok(Vec::new());
        }
        let vector = self
            .embedder
            .embed(&[query], EmbedKind::Query)?
            .pop()
            .context("the embedder returned no vector for the query")?;
        let mut body = json!({
            "query_embeddings": [vector],
            "n_results": k.min(self.count),
            "include": ["distances"],
        });
        let filter = filter(scope);
        if !filter.is_null() {
            body["where"] = filter;
        }
        let (http, url) = (self.http.clone(), format!("{}/query", self.endpoint));
        let reply = self
            .bridge
            .run(async move { http.post_json(&url, None, &body).await })?
            .with_context(|| format!("Chroma query on {} failed", self.name))?;
        let ids = reply["ids"][0]
            .as_array()
            .with_context(|| format!("Chroma's query reply has no ids: {reply}"))?;
        let distances = reply["distances"][0]
            .as_array()
            .with_context(|| format!("Chroma's query reply has no distances: {reply}"))?;
        ids.iter()
            .zip(distances)
            .map(|(id, d)| {
                let chunk = id
                    .as_str()
                    .and_then(|s| s.parse::<usize>().ok())
                    .with_context(|| {
                        format!("Chroma returned an id ragtester did not write: {id}")
                    })?;
                let distance = d
                    .as_f64()
                    .context("Chroma returned a distance that is not a number")?;
                // Cosine distance back to the cosine similarity the in-process index scores with.
                Ok(Hit {
                    chunk,
                    score: 1.0 - distance,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_and_filters() {
        assert_eq!(
            server_of("chroma:http://127.0.0.1:8000/").unwrap(),
            "http://127.0.0.1:8000"
        );
        assert!(server_of("qdrant:http://x").is_err());
        assert!(server_of("chroma:127.0.0.1:8000").is_err());
        let docs = vec!["a".to_string()];
        assert_eq!(
            filter(Scope::only(&docs)),
            json!({"document": {"$in": ["a"]}})
        );
        let hidden = Scope {
            documents: &[],
            hidden: &docs,
        };
        assert_eq!(filter(hidden), json!({"document": {"$nin": ["a"]}}));
        assert_eq!(filter(Scope::ALL), Value::Null);
    }
}
