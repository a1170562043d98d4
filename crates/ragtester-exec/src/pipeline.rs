//! One built-in RAG pipeline per configuration. Chunks are built once per chunking setting, BM25 once per
//! chunking setting, dense indexes once per (chunking, embedder); configurations share them.

use anyhow::{Context, Result};
use ragtester_core::{ChatModel, Embedder, Reranker};
use ragtester_core::{Chunk, ChunkingSettings, Configuration, Document, RetrieverKind};
use ragtester_llm::RagTarget;
use ragtester_retrieve::{Bm25Index, DenseIndex, HybridRetriever, RerankedRetriever, Retriever};
use std::collections::HashMap;
use std::sync::Arc;

pub struct Pipeline {
    pub config: Configuration,
    pub system: System,
}

/// What answers the cases of one configuration.
pub enum System {
    /// The built-in RAG pipeline: retriever over chunks, then a chat model.
    BuiltIn {
        chunks: Arc<Vec<Chunk>>,
        retriever: Arc<dyn Retriever>,
        model: Arc<dyn ChatModel>,
    },
    /// The user's own RAG service; the documents let returned contexts be located for retrieval metrics.
    External {
        target: Arc<dyn RagTarget>,
        documents: Arc<Vec<Document>>,
        /// Set when the target's traces are received (`traces = true`).
        tracing: Option<Arc<crate::tracing::Tracing>>,
    },
}

/// Where pipelines get their models: the command's registry, with its caches, the role's sampling and
/// budget already applied. This crate never builds a model from a spec itself.
pub trait ModelSource {
    fn chat(&self, spec: &str) -> Result<Arc<dyn ChatModel>>;
    fn embedder(&self, spec: &str) -> Result<Arc<dyn Embedder>>;
    fn reranker(&self, spec: &str) -> Result<Arc<dyn Reranker>>;
    /// Exact or HNSW dense search, and where HNSW graphs of large corpora are kept between runs.
    fn ann_settings(&self) -> ragtester_retrieve::AnnSettings;
    /// The vector store dense retrieval reads and writes (`chroma:URL`); None keeps vectors in-process.
    fn vector_store(&self) -> Option<String> {
        None
    }
    /// Retries, timeout and reply limits for the clients built here (the user's own service, the vector
    /// store), as the front end read them.
    fn http(&self) -> ragtester_llm::HttpSettings;
}

/// Build every configuration's pipeline. Unknown specs fail here, before any cell runs.
pub fn build_pipelines(
    docs: &[Document],
    configs: &[Configuration],
    source: &dyn ModelSource,
    tracing: Option<Arc<crate::tracing::Tracing>>,
) -> Result<Vec<Arc<Pipeline>>> {
    let mut builder = Builder {
        docs,
        documents: Arc::new(docs.to_vec()),
        source,
        ann: source.ann_settings(),
        vector_store: source.vector_store(),
        chunk_sets: HashMap::new(),
        bm25: HashMap::new(),
        dense: HashMap::new(),
        models: HashMap::new(),
        rerankers: HashMap::new(),
        tracing,
    };
    configs
        .iter()
        .map(|config| {
            builder
                .pipeline(config)
                .with_context(|| format!("configuration {}", config.label()))
        })
        .collect()
}

/// Builds pipelines, sharing chunks, indexes and models between the configurations that share their
/// settings.
struct Builder<'a> {
    docs: &'a [Document],
    documents: Arc<Vec<Document>>,
    source: &'a dyn ModelSource,
    ann: ragtester_retrieve::AnnSettings,
    vector_store: Option<String>,
    chunk_sets: HashMap<ChunkingSettings, Arc<Vec<Chunk>>>,
    bm25: HashMap<ChunkingSettings, Arc<Bm25Index>>,
    dense: HashMap<(ChunkingSettings, String), Arc<dyn Retriever>>,
    models: HashMap<String, Arc<dyn ChatModel>>,
    rerankers: HashMap<String, Arc<dyn Reranker>>,
    tracing: Option<Arc<crate::tracing::Tracing>>,
}

/// The value under `key`, made once.
fn shared<K: std::hash::Hash + Eq + Clone, V: Clone>(
    map: &mut HashMap<K, V>,
    key: &K,
    make: impl FnOnce() -> Result<V>,
) -> Result<V> {
    if let Some(v) = map.get(key) {
        return Ok(v.clone());
    }
    let v = make()?;
    map.insert(key.clone(), v.clone());
    Ok(v)
}

