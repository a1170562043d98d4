//! Any bytes given to the PDF loader end as page texts or an error: never a panic that escapes, never a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtester_ingest::{PdfOxide, assemble, extract_pages};

fuzz_target!(|data: &[u8]| {
    // libfuzzer-sys aborts on any panic, even a caught one; the loader's contract is that a parser panic is
    // caught and becomes this file's error, so restore the default hook and let only escaping panics abort.
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| drop(std::panic::take_hook()));
    if let Ok(pages) = extract_pages(&PdfOxide::default(), data.to_vec()) {
        let paged = assemble(&pages, true);
        assert_eq!(paged.pages.len(), pages.len());
        assert!(paged.pages.iter().all(|p| p.end <= paged.text.chars().count()));
    }
});
