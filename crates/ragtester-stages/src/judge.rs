//! Stage 4a: the oracle — every answer judged by every judge (and sample), each verdict committed as it is
//! made so a killed judge resumes; the panel's consensus and the oracle's figures written beside them.

use crate::context::StageContext;
use crate::events::Events;
use crate::run_dir::{self, RunDir};
use anyhow::{Context, Result, bail};
use ragtester_store::RunStore;
use std::path::Path;
use std::sync::Arc;

/// How to judge a run.
pub struct JudgeArgs<'a> {
    pub judges: &'a [String],
    /// Verdicts per (answer, judge); above one, at the judges' temperature.
    pub samples: u32,
    /// How several verdicts of a cell become the one reports follow.
    pub panel: ragtester_judge::PanelMethod,
    pub concurrency: usize,
    pub sampling: ragtester_core::Sampling,
    /// A folder with the user's judge.en.j2 / judge.zh.j2 prompt templates.
    pub prompts: Option<&'a Path>,
    /// Who splits and checks claims for the claim-level metrics.
    pub claims: ClaimChecker,
    /// A judge profile replacing the built-in one (`--judge-profile`, `[judge] profile`).
    pub profile: Option<&'a Path>,
}

/// Who splits and checks claims (`[judge] claims`, `--claims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimChecker {
    /// The offline model's sentences and shared terms: no model calls.
    Lexical,
    /// The first judge.
    Judge,
    Off,
}

impl ClaimChecker {
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "lexical" => Self::Lexical,
            "judge" => Self::Judge,
            "off" => Self::Off,
            other => bail!("unknown claim checker `{other}`: expected lexical, judge or off"),
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Lexical => "lexical",
            Self::Judge => "judge",
            Self::Off => "off",
        }
    }
}

impl<'a> JudgeArgs<'a> {
    /// The arguments a project file's `[judge]` section means, with the run's concurrency.
    pub fn from_settings(
        judge: &'a ragtester_core::config::JudgeSettings,
        concurrency: usize,
    ) -> Result<Self> {
        Ok(Self {
            judges: &judge.judges,
            samples: judge.samples,
            panel: ragtester_judge::PanelMethod::parse(&judge.panel)?,
            concurrency,
            sampling: judge.sampling,
            prompts: judge.prompts.as_deref(),
            claims: ClaimChecker::parse(&judge.claims)?,
            profile: judge.profile.as_deref(),
        })
    }
}

/// `judge` as a front end asks for it: a run, how to judge it, and optionally two configurations to compare.
pub struct JudgeRequest<'a> {
    pub run_dir: &'a Path,
    pub args: JudgeArgs<'a>,
    /// Configurations compared answer by answer after judging (by the first judge); a run already judged
    /// is only compared.
    pub pairwise: Option<(&'a str, &'a str)>,
}

impl<'a> JudgeRequest<'a> {
    /// Judge `run_dir` as a project's `[judge]` section says, at its `[run]` concurrency.
    pub fn from_project(
        project: &'a ragtester_core::config::ProjectConfig,
        run_dir: &'a Path,
    ) -> Result<Self> {
        Ok(Self {
            run_dir,
            args: JudgeArgs::from_settings(&project.judge, project.run.concurrency)?,
            pairwise: None,
        })
    }
}

/// What judging wrote: how many verdicts are errors, and the comparison when one was asked for.
pub struct JudgeOutcome {
    pub errors: usize,
    pub pairwise: Option<ragtester_core::oracle::PairwiseSummary>,
}

/// Carry out a judge request.
pub async fn judge_request(req: &JudgeRequest<'_>, cx: &StageContext<'_>) -> Result<JudgeOutcome> {
    let judged = RunDir::new(req.run_dir).file(run_dir::VERDICTS).is_file();
    let errors = match (req.pairwise, judged) {
        (Some(_), true) => 0,
        _ => judge(req.run_dir, &req.args, cx).await?,
    };
    let pairwise = match req.pairwise {
        None => None,
        Some((a, b)) => {
            let spec = req
                .args
                .judges
                .first()
                .context("name at least one --judge")?;
            let judge = judge_of(cx.models(), spec)?;
            let concurrency = req.args.concurrency;
            let compare = crate::pairwise::compare;
            Some(compare(req.run_dir, a, b, judge, concurrency, cx.events()).await?)
        }
    };
    Ok(JudgeOutcome { errors, pairwise })
}

/// The judge a spec names, from the registry: the offline judge in this process, any other spec a model
/// asked with the judge prompt (`ragtester_judge::judge_for`).
pub fn judge_of(models: &crate::Models, spec: &str) -> Result<Arc<dyn ragtester_judge::Judge>> {
    ragtester_judge::judge_for(spec, || models.get(spec)).with_context(|| format!("judge `{spec}`"))
}

