//! Any bytes given to the text decoder end as text or an error, and decoded text is valid for every later stage.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_ingest::decode_text;

fuzz_target!(|data: &[u8]| {
    if let Ok(decoded) = decode_text(data) {
        assert!(!decoded.encoding.is_empty());
        let _ = ragtester_ingest::expand_ligatures(&decoded.text);
    }
});
