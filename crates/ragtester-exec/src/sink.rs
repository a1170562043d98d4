//! Where execution keeps its answers: a trait this crate owns, so the engine knows nothing of how a run
//! directory stores them. The run store implements it for real runs (in `stages`); [`InMemory`] serves
//! tests and callers that keep nothing.

use anyhow::Result;
use ragtester_core::Answer;
use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

/// Answers committed one by one as cells finish, and read back when a killed run resumes.
pub trait AnswerSink: Sync {
    /// (case id, configuration id) of every answer already kept: the cells a resumed run skips.
    fn answered(&self) -> Result<HashSet<(String, String)>>;
    /// The answer kept for a cell, if any: an earlier turn's, for a conversation's history on resume.
    fn answer(&self, case_id: &str, config_id: &str) -> Result<Option<Answer>>;
    /// Keep an answer (replacing one of the same cell); it must be durable when this returns.
    fn put_answer(&self, answer: &Answer) -> Result<()>;
    /// The longest answer kept whole, in bytes: a longer one is cut there, its full length noted on the
    /// record (`--limit answer_kb`, which the front end read).
    fn answer_bytes(&self) -> u64;
}

/// Answers held in memory, by cell.
#[derive(Default)]
pub struct InMemory(Mutex<BTreeMap<(String, String), Answer>>);

impl InMemory {
    /// Every answer, by (case id, configuration id).
    pub fn answers(&self) -> Vec<Answer> {
        let held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        held.values().cloned().collect()
    }
}

impl AnswerSink for InMemory {
    fn answered(&self) -> Result<HashSet<(String, String)>> {
        let held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Ok(held.keys().cloned().collect())
    }

    fn answer(&self, case_id: &str, config_id: &str) -> Result<Option<Answer>> {
        let held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Ok(held
            .get(&(case_id.to_string(), config_id.to_string()))
            .cloned())
    }

    fn put_answer(&self, answer: &Answer) -> Result<()> {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        held.insert(
            (answer.case_id.clone(), answer.config_id.clone()),
            answer.clone(),
        );
        Ok(())
    }

    /// Held in memory, an answer is cut at the default limit.
    fn answer_bytes(&self) -> u64 {
        ragtester_core::Limits::default().answer_bytes()
    }
}
