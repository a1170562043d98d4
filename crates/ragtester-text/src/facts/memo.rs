//! Texts already read, kept: judging a run reads each retrieved passage for every cell that retrieved it,
//! and several checks of one cell read the same passages. Bounded: a full table is emptied and refilled,
//! so memory stays flat on a run of any size.

use super::Quantity;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Entries kept per table before it is emptied.
const KEPT: usize = 50_000;

type Table<V> = OnceLock<Mutex<HashMap<String, V>>>;

fn cached<V: Clone>(table: &'static Table<V>, text: &str, work: impl FnOnce(&str) -> V) -> V {
    let table = table.get_or_init(Default::default);
    if let Some(v) = table.lock().ok().and_then(|t| t.get(text).cloned()) {
        return v;
    }
    let value = work(text);
    if let Ok(mut t) = table.lock() {
        if t.len() >= KEPT {
            t.clear();
        }
        t.insert(text.to_string(), value.clone());
    }
    value
}

pub(super) fn quantities(text: &str, work: impl FnOnce(&str) -> Vec<Quantity>) -> Vec<Quantity> {
    static TABLE: Table<Vec<Quantity>> = OnceLock::new();
    cached(&TABLE, text, work)
}

pub(super) fn normalised(text: &str, work: impl FnOnce(&str) -> String) -> String {
    static TABLE: Table<String> = OnceLock::new();
    cached(&TABLE, text, work)
}
