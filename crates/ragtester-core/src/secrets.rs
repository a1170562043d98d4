//! Secrets stay secret: every API key, bearer token and `${ENV}` value ragtester reads is remembered here the
//! moment it is read, and every text that leaves the process — an error recorded on an answer or a verdict, a
//! log line, a panic message, a web response, a run file — passes through [`redact`] first. A server that
//! echoes the key it was sent ("Incorrect API key provided: sk-…"), a URL with a key in its query, a command
//! target that prints its environment: all come out as `[redacted]`.
//!
//! Values shorter than [`MIN_SECRET_LEN`] are not remembered: replacing "1" or "prod" everywhere would
//! garble text and protect nothing a guess would not find.

use std::borrow::Cow;
use std::sync::RwLock;

/// Shorter values are not treated as secrets.
pub const MIN_SECRET_LEN: usize = 6;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remember `value` as a secret (an API key, a token, the value of a `${VAR}` in a header or URL).
pub fn remember(value: &str) {
    let value = value.trim();
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    if let Ok(mut secrets) = SECRETS.write()
        && !secrets.iter().any(|s| s == value)
    {
        secrets.push(value.to_string());
        // Longest first, so a secret that contains another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// `text` with every remembered secret replaced by [`REDACTED`]. Borrowed when there is nothing to replace,
/// so the common case costs one substring search per secret.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Ok(secrets) = SECRETS.read() else {
        return Cow::Borrowed(text);
    };
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

/// An error's whole chain as text, secrets redacted: how errors are recorded on answers and verdicts.
pub fn error_text(error: &anyhow::Error) -> String {
    redact(&format!("{error:#}")).into_owned()
}

/// A writer that redacts every remembered secret from what passes through it (a log's writer: tracing
/// formats an event into one buffer and writes it at once, so a secret is never split across two writes).
pub struct Redacting<W>(pub W);

impl<W: std::io::Write> std::io::Write for Redacting<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(bytes);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// A panic's message as a process tells it, redacted: thread, place and payload.
pub fn panic_text(info: &std::panic::PanicHookInfo<'_>) -> String {
    let message = info
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| info.payload().downcast_ref::<&str>().copied())
        .unwrap_or("(no message)");
    let place = info
        .location()
        .map(|l| format!(" at {}:{}", l.file(), l.line()))
        .unwrap_or_default();
    let thread = std::thread::current();
    let name = thread.name().unwrap_or("unnamed");
    format!("thread '{name}' panicked{place}: {}", redact(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_values_are_redacted_and_short_ones_ignored() {
        remember("sk-unit-test-secret-0123456789");
        remember("sk-unit-test-secret-0123456789-longer");
        remember("abc");
        let text =
            "key sk-unit-test-secret-0123456789-longer and sk-unit-test-secret-0123456789; abc";
        assert_eq!(
            redact(text),
            "key [redacted] and [redacted]; abc",
            "longest first, short values left"
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        let e = anyhow::anyhow!("HTTP 401: bad key sk-unit-test-secret-0123456789")
            .context("target t failed");
        assert_eq!(
            error_text(&e),
            "target t failed: HTTP 401: bad key [redacted]"
        );
    }
}
