//! The chat models of one command, by spec and role. Each spec is built once, behind the persistent
//! response cache unless it is switched off, with the config's provider settings (base URL, key variable,
//! rate limits); a local model's weights load a single time however many roles and configurations use it.
//! Each role then gets its own view: its sampling settings (command-line flags over the config's
//! `[ROLE.sampling]`) and, for the system under test, the run's budget and whether cached answers are
//! replayed (only when asked: `--replay-answers`).

use anyhow::Result;
use ragtester_core::{ChatModel, ModelSettings, ModelTable, Sampling};
use ragtester_llm::{Budget, Budgeted, CachedChat, Tuned};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

pub struct Models {
    cache: Option<Arc<ragtester_store::ResponseStore>>,
    refresh: bool,
    /// `--temperature`, `--max-tokens`, `--llm-seed`: over every role's own settings.
    flags: Sampling,
    /// `--requests-per-minute`, `--tokens-per-minute`: for every model the config does not limit itself.
    fallback: ModelSettings,
    table: RwLock<ModelTable>,
    built: Mutex<HashMap<String, Arc<dyn ChatModel>>>,
}

impl Models {
    pub fn new(
        use_cache: bool,
        refresh: bool,
        flags: Sampling,
        fallback: ModelSettings,
    ) -> Result<Self> {
        let cache = if use_cache {
            let path = cache_dir().join("responses.sqlite");
            Some(Arc::new(ragtester_store::ResponseStore::open(&path)?))
        } else {
            None
        };
        Ok(Self {
            cache,
            refresh,
            flags,
            fallback,
            table: Default::default(),
            built: Default::default(),
        })
    }

    /// Take the config file's `[models]` table; models built before keep the settings they were built with.
    pub fn configure(&self, table: &ModelTable) {
        *self.table.write().unwrap_or_else(|p| p.into_inner()) = table.clone();
    }

    /// Provider settings for a spec: the config's entry over the command-line fallbacks.
    pub fn settings(&self, spec: &str) -> ModelSettings {
        let table = self.table.read().unwrap_or_else(|p| p.into_inner());
        table
            .get(spec)
            .map_or_else(|| self.fallback.clone(), |s| s.or(&self.fallback))
    }

    pub fn table(&self) -> ModelTable {
        self.table.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A folder of the cache (`embeddings`, `indexes`), unless caching is switched off.
    pub fn cache_subdir(&self, name: &str) -> Option<PathBuf> {
        self.cache.as_ref().map(|_| cache_dir().join(name))
    }

    /// The sampling a role's calls are sent with: the command-line flags over the role's own settings.
    pub fn sampling_of(&self, role: Sampling) -> Sampling {
        self.flags.or(role)
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
        Ok(Tuned::wrap(model, self.flags.or(role)))
    }

    /// The spec's model, built once, behind the response cache (read and written when `replay`, written
    /// only otherwise).
    fn base(&self, spec: &str, replay: bool) -> Result<Arc<dyn ChatModel>> {
        let model = {
            let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
            match built.get(spec) {
                Some(model) => model.clone(),
                None => {
                    let model = ragtester_llm::chat_model_with(spec, &self.settings(spec))?;
                    built.insert(spec.to_string(), model.clone());
                    model
                }
            }
        };
        Ok(match &self.cache {
            Some(cache) => Arc::new(CachedChat {
                inner: model,
                cache: cache.clone(),
                refresh: self.refresh || !replay,
            }),
            None => model,
        })
    }
}

/// `RAGTESTER_CACHE_DIR`, else `$XDG_CACHE_HOME/ragtester`, else `~/.cache/ragtester`.
fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("RAGTESTER_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("ragtester");
    }
    std::env::var_os("HOME").map_or_else(
        || PathBuf::from(".ragtester-cache"),
        |h| PathBuf::from(h).join(".cache/ragtester"),
    )
}
