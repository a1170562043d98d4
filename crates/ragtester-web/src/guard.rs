//! The UI answers only itself. Every request passes [`check`] before any handler sees it:
//!
//! 1. **Host** must name an address this server serves — the loopback names, the bound address (any IP
//!    literal when bound to all interfaces), and names given with `--allow-host`. A page on another site
//!    that rebinds its DNS name to 127.0.0.1 still sends its own name in `Host`, and is refused
//!    (Ollama's CVE-2024-28224; Jupyter and Vite check the same way).
//! 2. **Access token**, on every address (as Jupyter does: on a shared machine every local account reaches
//!    loopback): `?token=` in the address, `Authorization: Bearer`, or the session cookie that a browser
//!    opening the address receives. The cookie is named for this server's port (two servers never take each
//!    other's) and holds a per-start session secret, not the token; a browser's navigation with `?token=` is
//!    redirected to the same address without it, so it leaves the address bar. The address's token wins over
//!    an old cookie. Compared in constant time.
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
/// The start of the session cookie's name; the server's port completes it (`ragtester_8765`).
pub const COOKIE_PREFIX: &str = "ragtester_";

pub struct Guard {
    /// Host names (lower case, IPv6 without brackets) a request may name.
    hosts: Vec<String>,
    /// Bound to all interfaces: any IP literal is this server (an IP literal cannot be rebound).
    any_ip: bool,
    csrf: String,
    access_token: String,
    /// What the session cookie holds: random per start, so a cookie outlives neither the server nor a
    /// change of token, and the token itself never sits in the browser's cookie store.
    session: String,
    /// The session cookie's name, with this server's port in it.
    cookie: String,
}

/// 32 random bytes from the operating system, as hex.
pub fn random_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for a token: {e}"))?;
    Ok(hex::encode(bytes))
}

/// The shortest access token accepted: a guessable token guards nothing.
pub const MIN_TOKEN_CHARS: usize = 16;

impl Guard {
    /// A guard for a server listening on `bound` (its real port), also answering to `extra_hosts`. Every
    /// request needs the access token: `access_token`, or a random one when none is given.
    pub fn new(
        bound: SocketAddr,
        extra_hosts: &[String],
        access_token: Option<String>,
    ) -> anyhow::Result<Self> {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
        hosts.push(bound.ip().to_string());
        hosts.extend(extra_hosts.iter().map(|h| normalise_host(h)));
        let access_token = match access_token {
            Some(t) => {
                check_token(&t)?;
                t
            }
            None => random_token()?,
        };
        ragtester_core::secrets::remember(&access_token);
        Ok(Self {
            hosts,
            any_ip: bound.ip().is_unspecified(),
            csrf: random_token()?,
            access_token,
            session: random_token()?,
            cookie: format!("{COOKIE_PREFIX}{}", bound.port()),
        })
    }

    pub fn csrf_token(&self) -> &str {
        &self.csrf
    }

    pub fn access_token(&self) -> &str {
        &self.access_token
    }

    /// The session cookie's name (with the port).
    pub fn cookie_name(&self) -> &str {
        &self.cookie
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

/// The access token kept in `path` (surrounding whitespace dropped), and a warning when other accounts of
/// the machine can read the file.
pub fn read_token_file(path: &std::path::Path) -> anyhow::Result<(String, Option<String>)> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let mut warning = None;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(path)?.permissions().mode() & 0o077 != 0 {
            warning = Some(format!(
                "{} can be read by other accounts of this machine (chmod 600 it)",
                path.display()
            ));
        }
    }
    Ok((text.trim().to_string(), warning))
}

/// A token a user may choose: long enough not to be guessed, and plain enough to sit in an address.
pub fn check_token(token: &str) -> anyhow::Result<()> {
    if token.chars().count() < MIN_TOKEN_CHARS {
        anyhow::bail!(
            "the access token must be at least {MIN_TOKEN_CHARS} characters (a guessable token guards nothing)"
        );
    }
    if !token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
    {
        anyhow::bail!(
            "the access token may hold letters, digits and - . _ ~ only (it travels in an address and a header)"
        );
    }
    Ok(())
}

/// What a request presents as its credential, in the order it is looked for: the address's token wins over
/// an old cookie, so the printed address always opens the UI.
enum Credential {
    Query(String),
    Bearer(String),
    Cookie(String),
    Nothing,
}

fn credential(request: &Request, cookie_name: &str) -> Credential {
    let headers = request.headers();
    let in_query = request.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("token="))
            .map(str::to_string)
    });
    if let Some(token) = in_query {
        return Credential::Query(token);
    }
    if let Some(bearer) =
        header(headers, header::AUTHORIZATION).and_then(|a| a.strip_prefix("Bearer "))
    {
        return Credential::Bearer(bearer.trim().to_string());
    }
    for cookies in headers.get_all(header::COOKIE) {
        let Ok(cookies) = cookies.to_str() else {
            continue;
        };
        for cookie in cookies.split(';') {
            if let Some((name, value)) = cookie.trim().split_once('=')
                && name == cookie_name
            {
                return Credential::Cookie(value.to_string());
            }
        }
    }
    Credential::Nothing
}

/// A browser opening a page (not a script's request): only then is `?token=` traded for a cookie and taken
/// out of the address.
fn is_navigation(request: &Request) -> bool {
    let headers = request.headers();
    matches!(*request.method(), Method::GET | Method::HEAD)
        && (header(headers, "sec-fetch-mode") == Some("navigate")
            || header(headers, header::ACCEPT).is_some_and(|a| a.contains("text/html")))
}

