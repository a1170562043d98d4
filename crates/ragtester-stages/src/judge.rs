//! Stage 4a: the oracle — every answer judged by every judge (and sample), each verdict committed as it is
//! made so a killed judge resumes; the panel's consensus and the oracle's figures written beside them.

use crate::context::StageContext;
use crate::run_dir::RunDb;
use crate::run_dir::{self, RunDir};
use anyhow::{Context, Result, bail};
use ragtester_core::progress::counted;
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
    let db = run.db()?;
    let structured = &cx.models().provider_env().structured;
    remember_structured_output(&db, structured)?;
    let earlier = db.keep_judging_session(&setup.session)?;
    if earlier > 0 {
        events.info(format!(
            "resuming: {earlier} of {} verdicts were made by an earlier judge of these answers \
             (judge errors among them are asked again)",
            setup.total
        ));
    }
    let pass = ragtester_judge::pass::Pass {
        cases: &setup.cases,
        judges: &setup.judges,
        samples: args.samples,
        concurrency: args.concurrency,
        prompts: &setup.prompts,
        claims: setup.claims(),
        scoring: &setup.scoring,
        panel: setup.panel,
        total: setup.total,
    };
    let mut sink = DirSink {
        db: &db,
        session: &setup.session,
        out: run.verdict_writer(&db, setup.panel.is_some())?,
    };
    let progress = |c: ragtester_exec::Counts| events.progress("verdicts", "resumed", c);
    let judged =
        ragtester_judge::pass::judge_answers(&pass, run.answer_reader()?, &mut sink, &progress)
            .await?;
    let (slim, errors, out) = (judged.slim, judged.errors, sink.out);
    record_structured_output(&db, structured)?;
    let mut oracle =
        ragtester_judge::oracle::summarise(&slim, args.samples, setup.panel.map(|p| p.as_str()));
    oracle.prompt_version = Some(setup.prompts.version.clone());
    oracle.people = setup.people();
    db.log_stage("judge", &args.judges.join(","))?;
    let written = out.finish()?;
    run.save_json(run_dir::ORACLE, &oracle)?;
    events.info(format!(
        "wrote {} ({}) to {}",
        counted(written, "verdict", "verdicts"),
        counted(errors, "error", "errors"),
        run.file(run_dir::VERDICTS).display()
    ));
    Ok(errors)
}

/// What judging a run needs before its first verdict: the cases, the judges, the prompts, and the session
/// every verdict is committed under.
struct Setup<'a> {
    args: &'a JudgeArgs<'a>,
    cases: Vec<ragtester_core::TestCase>,
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

    fn claims(&self) -> Option<&dyn ragtester_judge::Judge> {
        match self.args.claims {
            ClaimChecker::Lexical => Some(&self.lexical),
            ClaimChecker::Judge => Some(self.judges[0].as_ref()),
            ClaimChecker::Off => None,
        }
    }
}

/// The run directory as a judging pass's sink: verdicts of the pass's session looked up and committed in
/// the run's database, each batch written to verdicts.jsonl.
struct DirSink<'a> {
    db: &'a RunDb,
    session: &'a str,
    out: crate::run_dir::VerdictWriter<'a>,
}

impl ragtester_judge::pass::VerdictSink for DirSink<'_> {
    fn judged(&self, cells: &[(&str, &str)]) -> Result<Vec<ragtester_core::Verdict>> {
        self.db.judged_cells(self.session, cells)
    }
    fn commit(&self, verdict: &ragtester_core::Verdict) -> Result<()> {
        self.db.put_judged(self.session, verdict)
    }
    fn write(
        &mut self,
        panel: &[ragtester_core::Verdict],
        raw: &[ragtester_core::Verdict],
    ) -> Result<()> {
        self.out.add(panel, raw)
    }
}

fn remember_structured_output(
    db: &RunDb,
    structured: &ragtester_llm::structured::StructuredTable,
) -> Result<()> {
    if let Some(json) = db.structured_output()? {
        structured.remember(&serde_json::from_str(&json)?);
    }
    Ok(())
}

/// Record how each endpoint took structured output (`json_schema`, `json_object` or `prompt_only`), so a
/// run says what its judges and writers were really asked for.
fn record_structured_output(
    db: &RunDb,
    structured: &ragtester_llm::structured::StructuredTable,
) -> Result<()> {
    let learned = structured.learned();
    if !learned.is_empty() {
        db.set_structured_output(&learned)?;
    }
    Ok(())
}
