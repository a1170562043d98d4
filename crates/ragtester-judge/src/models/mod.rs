//! Models and profiles: an answer as named signals (lexical, and semantic from an embedder), the judge
//! profiles that turn them into scores, the logistic fits that make the profiles, and a judge's graded score
//! of one answer.

pub mod fit;
pub mod graded;
pub mod meaning;
pub mod profile;
pub mod signals;
