//! Models behind the wire: OpenAI-compatible servers (`openai:MODEL`) and Ollama's native API
//! (`ollama:MODEL`) as chat models, embedders and rerankers; the user's own RAG service as a target; and
//! the decorators every chat model of a command goes through (response cache, budget, per-role sampling).
//! This crate is the only one that knows wire protocols; it knows nothing of test strategies, matrices or
//! reports, of in-process models (`ragtester-gguf`) or of the offline heuristics (`ragtester-offline`).
//! Which spec becomes which model is the pipeline's model registry's choice.

mod blocking_bridge;
pub mod budget;
pub mod cache;
mod embedders;
pub mod endpoint;
pub mod http;
pub mod ollama;
pub mod openai;
pub mod pool;
pub mod rag_target;
mod rerankers;
pub mod role_tuning;
pub mod structured;

pub use blocking_bridge::Bridge;
pub use budget::{Budget, BudgetExhausted, BudgetLimits, Budgeted, Spent};
pub use cache::{CachedChat, cache_key};
pub use embedders::HttpEmbedder;
pub use ollama::OllamaChat;
pub use openai::OpenAiChat;
pub use pool::{PooledChat, ReplicaCalls};
pub use rag_target::{RagTarget, TargetReply, target_for};
pub use rerankers::{HttpReranker, LlmReranker};
pub use role_tuning::{RoleSettings, Tuned};
