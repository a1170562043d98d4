//! A judging pass over a run's answers, shaped as execution is (`ragtester_exec::execute`): answers read in
//! batches, so memory follows the batch and not the run; each turn of a conversation judged with the history
//! its earlier answers make; every fresh verdict committed to the sink the moment it is made, so a killed
//! pass resumes where it stopped; each batch's verdicts attributed and handed to the sink in order. The sink
//! is the caller's (the run directory); this crate knows no store.

use crate::{Histories, Judge, JudgeJob, JudgePrompts, PanelMethod, Scoring};
use anyhow::Result;
use ragtester_core::progress::Counts;
use ragtester_core::{Answer, Message, Role, TestCase, Verdict, VerdictStatus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where a pass's verdicts go.
pub trait VerdictSink: Sync {
    /// The verdicts this pass made earlier for these cells (resuming).
    fn judged(&self, cells: &[(&str, &str)]) -> Result<Vec<Verdict>>;
    /// One fresh verdict, committed the moment it is made.
    fn commit(&self, verdict: &Verdict) -> Result<()>;
    /// A batch judged: the panel's verdicts (none without a panel), then every judge's.
    fn write(&mut self, panel: &[Verdict], raw: &[Verdict]) -> Result<()>;
}

/// Everything a pass over a run's answers judges with.
pub struct Pass<'a> {
    /// The suite, conversations' turns included.
    pub cases: &'a [TestCase],
    pub judges: &'a [Arc<dyn Judge>],
    pub samples: u32,
    pub concurrency: usize,
    pub prompts: &'a JudgePrompts,
    /// Who splits and checks claims; None for no claim metrics.
    pub claims: Option<&'a dyn Judge>,
    pub scoring: &'a Scoring,
    /// How several verdicts of a cell become the one reports follow; None with one judge and one sample.
    pub panel: Option<PanelMethod>,
    /// Verdicts the pass makes: answers × judges × samples (what progress counts towards).
    pub total: usize,
}

/// What a pass leaves for the oracle's figures.
pub struct Judged {
    /// Every raw verdict with only what the figures read (judge, cell, sample, outcome, criteria mean).
    pub slim: Vec<Verdict>,
    /// Errors among the verdicts reports follow (the panel's when there is one).
    pub errors: usize,
}

/// Judge `answers`, in run order (configuration, then suite order), batch by batch into `sink`; `progress`
/// is told the counts after every verdict. A judge error made earlier is asked again rather than kept:
/// resuming must not fix in place an error a rerun could clear.
pub async fn judge_answers(
    pass: &Pass<'_>,
    answers: impl Iterator<Item = Result<Answer>>,
    sink: &mut dyn VerdictSink,
    progress: &(dyn Fn(Counts) + Sync),
) -> Result<Judged> {
    let mut judging = Judging {
        pass,
        turns: pass
            .cases
            .iter()
            .enumerate()
            .filter(|(_, c)| c.turn.is_some())
            .map(|(i, c)| (c.id.clone(), i))
            .collect(),
        counts: Mutex::new(Counts {
            total: pass.total,
            ..Default::default()
        }),
        slim: Vec::with_capacity(pass.total),
        errors: 0,
        conversations: HashMap::new(),
    };
    // Enough answers per batch to keep every call slot busy but the batch's tail.
    let batch_size = (pass.concurrency * 16).max(16);
    let mut answers = answers.peekable();
    while answers.peek().is_some() {
        let batch: Vec<Answer> = answers.by_ref().take(batch_size).collect::<Result<_>>()?;
        judging.batch(&batch, sink, progress).await?;
    }
    Ok(Judged {
        slim: judging.slim,
        errors: judging.errors,
    })
}

/// A pass under way: the figures batches add to.
struct Judging<'a> {
    pass: &'a Pass<'a>,
    /// Turns of conversations by case id: their history is shown to the judge.
    turns: HashMap<String, usize>,
    counts: Mutex<Counts>,
    slim: Vec<Verdict>,
    errors: usize,
    /// Per (configuration, conversation): the turns judged so far, as the next turn's history.
    conversations: HashMap<(String, String), Vec<Message>>,
}

