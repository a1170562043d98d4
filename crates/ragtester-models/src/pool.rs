//! A serving pool: one model behind several replicas (vLLM, TGI or llama.cpp servers), given in the config as
//! `base_urls`. Each call goes to the healthy replica with the fewest calls in flight; a replica whose call
//! fails (after its own client's retries) is taken out for a cool-down that doubles while it keeps failing,
//! and the call is tried on the next replica. Each replica has its own HTTP client, so rate limits and
//! the in-flight cap apply per replica. When every replica is out, the one due back first is tried rather
//! than failing the call outright.

use anyhow::{Result, bail};
use async_trait::async_trait;
use ragtester_core::{ChatModel, ChatRequest, ChatResponse};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long a replica stays out after its first failure; doubled per further failure, capped at
/// `MAX_COOL_DOWN`.
pub const COOL_DOWN: Duration = Duration::from_secs(15);
const MAX_COOL_DOWN: Duration = Duration::from_secs(300);

struct Replica {
    model: Arc<dyn ChatModel>,
    base_url: String,
    in_flight: AtomicUsize,
    calls: AtomicUsize,
    health: Mutex<Health>,
}

#[derive(Default)]
struct Health {
    /// Out until then; None while healthy.
    out_until: Option<Instant>,
    failures_in_a_row: u32,
}

pub struct PooledChat {
    name: String,
    replicas: Vec<Replica>,
    cool_down: Duration,
    next: AtomicUsize,
}

/// A replica's share of a pool's calls, for reports and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaCalls {
    pub base_url: String,
    pub calls: usize,
    pub healthy: bool,
}

impl PooledChat {
    /// `replicas`: (base URL, the model served there).
    pub fn new(name: String, replicas: Vec<(String, Arc<dyn ChatModel>)>) -> Result<Self> {
        if replicas.is_empty() {
            bail!("a serving pool for `{name}` needs at least one base URL");
        }
        Ok(Self {
            name,
            replicas: replicas
                .into_iter()
                .map(|(base_url, model)| Replica {
                    model,
                    base_url,
                    in_flight: AtomicUsize::new(0),
                    calls: AtomicUsize::new(0),
                    health: Mutex::new(Health::default()),
                })
                .collect(),
            cool_down: COOL_DOWN,
            next: AtomicUsize::new(0),
        })
    }

    /// The same pool with another cool-down (tests use a short one).
    pub fn with_cool_down(mut self, cool_down: Duration) -> Self {
        self.cool_down = cool_down;
        self
    }

    pub fn calls(&self) -> Vec<ReplicaCalls> {
        let now = Instant::now();
        self.replicas
            .iter()
            .map(|r| ReplicaCalls {
                base_url: r.base_url.clone(),
                calls: r.calls.load(Ordering::Relaxed),
                healthy: r.is_in(now),
            })
            .collect()
    }

    /// Replicas in the order to try them: healthy ones by calls in flight (ties taken in turn), then the
    /// ones that are out, soonest back first.
    fn order(&self) -> Vec<usize> {
        let now = Instant::now();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let n = self.replicas.len();
        let rotated: Vec<usize> = (0..n).map(|i| (start + i) % n).collect();
        let (mut healthy, mut out): (Vec<usize>, Vec<usize>) = rotated
            .into_iter()
            .partition(|&i| self.replicas[i].is_in(now));
        // Stable sort: among equally loaded replicas the rotation decides.
        healthy.sort_by_key(|&i| self.replicas[i].in_flight.load(Ordering::Relaxed));
        out.sort_by_key(|&i| self.replicas[i].back_at());
        healthy.extend(out);
        healthy
    }
}

impl Replica {
    fn is_in(&self, now: Instant) -> bool {
        let health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        health.out_until.is_none_or(|t| t <= now)
    }

    fn back_at(&self) -> Option<Instant> {
        self.health
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .out_until
    }

    fn succeeded(&self) {
        *self.health.lock().unwrap_or_else(|p| p.into_inner()) = Health::default();
    }

    fn failed(&self, cool_down: Duration) {
        let mut health = self.health.lock().unwrap_or_else(|p| p.into_inner());
        let factor = 2u32.saturating_pow(health.failures_in_a_row.min(8));
        let wait = (cool_down * factor).min(MAX_COOL_DOWN);
        health.failures_in_a_row += 1;
        health.out_until = Some(Instant::now() + wait);
        tracing::warn!(
            "replica {} failed ({} in a row): out of the pool for {:.0} s",
            self.base_url,
            health.failures_in_a_row,
            wait.as_secs_f64()
        );
    }
}

/// Decrements a replica's in-flight count when the call ends, however it ends.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[async_trait]
impl ChatModel for PooledChat {
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The spec and every replica's endpoint: replicas serve one model, so a cached reply from any of
    /// them is this pool's, and a pool of other servers is another identity.
    fn identity(&self) -> String {
        let mut urls: Vec<&str> = self.replicas.iter().map(|r| r.base_url.as_str()).collect();
        urls.sort_unstable();
        format!("{} @ pool[{}]", self.name, urls.join(", "))
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let mut errors = Vec::new();
        for i in self.order() {
            let replica = &self.replicas[i];
            replica.in_flight.fetch_add(1, Ordering::Relaxed);
            replica.calls.fetch_add(1, Ordering::Relaxed);
            let guard = InFlight(&replica.in_flight);
            let result = replica.model.chat(request).await;
            drop(guard);
            match result {
                Ok(response) => {
                    replica.succeeded();
                    return Ok(response);
                }
                Err(e) => {
                    replica.failed(self.cool_down);
                    errors.push(format!("{}: {e:#}", replica.base_url));
                }
            }
        }
        bail!(
            "every replica of `{}` failed: {}",
            self.name,
            errors.join(" | ")
        )
    }
}
