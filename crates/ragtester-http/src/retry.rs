//! Retry timing: exponential back-off with full jitter, never shorter than the server's `Retry-After`.

use std::time::{Duration, SystemTime};

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// Longest `Retry-After` honoured; a server asking for more is waited on for this long.
    pub max_retry_after: Duration,
    /// Per-request timeout (connect, send and read).
    pub timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            timeout: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The default policy with the environment's attempts and timeout
    /// (`RAGTESTER_HTTP_ATTEMPTS`, `RAGTESTER_HTTP_TIMEOUT_S`).
    pub fn from_environment(env: &ragtester_core::settings::Environment) -> Self {
        let mut policy = Self::default();
        if let Some(attempts) = env.http_attempts {
            policy.max_attempts = attempts;
        }
        if let Some(timeout) = env.http_timeout {
            policy.timeout = timeout;
        }
        policy
    }

    /// Delay before attempt `attempt + 1`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
        let capped = exp.min(self.max_delay);
        // Jitter in [50 %, 100 %] of the back-off: spreads clients out without ever retrying at once.
        let jittered = capped.mul_f64(0.5 + fastrand::f64() * 0.5);
        match retry_after {
            Some(after) => jittered.max(after.min(self.max_retry_after)),
            None => jittered,
        }
    }
}

/// `Retry-After` as delta-seconds or an HTTP date.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("0.5"), Some(Duration::from_millis(500)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn delay_grows_is_capped_and_honours_retry_after() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(300),
            ..Default::default()
        };
        for _ in 0..50 {
            let d1 = p.delay(1, None);
            assert!(d1 >= Duration::from_millis(50) && d1 <= Duration::from_millis(100));
            let d5 = p.delay(5, None);
            assert!(d5 <= Duration::from_millis(300));
            assert!(p.delay(1, Some(Duration::from_secs(2))) >= Duration::from_secs(2));
        }
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(999))),
            Duration::from_secs(120)
        );
    }
}
