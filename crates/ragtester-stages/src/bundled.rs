//! The sample corpus compiled into the binary, so `ragtester demo` runs from any folder with no files.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

const CORPUS: &[(&str, &[u8])] = &[
    (
        "harbor-pump-manual.md",
        include_bytes!("../../../examples/corpus/harbor-pump-manual.md"),
    ),
    (
        "lumen-city-transit.md",
        include_bytes!("../../../examples/corpus/lumen-city-transit.md"),
    ),
    (
        "greenhouse-sensor-guide.txt",
        include_bytes!("../../../examples/corpus/greenhouse-sensor-guide.txt"),
    ),
    (
        "qinghe-library-rules.md",
        include_bytes!("../../../examples/corpus/qinghe-library-rules.md"),
    ),
    (
        "ebike-battery-warranty.md",
        include_bytes!("../../../examples/corpus/ebike-battery-warranty.md"),
    ),
    (
        "mountain-observatory.html",
        include_bytes!("../../../examples/corpus/mountain-observatory.html"),
    ),
    (
        "cedar-valley-water-report.pdf",
        include_bytes!("../../../examples/corpus/cedar-valley-water-report.pdf"),
    ),
    (
        "xinghai-cold-chain-guide.pdf",
        include_bytes!("../../../examples/corpus/xinghai-cold-chain-guide.pdf"),
    ),
];

/// Write the sample corpus into `dir` and return it.
pub fn write_corpus(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, bytes) in CORPUS {
        std::fs::write(dir.join(name), bytes)
            .with_context(|| format!("cannot write {}", dir.join(name).display()))?;
    }
    Ok(dir.to_path_buf())
}
