//! The model registry of one command: chat models, embedders and rerankers by spec, and the only place
//! a spec becomes a model. Each spec is built once with the config's provider settings (base URL, key
//! variable, rate limits) — a local model's weights load a single time however many roles, configurations
//! and web jobs use it — behind the persistent caches unless they are switched off (the response cache
//! for chat replies, the vector cache for embeddings). Each chat role then gets its own view: its sampling
//! settings (command-line flags over the config's `[ROLE.sampling]`) and, for the system under test, the
//! run's budget and whether cached answers are replayed (only when asked: `--replay-answers`).
//!
//! `hf:ORG/NAME` means the same for every kind: a model repository on the Hugging Face hub, downloaded
//! once into the hub cache (`HF_HOME`) — a GGUF file for a chat model, a BERT-family folder for an
//! embedder or a cross-encoder.

mod budget;
mod cache;
mod chat;
pub mod hub;
pub mod local;
mod pool;
mod retrieval;
mod role_tuning;
mod vector_cache;

pub use budget::{Budget, BudgetExhausted, BudgetLimits, Budgeted, Spent};
pub use cache::{CachedChat, cache_key};
pub use pool::{PooledChat, ReplicaCalls};
pub use retrieval::{embedder_for, model_folder_of, reranker_for};
pub use role_tuning::{RoleSettings, Tuned};
pub use vector_cache::CachedEmbedder;

use anyhow::Result;
use ragtester_core::{ChatModel, Embedder, ModelSettings, ModelTable, Reranker, Sampling};
use ragtester_llm::ProviderEnv;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The registry of one command, or one web job: built once, then only read. A project's `[models]` table
/// is laid over it by [`Models::with_table`], a view that shares every model already built (weights load
/// once) but builds and configures by its own table.
#[derive(Clone)]
pub struct Models {
    shared: Arc<Registry>,
    /// The project's `[models]` table: provider settings per spec.
    table: Arc<ModelTable>,
}

/// What every view of one registry shares: the caches, the flags, and the models built so far.
struct Registry {
    cache: Option<Arc<ragtester_store::ResponseStore>>,
    /// What the front end read of the environment (caches, dense search, providers' defaults) and the
    /// limits every provider reads replies under.
    env: ProviderEnv,
    refresh: bool,
    /// `--temperature`, `--max-tokens`, `--llm-seed`: over every role's own settings.
    flags: Sampling,
    /// `--requests-per-minute`, `--tokens-per-minute`: for every model the config does not limit itself.
    fallback: ModelSettings,
    /// Built models by spec and the provider settings they were built with, so two views that configure
    /// one spec differently never share a model built for the other.
    built: Mutex<HashMap<BuiltKey, Arc<dyn ChatModel>>>,
    embedders: Mutex<HashMap<BuiltKey, Arc<dyn Embedder>>>,
}

/// A spec and the provider settings it is built with.
type BuiltKey = (String, String);

impl Models {
    /// A registry under the environment and limits its front end read once (`env`).
    pub fn new(
        env: ProviderEnv,
        use_cache: bool,
        refresh: bool,
        flags: Sampling,
        fallback: ModelSettings,
    ) -> Result<Self> {
        let cache = if use_cache {
            let path = env.environment.cache_dir.join("responses.sqlite");
            Some(Arc::new(ragtester_store::ResponseStore::open(&path)?))
        } else {
            None
        };
        let shared = Registry {
            cache,
            env,
            refresh,
            flags,
            fallback,
            built: Default::default(),
            embedders: Default::default(),
        };
        Ok(Self {
            shared: Arc::new(shared),
            table: Default::default(),
        })
    }

    /// The registry a command's global flags ask for: `--no-cache`, `--refresh-cache`, sampling over every
    /// role, and rate limits for every model the config does not limit itself — each checked here.
    pub fn from_flags(
        env: ProviderEnv,
        use_cache: bool,
        refresh: bool,
        flags: Sampling,
        fallback: ModelSettings,
    ) -> Result<Self> {
        flags.validate("--temperature/--max-tokens")?;
        fallback.validate("--requests-per-minute/--tokens-per-minute")?;
        Self::new(env, use_cache, refresh, flags, fallback)
    }

    /// This registry under a project's `[models]` table: the same caches and built models, this table's
    /// provider settings for every model built from it.
    pub fn with_table(&self, table: &ModelTable) -> Self {
        Self {
            shared: self.shared.clone(),
            table: Arc::new(table.clone()),
        }
    }

    /// Provider settings for a spec: the config's entry over the command-line fallbacks.
    pub fn settings(&self, spec: &str) -> ModelSettings {
        let fallback = &self.shared.fallback;
        self.table
            .get(spec)
            .map_or_else(|| fallback.clone(), |s| s.or(fallback))
    }

    pub fn table(&self) -> &ModelTable {
        &self.table
    }

    fn key(&self, spec: &str, settings: &ModelSettings) -> BuiltKey {
        (spec.to_string(), format!("{settings:?}"))
    }

