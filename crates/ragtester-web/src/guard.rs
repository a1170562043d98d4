//! The UI answers only itself. Every request passes [`check`] before any handler sees it:
//!
//! 1. **Host** must name an address this server serves — the loopback names, the bound address (any IP
//!    literal when bound to all interfaces), and names given with `--allow-host`. A page on another site
//!    that rebinds its DNS name to 127.0.0.1 still sends its own name in `Host`, and is refused
//!    (Ollama's CVE-2024-28224; Jupyter and Vite check the same way).
//! 2. **Access token**, when one is set (always when bound beyond loopback): `Authorization: Bearer`, the
//!    `ragtester_token` cookie, or `?token=` once (which sets the cookie). Compared in constant time.
//! 3. **State-changing requests** (anything but GET and HEAD) must come from this UI's own page: a browser's
//!    `Sec-Fetch-Site` of `same-origin` or none, an `Origin` equal to this server's own (or no `Origin`, as
//!    non-browser clients send), the per-session CSRF token in `x-ragtester-csrf`, and a JSON or multipart
//!    body. A cross-origin form or `fetch` cannot set that header without a CORS preflight this server never
//!    grants, and cannot read the token.
//!
//! Refusals are 403 with a JSON `error` that says why; nothing reaches a handler, so nothing is written.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The header the page sends its CSRF token in.
pub const CSRF_HEADER: &str = "x-ragtester-csrf";
/// The cookie that carries the access token after `?token=` opened the page.
pub const TOKEN_COOKIE: &str = "ragtester_token";

pub struct Guard {
    /// Host names (lower case, IPv6 without brackets) a request may name.
    hosts: Vec<String>,
    /// Bound to all interfaces: any IP literal is this server (an IP literal cannot be rebound).
    any_ip: bool,
    csrf: String,
    access_token: Option<String>,
}

/// 32 random bytes from the operating system, as hex.
pub fn random_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    Ok(hex::encode(bytes))
}

impl Guard {
    /// A guard for a server bound to `bound`, also answering to `extra_hosts`. Bound beyond loopback, an
    /// access token is required: `access_token`, or a random one when none is given.
    pub fn new(
        bound: SocketAddr,
        extra_hosts: &[String],
        access_token: Option<String>,
    ) -> anyhow::Result<Self> {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        hosts.push(bound.ip().to_string());
        hosts.extend(extra_hosts.iter().map(|h| normalise_host(h)));
        let access_token = match access_token {
            Some(t) if t.len() < 16 => {
                anyhow::bail!(
                    "--token must be at least 16 characters (a guessable token guards nothing)"
                )
            }
            Some(t) => Some(t),
            None if !bound.ip().is_loopback() => Some(random_token()?),
            None => None,
        };
        if let Some(token) = &access_token {
            ragtester_core::secrets::remember(token);
        }
        Ok(Self {
            hosts,
            any_ip: bound.ip().is_unspecified(),
            csrf: random_token()?,
            access_token,
        })
    }

    pub fn csrf_token(&self) -> &str {
        &self.csrf
    }

    pub fn access_token(&self) -> Option<&str> {
        self.access_token.as_deref()
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = normalise_host(host);
        self.hosts.contains(&name) || (self.any_ip && name.parse::<IpAddr>().is_ok())
    }
}

/// `Host`'s name without its port, lower case, IPv6 without brackets, without a trailing dot.
fn normalise_host(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default().to_string()
    } else {
        match host.rsplit_once(':') {
            Some((name, port))
                if port.chars().all(|c| c.is_ascii_digit()) && !name.contains(':') =>
            {
                name.to_string()
            }
            _ => host,
        }
    };
    name.trim_end_matches('.').to_string()
}

fn refuse(why: String) -> Response {
    tracing::warn!("refused a request: {why}");
    (StatusCode::FORBIDDEN, Json(json!({ "error": why }))).into_response()
}

fn equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

