//! Requests- and tokens-per-minute limits, as providers publish them. Both are token buckets (GCRA, from
//! governor) refilled evenly over the minute with a burst of one minute's allowance: a run starts at full
//! speed, then settles at the rate the provider allows instead of collecting 429s.

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;

/// Per-minute limits of one model at its provider; `None` is unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
}

pub struct Throttle {
    requests: Option<DefaultDirectRateLimiter>,
    tokens: Option<(DefaultDirectRateLimiter, NonZeroU32)>,
}

impl Throttle {
    pub fn new(limits: RateLimits) -> Self {
        let bucket = |per_minute: Option<u32>| {
            per_minute
                .and_then(NonZeroU32::new)
                .map(|n| (RateLimiter::direct(Quota::per_minute(n)), n))
        };
        Self {
            requests: bucket(limits.requests_per_minute).map(|(l, _)| l),
            tokens: bucket(limits.tokens_per_minute),
        }
    }

    /// Whether a token limit applies, so callers know whether estimating a request's tokens is worth it.
    pub fn counts_tokens(&self) -> bool {
        self.tokens.is_some()
    }

    /// Wait until one more request of `tokens` tokens fits both limits. A request larger than a whole
    /// minute's allowance waits for the full allowance rather than forever.
    pub async fn admit(&self, tokens: u32) {
        if let Some(requests) = &self.requests {
            requests.until_ready().await;
        }
        if let Some((bucket, burst)) = &self.tokens {
            let n = NonZeroU32::new(tokens.clamp(1, burst.get())).expect("clamped to at least 1");
            bucket
                .until_n_ready(n)
                .await
                .expect("a request never asks for more than the burst");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[tokio::test]
    async fn requests_beyond_the_burst_wait_for_the_refill() {
        // 600 a minute: a burst of 600, then one every 100 ms.
        let throttle = Throttle::new(RateLimits {
            requests_per_minute: Some(600),
            tokens_per_minute: None,
        });
        for _ in 0..600 {
            throttle.admit(0).await;
        }
        let started = Instant::now();
        throttle.admit(0).await;
        throttle.admit(0).await;
        assert!(
            started.elapsed() >= Duration::from_millis(150),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn tokens_are_weighed_and_oversized_requests_still_pass() {
        let throttle = Throttle::new(RateLimits {
            requests_per_minute: None,
            tokens_per_minute: Some(6000),
        });
        assert!(throttle.counts_tokens());
        let started = Instant::now();
        // 6,000 tokens at once (the burst), then 100 more: one more 100-token share is 1 s away.
        throttle.admit(50_000).await;
        throttle.admit(100).await;
        assert!(
            started.elapsed() >= Duration::from_millis(900),
            "{:?}",
            started.elapsed()
        );
        assert!(!Throttle::new(RateLimits::default()).counts_tokens());
    }
}
