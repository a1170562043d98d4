//! `ragtester serve` as the UI tests start it: a server on a free loopback port, and clients that present
//! its access token (as a script does, `Authorization: Bearer`) and the session's CSRF token as the page
//! does.
#![allow(dead_code)] // each test file uses its own subset

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`, without the token the server printed.
    pub base: String,
    /// The whole address the server printed, `…/?token=TOKEN`.
    pub printed: String,
    /// The access token in that address.
    pub token: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Serve `workspace` on loopback, browsing `runs`, with any further flags.
pub fn serve_with(workspace: &Path, runs: &[&Path], flags: &[&str]) -> Server {
    serve_env(workspace, runs, flags, &[])
}

/// [`serve_with`] with variables set in the server's environment.
pub fn serve_env(workspace: &Path, runs: &[&Path], flags: &[&str], env: &[(&str, &str)]) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ragtester"));
    cmd.args(["serve", "--addr", "127.0.0.1:0", "--workspace"])
        .arg(workspace)
        .args(flags)
        // Beside the workspace, not in it: the server makes the workspace itself, private to its account.
        .env("RAGTESTER_CACHE_DIR", workspace.with_extension("cache"))
        .env_remove("RAGTESTER_TOKEN")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for r in runs {
        cmd.arg("--run").arg(r);
    }
    let mut child = cmd.spawn().expect("serve starts");
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    // Keep reading what the stages print, as a terminal would.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let printed = line
        .trim()
        .strip_prefix("ragtester UI on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    let (base, token) = printed
        .split_once("/?token=")
        .unwrap_or_else(|| panic!("no access token in {printed:?}"));
    Server {
        base: base.to_string(),
        token: token.to_string(),
        child,
        printed,
    }
}

pub fn serve(workspace: &Path, runs: &[&Path]) -> Server {
    serve_with(workspace, runs, &[])
}

impl Server {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// A client that presents the access token and nothing else.
    pub fn authorised(&self) -> reqwest::Client {
        self.client_with(None)
    }

    /// A client sending the access token, and the CSRF token when given, with every request.
    fn client_with(&self, csrf: Option<String>) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        let bearer = format!("Bearer {}", self.token);
        headers.insert("authorization", bearer.parse().unwrap());
        if let Some(csrf) = csrf {
            headers.insert("x-ragtester-csrf", csrf.parse().unwrap());
        }
        ragtester_http::client_builder()
            .default_headers(headers)
            .build()
            .unwrap()
    }

    /// The session's CSRF token, read as a non-browser client reads it.
    pub async fn csrf(&self) -> String {
        let client = self.authorised();
        let session: serde_json::Value = (client.get(format!("{}/api/session", self.base)))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        session["csrf"].as_str().expect("a CSRF token").to_string()
    }

    /// A client that sends the session's CSRF token with every request, as the UI's page does.
    pub async fn client(&self) -> reqwest::Client {
        self.client_with(Some(self.csrf().await))
    }
}