/// The request's own path and query without its `token=` pairs: where a navigation is sent once its token
/// has become a cookie. Always a path on this server: leading slashes are collapsed, so `//other.example/`
/// cannot become a redirect elsewhere.
fn without_token(request: &Request) -> String {
    let uri = request.uri();
    let path = format!("/{}", uri.path().trim_start_matches(['/', '\\']));
    let rest: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("token="))
        .collect();
    if rest.is_empty() {
        path
    } else {
        format!("{path}?{}", rest.join("&"))
    }
}

/// What becomes of a request's credential.
enum Admission {
    Pass,
    /// A browser's navigation with the right `?token=`: sent on to the same address without it.
    Redirect(String),
    Refuse(String),
}

fn admit(guard: &Guard, request: &Request) -> Admission {
    match credential(request, &guard.cookie) {
        Credential::Query(token) if equal(&token, &guard.access_token) => {
            if is_navigation(request) {
                Admission::Redirect(without_token(request))
            } else {
                Admission::Pass
            }
        }
        Credential::Query(_) => Admission::Refuse(
            "the access token in the address is wrong: open the address `ragtester serve` printed"
                .into(),
        ),
        Credential::Bearer(token) if equal(&token, &guard.access_token) => Admission::Pass,
        Credential::Bearer(_) => Admission::Refuse("the access token is wrong".into()),
        Credential::Cookie(session) if equal(&session, &guard.session) => Admission::Pass,
        Credential::Cookie(_) => Admission::Refuse(
            "the session cookie is from an earlier start of this server: open the address \
             `ragtester serve` printed (…/?token=…) again"
                .into(),
        ),
        Credential::Nothing => Admission::Refuse(
            "this UI needs its access token: open the address `ragtester serve` printed \
             (…/?token=…), or send `Authorization: Bearer TOKEN`"
                .into(),
        ),
    }
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
    let session_cookie = format!(
        "{}={}; HttpOnly; SameSite=Strict; Path=/",
        guard.cookie, guard.session
    );
    match admit(&guard, &request) {
        Admission::Refuse(why) => return refuse(why),
        Admission::Redirect(to) => {
            let mut response = StatusCode::SEE_OTHER.into_response();
            let headers = response.headers_mut();
            if let (Ok(to), Ok(cookie)) = (
                HeaderValue::from_str(&to),
                HeaderValue::from_str(&session_cookie),
            ) {
                headers.insert(header::LOCATION, to);
                headers.insert(header::SET_COOKIE, cookie);
            }
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
            return response;
        }
        Admission::Pass => {}
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
    fn every_address_gets_a_token_and_weak_ones_are_refused() {
        let loopback = guard("127.0.0.1:8765", &[], None);
        assert_eq!(loopback.access_token().len(), 64);
        assert_eq!(loopback.cookie_name(), "ragtester_8765");
        assert_ne!(
            loopback.access_token(),
            guard("127.0.0.1:8765", &[], None).access_token()
        );
        assert_ne!(
            loopback.session, loopback.access_token,
            "the cookie is not the token"
        );
        for bad in ["short", "sixteen chars ok?", "0123456789abcdef\n"] {
            assert!(
                Guard::new("127.0.0.1:1".parse().unwrap(), &[], Some(bad.into())).is_err(),
                "{bad:?}"
            );
        }
        guard("127.0.0.1:1", &[], Some("my-own_token.0123~"));
    }

    fn request(uri: &str, headers: &[(&str, &str)]) -> Request {
        let mut r = Request::builder().uri(uri);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r.body(axum::body::Body::empty()).unwrap()
    }

    #[test]
    fn the_address_token_wins_and_a_navigation_leaves_it_behind() {
        let g = guard("127.0.0.1:8765", &[], Some("right-token-0123456789"));
        let cookie = format!("ragtester_8765={}", g.session);
        let stale = "ragtester_8765=from-an-earlier-start";
        let navigate = ("sec-fetch-mode", "navigate");
        let pass = |r: &Request| matches!(admit(&g, r), Admission::Pass);
        // The printed address, in a browser: redirected without the token, even over a stale cookie.
        for extra in [None, Some(("cookie", stale))] {
            let mut headers = vec![navigate];
            headers.extend(extra);
            match admit(&g, &request("/?token=right-token-0123456789&x=1", &headers)) {
                Admission::Redirect(to) => assert_eq!(to, "/?x=1"),
                _ => panic!("not redirected"),
            }
        }
        match admit(
            &g,
            &request("//evil.example/?token=right-token-0123456789", &[navigate]),
        ) {
            Admission::Redirect(to) => assert_eq!(to, "/evil.example/"),
            _ => panic!("not redirected"),
        }
        assert!(pass(&request(
            "/api/workspace?token=right-token-0123456789",
            &[]
        )));
        assert!(pass(&request("/", &[("cookie", &cookie)])));
        assert!(pass(&request(
            "/",
            &[("authorization", "Bearer right-token-0123456789")]
        )));
        // Another port's cookie is not this server's; a stale one of this port is named as such.
        let other_port = format!("ragtester_9999={}", g.session);
        for (r, why) in [
            (
                request("/", &[("cookie", &other_port)]),
                "needs its access token",
            ),
            (request("/", &[("cookie", stale)]), "earlier start"),
            (
                request("/?token=wrong-token-0123456789", &[navigate]),
                "in the address is wrong",
            ),
            (
                request("/", &[("authorization", "Bearer nope")]),
                "is wrong",
            ),
            (request("/api/session", &[]), "needs its access token"),
        ] {
            match admit(&g, &r) {
                Admission::Refuse(text) => assert!(text.contains(why), "{text}"),
                _ => panic!("{} admitted", r.uri()),
            }
        }
    }
}
