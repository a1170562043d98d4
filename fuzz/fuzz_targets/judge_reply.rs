//! A judge's reply as models write it (chatter, fences, JSON5, Python literals): a verdict or an error,
//! never a panic or a stack overflow in the tolerant readers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_judge::parse::{json_values, parse_judge_reply};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_judge_reply(&text);
    let _ = json_values(&text);
});
