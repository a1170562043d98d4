//! The sample corpus compiled into the binary, so `ragtester demo` runs from any folder with no files.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

const CORPUS: &[(&str, &str)] = &[
    (
        "harbor-pump-manual.md",
        include_str!("../../../examples/corpus/harbor-pump-manual.md"),
    ),
    (
        "lumen-city-transit.md",
        include_str!("../../../examples/corpus/lumen-city-transit.md"),
    ),
    (
        "greenhouse-sensor-guide.txt",
        include_str!("../../../examples/corpus/greenhouse-sensor-guide.txt"),
    ),
    (
        "qinghe-library-rules.md",
        include_str!("../../../examples/corpus/qinghe-library-rules.md"),
    ),
    (
        "ebike-battery-warranty.md",
        include_str!("../../../examples/corpus/ebike-battery-warranty.md"),
    ),
    (
        "mountain-observatory.html",
        include_str!("../../../examples/corpus/mountain-observatory.html"),
    ),
];

/// Write the sample corpus into `dir` and return it.
pub fn write_corpus(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in CORPUS {
        std::fs::write(dir.join(name), text)
            .with_context(|| format!("cannot write {}", dir.join(name).display()))?;
    }
    Ok(dir.to_path_buf())
}
