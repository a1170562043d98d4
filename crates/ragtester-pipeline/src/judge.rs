//! Stage 4a: the oracle — every answer judged by every judge (and sample), each verdict committed as it is
//! made so a killed judge resumes; the panel's consensus and the oracle's figures written beside them.

use crate::events::Events;
use crate::models::Models;
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
        })
    }
}

/// Judge a run directory. Returns the number of verdicts that are errors. With several judges or samples,
/// the panel's verdicts come first in verdicts.jsonl (reports follow them) and every judge's follow.
pub async fn judge(
    run_dir: &Path,
    args: &JudgeArgs<'_>,
    models: &Models,
    events: &dyn Events,
) -> Result<usize> {
    events.stage("judge");
    if args.judges.is_empty() {
        bail!("name at least one --judge");
    }
    if args.samples == 0 {
        bail!("--samples must be at least 1");
    }
    let run = RunDir::new(run_dir);
    let cases = run.cases()?;
    let answers = run.answers()?;
    let judges: Vec<Arc<dyn ragtester_core::ChatModel>> = args
        .judges
        .iter()
        .map(|s| {
            models
                .for_role(s, args.sampling, None)
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
    let store = run.store()?;
    remember_structured_output(&store)?;
    let lexical: Arc<dyn ragtester_core::ChatModel> = Arc::new(ragtester_offline::OfflineModel);
    let claims: Option<&dyn ragtester_core::ChatModel> = match args.claims {
        ClaimChecker::Lexical => Some(lexical.as_ref()),
        ClaimChecker::Judge => Some(judges[0].as_ref()),
        ClaimChecker::Off => None,
    };
    let job = ragtester_judge::JudgeJob {
        cases: &cases,
        answers: &answers,
        judges: &judges,
        samples: args.samples,
        concurrency: args.concurrency,
        prompts: &prompts,
        claims,
    };
    // Every verdict is committed as it is made under a session naming what verdicts depend on, so a
    // killed judge picks up where it stopped and a changed judge, prompt or answer starts afresh.
    let session = ragtester_core::ids::stable_id(
        "judging",
        &(
            judges.iter().map(|j| j.identity()).collect::<Vec<_>>(),
            args.samples,
            &args.sampling,
            &prompts.version,
            ragtester_core::ids::stable_id("answers", &answers),
            args.claims.as_str(),
        ),
    );
    // A judge error (an outage, an unreadable reply) is asked again rather than kept: resuming must not
    // fix an error in place that a rerun could clear.
    let done: Vec<_> = store
        .judged(&session)?
        .into_iter()
        .filter(|v| v.status != ragtester_core::VerdictStatus::JudgeError)
        .collect();
    if !done.is_empty() {
        events.info(format!(
            "resuming: {} of {} verdicts were made by an earlier judge of these answers",
            done.len(),
            job.len()
        ));
    }
    let counts = std::sync::Mutex::new(ragtester_exec::Counts {
        total: job.len(),
        ..Default::default()
    });
    let commit_failed = std::sync::Mutex::new(None::<anyhow::Error>);
    let raw = job
        .run(&done, &|verdict, fresh, n| {
            if fresh && let Err(e) = store.put_judged(&session, verdict) {
                commit_failed.lock().unwrap().get_or_insert(e);
            }
            let mut c = counts.lock().unwrap();
            c.done = n;
            c.errors += usize::from(verdict.status != ragtester_core::VerdictStatus::Ok);
            c.cached += usize::from(!fresh);
            events.progress("verdicts", "resumed", *c);
        })
        .await;
    if let Some(e) = commit_failed.into_inner().unwrap() {
        return Err(e.context("cannot commit a verdict to the run store"));
    }
    record_structured_output(&store)?;
    let panel = (args.judges.len() > 1 || args.samples > 1).then_some(args.panel);
    let mut verdicts = match panel {
        Some(method) => ragtester_judge::consensus(&raw, method),
        None => Vec::new(),
    };
    let mut oracle =
        ragtester_judge::oracle::summarise(&raw, args.samples, panel.map(|p| p.as_str()));
    oracle.prompt_version = Some(prompts.version.clone());
    verdicts.extend(raw);
    ragtester_judge::attribution::attribute_all(&cases, &answers, &mut verdicts);
    store.put_verdicts(&verdicts)?;
    store.log_stage("judge", &args.judges.join(","))?;
    run.save_records(run_dir::VERDICTS, &verdicts)?;
    run.save_json(run_dir::ORACLE, &oracle)?;
    let primary = ragtester_report::primary_verdicts(&verdicts);
    let errors = primary
        .iter()
        .filter(|v| v.status != ragtester_core::VerdictStatus::Ok)
        .count();
    events.info(format!(
        "wrote {} verdicts ({errors} errors in the verdicts reports follow) to {}",
        verdicts.len(),
        run.file(run_dir::VERDICTS).display()
    ));
    Ok(errors)
}

/// What the run store knows of how each endpoint takes structured output, learned by an earlier stage.
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
