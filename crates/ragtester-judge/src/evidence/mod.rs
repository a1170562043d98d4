//! Evidence and rules: what the case and the answer alone show (rule metrics, claims, citations, the
//! answer markers of a case, the answer's language) and the rules that bound every judge's verdict, and the
//! one primary cause of each failed or errored cell.

pub mod attribution;
pub mod citations;
pub mod claims;
pub(crate) mod language;
pub(crate) mod markers;
pub(crate) mod rules;
