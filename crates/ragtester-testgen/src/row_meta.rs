//! What ragtester writes beside a row it exports to another tool's dataset, so that importing the row back
//! restores the cell exactly: shared by the exporter (`interop`) and the answered-records reader.

use ragtester_core::{Answer, Latency, TestCase, Usage};
use serde::{Deserialize, Serialize};

/// The key of ragtester's own metadata on a row it exported.
pub const META_KEY: &str = "ragtester";

/// What ragtester writes beside an answered row it exports: the case whole, and each passage's place and
/// score, which other tools' fields cannot hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowMeta {
    pub case: TestCase,
    pub contexts: Vec<ContextPlace>,
    pub latency: Latency,
    pub usage: Usage,
    /// A simulated user's conversation as it went, which no library's fields hold whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<ragtester_core::Simulation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextPlace {
    pub score: f64,
    pub chunk_id: String,
    pub document_id: String,
    pub start: usize,
    pub end: usize,
}

impl RowMeta {
    pub fn of(case: &TestCase, answer: &Answer) -> Self {
        Self {
            case: case.clone(),
            contexts: answer
                .contexts
                .iter()
                .map(|c| ContextPlace {
                    score: c.score,
                    chunk_id: c.chunk_id.clone(),
                    document_id: c.document_id.clone(),
                    start: c.start,
                    end: c.end,
                })
                .collect(),
            latency: answer.latency,
            usage: answer.usage,
            simulation: answer.simulation.clone(),
        }
    }
}
