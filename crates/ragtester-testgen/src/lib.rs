//! Stage 2: test suites. Splits each document into sections (paragraph ends, a token cap), chooses sections
//! (each classified first: only prose, and for some kinds code or tables, may feed a case), chooses sections
//! by the paper's strategies (Flesch-ranked complex passages, two kinds of negatives, coverage of unused
//! regions; plus cross-lingual and injection cases) or by the plain baseline, asks a chat model to write one
//! question per chosen section, and locates each expected answer in the source to record its span. `interop`
//! reads and writes test sets in RAGAS and DeepEval shapes.
//!
//! This crate knows documents and chat models; it knows nothing of retrieval, matrices or judging.

pub mod answered;
mod conversation_rows;
mod critic;
pub mod fair;
pub mod interop;
mod locate;
pub mod logged;
mod options;
mod plan;
mod planted;
mod poison;
mod prompt;
mod quality;
mod reply;
mod rng;
mod row_meta;
pub mod section_class;
mod sections;
mod shape;
mod writer;

pub use critic::{CRITIC_PROMPT_VERSION, Corpus, CriticPrompts, QualityGate};
pub use options::GenerationOptions;
pub use plan::{DocumentReport, GenerationReport, NotProse, generate};
pub use planted::{PLANTED_VERSION, planted_cases};
pub use prompt::{PROMPT_VERSION, QuestionPrompts};
pub use quality::SuiteQuality;
pub use sections::{Section, sections_of};
