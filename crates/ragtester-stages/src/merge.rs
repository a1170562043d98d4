//! `ragtester merge`: the run directories of `run --shard K/N` joined into the run an unsharded `run` would
//! have written — same records in the same order — after checking that the slices belong to one run (one
//! manifest, one N, every K once) and that together they hold every cell exactly once.

use crate::events::Events;
use crate::run_dir::{self, RunDir, SKIPPED};
use anyhow::{Context, Result, bail};
use ragtester_core::{Answer, Configuration, SkippedCell, TestCase};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub struct MergeOutcome {
    pub shards: usize,
    pub answers: usize,
    pub skipped: usize,
}

/// Join the shards into `out`.
pub fn merge(shards: &[PathBuf], out: &Path, events: &dyn Events) -> Result<MergeOutcome> {
    events.stage("merge");
    if shards.is_empty() {
        bail!("name the shards' run directories");
    }
    let slices = ragtester_run::shards::read_slices(shards)?;
    let first = RunDir::new(&slices[0].dir);
    let documents = first.documents()?;
    let cases = first.cases()?;
    let configs = first.configs()?;
    let positions = Positions::of(&cases, &configs);
    let (cells, mut answers, mut skipped) = gather_cells(&slices, &positions)?;
    check_complete(&cells, &cases, &configs, slices[0].shard.count)?;
    // The order an unsharded run writes: configuration, then case.
    answers.sort_by_key(|a| positions.order(&a.case_id, &a.config_id));
    skipped.sort_by_key(|k| positions.order(&k.case_id, &k.config_id));

    let run = RunDir::new(out);
    let db = run.db()?;
    if db.has_answers()? {
        bail!(
            "{} already holds answers: merge into a new directory",
            out.display()
        );
    }
    db.set_manifest(&slices[0].manifest)?;
    run.commit_inputs(&db, &documents, &cases, &configs)?;
    run.commit_answers(&db, &answers, &configs, &cases)?;
    let count = slices[0].shard.count;
    db.log_stage("merge", &format!("{} shards of {count}", slices.len()))?;
    run.save_records(SKIPPED, &skipped)?;
    // What every shard wrote alike (the embedder profiles, the prices): the first shard's copy.
    for name in [run_dir::EMBEDDERS, run_dir::PRICES] {
        if first.file(name).is_file() {
            std::fs::copy(first.file(name), run.file(name))
                .with_context(|| format!("cannot copy {name} into {}", out.display()))?;
        }
    }
    events.info(format!(
        "merged {} shards: {} answers, {} cells not asked, into {}",
        slices.len(),
        answers.len(),
        skipped.len(),
        out.display()
    ));
    Ok(MergeOutcome {
        shards: slices.len(),
        answers: answers.len(),
        skipped: skipped.len(),
    })
}

/// Where each case and configuration stands in the run's order.
struct Positions<'a> {
    case: HashMap<&'a str, usize>,
    config: HashMap<&'a str, usize>,
    /// What each case is sharded by: its conversation, or itself.
    unit: HashMap<&'a str, &'a str>,
}

impl<'a> Positions<'a> {
    fn of(cases: &'a [TestCase], configs: &'a [Configuration]) -> Self {
        Self {
            unit: cases
                .iter()
                .map(|c| (c.id.as_str(), ragtester_exec::shard_unit(c)))
                .collect(),
            case: cases
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id.as_str(), i))
                .collect(),
            config: configs
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id.as_str(), i))
                .collect(),
        }
    }

    fn order(&self, case: &str, config: &str) -> (usize, usize) {
        (self.config[config], self.case[case])
    }
}

type Gathered<'s> = (
    HashMap<(String, String), &'s Path>,
    Vec<Answer>,
    Vec<SkippedCell>,
);

/// Every shard's cells, each checked to be the run's, to belong to that shard and to be nowhere else.
fn gather_cells<'s>(
    slices: &'s [ragtester_run::shards::Slice],
    positions: &Positions,
) -> Result<Gathered<'s>> {
    let mut cells: HashMap<(String, String), &Path> = HashMap::new();
    let mut answers = Vec::new();
    let mut skipped = Vec::new();
    for s in slices {
        let owned = s.answers.iter().map(|a| (&a.case_id, &a.config_id));
        let marked = s.skipped.iter().map(|k| (&k.case_id, &k.config_id));
        for (case, config) in owned.chain(marked) {
            if !positions.case.contains_key(case.as_str())
                || !positions.config.contains_key(config.as_str())
            {
                bail!(
                    "{} holds a cell ({case} × {config}) outside the run's cases and configurations",
                    s.dir.display()
                );
            }
            if !s.shard.holds(positions.unit[case.as_str()], config) {
                bail!(
                    "{} holds cell {case} × {config}, which belongs to another shard: was it run with another --shard?",
                    s.dir.display()
                );
            }
            if let Some(other) = cells.insert((case.clone(), config.clone()), &s.dir) {
                bail!(
                    "cell {case} × {config} is in {} and in {}",
                    other.display(),
                    s.dir.display()
                );
            }
        }
        answers.extend(s.answers.iter().cloned());
        skipped.extend(s.skipped.iter().cloned());
    }
    Ok((cells, answers, skipped))
}

/// Every cell of the run is in some shard; else the first missing one names the shard to finish.
fn check_complete(
    cells: &HashMap<(String, String), &Path>,
    cases: &[TestCase],
    configs: &[Configuration],
    count: usize,
) -> Result<()> {
    let mut unanswered = Vec::new();
    for config in configs {
        for case in cases {
            if !cells.contains_key(&(case.id.clone(), config.id.clone())) {
                unanswered.push((case.id.as_str(), config.id.as_str()));
            }
        }
    }
    if let Some((case, config)) = unanswered.first() {
        let k = ragtester_exec::cell_slot(case, config, count) + 1;
        bail!(
            "{} of {} cells have no answer (the first: {case} × {config}, shard {k}/{count}): finish that shard with `run --shard {k}/{count} --resume`, then merge again",
            unanswered.len(),
            cases.len() * configs.len()
        );
    }
    Ok(())
}
