//! Synchronous calls into async provider code. Retrieval's model traits (`Embedder`, `Reranker`) are
//! synchronous — candle models are CPU-bound and called from blocking threads — while HTTP providers are
//! async. A bridge owns one runtime thread; callers block on a reply channel, so it works from plain
//! threads, blocking-pool threads and async workers alike, and never nests runtimes.

use anyhow::{Result, anyhow};
use std::future::Future;
use std::pin::Pin;

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

pub struct Bridge {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

impl Bridge {
    pub fn new(name: &str) -> Result<Self> {
        let (jobs, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| anyhow!("cannot start the {name} runtime: {e}"))?;
        std::thread::Builder::new()
            .name(format!("{name}-io"))
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some(job) = rx.recv().await {
                        tokio::spawn(job);
                    }
                })
            })
            .map_err(|e| anyhow!("cannot start the {name} thread: {e}"))?;
        Ok(Self { jobs })
    }

    /// Run `future` on the bridge's runtime and wait for its result; a panic in it becomes an error.
    pub fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: Job = Box::pin(async move {
            let _ = tx.send(future.await);
        });
        self.jobs
            .send(job)
            .map_err(|_| anyhow!("the provider runtime thread has stopped"))?;
        rx.recv()
            .map_err(|_| anyhow!("a provider call panicked before replying"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_from_plain_threads_and_async_workers() {
        let bridge = std::sync::Arc::new(Bridge::new("test").unwrap());
        assert_eq!(bridge.run(async { 2 + 2 }).unwrap(), 4);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let b = bridge.clone();
        // Blocking inside a current-thread runtime must not deadlock: the work runs elsewhere.
        let v = rt
            .block_on(async move {
                b.run(async {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    7
                })
            })
            .unwrap();
        assert_eq!(v, 7);
        let fail = std::hint::black_box(true);
        let err = bridge.run(async move {
            assert!(!fail, "boom");
        });
        assert!(err.unwrap_err().to_string().contains("panicked"));
    }
}
