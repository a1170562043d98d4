//! Locked down from inside the doors: what the UI serves cannot drive it (a run directory's report.html is
//! data, read within bounds and never through a link out of the run), only the owner reaches it (a token on
//! every address, never on a command line, a cookie per port), and nothing a user keeps is overwritten
//! (uploads, the manifest, suites, the bundled samples, links).

mod ui;

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use ui::{serve, serve_env};

fn upload(name: &str, bytes: &[u8]) -> reqwest::multipart::Form {
    reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes.to_vec()).file_name(name.to_string()),
    )
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A run directory as someone else might send one: a suite (so it is a run) and a report.html.
fn foreign_run(dir: &Path, report: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("suite.jsonl"), "").unwrap();
    std::fs::write(dir.join("report.html"), report).unwrap();
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_served_run_directory_is_data_read_within_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let private = tmp.path().join("private.html");
    std::fs::write(&private, "<p>the owner's private notes</p>").unwrap();
    let scripted = tmp.path().join("scripted");
    foreign_run(
        &scripted,
        "<h1>Report</h1><script>fetch('/api/session')</script>",
    );
    let zero = tmp.path().join("zero");
    foreign_run(&zero, "");
    std::fs::remove_file(zero.join("report.html")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("report.html")).unwrap();
    let leak = tmp.path().join("leak");
    foreign_run(&leak, "");
    std::fs::remove_file(leak.join("report.html")).unwrap();
    std::os::unix::fs::symlink(&private, leak.join("report.html")).unwrap();
    let endless = tmp.path().join("endless");
    foreign_run(&endless, "");
    std::os::unix::fs::symlink("/dev/zero", endless.join("documents.jsonl")).unwrap();
    let server = serve(&tmp.path().join("ws"), &[&scripted, &zero, &leak, &endless]);
    let client = server.client().await;
    let get = |path: &str| client.get(format!("{}{path}", server.base)).send();

    // A report is served as data: sandboxed (an opaque origin: no cookie, no same-origin request) with no
    // script at all.
    let r = get("/api/runs/scripted/report").await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.starts_with("sandbox;"), "{csp}");
    assert!(
        csp.contains("script-src 'none'") && !csp.contains("unsafe-inline'; script"),
        "{csp}"
    );
    assert!(!csp.contains("script-src 'unsafe-inline'"), "{csp}");

    // Links out of the run directory are refused by name, at once: no endless read, no private file.
    for (run, what) in [
        ("zero", "report"),
        ("leak", "report"),
        ("endless", "overview"),
    ] {
        let path = if what == "report" {
            format!("/api/runs/{run}/report")
        } else {
            format!("/api/runs/{run}")
        };
        let started = Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(20), get(&path))
            .await
            .unwrap_or_else(|_| panic!("{path} did not answer"))
            .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10), "{path}");
        assert!(!r.status().is_success(), "{path}: {}", r.status());
        let body = r.text().await.unwrap();
        assert!(
            body.contains("symbolic link out of the run directory"),
            "{path}: {body}"
        );
        assert!(!body.contains("private notes"), "{path}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn another_account_of_the_machine_is_not_the_owner() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let token = "env-given-token-0123456789abcdef";
    let server = serve_env(&ws, &[], &[], &[("RAGTESTER_TOKEN", token)]);
    assert_eq!(server.token, token, "the token comes from the environment");
    // No command line shows it (every account reads /proc/PID/cmdline).
    #[cfg(target_os = "linux")]
    {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", server.pid())).unwrap();
        assert!(!String::from_utf8_lossy(&cmdline).contains(token));
    }
    // The workspace on disk is the owner's alone.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ws).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the workspace is {mode:o}");
    }
    // Another account on loopback: nobody (uid 65534) when this test may become it, this one without the
    // token otherwise — to the server the two are the same request.
    let probe = r#"
import os, sys, urllib.request, urllib.error
seen = []
for path in ["/", "/api/session", "/api/workspace", "/api/jobs"]:
    try:
        seen.append(f"{path} {urllib.request.urlopen(sys.argv[1] + path).status}")
    except urllib.error.HTTPError as e:
        seen.append(f"{path} {e.code}")
try:
    os.listdir(sys.argv[2])
    seen.append("workspace listed")
except PermissionError:
    seen.append("workspace private")
print(" | ".join(seen))
"#;
    #[cfg(unix)]
    let as_nobody = nix_is_root() && Path::new("/usr/bin/python3").exists();
    #[cfg(not(unix))]
    let as_nobody = false;
    if as_nobody {
        // The test's own folder is private to it; open it so only the workspace's own mode stands.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .args(["/usr/bin/python3", "-c", probe, &server.base])
            .arg(ws.join("docs"))
            .env_remove("RAGTESTER_TOKEN")
            .output()
            .expect("setpriv runs");
        let seen = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{seen} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            seen.trim(),
            "/ 403 | /api/session 403 | /api/workspace 403 | /api/jobs 403 | workspace private"
        );
    } else {
        let stranger = ragtester_http::client_builder().build().unwrap();
        for path in ["/", "/api/session", "/api/workspace", "/api/jobs"] {
            let r = stranger
                .get(format!("{}{path}", server.base))
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), StatusCode::FORBIDDEN, "{path}");
        }
    }
}

