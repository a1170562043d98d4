//! A real Chroma server (`chroma run` from the `chromadb` PyPI package) on 127.0.0.1 for the vector-store
//! tests. Found at `RAGTESTER_CHROMA`, or in the Chroma environment scripts/real-tools.sh keeps beside the
//! tools' (`RAGTESTER_TOOLS_PYTHON` = TOOLS/venv/bin/python → TOOLS/chroma-venv/bin/chroma). Without one,
//! `start` says so and returns None — unless `RAGTESTER_REQUIRE_REAL_TOOLS=1` (CI), where it panics.

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct ChromaServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    data: PathBuf,
}

fn executable() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("RAGTESTER_CHROMA") {
        return Some(PathBuf::from(path));
    }
    let python = PathBuf::from(std::env::var("RAGTESTER_TOOLS_PYTHON").ok()?);
    let tools = python.parent()?.parent()?.parent()?;
    let chroma = tools.join("chroma-venv/bin/chroma");
    chroma.is_file().then_some(chroma)
}

impl ChromaServer {
    pub fn start() -> Option<Self> {
        let Some(chroma) = executable() else {
            let required = std::env::var("RAGTESTER_REQUIRE_REAL_TOOLS").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "RAGTESTER_REQUIRE_REAL_TOOLS=1 but no Chroma server: run scripts/real-tools.sh"
            );
            eprintln!(
                "SKIPPED: no Chroma server (pip install chromadb, then set RAGTESTER_CHROMA to its `chroma`)"
            );
            return None;
        };
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("a bound port").port()
        };
        let data =
            std::env::temp_dir().join(format!("ragtester-chroma-{}-{port}", std::process::id()));
        let child = Command::new(&chroma)
            .args(["run", "--path"])
            .arg(&data)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chroma.display()));
        let server = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            data,
        };
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "Chroma did not listen on {port} within a minute"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(server)
    }

    /// The `--vector-store` spec for this server.
    pub fn spec(&self) -> String {
        format!("chroma:{}", self.url)
    }
}

impl Drop for ChromaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}
