//! The scripted server as a process, for benchmarks: `cargo run --release -p ragtester-testkit --example
//! scripted_server -- LATENCY_MS [FAIL_PERCENT]`. Prints the OpenAI base URL, then serves until killed.
//! With FAIL_PERCENT, that share of requests (chosen by a fixed pattern) answers 429, 500 or stalls.

use ragtester_testkit::ScriptedServer;
use std::time::Duration;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let latency: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let fail_percent: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let server = ScriptedServer::start().await;
    server.set_latency(Duration::from_millis(latency));
    server.set_fail_percent(fail_percent);
    println!("{}", server.openai_base());
    std::future::pending::<()>().await;
}