impl Builder<'_> {
    fn pipeline(&mut self, config: &Configuration) -> Result<Arc<Pipeline>> {
        if let Some(target) = &config.target {
            return Ok(Arc::new(Pipeline {
                config: config.clone(),
                system: System::External {
                    target: ragtester_llm::target_for(target, &self.source.http())?,
                    documents: self.documents.clone(),
                    tracing: self.tracing.clone().filter(|_| target.traces),
                },
            }));
        }
        let chunks = self.chunks(&config.chunking)?;
        let retriever = self.retriever(config, &chunks)?;
        let source = self.source;
        let model = shared(&mut self.models, &config.llm, || source.chat(&config.llm))?;
        Ok(Arc::new(Pipeline {
            config: config.clone(),
            system: System::BuiltIn {
                chunks,
                retriever,
                model,
            },
        }))
    }

    fn chunks(&mut self, chunking: &ChunkingSettings) -> Result<Arc<Vec<Chunk>>> {
        let docs = self.docs;
        shared(&mut self.chunk_sets, chunking, || {
            let mut all = Vec::new();
            for d in docs {
                all.extend(
                    ragtester_ingest::chunk_document(d, chunking)
                        .with_context(|| format!("cannot chunk {}", d.source))?,
                );
            }
            Ok(Arc::new(all))
        })
    }

    fn retriever(
        &mut self,
        config: &Configuration,
        chunks: &Arc<Vec<Chunk>>,
    ) -> Result<Arc<dyn Retriever>> {
        let cache = self.ann.cache.clone();
        let keyword = shared(&mut self.bm25, &config.chunking, || {
            Ok(Arc::new(match &cache {
                Some(dir) => Bm25Index::build_cached(chunks, dir)?,
                None => Bm25Index::build(chunks)?,
            }))
        })?;
        let hybrid = |dense| HybridRetriever {
            keyword: keyword.clone(),
            dense,
            fusion: config.fusion,
        };
        Ok(match config.retriever {
            // Reference points take their passages from the case (run.rs), never from an index.
            RetrieverKind::Oracle | RetrieverKind::ClosedBook | RetrieverKind::FullDoc => {
                Arc::new(NotRetrieved)
            }
            RetrieverKind::Bm25 => keyword.clone(),
            RetrieverKind::Dense => self.dense(config, chunks)?,
            RetrieverKind::Hybrid => Arc::new(hybrid(self.dense(config, chunks)?)),
            RetrieverKind::HybridRerank => {
                let spec = config
                    .rerank
                    .as_ref()
                    .map_or("offline", |r| r.model.as_str());
                let source = self.source;
                let reranker = shared(&mut self.rerankers, &spec.to_string(), || {
                    source.reranker(spec)
                })?;
                Arc::new(RerankedRetriever {
                    inner: Arc::new(hybrid(self.dense(config, chunks)?)),
                    reranker,
                    chunks: chunks.clone(),
                    candidates: config.rerank.as_ref().map_or(20, |r| r.candidates),
                })
            }
            RetrieverKind::External => {
                unreachable!("external configurations are targets, built before any retriever")
            }
        })
    }

    /// The dense index of the configuration's chunking and embedder: in process, or in the vector store.
    fn dense(
        &mut self,
        config: &Configuration,
        chunks: &Arc<Vec<Chunk>>,
    ) -> Result<Arc<dyn Retriever>> {
        let key = (config.chunking.clone(), config.embedder.clone());
        let (source, ann, vector_store) = (self.source, &self.ann, &self.vector_store);
        shared(&mut self.dense, &key, || {
            let embedder = source.embedder(&config.embedder)?;
            Ok(match vector_store {
                Some(spec) => Arc::new(ragtester_chroma::ChromaStore::open(
                    spec,
                    chunks,
                    embedder,
                    &source.http(),
                )?) as Arc<dyn Retriever>,
                None => Arc::new(DenseIndex::build_with(chunks, embedder, ann)?),
            })
        })
    }
}

/// The retriever slot of a reference configuration (oracle passages, closed book): its passages come from
/// the case, so asking it is a bug, said as an error on the cell rather than a silent empty list.
struct NotRetrieved;

impl Retriever for NotRetrieved {
    fn retrieve(
        &self,
        _query: &str,
        _k: usize,
        _scope: ragtester_retrieve::Scope<'_>,
    ) -> Result<Vec<ragtester_retrieve::Hit>> {
        anyhow::bail!(
            "a reference configuration takes its passages from the case, not from an index"
        )
    }
}
