//! The run loop: every pending (case, configuration) cell as a unit — a single case, a conversation's
//! pending turns in order, or a simulated user's conversation — run with bounded concurrency, each answer
//! (and each simulated turn) committed to the sink the moment it exists.

use crate::pipeline::Pipeline;
use crate::run::{Cell, Slots, answer_cell, skip_reason};
use crate::sink::AnswerSink;
use anyhow::Result;
use futures::StreamExt;
use ragtester_core::shard::Shard;
use ragtester_core::{Answer, Message, Role, TestCase};
use std::collections::HashMap;
use std::sync::Arc;

/// Called after each finished cell with the counts so far.
pub type Progress = dyn Fn(&Counts) + Send + Sync;

pub use ragtester_core::progress::Counts;

/// Run all cells not yet in `sink`, each answer committed to it as it comes; returns the counts of this
/// execution (`over_budget` tells how many cells a spent budget left unrun). The answers are never all
/// held here: the sink keeps them.
///
/// Each cell runs as a task of its own, so retrieval and prompt building (CPU) spread over the runtime's
/// workers instead of delaying the network waits of the cells polled beside them. `concurrency` bounds the
/// model (or target) calls in flight; up to as many cells again retrieve ahead of their turn (at most
/// `Slots`' retrievals at once), so a call that finishes is replaced by one whose prompt is ready, not by one
/// that must retrieve first.
pub async fn execute(
    pipelines: &[Arc<Pipeline>],
    cases: &[TestCase],
    sink: &dyn AnswerSink,
    concurrency: usize,
    shard: Option<Shard>,
    simulator: Option<Arc<crate::simulate::Simulator>>,
    progress: &(dyn Fn(&Counts) + Send + Sync + '_),
) -> Result<Counts> {
    let mut done = sink.answered()?;
    // A simulated conversation a killed run left under way is resumed, not skipped.
    for case in cases.iter().filter(|c| c.goal.is_some()) {
        for p in pipelines {
            let cell = (case.id.clone(), p.config.id.clone());
            if done.contains(&cell)
                && sink
                    .answer(&cell.0, &cell.1)?
                    .is_some_and(|a| a.simulation.is_some_and(|s| s.ended.is_none()))
            {
                done.remove(&cell);
            }
        }
    }
    // A conversation's turns share a shard (its id decides), so one job holds the whole history.
    let pending: Vec<(usize, usize)> = (0..pipelines.len())
        .flat_map(|p| (0..cases.len()).map(move |c| (p, c)))
        .filter(|&(p, c)| {
            let unit = ragtester_core::shard::shard_unit(&cases[c]);
            shard.is_none_or(|s| s.holds(unit, &pipelines[p].config.id))
        })
        .filter(|&(p, c)| !done.contains(&(cases[c].id.clone(), pipelines[p].config.id.clone())))
        .filter(|&(p, c)| skip_reason(&pipelines[p], &cases[c]).is_none())
        .collect();
    let mut counts = Counts {
        total: pending.len(),
        ..Counts::default()
    };
    let mut units = conversation_units(&pending, cases, pipelines, sink)?;
    for unit in &mut units {
        unit.simulator = simulator.clone();
        if let [case] = unit.cases.as_slice()
            && case.goal.is_some()
        {
            unit.resume = sink.answer(&case.id, &unit.pipeline.config.id)?;
        }
    }
    let slots = Arc::new(Slots::new(concurrency, sink.answer_bytes()));
    // Documents a case injects (a poisoned copy) are retrievable by that case alone.
    let hidden: Arc<Vec<String>> = Arc::new(
        cases
            .iter()
            .flat_map(|c| c.injected_documents.iter().map(|d| d.id.clone()))
            .collect(),
    );
    // Each unit (a single case, or a conversation's pending turns in order) runs as a task; every turn's
    // answer comes back here the moment it exists, to be committed before the next turn is asked.
    let (sender, mut finished) = tokio::sync::mpsc::unbounded_channel::<Cell>();
    let driver = tokio::spawn(
        futures::stream::iter(units)
            .map(move |unit| {
                let slots = slots.clone();
                let hidden = hidden.clone();
                let sender = sender.clone();
                tokio::spawn(async move { unit.run(&hidden, &slots, &sender).await })
            })
            .buffer_unordered(concurrency.max(1) * 2)
            .collect::<Vec<_>>(),
    );
    while let Some(cell) = finished.recv().await {
        match cell {
            Cell::Answered(answer) => {
                sink.put_answer(&answer)?;
                counts.errors += usize::from(answer.error.is_some());
                counts.cached += usize::from(answer.cached);
            }
            Cell::OverBudget => counts.over_budget += 1,
            Cell::Progress(answer) => {
                sink.put_answer(&answer)?;
                continue;
            }
        }
        counts.done += 1;
        progress(&counts);
    }
    for joined in driver
        .await
        .map_err(|e| anyhow::anyhow!("the run's driver failed: {e}"))?
    {
        joined.map_err(|e| anyhow::anyhow!("a cell task failed: {e}"))?;
    }
    Ok(counts)
}

/// Cells that run one after another: a single case, or the pending turns of one conversation against one
/// configuration, in turn order, with the history of the turns before them.
struct Unit {
    pipeline: Arc<Pipeline>,
    cases: Vec<TestCase>,
    /// The earlier turns already answered (a resumed run reads them from the sink).
    history: Vec<Message>,
    /// The user model that plays a simulated user's case.
    simulator: Option<Arc<crate::simulate::Simulator>>,
    /// A simulated conversation a killed run left under way.
    resume: Option<Answer>,
}

impl Unit {
    async fn run(
        mut self,
        hidden: &Arc<Vec<String>>,
        slots: &Slots,
        sender: &tokio::sync::mpsc::UnboundedSender<Cell>,
    ) {
        let mut cases = self.cases.into_iter();
        while let Some(case) = cases.next() {
            // A turn imported from a log is asked after the history the log recorded.
            if let Some(logged) = case.turn.as_ref().map(|t| &t.history)
                && !logged.is_empty()
            {
                self.history = logged.clone();
            }
            let cell = match (&self.simulator, case.goal.is_some()) {
                (Some(simulator), true) => {
                    let resume = self.resume.take();
                    let pipeline = &self.pipeline;
                    crate::simulate::simulate(
                        pipeline, &case, simulator, resume, hidden, slots, sender,
                    )
                    .await
                }
                _ => answer_cell(&self.pipeline, &case, &self.history, hidden, slots).await,
            };
            let over_budget = matches!(cell, Cell::OverBudget);
            if let Cell::Answered(answer) = &cell {
                remember_turn(&mut self.history, &case, answer);
            }
            let _ = sender.send(cell);
            if over_budget {
                // Later turns would be asked without this one: they wait for the resume too.
                for _ in cases.by_ref() {
                    let _ = sender.send(Cell::OverBudget);
                }
            }
        }
    }
}

/// A turn as the next one's history sees it: the question as asked, then the answer (none for a turn
/// that failed).
pub(crate) fn remember_turn(history: &mut Vec<Message>, case: &TestCase, answer: &Answer) {
    history.push(Message::user(case.query.clone()));
    if answer.error.is_none() {
        history.push(Message {
            role: Role::Assistant,
            content: answer.answer.clone(),
        });
    }
}

/// The pending cells as units: singles alone, a conversation's turns together (in turn order, placed
/// where its first pending turn was), each with the history of its turns the sink already holds.
fn conversation_units(
    pending: &[(usize, usize)],
    cases: &[TestCase],
    pipelines: &[Arc<Pipeline>],
    sink: &dyn AnswerSink,
) -> Result<Vec<Unit>> {
    let mut turns_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (c, case) in cases.iter().enumerate() {
        if let Some(conversation) = case.conversation() {
            turns_of.entry(conversation).or_default().push(c);
        }
    }
    for turns in turns_of.values_mut() {
        turns.sort_by_key(|&c| cases[c].turn.as_ref().map_or(0, |t| t.index));
    }
    let pending_set: std::collections::HashSet<(usize, usize)> = pending.iter().copied().collect();
    let mut units: Vec<Unit> = Vec::new();
    let mut unit_of: HashMap<(usize, &str), usize> = HashMap::new();
    for &(p, c) in pending {
        let Some(conversation) = cases[c].conversation() else {
            units.push(Unit {
                pipeline: pipelines[p].clone(),
                cases: vec![cases[c].clone()],
                history: Vec::new(),
                simulator: None,
                resume: None,
            });
            continue;
        };
        if unit_of.contains_key(&(p, conversation)) {
            continue;
        }
        unit_of.insert((p, conversation), units.len());
        let mut unit = Unit {
            pipeline: pipelines[p].clone(),
            cases: Vec::new(),
            history: Vec::new(),
            simulator: None,
            resume: None,
        };
        let pending_here = |t: usize| pending_set.contains(&(p, t));
        for &t in &turns_of[conversation] {
            if pending_here(t) {
                unit.cases.push(cases[t].clone());
            } else if unit.cases.is_empty()
                && let Some(answer) = sink.answer(&cases[t].id, &pipelines[p].config.id)?
            {
                remember_turn(&mut unit.history, &cases[t], &answer);
            }
        }
        units.push(unit);
    }
    Ok(units)
}
