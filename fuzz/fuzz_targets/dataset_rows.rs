//! A RAGAS or DeepEval dataset (JSON lines, a JSON array or CSV) read into rows and imported as cases, the
//! same bytes read as answered records (`import --answers`) and as a human-labels file (`bench oracle
//! --labels`): rows or an error naming the row, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_core::document::TextLocator;
use ragtester_testgen::answered::{answered_records, parse_answered};
use ragtester_testgen::interop::{FileFormat, Shape, import_rows, parse_rows};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limits = ragtester_core::Limits::default();
    for format in [FileFormat::JsonLines, FileFormat::JsonArray, FileFormat::Csv] {
        for shape in [Shape::Ragas, Shape::DeepEval] {
            if let Ok(rows) = parse_rows(&text, format, shape, Path::new("fuzz"), &limits) {
                let _ = import_rows(shape, &rows, &[]);
            }
        }
        if let Ok(file) = parse_answered(&text, format, Path::new("fuzz"), &limits) {
            let _ = answered_records(&file.rows, "fuzz", &[], &TextLocator::new(&[]));
        }
    }
    let _ = ragtester_judge::agreement::parse_labels(&text, &limits);
});
