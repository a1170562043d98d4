//! The local UI answers only itself: requests a DNS-rebinding page or another origin can send (a forged
//! `Host`, a foreign `Origin`, a cross-site form post, no CSRF token, no access token) are refused with 403
//! and a reason, and write nothing; uploads over the size limits are refused and named.

mod ui;

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::Path;
use ui::{serve, serve_with};

fn upload_form(name: &str, bytes: Vec<u8>) -> reqwest::multipart::Form {
    reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()),
    )
}

/// Assert a 403 whose error says `why`; `what` names the attempt in a failure.
async fn refused_as(response: reqwest::Response, what: &str, why: &str) {
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "{what}");
    let body: Value = response.json().await.unwrap();
    let error = body["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(why),
        "{what}: refusal {error:?} should say {why:?}"
    );
}

async fn refused(response: reqwest::Response, why: &str) {
    refused_as(response, "request", why).await;
}

fn docs_in(ws: &Path) -> Vec<String> {
    std::fs::read_dir(ws.join("docs"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A request's body: an upload, JSON, or text as a plain HTML form can send it.
enum Body {
    None,
    Upload(&'static str),
    Json(Value),
    Text,
}

/// An attempt another page or client could make: what it is, the route, headers, body, and what the
/// refusal must say.
type Attack<'a> = (
    &'a str,
    (&'a str, &'a str),
    Vec<(&'a str, String)>,
    Body,
    &'a str,
);

/// Send `method path` with `headers` and `body`, as any page or client could.
async fn send(
    client: &reqwest::Client,
    base: &str,
    (method, path): (&str, &str),
    headers: &[(&str, String)],
    body: Body,
) -> reqwest::Response {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = client.request(method, format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    request = match body {
        Body::None => request,
        Body::Upload(name) => {
            request.multipart(upload_form(name, b"# Planted\n\nwritten".to_vec()))
        }
        Body::Json(v) => request.json(&v),
        Body::Text => request.header("content-type", "text/plain").body("{}"),
    };
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_host_origin_and_missing_tokens_are_refused_and_write_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let server = serve(&ws, &[]);
    let base = server.base.as_str();
    let port = base.rsplit(':').next().unwrap();
    let csrf = server.csrf().await;
    // The access token alone: what remains to refuse is whether the request is this UI's own page.
    let plain = server.authorised();
    let forged = format!("attacker.example:{port}");
    let token = || ("x-ragtester-csrf", csrf.clone());
    let upload = ("POST", "/api/documents");
    let samples = ("POST", "/api/documents/samples");
    // (what, route, headers, body, what the refusal says)
    let attacks: Vec<Attack<'_>> = vec![
        // DNS rebinding: the page's own name arrives in Host. Reads and writes are refused alike.
        (
            "rebound read",
            ("GET", "/api/workspace"),
            vec![("host", forged.clone())],
            Body::None,
            "Host `attacker.example",
        ),
        (
            "rebound upload",
            upload,
            vec![("host", forged.clone()), token()],
            Body::Upload("rebound.md"),
            "Host",
        ),
        // A form another origin posts (a simple request: no preflight): foreign Origin, no CSRF token.
        (
            "cross-site upload",
            upload,
            vec![
                ("origin", "https://attacker.example".into()),
                ("sec-fetch-site", "cross-site".into()),
            ],
            Body::Upload("planted.md"),
            "another site",
        ),
        // The same without Sec-Fetch-Site (an older browser): the Origin alone refuses it.
        (
            "foreign origin",
            upload,
            vec![("origin", "https://attacker.example".into()), token()],
            Body::Upload("planted.md"),
            "Origin `https://attacker.example`",
        ),
        // `Origin: null` (a sandboxed frame, a file:// page) is not this UI either.
        (
            "null origin",
            samples,
            vec![("origin", "null".into()), token()],
            Body::Json(json!({})),
            "Origin `null`",
        ),
        (
            "no CSRF token",
            samples,
            vec![("origin", base.to_string())],
            Body::Json(json!({})),
            "CSRF token",
        ),
        (
            "wrong CSRF token",
            samples,
            vec![("x-ragtester-csrf", "0".repeat(64))],
            Body::Json(json!({})),
            "not this session's",
        ),
        // With the token but a body a plain HTML form sends.
        (
            "form body",
            samples,
            vec![token()],
            Body::Text,
            "application/json or multipart/form-data",
        ),
        (
            "job from a look-alike origin",
            ("POST", "/api/jobs/docgen"),
            vec![
                ("origin", "http://127.0.0.1.attacker.example".into()),
                token(),
            ],
            Body::Json(json!({"count": 1})),
            "Origin",
        ),
        (
            "audit label from another site",
            ("PUT", "/api/runs/demo/audit/0"),
            vec![("sec-fetch-site", "same-site".into()), token()],
            Body::Json(json!({"label": "pass"})),
            "another site",
        ),
    ];
    for (what, route, headers, body, why) in attacks {
        refused_as(send(&plain, base, route, &headers, body).await, what, why).await;
    }
    assert!(
        docs_in(&ws).is_empty(),
        "refused requests wrote {:?}",
        docs_in(&ws)
    );
    let jobs: Value = plain
        .get(format!("{base}/api/jobs"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jobs, json!([]), "a refused request started a job");

    // The page's own requests pass: same Origin (or none, for this client) with the token.
    let own = vec![
        ("origin", base.to_string()),
        ("sec-fetch-site", "same-origin".into()),
        token(),
    ];
    let r = send(&plain, base, samples, &own, Body::Json(json!({}))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = send(&plain, base, upload, &[token()], Body::Upload("own.md")).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(ws.join("docs/own.md").is_file());
    // Loopback names all reach it.
    for host in [format!("localhost:{port}"), format!("[::1]:{port}")] {
        let r = send(
            &plain,
            base,
            ("GET", "/api/workspace"),
            &[("host", host.clone())],
            Body::None,
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK, "{host}");
    }
    // Responses stay with this origin.
    let page = plain.get(format!("{base}/")).send().await.unwrap();
    assert_eq!(
        page.headers()["cross-origin-resource-policy"],
        "same-origin"
    );
    assert_eq!(page.headers()["x-frame-options"], "SAMEORIGIN");
    assert_eq!(page.headers()["cache-control"], "no-store");
    let html = page.text().await.unwrap();
    assert!(
        html.contains(&format!("content=\"{csrf}\"")),
        "the page carries its CSRF token"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowed_host_is_served_and_others_still_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let server = serve_with(
        &tmp.path().join("ws"),
        &[],
        &["--allow-host", "rag.internal"],
    );
    let client = server.authorised();
    let at = |host: &str| {
        client
            .get(format!("{}/api/workspace", server.base))
            .header("host", host.to_string())
            .send()
    };
    assert_eq!(at("rag.internal").await.unwrap().status(), StatusCode::OK);
    refused(at("other.internal").await.unwrap(), "--allow-host").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_access_token_guards_every_request_and_opens_the_page_once() {
    let tmp = tempfile::tempdir().unwrap();
    let token = "sentinel-access-token-0123456789";
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let file = token_file.to_str().unwrap();
    let server = serve_with(&tmp.path().join("ws"), &[], &["--token-file", file]);
    let base = &server.base;
    assert!(
        server.printed.ends_with(&format!("/?token={token}")),
        "{}",
        server.printed
    );
    let port = base.rsplit(':').next().unwrap();
    let client = ragtester_http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    // Nothing without the token: not the page, not the CSRF token, not the workspace.
    for path in ["/", "/api/session", "/api/workspace", "/assets/app.js"] {
        refused(
            client.get(format!("{base}{path}")).send().await.unwrap(),
            "access token",
        )
        .await;
    }
    refused(
        client
            .get(format!("{base}/api/session"))
            .bearer_auth("wrong-token-0123456789")
            .send()
            .await
            .unwrap(),
        "wrong",
    )
    .await;
    let r = client
        .get(format!("{base}/api/workspace"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // The printed address, opened by a browser over an old cookie of an earlier start: sent on to the
    // address without the token, with a fresh cookie named for this port.
    let r = client
        .get(&server.printed)
        .header("sec-fetch-mode", "navigate")
        .header("cookie", format!("ragtester_{port}=from-an-earlier-start"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()["location"], "/");
    let cookie = r.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(
        cookie.starts_with(&format!("ragtester_{port}=")),
        "{cookie}"
    );
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains(token),
        "the cookie carries the token itself: {cookie}"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let r = client
        .get(format!("{base}/"))
        .header("cookie", &pair)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    // Without the address's token, the old cookie is refused with a reason a person can act on.
    refused(
        client
            .get(format!("{base}/"))
            .header("cookie", format!("ragtester_{port}=from-an-earlier-start"))
            .send()
            .await
            .unwrap(),
        "earlier start",
    )
    .await;
    // The token does not excuse a write from the CSRF token.
    refused(
        client
            .post(format!("{base}/api/documents/samples"))
            .bearer_auth(token)
            .json(&json!({}))
            .send()
            .await
            .unwrap(),
        "CSRF",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn uploads_over_the_file_and_request_limits_are_refused_and_named() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let server = serve_with(
        &ws,
        &[],
        &["--limit", "file_mb=1", "--limit", "request_mb=3"],
    );
    let client = server.client().await;
    let big = vec![b'a'; 1024 * 1024 + 1];
    let form = upload_form("big.txt", big).part(
        "file",
        reqwest::multipart::Part::bytes(b"small enough".to_vec()).file_name("small.txt"),
    );
    let r: Value = client
        .post(format!("{}/api/documents", server.base))
        .multipart(form)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["saved"], json!(["small.txt"]));
    let error = r["refused"][0]["error"].as_str().unwrap();
    assert!(error.contains("limit file_mb = 1"), "{error}");
    assert!(!ws.join("docs/big.txt").exists());
    // Over the whole request's limit: refused before any file is kept.
    let mut form = reqwest::multipart::Form::new();
    for i in 0..4 {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(vec![b'b'; 1000 * 1024])
                .file_name(format!("part{i}.txt")),
        );
    }
    // The server answers as soon as the limit is passed and stops reading: the client either reads that
    // refusal or, still writing the rest of the body, meets the closed connection first (a broken pipe).
    match client
        .post(format!("{}/api/documents", server.base))
        .multipart(form)
        .send()
        .await
    {
        Ok(r) => assert!(
            r.status().is_client_error(),
            "a 4 MB request under request_mb=3: {}",
            r.status()
        ),
        Err(e) => assert!(e.is_request(), "not refused, failed: {e:?}"),
    }
    for i in 0..4 {
        assert!(
            !ws.join(format!("docs/part{i}.txt")).exists(),
            "part{i} kept"
        );
    }
}
