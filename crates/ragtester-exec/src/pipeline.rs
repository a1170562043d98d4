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
}

/// Build every configuration's pipeline. Unknown specs fail here, before any cell runs.
pub fn build_pipelines(
    docs: &[Document],
    configs: &[Configuration],
    source: &dyn ModelSource,
) -> Result<Vec<Arc<Pipeline>>> {
    let ann = source.ann_settings();
    let mut chunk_sets: HashMap<ChunkingSettings, Arc<Vec<Chunk>>> = HashMap::new();
    let mut bm25: HashMap<ChunkingSettings, Arc<Bm25Index>> = HashMap::new();
    let mut dense: HashMap<(ChunkingSettings, String), Arc<dyn Retriever>> = HashMap::new();
    let vector_store = source.vector_store();
    let mut models: HashMap<String, Arc<dyn ChatModel>> = HashMap::new();
    let mut rerankers: HashMap<String, Arc<dyn Reranker>> = HashMap::new();
    let mut out = Vec::new();
    let documents = Arc::new(docs.to_vec());
    for config in configs {
        if let Some(target) = &config.target {
            let target = ragtester_llm::target_for(target)
                .with_context(|| format!("configuration {}", config.label()))?;
            out.push(Arc::new(Pipeline {
                config: config.clone(),
                system: System::External {
                    target,
                    documents: documents.clone(),
                },
            }));
            continue;
        }
        let chunks = match chunk_sets.get(&config.chunking) {
            Some(c) => c.clone(),
            None => {
                let mut all = Vec::new();
                for d in docs {
                    all.extend(
                        ragtester_ingest::chunk_document(d, &config.chunking)
                            .with_context(|| format!("cannot chunk {}", d.source))?,
                    );
                }
                let all = Arc::new(all);
                chunk_sets.insert(config.chunking.clone(), all.clone());
                all
            }
        };
        let keyword = match bm25.get(&config.chunking) {
            Some(i) => i.clone(),
            None => {
                let index = Arc::new(match &ann.cache {
                    Some(dir) => Bm25Index::build_cached(&chunks, dir)?,
                    None => Bm25Index::build(&chunks)?,
                });
                bm25.insert(config.chunking.clone(), index.clone());
                index
            }
        };
        let dense_index = if config.retriever.uses_dense() {
            let key = (config.chunking.clone(), config.embedder.clone());
            Some(match dense.get(&key) {
                Some(i) => i.clone(),
                None => {
                    let embedder = source
                        .embedder(&config.embedder)
                        .with_context(|| format!("configuration {}", config.label()))?;
                    let index: Arc<dyn Retriever> = match &vector_store {
                        Some(spec) => Arc::new(
                            ragtester_chroma::ChromaStore::open(spec, &chunks, embedder)
                                .with_context(|| format!("configuration {}", config.label()))?,
                        ),
                        None => Arc::new(DenseIndex::build_with(&chunks, embedder, &ann)?),
                    };
                    dense.insert(key, index.clone());
                    index
                }
            })
        } else {
            None
        };
        let retriever: Arc<dyn Retriever> = match (config.retriever, dense_index) {
            (RetrieverKind::Bm25, _) => keyword,
            (RetrieverKind::Dense, Some(d)) => d,
            (RetrieverKind::Hybrid, Some(d)) => Arc::new(HybridRetriever {
                keyword,
                dense: d,
                fusion: config.fusion,
            }),
            (RetrieverKind::HybridRerank, Some(d)) => Arc::new(RerankedRetriever {
                inner: Arc::new(HybridRetriever {
                    keyword,
                    dense: d,
                    fusion: config.fusion,
                }),
                reranker: {
                    let spec = config
                        .rerank
                        .as_ref()
                        .map_or("offline", |r| r.model.as_str());
                    match rerankers.get(spec) {
                        Some(r) => r.clone(),
                        None => {
                            let r = source
                                .reranker(spec)
                                .with_context(|| format!("configuration {}", config.label()))?;
                            rerankers.insert(spec.to_string(), r.clone());
                            r
                        }
                    }
                },
                chunks: chunks.clone(),
                candidates: config.rerank.as_ref().map_or(20, |r| r.candidates),
            }),
            (RetrieverKind::External, _) | (_, None) => {
                unreachable!(
                    "external configurations return above; dense modes always build a dense index"
                )
            }
        };
        let model = match models.get(&config.llm) {
            Some(m) => m.clone(),
            None => {
                let m = source
                    .chat(&config.llm)
                    .with_context(|| format!("configuration {}", config.label()))?;
                models.insert(config.llm.clone(), m.clone());
                m
            }
        };
        out.push(Arc::new(Pipeline {
            config: config.clone(),
            system: System::BuiltIn {
                chunks,
                retriever,
                model,
            },
        }));
    }
    Ok(out)
}