    /// A folder of the cache (`embeddings`, `indexes`), unless caching is switched off.
    pub fn cache_subdir(&self, name: &str) -> Option<PathBuf> {
        self.shared
            .cache
            .as_ref()
            .map(|_| self.shared.env.environment.cache_dir.join(name))
    }

    /// What providers are built under: the environment's defaults, HTTP attempts, timeout and reply
    /// limits. For the clients a registry does not build itself (a vector store, the user's own service).
    pub fn provider_env(&self) -> &ProviderEnv {
        &self.shared.env
    }

    /// The limits the front end built this registry under (`--limit`), which its providers read replies
    /// under: what a server built over the registry hands its jobs.
    pub fn limits(&self) -> ragtester_core::Limits {
        self.shared.env.http.replies
    }

    /// Dense search as the environment sets it (`RAGTESTER_ANN_THRESHOLD`), its graphs in the cache.
    pub fn ann_settings(&self) -> ragtester_retrieve::AnnSettings {
        ragtester_retrieve::AnnSettings {
            threshold: self
                .shared
                .env
                .environment
                .ann_threshold
                .unwrap_or(usize::MAX),
            cache: self.cache_subdir("indexes"),
        }
    }

    /// An embedder by spec, built once, behind the vector cache when caching is on.
    pub fn embedder(&self, spec: &str) -> Result<Arc<dyn Embedder>> {
        let settings = self.settings(spec);
        let key = self.key(spec, &settings);
        let mut built = self
            .shared
            .embedders
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(model) = built.get(&key) {
            return Ok(model.clone());
        }
        let cache = self.cache_subdir("embeddings");
        let model = retrieval::build_embedder(spec, cache.as_deref(), &settings, &self.shared.env)?;
        built.insert(key, model.clone());
        Ok(model)
    }

    /// An embedder built afresh with no vector cache: for benchmarks, which time the embedding itself.
    pub fn fresh_embedder(&self, spec: &str) -> Result<Arc<dyn Embedder>> {
        retrieval::build_embedder(spec, None, &self.settings(spec), &self.shared.env)
    }

    /// A reranker by spec; one that grades passages with a chat model gets it from `chat`, so it runs
    /// under the role (sampling, budget) of whoever asks.
    pub fn reranker(
        &self,
        spec: &str,
        chat: &dyn Fn(&str) -> Result<Arc<dyn ChatModel>>,
    ) -> Result<Arc<dyn Reranker>> {
        retrieval::build_reranker(spec, chat, &self.shared.env)
    }

    /// The sampling a role's calls are sent with: the command-line flags over the role's own settings.
    pub fn sampling_of(&self, role: Sampling) -> Sampling {
        self.shared.flags.or(role)
    }

    /// A spec with no role settings of its own (flags still apply).
    pub fn get(&self, spec: &str) -> Result<Arc<dyn ChatModel>> {
        self.for_role(spec, Sampling::default(), None)
    }

    /// A spec as one role uses it: its sampling (flags first), and a budget its calls count against.
    /// Replies are served from the response cache when it has them.
    pub fn for_role(
        &self,
        spec: &str,
        role: Sampling,
        budget: Option<&Arc<Budget>>,
    ) -> Result<Arc<dyn ChatModel>> {
        self.for_answers(spec, role, budget, true)
    }

    /// A spec as the system under test: asked afresh every run unless `replay` (its replies are still
    /// stored, so a later run may opt into replaying them).
    pub fn for_answers(
        &self,
        spec: &str,
        role: Sampling,
        budget: Option<&Arc<Budget>>,
        replay: bool,
    ) -> Result<Arc<dyn ChatModel>> {
        let mut model = self.base(spec, replay)?;
        if let Some(budget) = budget {
            budget.check_priced(spec)?;
            // Outside the cache: a cached reply costs nothing.
            model = Arc::new(Budgeted {
                inner: model,
                budget: budget.clone(),
            });
        }
        // Outermost, so cache keys include the settings actually sent.
        Ok(Tuned::wrap(model, self.shared.flags.or(role)))
    }

    /// The spec's model, built once, behind the response cache (read and written when `replay`, written
    /// only otherwise).
    fn base(&self, spec: &str, replay: bool) -> Result<Arc<dyn ChatModel>> {
        let model = {
            let settings = self.settings(spec);
            let key = self.key(spec, &settings);
            let mut built = self.shared.built.lock().unwrap_or_else(|p| p.into_inner());
            match built.get(&key) {
                Some(model) => model.clone(),
                None => {
                    let model = chat::build_chat(spec, &settings, &self.shared.env)?;
                    built.insert(key, model.clone());
                    model
                }
            }
        };
        Ok(match &self.shared.cache {
            Some(cache) => Arc::new(CachedChat {
                inner: model,
                cache: cache.clone(),
                refresh: self.shared.refresh || !replay,
            }),
            None => model,
        })
    }
}