impl Judging<'_> {
    async fn batch(
        &mut self,
        batch: &[Answer],
        sink: &mut dyn VerdictSink,
        progress: &(dyn Fn(Counts) + Sync),
    ) -> Result<()> {
        let pass = self.pass;
        let cells: Vec<(&str, &str)> = batch
            .iter()
            .map(|a| (a.case_id.as_str(), a.config_id.as_str()))
            .collect();
        let done: Vec<_> = (sink.judged(&cells)?.into_iter())
            .filter(|v| v.status != VerdictStatus::JudgeError)
            .collect();
        let histories = self.histories(batch);
        let job = JudgeJob {
            cases: pass.cases,
            answers: batch,
            judges: pass.judges,
            samples: pass.samples,
            concurrency: pass.concurrency,
            prompts: pass.prompts,
            claims: pass.claims,
            histories: Some(&histories),
            scoring: Some(pass.scoring),
        };
        let before = self.counts.lock().unwrap_or_else(|p| p.into_inner()).done;
        let commit_failed = Mutex::new(None::<anyhow::Error>);
        let committing: &dyn VerdictSink = sink;
        let made = |verdict: &Verdict, fresh: bool, n: usize| {
            if fresh && let Err(e) = committing.commit(verdict) {
                commit_failed.lock().unwrap().get_or_insert(e);
            }
            let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
            c.done = c.done.max(before + n);
            c.errors += usize::from(verdict.status != VerdictStatus::Ok);
            c.cached += usize::from(!fresh);
            progress(*c);
        };
        let mut raw = if job.runs_directly() {
            on_every_core(|| job.run_directly(&done, &made))
        } else {
            job.run(&done, &made).await
        };
        if let Some(e) = commit_failed.into_inner().unwrap() {
            return Err(e.context("cannot commit a verdict"));
        }
        let mut panel = match pass.panel {
            Some(method) => crate::consensus(&raw, method),
            None => Vec::new(),
        };
        self.slim.extend(raw.iter().map(slim_verdict));
        for verdicts in [&mut panel, &mut raw] {
            crate::attribution::attribute_all(pass.cases, batch, verdicts, Some(&histories));
        }
        // Reports follow the panel's verdicts when there is a panel, else the one judge's.
        let followed = if pass.panel.is_some() { &panel } else { &raw };
        self.errors += followed
            .iter()
            .filter(|v| v.status != VerdictStatus::Ok)
            .count();
        sink.write(&panel, &raw)
    }

    /// The history each turn of the batch was asked after: its conversation's earlier turns in this
    /// configuration, the questions and the system's answers (a failed turn's question alone).
    fn histories(&mut self, batch: &[Answer]) -> Histories {
        let mut histories = Histories::new();
        for answer in batch {
            let Some(case) = self
                .turns
                .get(&answer.case_id)
                .map(|&i| &self.pass.cases[i])
            else {
                continue;
            };
            let Some(conversation) = case.conversation() else {
                continue;
            };
            let cell = (answer.case_id.clone(), answer.config_id.clone());
            // A turn imported with the history its log recorded is judged with that history.
            if let Some(logged) = case.turn.as_ref().map(|t| &t.history)
                && !logged.is_empty()
            {
                histories.insert(cell, logged.clone());
                continue;
            }
            let key = (answer.config_id.clone(), conversation.to_string());
            let last = case.turn.as_ref().is_some_and(|t| t.index >= t.of);
            let turns = self.conversations.entry(key.clone()).or_default();
            if !turns.is_empty() {
                histories.insert(cell, turns.clone());
            }
            if last {
                // Nothing comes after the last turn: its history is not held for the rest of the run.
                self.conversations.remove(&key);
                continue;
            }
            turns.push(Message::user(case.query.clone()));
            if answer.error.is_none() {
                turns.push(Message {
                    role: Role::Assistant,
                    content: answer.answer.clone(),
                });
            }
        }
        histories
    }
}

/// CPU work that takes a while (the offline judge over a batch, on rayon's threads) without stalling the
/// runtime's other tasks: handed its worker's tasks on a multi-threaded runtime, run plainly on a
/// current-thread one (which has no other worker to hand them to).
fn on_every_core<T>(work: impl FnOnce() -> T) -> T {
    let multi_threaded = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_threaded {
        tokio::task::block_in_place(work)
    } else {
        work()
    }
}

/// A raw verdict with only what the oracle's figures read (judge, cell, sample, outcome, criteria mean).
fn slim_verdict(v: &Verdict) -> Verdict {
    Verdict {
        schema_version: v.schema_version,
        status: v.status,
        passed: v.passed,
        criteria_mean: v.criteria_mean,
        ..crate::blank_verdict(&v.case_id, &v.config_id, v.judge.clone(), v.sample)
    }
}
