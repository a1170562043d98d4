//! The run directory's database, open: what resuming needs and the records cannot say. The SQL store behind
//! it is reached through this type alone, its keys and tables named by the store's enums, never by strings.

use anyhow::Result;
use ragtester_core::shard::Shard;
use ragtester_core::{Answer, Verdict};
use ragtester_store::{Meta, RunStore, Table};
use std::collections::HashSet;

pub struct RunDb {
    store: RunStore,
}

impl RunDb {
    pub(crate) fn open(dir: &std::path::Path) -> Result<Self> {
        Ok(Self {
            store: RunStore::open(dir)?,
        })
    }

    pub(crate) fn store(&self) -> &RunStore {
        &self.store
    }

    /// The run's manifest as it was saved (JSON), if a run has started here.
    pub(crate) fn manifest_json(&self) -> Result<Option<String>> {
        self.store.meta(Meta::Manifest)
    }

    pub fn set_manifest(&self, manifest: &crate::manifest::RunManifest) -> Result<()> {
        self.store
            .set_meta(Meta::Manifest, &serde_json::to_string(manifest)?)
    }

    /// The slice of a run's cells the directory holds (`run --shard K/N`); None for all of them.
    pub fn shard(&self) -> Result<Option<Shard>> {
        self.store
            .meta(Meta::Shard)?
            .as_deref()
            .map(Shard::parse)
            .transpose()
    }

    pub fn set_shard(&self, shard: Option<Shard>) -> Result<()> {
        match shard {
            Some(shard) => self.store.set_meta(Meta::Shard, &shard.to_string()),
            None => self.store.delete_meta(Meta::Shard),
        }
    }

    /// How each endpoint took structured output, as the last judging here learned it (JSON).
    pub fn structured_output(&self) -> Result<Option<String>> {
        self.store.meta(Meta::StructuredOutput)
    }

    pub fn set_structured_output<T: serde::Serialize>(&self, learned: &T) -> Result<()> {
        self.store
            .set_meta(Meta::StructuredOutput, &serde_json::to_string(learned)?)
    }

    /// Whether any cell has been answered here.
    pub fn has_answers(&self) -> Result<bool> {
        Ok(self.store.count(Table::Answers)? > 0)
    }

    /// A stage's start, with what it was asked, in the store's log.
    pub fn log_stage(&self, stage: &str, detail: &str) -> Result<()> {
        self.store.log_stage(stage, detail)
    }

    /// The (case, configuration) cells answered so far.
    pub fn answered(&self) -> Result<HashSet<(String, String)>> {
        self.store.answered()
    }

    pub fn answer(&self, case_id: &str, config_id: &str) -> Result<Option<Answer>> {
        self.store.answer(case_id, config_id)
    }

    /// Every answer committed here (a shard's, for merge).
    pub fn answers(&self) -> Result<Vec<Answer>> {
        self.store.answers()
    }

    /// One answer committed the moment it exists.
    pub fn put_answer(&self, answer: &Answer) -> Result<()> {
        self.store.put_answer(answer)
    }

    /// Drop verdicts of every judging session but `session`; returns how many verdicts it already holds.
    pub fn keep_judging_session(&self, session: &str) -> Result<u64> {
        self.store.keep_judging_session(session)
    }

    /// One verdict of a judging session, committed as it is made.
    pub fn put_judged(&self, session: &str, verdict: &Verdict) -> Result<()> {
        self.store.put_judged(session, verdict)
    }

    /// The session's verdicts of these cells, as committed.
    pub fn judged_cells(&self, session: &str, cells: &[(&str, &str)]) -> Result<Vec<Verdict>> {
        self.store.judged_cells(session, cells)
    }
}
