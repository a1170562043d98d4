//! Adaptive concurrency per provider: the number of requests in flight halves when the server answers 429
//! and grows back by one after each full window of successes (additive increase, multiplicative decrease),
//! so a run settles at the rate the provider allows instead of hammering it or crawling.
//!
//! As in TCP, the limit halves at most once per window: the 429s of requests that were already in flight
//! when it was cut say nothing new, so they do not cut it again. Without this, a burst of 429s from one
//! window of 32 requests took the limit to 1 at once (a run with 10 % of replies 429 took 255 s instead of 48).

use std::sync::Mutex;
use tokio::sync::{Semaphore, SemaphorePermit};

pub struct AdaptiveLimit {
    semaphore: Semaphore,
    state: Mutex<State>,
    max: usize,
}

struct State {
    limit: usize,
    /// Permits to retire as they come back: the limit was cut below what was in flight.
    debt: usize,
    successes: usize,
    /// Bumped at every cut; a request sent in an earlier epoch cannot cut again.
    epoch: u64,
}

impl AdaptiveLimit {
    pub fn new(max: usize) -> Self {
        let max = max.max(1);
        Self {
            semaphore: Semaphore::new(max),
            state: Mutex::new(State {
                limit: max,
                debt: 0,
                successes: 0,
                epoch: 0,
            }),
            max,
        }
    }

    pub fn limit(&self) -> usize {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).limit
    }

    pub async fn acquire(&self) -> Slot<'_> {
        let permit = self
            .semaphore
            .acquire()
            .await
            .expect("the semaphore is never closed");
        let epoch = self.state.lock().unwrap_or_else(|p| p.into_inner()).epoch;
        Slot {
            owner: self,
            permit: Some(permit),
            epoch,
        }
    }

    fn release(&self, permit: SemaphorePermit<'_>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.debt > 0 {
            state.debt -= 1;
            permit.forget();
        }
    }

    /// The server said 429 to a request sent in `epoch` (its slot's): halve the limit (never below one),
    /// unless the limit was already cut since that request went out.
    pub fn on_rate_limited(&self, epoch: u64) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if epoch != state.epoch {
            return;
        }
        state.epoch += 1;
        let target = (state.limit / 2).max(1);
        let cut = state.limit - target;
        let forgotten = self.semaphore.forget_permits(cut);
        state.debt += cut - forgotten;
        state.limit = target;
        state.successes = 0;
    }

    /// A request succeeded: after `limit` successes in a row, allow one more in flight.
    pub fn on_success(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.successes += 1;
        if state.successes >= state.limit && state.limit < self.max {
            state.successes = 0;
            state.limit += 1;
            if state.debt > 0 {
                state.debt -= 1;
            } else {
                self.semaphore.add_permits(1);
            }
        }
    }
}

/// One request's place in flight; gives the place back (or retires it) when dropped.
pub struct Slot<'a> {
    owner: &'a AdaptiveLimit,
    permit: Option<SemaphorePermit<'a>>,
    epoch: u64,
}

impl Slot<'_> {
    /// The limit's epoch when this request went out.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.permit.take() {
            self.owner.release(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn halves_on_429_and_grows_back() {
        let limit = AdaptiveLimit::new(8);
        let held: Vec<Slot<'_>> = futures_lite(&limit, 8).await;
        assert_eq!(limit.semaphore.available_permits(), 0);
        limit.on_rate_limited(held[0].epoch());
        assert_eq!(limit.limit(), 4);
        // The other seven of that window answer 429 too: no further cut.
        for slot in &held[1..] {
            limit.on_rate_limited(slot.epoch());
        }
        assert_eq!(limit.limit(), 4);
        drop(held);
        // Four of the eight returning permits were retired.
        assert_eq!(limit.semaphore.available_permits(), 4);
        for _ in 0..3 {
            let slot = limit.acquire().await;
            let epoch = slot.epoch();
            drop(slot);
            limit.on_rate_limited(epoch);
        }
        assert_eq!(limit.limit(), 1);
        assert_eq!(limit.semaphore.available_permits(), 1);
        limit.on_success();
        assert_eq!(limit.limit(), 2);
        assert_eq!(limit.semaphore.available_permits(), 2);
        for _ in 0..100 {
            limit.on_success();
        }
        assert_eq!(limit.limit(), 8, "grows back to the maximum and no further");
        assert_eq!(limit.semaphore.available_permits(), 8);
    }

    async fn futures_lite(limit: &AdaptiveLimit, n: usize) -> Vec<Slot<'_>> {
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(limit.acquire().await);
        }
        v
    }
}