/// Judge a run directory. Returns the number of verdicts that are errors. With several judges or samples,
/// the panel's verdicts come first in verdicts.jsonl (reports follow them) and every judge's follow.
pub async fn judge(run_dir: &Path, args: &JudgeArgs<'_>, cx: &StageContext<'_>) -> Result<usize> {
    let events = cx.events();
    events.stage("judge");
    if args.judges.is_empty() {
        bail!("name at least one --judge");
    }
    if args.samples == 0 {
        bail!("--samples must be at least 1");
    }
    let run = RunDir::new(run_dir);
    let setup = Setup::prepare(&run, args, cx)?;
    let store = run.store()?;
    remember_structured_output(&store)?;
    let earlier = store.keep_judging_session(&setup.session)?;
    if earlier > 0 {
        events.info(format!(
            "resuming: {earlier} of {} verdicts were made by an earlier judge of these answers \
             (judge errors among them are asked again)",
            setup.total
        ));
    }
    let mut judging = Judging {
        out: run.verdict_writer(&store, setup.panel.is_some())?,
        counts: std::sync::Mutex::new(ragtester_exec::Counts {
            total: setup.total,
            ..Default::default()
        }),
        slim: Vec::with_capacity(setup.total),
        errors: 0,
        conversations: Default::default(),
        setup: &setup,
        store: &store,
        events,
    };
    // Enough answers per batch to keep every call slot busy but the batch's tail; memory follows the batch,
    // not the run.
    let batch_size = (args.concurrency * 16).max(16);
    let mut answers = run.answer_reader()?;
    loop {
        let batch: Vec<ragtester_core::Answer> =
            answers.by_ref().take(batch_size).collect::<Result<_>>()?;
        if batch.is_empty() {
            break;
        }
        judging.batch(&batch).await?;
    }
    let Judging {
        out, slim, errors, ..
    } = judging;
    record_structured_output(&store)?;
    let mut oracle =
        ragtester_judge::oracle::summarise(&slim, args.samples, setup.panel.map(|p| p.as_str()));
    oracle.prompt_version = Some(setup.prompts.version.clone());
    oracle.people = setup.people();
    store.log_stage("judge", &args.judges.join(","))?;
    let written = out.finish()?;
    run.save_json(run_dir::ORACLE, &oracle)?;
    events.info(format!(
        "wrote {written} verdicts ({errors} errors in the verdicts reports follow) to {}",
        run.file(run_dir::VERDICTS).display()
    ));
    Ok(errors)
}

/// What judging a run needs before its first verdict: the cases, the judges, the prompts, and the session
/// every verdict is committed under.
struct Setup<'a> {
    args: &'a JudgeArgs<'a>,
    cases: Vec<ragtester_core::TestCase>,
    /// Turns of conversations by case id: their history is shown to the judge.
    turns: std::collections::HashMap<String, usize>,
    judges: Vec<Arc<dyn ragtester_judge::Judge>>,
    lexical: ragtester_offline::OfflineModel,
    prompts: ragtester_judge::JudgePrompts,
    session: String,
    /// Verdicts the run will hold: answers × judges × samples.
    total: usize,
    panel: Option<ragtester_judge::PanelMethod>,
    scoring: ragtester_judge::Scoring,
}

/// The scoring a judging pass uses: the profile named (or the built-in one) and, when the profile reads
/// semantic signals, its embedder from the registry.
pub fn scoring(profile: Option<&Path>, cx: &StageContext<'_>) -> Result<ragtester_judge::Scoring> {
    let models = cx.models();
    let profile = match profile {
        Some(path) => ragtester_judge::profile::JudgeProfile::open(path, cx.limits())?,
        None => ragtester_judge::profile::JudgeProfile::builtin(),
    };
    let meaning = match &profile.meaning {
        Some(spec) => Some(ragtester_judge::meaning::Meaning::new(
            models.embedder(spec).with_context(|| {
                format!(
                    "the judge profile `{}` reads meaning with `{spec}`",
                    profile.name
                )
            })?,
        )),
        None => None,
    };
    Ok(ragtester_judge::Scoring { profile, meaning })
}