#[cfg(unix)]
fn nix_is_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The cookie a browser gets from a server's printed address.
async fn session_cookie(client: &reqwest::Client, printed: &str) -> String {
    let r = client
        .get(printed)
        .header("sec-fetch-mode", "navigate")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let cookie = r.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cookie_belongs_to_its_port_and_never_carries_the_token() {
    let tmp = tempfile::tempdir().unwrap();
    let a = serve(&tmp.path().join("a"), &[]);
    let b = serve(&tmp.path().join("b"), &[]);
    let client = ragtester_http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let from_a = session_cookie(&client, &a.printed).await;
    let port_a = a.base.rsplit(':').next().unwrap();
    assert!(
        from_a.starts_with(&format!("ragtester_{port_a}=")),
        "{from_a}"
    );
    assert!(!from_a.contains(&a.token));
    // A browser sends every 127.0.0.1 cookie to every port: B takes A's for nothing.
    let r = client
        .get(format!("{}/api/workspace", b.base))
        .header("cookie", &from_a)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    // B's printed address opens B beside A's cookie, and the two cookies live side by side.
    let from_b = session_cookie(&client, &b.printed).await;
    let both = format!("{from_a}; {from_b}");
    for server in [&a, &b] {
        let r = client
            .get(format!("{}/api/workspace", server.base))
            .header("cookie", &both)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::OK, "{}", server.base);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_on_the_command_line_is_warned_of_and_a_weak_one_refused() {
    use std::io::{BufRead, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let start = |token: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ragtester"))
            .args([
                "serve",
                "--addr",
                "127.0.0.1:0",
                "--token",
                token,
                "--workspace",
            ])
            .arg(tmp.path().join("ws"))
            .env_remove("RAGTESTER_TOKEN")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut child = start("given-on-the-command-line-0123");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut warned = String::new();
    // The warning, folded to the terminal's width, names where the token belongs on its last line.
    while stderr.read_line(&mut warned).unwrap() > 0 && !warned.contains("RAGTESTER_TOKEN") {}
    let _ = child.kill();
    let _ = child.wait();
    assert!(warned.contains("RAGTESTER_TOKEN"), "{warned}");
    let out = start("short").wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16 characters"));
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn nothing_a_user_keeps_is_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let server = serve(&ws, &[]);
    let client = server.client().await;
    let base = &server.base;
    let send = |form: reqwest::multipart::Form| {
        client
            .post(format!("{base}/api/documents"))
            .multipart(form)
            .send()
    };
    // A same-name upload is refused with the name; the first stays as it was.
    let r: Value = send(upload("manual.md", b"# Mine\n\nthe original"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["saved"], json!(["manual.md"]));
    let r: Value = send(upload("manual.md", b"# Replaced"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["saved"], json!([]));
    let error = r["refused"][0]["error"].as_str().unwrap();
    assert!(error.contains("`manual.md` exists already"), "{error}");
    assert_eq!(
        std::fs::read_to_string(ws.join("docs/manual.md")).unwrap(),
        "# Mine\n\nthe original"
    );
    // The workspace's own manifest cannot be uploaded (generated documents would be recorded as real).
    let r: Value = send(upload("docgen.json", b"{\"documents\": []}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        r["refused"][0]["error"]
            .as_str()
            .unwrap()
            .contains("own record"),
        "{r}"
    );
    // Nothing half-written is left behind.
    assert_eq!(names_in(&ws.join("docs")), ["manual.md"]);

    // The samples keep a same-name document and never write through a link out of the workspace.
    let other = tmp.path().join("other");
    let probe = serve(&other, &[]);
    let r: Value = probe
        .client()
        .await
        .post(format!("{}/api/documents/samples", probe.base))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let samples = names_in(&other.join("docs"));
    assert_eq!(r["written"].as_u64(), Some(samples.len() as u64));
    let outside = tmp.path().join("outside.txt");
    std::fs::write(&outside, "not the workspace's").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("docs").join(&samples[0])).unwrap();
    std::fs::write(ws.join("docs").join(&samples[1]), "the user's own").unwrap();
    let r: Value = client
        .post(format!("{base}/api/documents/samples"))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["skipped"], json!([samples[0], samples[1]]), "{r}");
    assert_eq!(r["written"].as_u64(), Some(samples.len() as u64 - 2));
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "not the workspace's"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("docs").join(&samples[1])).unwrap(),
        "the user's own"
    );

    // A suite's name is taken once: a second suite of that name is refused before any job starts.
    std::fs::write(ws.join("suites/suite-1.jsonl"), "").unwrap();
    let r = client
        .post(format!("{base}/api/jobs/suite"))
        .json(&json!({"name": "suite-1"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::CONFLICT);
    let body: Value = r.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("exists already"),
        "{body}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("suites/suite-1.jsonl")).unwrap(),
        ""
    );
    let jobs: Value = client
        .get(format!("{base}/api/jobs"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(jobs, json!([]));
}
