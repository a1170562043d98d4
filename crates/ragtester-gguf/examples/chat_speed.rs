//! Decoding speed of a local GGUF chat model: one fixed question about a passage, greedy, a fixed number of
//! reply tokens. Usage: chat_speed MODEL.gguf [MAX_TOKENS] [RUNS | stdin]
//!
//! With `stdin` in place of RUNS it runs the prompt of each run number read from standard input, one a
//! line, as it arrives (flushing each result): bench/local_speed.sh alternates it with llama.cpp that way.
//!
//! Run `i` opens its system message with "Run i." so no two prompts share more than a few tokens: a server
//! that reuses a cached prompt prefix (bench/local_speed.sh sends llama.cpp the same messages) processes
//! every prompt in full. Then the last prompt RUNS times more: what the runner's prompt-prefix cache saves.
use ragtester_core::{ChatModel, ChatRequest, Message, TaskHint};
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let max_tokens: u32 = args.get(2).map_or(64, |s| s.parse().unwrap());
    let from_stdin = args.get(3).is_some_and(|s| s == "stdin");
    let runs: usize = match args.get(3) {
        Some(s) if !from_stdin => s.parse()?,
        _ => 3,
    };
    let t = Instant::now();
    let model = ragtester_gguf::LocalChat::load(std::path::Path::new(&args[1]))?;
    println!("loaded in {:.2} s", t.elapsed().as_secs_f64());
    let passage = "The battery of the e-bike is covered for 24 months or 500 charge cycles, whichever comes first. \
                   Damage from water immersion or from third-party chargers is not covered. "
        .repeat(4);
    let ask = |run: usize| {
        let mut request = ChatRequest::new(
            vec![
                Message::system(format!("Run {run}. Answer from the passage only.")),
                Message::user(format!(
                    "Passage: {passage}\n\nQuestion: How long is the battery covered, and what is excluded? Explain in detail."
                )),
            ],
            TaskHint::Answer {
                query: "How long is the battery covered?".into(),
                contexts: Vec::new(),
                history: Vec::new(),
            },
        );
        request.max_tokens = Some(max_tokens);
        request
    };
    let time = |request: ChatRequest| {
        let model = &model;
        async move {
            let t = Instant::now();
            let reply = model.chat(&request).await?;
            let s = t.elapsed().as_secs_f64();
            println!(
                "{} prompt + {} reply tokens in {s:.2} s: {:.1} reply tokens/s",
                reply.usage.prompt_tokens,
                reply.usage.completion_tokens,
                reply.usage.completion_tokens as f64 / s
            );
            anyhow::Ok(())
        }
    };
    if from_stdin {
        use std::io::{BufRead, Write};
        for line in std::io::stdin().lock().lines() {
            time(ask(line?.trim().parse()?)).await?;
            std::io::stdout().flush()?;
        }
        return Ok(());
    }
    for run in 1..=runs {
        time(ask(run)).await?;
    }
    println!("== the same prompt again (the runner's prompt-prefix cache)");
    for _ in 0..runs {
        time(ask(runs)).await?;
    }
    Ok(())
}