impl<'a> Setup<'a> {
    fn prepare(run: &RunDir, args: &'a JudgeArgs<'a>, cx: &StageContext<'_>) -> Result<Self> {
        let (models, events) = (cx.models(), cx.events());
        let cases = run.cases()?;
        // The answers are read twice, one at a time: once here to name the judging session, once to judge
        // them in batches. A run's answers and verdicts are never all in memory.
        let mut answers_id = ragtester_core::ids::StableListId::new("answers");
        let mut answer_count = 0usize;
        for answer in run.answer_reader()? {
            answers_id.add(&answer?);
            answer_count += 1;
        }
        let judges: Vec<Arc<dyn ragtester_judge::Judge>> = args
            .judges
            .iter()
            .map(|s| {
                ragtester_judge::judge_for(s, || models.for_role(s, args.sampling, None))
                    .with_context(|| format!("judge `{s}`"))
            })
            .collect::<Result<_>>()?;
        if args.samples > 1 && args.sampling.temperature.unwrap_or(0.0) == 0.0 {
            events.note(format!(
                "{} samples at temperature 0 repeat one verdict; set --temperature (or [judge.sampling]) above 0",
                args.samples
            ));
        }
        let prompts = match args.prompts {
            Some(dir) => ragtester_judge::JudgePrompts::from_dir(dir)?,
            None => ragtester_judge::JudgePrompts::default(),
        };
        let scoring = scoring(args.profile, cx)?;
        // Every verdict is committed as it is made under a session naming what verdicts depend on, so a
        // killed judge picks up where it stopped and a changed judge, prompt or answer starts afresh.
        let session = ragtester_core::ids::stable_id(
            "judging",
            &(
                judges.iter().map(|j| j.identity()).collect::<Vec<_>>(),
                args.samples,
                &args.sampling,
                &prompts.version,
                answers_id.finish(),
                args.claims.as_str(),
                scoring.profile.hash(),
            ),
        );
        Ok(Self {
            total: answer_count * judges.len() * args.samples as usize,
            panel: (args.judges.len() > 1 || args.samples > 1).then_some(args.panel),
            args,
            turns: cases
                .iter()
                .enumerate()
                .filter(|(_, c)| c.turn.is_some())
                .map(|(i, c)| (c.id.clone(), i))
                .collect(),
            cases,
            judges,
            lexical: ragtester_offline::OfflineModel,
            prompts,
            session,
            scoring,
        })
    }

    /// Each judge's measured agreement with people, as the report states it.
    fn people(&self) -> Vec<ragtester_core::oracle::PeopleAgreement> {
        self.judges
            .iter()
            .map(|j| {
                let name = j.name();
                if name == self.scoring.profile.judge {
                    self.scoring.profile.people(&name)
                } else {
                    ragtester_core::oracle::PeopleAgreement {
                        judge: name,
                        ..Default::default()
                    }
                }
            })
            .collect()
    }

    /// The case of a conversation's turn; None for a single question.
    fn turn(&self, case_id: &str) -> Option<&ragtester_core::TestCase> {
        self.turns.get(case_id).map(|&i| &self.cases[i])
    }

    fn claims(&self) -> Option<&dyn ragtester_judge::Judge> {
        match self.args.claims {
            ClaimChecker::Lexical => Some(&self.lexical),
            ClaimChecker::Judge => Some(self.judges[0].as_ref()),
            ClaimChecker::Off => None,
        }
    }
}

/// Judging under way: the files and figures batches add to.
struct Judging<'a> {
    setup: &'a Setup<'a>,
    store: &'a RunStore,
    events: &'a dyn Events,
    out: crate::run_dir::VerdictWriter<'a>,
    counts: std::sync::Mutex<ragtester_exec::Counts>,
    /// What the oracle's figures need of every raw verdict, without its reasons, metrics or claims.
    slim: Vec<ragtester_core::Verdict>,
    /// Errors among the verdicts reports follow.
    errors: usize,
    /// Per (configuration, conversation): the turns judged so far, as the next turn's history. Answers
    /// come in run order (configuration, then suite order, where a conversation's turns stand in order).
    conversations: std::collections::HashMap<(String, String), Vec<ragtester_core::Message>>,
}

