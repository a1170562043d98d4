//! LLM prompting and parsing: the `Judge` trait and its two kinds, the judge prompts and their reply schema,
//! tolerant reading of replies with bounded re-asks, and pairwise comparison of two answers.

pub mod judges;
pub mod pairwise;
pub mod parse;
pub(crate) mod prompt;
