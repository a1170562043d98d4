//! Lines of the run's record files (suite, documents, answers, verdicts) as a user may hand them over:
//! each line a record or an error naming its line, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_core::record::parse_record;
use ragtester_core::{Answer, Document, TestCase, Verdict};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limits = ragtester_core::Limits::default();
    for (i, line) in text.lines().enumerate() {
        let _ = parse_record::<TestCase>(line, "suite.jsonl", i + 1, &limits);
        let _ = parse_record::<Answer>(line, "answers.jsonl", i + 1, &limits);
        let _ = parse_record::<Verdict>(line, "verdicts.jsonl", i + 1, &limits);
        let _ = parse_record::<Document>(line, "documents.jsonl", i + 1, &limits);
    }
});