impl Judging<'_> {
    /// The history each turn of the batch was asked after: its conversation's earlier turns in this
    /// configuration, the questions and the system's answers (a failed turn's question alone).
    fn histories(&mut self, batch: &[ragtester_core::Answer]) -> ragtester_judge::Histories {
        let mut histories = ragtester_judge::Histories::new();
        for answer in batch {
            let Some(case) = self.setup.turn(&answer.case_id) else {
                continue;
            };
            let Some(conversation) = case.conversation() else {
                continue;
            };
            // A turn imported with the history its log recorded is judged with that history.
            if let Some(logged) = case.turn.as_ref().map(|t| &t.history)
                && !logged.is_empty()
            {
                histories.insert(
                    (answer.case_id.clone(), answer.config_id.clone()),
                    logged.clone(),
                );
                continue;
            }
            let key = (answer.config_id.clone(), conversation.to_string());
            let last = case.turn.as_ref().is_some_and(|t| t.index >= t.of);
            let turns = self.conversations.entry(key.clone()).or_default();
            if !turns.is_empty() {
                histories.insert(
                    (answer.case_id.clone(), answer.config_id.clone()),
                    turns.clone(),
                );
            }
            if last {
                // Nothing comes after the last turn: its history is not held for the rest of the run.
                self.conversations.remove(&key);
                continue;
            }
            turns.push(ragtester_core::Message::user(case.query.clone()));
            if answer.error.is_none() {
                turns.push(ragtester_core::Message {
                    role: ragtester_core::Role::Assistant,
                    content: answer.answer.clone(),
                });
            }
        }
        histories
    }

    async fn batch(&mut self, batch: &[ragtester_core::Answer]) -> Result<()> {
        let (setup, store) = (self.setup, self.store);
        let cells: Vec<(&str, &str)> = batch
            .iter()
            .map(|a| (a.case_id.as_str(), a.config_id.as_str()))
            .collect();
        // A judge error (an outage, an unreadable reply) is asked again rather than kept: resuming must
        // not fix an error in place that a rerun could clear.
        let done: Vec<_> = store
            .judged_cells(&setup.session, &cells)?
            .into_iter()
            .filter(|v| v.status != ragtester_core::VerdictStatus::JudgeError)
            .collect();
        let histories = self.histories(batch);
        let job = ragtester_judge::JudgeJob {
            cases: &setup.cases,
            answers: batch,
            judges: &setup.judges,
            samples: setup.args.samples,
            concurrency: setup.args.concurrency,
            prompts: &setup.prompts,
            claims: setup.claims(),
            histories: Some(&histories),
            scoring: Some(&setup.scoring),
        };
        let before = self.counts.lock().unwrap().done;
        let commit_failed = std::sync::Mutex::new(None::<anyhow::Error>);
        let made = |verdict: &ragtester_core::Verdict, fresh: bool, n: usize| {
            if fresh && let Err(e) = store.put_judged(&setup.session, verdict) {
                commit_failed.lock().unwrap().get_or_insert(e);
            }
            let mut c = self.counts.lock().unwrap();
            c.done = c.done.max(before + n);
            c.errors += usize::from(verdict.status != ragtester_core::VerdictStatus::Ok);
            c.cached += usize::from(!fresh);
            self.events.progress("verdicts", "resumed", *c);
        };
        let mut raw = if job.runs_directly() {
            on_every_core(|| job.run_directly(&done, &made))
        } else {
            job.run(&done, &made).await
        };
        if let Some(e) = commit_failed.into_inner().unwrap() {
            return Err(e.context("cannot commit a verdict to the run store"));
        }
        let mut panel_verdicts = match setup.panel {
            Some(method) => ragtester_judge::consensus(&raw, method),
            None => Vec::new(),
        };
        self.slim.extend(raw.iter().map(slim_verdict));
        for verdicts in [&mut panel_verdicts, &mut raw] {
            ragtester_judge::attribution::attribute_all(
                &setup.cases,
                batch,
                verdicts,
                Some(&histories),
            );
        }
        // Reports follow the panel's verdicts when there is a panel, else the one judge's.
        let followed = if setup.panel.is_some() {
            &panel_verdicts
        } else {
            &raw
        };
        self.errors += followed
            .iter()
            .filter(|v| v.status != ragtester_core::VerdictStatus::Ok)
            .count();
        self.out.add(&panel_verdicts, &raw)
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
fn slim_verdict(v: &ragtester_core::Verdict) -> ragtester_core::Verdict {
    ragtester_core::Verdict {
        schema_version: v.schema_version,
        case_id: v.case_id.clone(),
        config_id: v.config_id.clone(),
        judge: v.judge.clone(),
        sample: v.sample,
        status: v.status,
        passed: v.passed,
        criteria_mean: v.criteria_mean,
        criteria: None,
        rubric: None,
        metrics: Default::default(),
        error: None,
        notes: Vec::new(),
        rule_failure: None,
        claims: None,
        attribution: None,
        score: None,
        profile: None,
        row_id: None,
    }
}

fn remember_structured_output(store: &RunStore) -> Result<()> {
    if let Some(json) = store.meta(STRUCTURED_OUTPUT_META)? {
        ragtester_llm::structured::remember(&serde_json::from_str(&json)?);
    }
    Ok(())
}

/// Record how each endpoint took structured output (`json_schema`, `json_object` or `prompt_only`), so a
/// run says what its judges and writers were really asked for.
fn record_structured_output(store: &RunStore) -> Result<()> {
    let learned = ragtester_llm::structured::learned();
    if !learned.is_empty() {
        store.set_meta(STRUCTURED_OUTPUT_META, &serde_json::to_string(&learned)?)?;
    }
    Ok(())
}

const STRUCTURED_OUTPUT_META: &str = "structured_output";
