//! The run's records as the store holds them. The store is written first — inputs once, each answer the
//! moment it exists, each batch of verdicts as it is judged — and the JSONL records every reader reads are
//! written from what was committed, here and nowhere else.

use super::{ANSWERS, RunDb, RunDir, VERDICTS};
use anyhow::{Context, Result};
use ragtester_core::record::AtomicWriter;
use ragtester_core::{Answer, Configuration, TestCase, Verdict};
use ragtester_store::RunStore;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

impl RunDir {
    /// answers.jsonl from the store: every answered cell of these configurations and cases, in
    /// configuration order then case order, streamed (a run's answers are never all in memory). Returns how
    /// many were written and how many of those are errors.
    pub fn export_answers(
        &self,
        db: &RunDb,
        configs: &[&str],
        cases: &[&str],
    ) -> Result<(usize, usize)> {
        let store = db.store();
        let mut file = AtomicWriter::create(&self.file(ANSWERS))?;
        let (mut written, mut errors) = (0, 0);
        store.for_each_answer_in_order(configs, cases, |answer| {
            written += 1;
            errors += usize::from(answer.error.is_some());
            file.record(&answer)
        })?;
        file.finish()?;
        Ok((written, errors))
    }

    /// Answers that exist already (merged shards, imported records) committed to the store, then
    /// answers.jsonl written from it as a run writes it.
    pub fn commit_answers(
        &self,
        db: &RunDb,
        answers: &[Answer],
        configs: &[Configuration],
        cases: &[TestCase],
    ) -> Result<()> {
        for answer in answers {
            db.put_answer(answer)?;
        }
        let configs: Vec<&str> = configs.iter().map(|c| c.id.as_str()).collect();
        let cases: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
        self.export_answers(db, &configs, &cases)?;
        Ok(())
    }

    /// Where one judging's verdicts go, batch by batch.
    pub fn verdict_writer<'a>(&self, db: &'a RunDb, panel: bool) -> Result<VerdictWriter<'a>> {
        let store = db.store();
        let main = AtomicWriter::create(&self.file(VERDICTS))?;
        let judges = if panel {
            let path = self.file(".verdicts-of-each-judge.partial");
            let file = std::fs::File::create(&path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            Some((path, BufWriter::new(file)))
        } else {
            None
        };
        Ok(VerdictWriter {
            store,
            main,
            judges,
            written: 0,
        })
    }
}

/// One judging's verdicts: each batch committed to the store, then appended to verdicts.jsonl — with a
/// panel, the panel's verdicts first (reports follow them) and every judge's after them, kept in a side file
/// until the end.
pub struct VerdictWriter<'a> {
    store: &'a RunStore,
    main: AtomicWriter,
    judges: Option<(PathBuf, BufWriter<std::fs::File>)>,
    written: usize,
}

impl VerdictWriter<'_> {
    pub fn add(&mut self, panel: &[Verdict], raw: &[Verdict]) -> Result<()> {
        self.store.put_verdicts(panel)?;
        self.store.put_verdicts(raw)?;
        for v in panel {
            self.main.record(v)?;
        }
        match &mut self.judges {
            Some((_, side)) => {
                for v in raw {
                    serde_json::to_writer(&mut *side, v)?;
                    side.write_all(b"\n")?;
                }
            }
            None => {
                for v in raw {
                    self.main.record(v)?;
                }
            }
        }
        self.written += panel.len() + raw.len();
        Ok(())
    }

    /// Append every judge's verdicts after the panel's and move the file into place; returns how many
    /// verdicts it holds.
    pub fn finish(mut self) -> Result<usize> {
        if let Some((path, side)) = self.judges.take() {
            drop(side.into_inner().map_err(|e| e.into_error())?);
            let mut file = std::fs::File::open(&path)?;
            self.main.copy_from(&mut file)?;
            let _ = std::fs::remove_file(&path);
        }
        self.main.finish()?;
        Ok(self.written)
    }
}
