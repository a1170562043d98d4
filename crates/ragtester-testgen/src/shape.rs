//! The dataset shapes `import` and `export` speak: RAGAS's, DeepEval's, and plain rows with OpenAI chat
//! messages, each with its field names.

use anyhow::{Result, bail};

/// Which tool's dataset fields a file uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Ragas,
    DeepEval,
    /// Plain JSON lines as a team's own logs hold them (`query`, `answer`, `contexts`, `reference`), a
    /// conversation's turns as OpenAI chat `messages`.
    Messages,
}

impl Shape {
    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "ragas" => Ok(Self::Ragas),
            "deepeval" => Ok(Self::DeepEval),
            "messages" => Ok(Self::Messages),
            other => {
                bail!("unknown dataset format `{other}`: expected ragas, deepeval or messages")
            }
        }
    }

    /// The library the shape is for, as people name it.
    pub fn library(self) -> &'static str {
        match self {
            Self::Ragas => "RAGAS",
            Self::DeepEval => "DeepEval",
            Self::Messages => "the messages format",
        }
    }

    /// (query, reference, reference contexts, response, retrieved contexts) field names.
    pub(crate) fn fields(self) -> [&'static str; 5] {
        match self {
            Self::Ragas => [
                "user_input",
                "reference",
                "reference_contexts",
                "response",
                "retrieved_contexts",
            ],
            Self::DeepEval => [
                "input",
                "expected_output",
                "context",
                "actual_output",
                "retrieval_context",
            ],
            Self::Messages => [
                "query",
                "reference",
                "reference_contexts",
                "answer",
                "contexts",
            ],
        }
    }
}
