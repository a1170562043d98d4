//! Models behind the wire: OpenAI-compatible servers (`openai:MODEL`) and Ollama's native API
//! (`ollama:MODEL`) as chat models, embedders and rerankers, and the user's own RAG service as a target,
//! all over `ragtester-http`'s client. This crate is the only one that knows model providers' and RAG
//! targets' wire protocols; it knows nothing of test strategies, matrices or reports, of in-process models
//! (`ragtester-gguf`, `ragtester-bert`), of the offline heuristics (`ragtester-offline`), or of the caches,
//! budgets and pools models are wrapped in — which spec becomes which model, and how it is wrapped, is
//! `ragtester-models`' choice.

mod embedders;
pub mod endpoint;
pub mod functions;
pub mod ollama;
pub mod openai;
pub mod rag_target;
mod rerankers;
pub mod structured;

pub use embedders::HttpEmbedder;
pub use endpoint::ProviderEnv;
pub use ollama::OllamaChat;
pub use openai::OpenAiChat;
pub use rag_target::{RagTarget, TargetReply, TargetRequest, target_for};
pub use ragtester_http::HttpSettings;
pub use rerankers::{HttpReranker, LlmReranker};
