//! The text analysis every stage must agree on, for English and Chinese alike: terms (stemmed words, CJK
//! bigrams), jieba words, sentences, language detection, keyword recall (`lexical.rs`), refusal detection
//! (`refusal.rs`), quantities read as values with their units, dates and times (`facts/`), readability (`readability.rs`: Flesch; `zh-asl-v1` for Chinese) and cl100k token counts
//! (`tokens.rs`).
//!
//! Knows plain text only: no records, no models, no I/O.

pub mod contradiction;
pub mod facts;
mod lexical;
pub mod readability;
pub mod refusal;
pub mod tokens;

pub use lexical::*;