fn header(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// The access token a request presents, and whether it came in the query (then it becomes a cookie).
fn presented_token(request: &Request) -> Option<(String, bool)> {
    let headers = request.headers();
    if let Some(bearer) =
        header(headers, header::AUTHORIZATION).and_then(|a| a.strip_prefix("Bearer "))
    {
        return Some((bearer.trim().to_string(), false));
    }
    for cookies in headers.get_all(header::COOKIE) {
        let Ok(cookies) = cookies.to_str() else {
            continue;
        };
        for cookie in cookies.split(';') {
            if let Some((name, value)) = cookie.trim().split_once('=')
                && name == TOKEN_COOKIE
            {
                return Some((value.to_string(), false));
            }
        }
    }
    let query = request.uri().query()?;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .map(|t| (t.to_string(), true))
}

/// Why a state-changing request is not this UI's own page speaking, if it is not.
fn foreign_write(guard: &Guard, headers: &HeaderMap, host: &str) -> Option<String> {
    if let Some(site) = header(headers, "sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Some(format!(
            "a request from another site (Sec-Fetch-Site: {site}) cannot change anything here"
        ));
    }
    if let Some(origin) = header(headers, header::ORIGIN) {
        let own = [format!("http://{host}"), format!("https://{host}")];
        if !own.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return Some(format!(
                "Origin `{origin}` is not this UI's own (http://{host}): pages of other sites cannot drive it"
            ));
        }
    }
    match header(headers, CSRF_HEADER) {
        None => {
            return Some(format!(
                "the request lacks the session's CSRF token in `{CSRF_HEADER}`: the UI's page sends it; \
                 other clients read it from GET /api/session"
            ));
        }
        Some(token) if !equal(token, &guard.csrf) => {
            return Some(format!(
                "the CSRF token in `{CSRF_HEADER}` is not this session's (the server was restarted? reload the page)"
            ));
        }
        Some(_) => {}
    }
    let kind = header(headers, header::CONTENT_TYPE).unwrap_or("");
    let kind = kind
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if kind != "application/json" && kind != "multipart/form-data" {
        return Some(format!(
            "a change must be sent as application/json or multipart/form-data, not `{kind}`"
        ));
    }
    None
}

/// The middleware: refuse what the rules above refuse, then add headers that keep responses to this origin.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let host = header(request.headers(), header::HOST)
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()))
        .unwrap_or_default();
    if !guard.host_allowed(&host) {
        return refuse(format!(
            "Host `{host}` is not an address this UI serves (a DNS-rebinding page sends its own name); \
             start `ragtester serve --allow-host NAME` to serve it under another name"
        ));
    }
    let mut set_cookie = None;
    if let Some(expected) = &guard.access_token {
        match presented_token(&request) {
            Some((token, from_query)) if equal(&token, expected) => {
                if from_query {
                    set_cookie = Some(format!(
                        "{TOKEN_COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"
                    ));
                }
            }
            Some(_) => return refuse("the access token is wrong".into()),
            None => {
                return refuse(
                    "this UI needs its access token: open the address `ragtester serve` printed \
                     (…/?token=…), or send `Authorization: Bearer TOKEN`"
                        .into(),
                );
            }
        }
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD)
        && let Some(why) = foreign_write(&guard, request.headers(), &host)
    {
        return refuse(why);
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-resource-policy", "same-origin"),
        ("x-frame-options", "SAMEORIGIN"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Some(cookie) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(bound: &str, extra: &[&str], token: Option<&str>) -> Guard {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        Guard::new(bound.parse().unwrap(), &extra, token.map(String::from)).unwrap()
    }

    #[test]
    fn hosts_are_loopback_names_the_bound_address_and_allowed_names() {
        let g = guard("127.0.0.1:8765", &["rag.internal"], None);
        for ok in [
            "127.0.0.1:8765",
            "localhost:8765",
            "LOCALHOST",
            "[::1]:8765",
            "rag.internal:80",
            "localhost.",
        ] {
            assert!(g.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:8765",
            "127.0.0.1.evil.example",
            "",
            "localhost.evil",
            "10.0.0.5:8765",
        ] {
            assert!(!g.host_allowed(bad), "{bad}");
        }
        let all = guard("0.0.0.0:8765", &[], None);
        assert!(all.host_allowed("10.0.0.5:8765") && all.host_allowed("[fe80::1]:8765"));
        assert!(!all.host_allowed("evil.example:8765"));
    }

    #[test]
    fn beyond_loopback_a_token_is_made_and_short_tokens_are_refused() {
        assert!(guard("127.0.0.1:1", &[], None).access_token().is_none());
        let token = guard("0.0.0.0:1", &[], None)
            .access_token()
            .unwrap()
            .to_string();
        assert_eq!(token.len(), 64);
        assert_ne!(token, guard("0.0.0.0:1", &[], None).access_token().unwrap());
        assert!(Guard::new("127.0.0.1:1".parse().unwrap(), &[], Some("short".into())).is_err());
    }
}
