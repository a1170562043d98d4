//! How long typst takes to typeset one Markdown file as a generated PDF (with the seeded layout noise of
//! runs 0, 1, 2): what compiling the typesetting crates unoptimised costs at run time (docs/benchmarks.md,
//! "Build and CI"). Usage: typeset_speed FILE.md LANGUAGE [RUNS]
use ragtester_docgen::render::{Noise, render_pdf};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(file), Some(language)) = (args.get(1), args.get(2)) else {
        anyhow::bail!("usage: typeset_speed FILE.md LANGUAGE [RUNS]");
    };
    let runs: u64 = args.get(3).map_or(Ok(3), |s| s.parse())?;
    let markdown = std::fs::read_to_string(file)?;
    for run in 0..runs {
        let started = Instant::now();
        let pdf = render_pdf(
            &markdown,
            "Typeset",
            language,
            &Noise::seeded(run, language),
        )?;
        println!(
            "{} bytes in {:.0} ms",
            pdf.len(),
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    Ok(())
}
