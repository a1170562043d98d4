//! How a suite is generated: shared by the planner (`plan.rs`) and the question writer (`writer/`).

use crate::prompt::QuestionPrompts;
use ragtester_core::Generator;

#[derive(Debug, Clone)]
pub struct GenerationOptions {
    pub generator: Generator,
    /// Cases per document (N_test).
    pub n_test: usize,
    /// Hardest sections to query (N_complex); a quarter of n_test when unset.
    pub n_complex: Option<usize>,
    /// Conversations per document, beside the single questions; their kinds take turns across documents.
    pub conversations: usize,
    pub section_tokens: usize,
    pub seed: u64,
    /// Documents written at the same time.
    pub concurrency: usize,
    /// The question-writing templates (built in, or the user's).
    pub prompts: QuestionPrompts,
}
