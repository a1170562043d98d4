//! The commands carried out: each maps its flags onto the pipeline's settings, runs the stages with the
//! terminal as their event sink, prints what a person reads on stdout, and returns the exit code.

use crate::args::{
    AuditCli, BenchCommand, Cli, Command, DocgenCli, GenerateCli, ImportCli, IndexBenchCli,
    IngestCli, InitCli, JudgeCli, OracleBenchCli, RetrievalBenchCli, RunCli, ServeCli,
};
use crate::exit::{EXIT_BUDGET, partial_if, threshold_if};
use anyhow::Result;
use ragtester_core::config::GenerationSettings;
use ragtester_core::settings::Environment;
use ragtester_core::{ModelSettings, Sampling};
use ragtester_stages::generate::parse_generators;
use ragtester_stages::plan::{MatrixOverrides, PlanArgs};
use ragtester_stages::{Events, Models, StageContext};
use std::path::Path;

/// The registry of this command's models, under the global flags, the environment read at start and the
/// command's limits.
fn models_of(
    cli: &Cli,
    environment: Environment,
    limits: ragtester_core::Limits,
) -> Result<Models> {
    let flags = Sampling {
        max_tokens: cli.max_tokens,
        temperature: cli.temperature,
        seed: cli.llm_seed,
    };
    let fallback = ModelSettings {
        requests_per_minute: cli.requests_per_minute,
        tokens_per_minute: cli.tokens_per_minute,
        ..Default::default()
    };
    let env = ragtester_stages::ProviderEnv::new(std::sync::Arc::new(environment), limits);
    Models::from_flags(env, !cli.no_cache, cli.refresh_cache, flags, fallback)
}

/// Carry out a command under the environment `main` read and checked at start.
pub async fn dispatch(cli: Cli, environment: Environment) -> Result<u8> {
    let limits = ragtester_core::Limits::default().with_overrides(&cli.limits)?;
    let models = models_of(&cli, environment, limits)?;
    let width = crate::render::width();
    let terminal = crate::render::Terminal::new(cli.quiet, width);
    let events: &dyn Events = &terminal;
    let cx = &StageContext::new(&models, events, limits);
    match cli.command {
        Command::Ingest(i) => ingest(i, cx),
        Command::Generate(g) => generate(g, cx).await,
        Command::Run(run) => run_matrix(run, cx).await,
        Command::Judge(judge) => judge_run(judge, cx).await,
        Command::Export(e) => {
            let export = ragtester_stages::interop::export;
            let config = e.config.as_deref();
            export(&e.input, &e.format, &e.out, &e.docs, config, cx)?;
            Ok(0)
        }
        Command::Import(i) => import(i, cx),
        Command::Audit(audit) => audit_run(audit, cx).await,
        Command::Calibrate(c) => {
            let request = ragtester_stages::calibrate::CalibrateRequest {
                labels: &c.labels,
                out: &c.out,
                folds: c.folds,
                meaning: c.meaning.as_deref(),
                baseline: c.judge_profile.as_deref(),
                name: c.name.as_deref(),
            };
            let calibration = ragtester_stages::calibrate::calibrate(&request, cx)?;
            print!("{}", ragtester_stages::calibrate::render(&calibration));
            Ok(0)
        }
        Command::Report {
            run_dir,
            full,
            no_summary,
            gates,
        } => {
            let summary = ragtester_stages::report::report(&run_dir, events)?;
            if !no_summary {
                print!("{}", ragtester_stages::front::render(&summary, full, width));
                let next = format!(
                    "next: ragtester serve --run {}   # browse it",
                    run_dir.display()
                );
                println!("{}", ragtester_stages::front::fold(&next, width));
            }
            Ok(missed(&ragtester_stages::front::check_gates(
                &summary,
                &gates.into(),
            )))
        }
        Command::Merge { shards, out } => {
            ragtester_stages::merge::merge(&shards, &out, events).map(|_| 0)
        }
        Command::Diff(d) => diff_command(&d),
        Command::Test {
            config,
            judge_profile,
            out,
        } => {
            let outcome =
                ragtester_stages::full::test_project(&config, judge_profile, &out, cx).await?;
            Ok(print_outcome(&outcome, &out, width))
        }
        Command::Bench(BenchCommand::Retrieval(bench)) => bench_retrieval(bench, cx),
        Command::Bench(BenchCommand::Oracle(bench)) => bench_oracle(bench, cx).await,
        Command::Bench(BenchCommand::Index(bench)) => bench_index(bench, cx),
        Command::Docgen(args) => docgen(args, cx).await,
        Command::Serve(sv) => serve(sv, &models, events).await,
        Command::Init(i) => init(i, cx).await,
        Command::Demo(d) => {
            let args = ragtester_stages::demo::DemoArgs {
                out: &d.out,
                embedders: d.embedders,
                rerankers: d.rerankers,
            };
            let outcome = ragtester_stages::demo::demo(args, cx).await?;
            Ok(print_outcome(&outcome, &d.out, width))
        }
    }
}

/// `serve`: the web UI until the process stops.
async fn serve(sv: ServeCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let access = ragtester_web::Access {
        token: serve_token(&sv, &models.provider_env().environment, events)?,
        allow_hosts: sv.allow_hosts,
    };
    // Browsing runs writes nothing beside them: without a workspace named, new documents, suites
    // and runs go to a folder in the system's temporary directory (removed if the server returns; a
    // killed server leaves it there).
    let temporary = match (&sv.workspace, sv.runs.is_empty()) {
        (None, false) => Some(tempfile::Builder::new().prefix("ragtester-ui-").tempdir()?),
        _ => None,
    };
    let workspace = match (&temporary, &sv.workspace) {
        (Some(dir), _) => dir.path().to_path_buf(),
        (None, Some(dir)) => dir.clone(),
        (None, None) => std::path::PathBuf::from("ragtester-workspace"),
    };
    match &temporary {
        Some(_) => {
            eprintln!("workspace: a temporary folder (--workspace DIR keeps what you add)")
        }
        None => eprintln!("workspace: {}", workspace.display()),
    }
    let serve = ragtester_web::serve_workspace;
    let ready = |url: &str| println!("ragtester UI on {url}");
    serve(
        sv.addr,
        access,
        &workspace,
        &sv.runs,
        models.clone(),
        &ready,
    )
    .await?;
    drop(temporary);
    Ok(0)
}

/// The access token `serve` is to require, from where the user keeps it: a file (`--token-file`), the
/// environment (`RAGTESTER_TOKEN`), or, with a warning, the command line; `None` makes a random one.
fn serve_token(
    sv: &ServeCli,
    environment: &Environment,
    events: &dyn Events,
) -> Result<Option<String>> {
    if let Some(file) = &sv.token_file {
        let (token, warning) = ragtester_web::guard::read_token_file(file)?;
        if let Some(warning) = warning {
            events.warning(warning);
        }
        return Ok(Some(token));
    }
    if let Some(token) = &sv.token {
        events.warning(
            "--token is visible to every account of this machine in the process list: \
             give the token in RAGTESTER_TOKEN or --token-file instead",
        );
        return Ok(Some(token.clone()));
    }
    Ok(environment.ui_token.clone())
}

/// `import`: another tool's dataset as a suite, or answered records as a run; exit code 3 when rows were
/// left out.
fn import(i: ImportCli, cx: &StageContext<'_>) -> Result<u8> {
    use ragtester_stages::interop;
    let imported = match &i.input {
        None => interop::import_answers(
            &interop::AnswersImport {
                files: &i.answers,
                systems: &i.system,
                docs: &i.docs,
                out: &i.out,
            },
            cx,
        )?,
        Some(input) => {
            let format = i.format.unwrap_or_default();
            interop::import(input, &format, &i.docs, &i.out, cx)?
        }
    };
    Ok(partial_if(imported.partial()))
}

/// `init`: a project file drafted for the documents; exit code 3 when some could not be read.
async fn init(i: InitCli, cx: &StageContext<'_>) -> Result<u8> {
    use ragtester_stages::init::{InitRequest, init};
    let request = InitRequest {
        docs: &i.docs,
        out: &i.out,
        force: i.force,
    };
    let done = init(&request, cx).await?;
    eprintln!("{}", done.summary());
    println!("{}", done.path.display());
    Ok(partial_if(done.failed > 0))
}

/// `ingest`: documents.jsonl in `out`; exit code 3 when some files failed.
fn ingest(i: IngestCli, cx: &StageContext<'_>) -> Result<u8> {
    let mut limits = *cx.limits();
    limits.file_mb = i.max_file_mb.unwrap_or(limits.file_mb);
    let request = ragtester_stages::ingest::IngestRequest {
        inputs: ragtester_stages::front::Input::of_paths(&i.paths),
        options: ragtester_stages::front::IngestOptions {
            strip_running_lines: !i.keep_running_lines,
            limits,
            follow_symlinks: i.follow_symlinks,
        },
        out: &i.out,
    };
    let ingested = ragtester_stages::ingest::ingest_request(&request, cx)?;
    let (n, path) = (ingested.documents, ingested.path.display());
    eprintln!("wrote {n} documents to {path}");
    let next = format!("next: ragtester generate --docs {path} --out suite.jsonl");
    println!(
        "{}",
        ragtester_stages::front::fold(&next, crate::render::width())
    );
    Ok(partial_if(ingested.failed > 0))
}

/// The matrix table and where the report is; exit code 3 when inputs, cells or verdicts were left out.
fn print_outcome(
    outcome: &ragtester_stages::full::PipelineOutcome,
    out: &Path,
    width: usize,
) -> u8 {
    println!();
    print!(
        "{}",
        ragtester_stages::front::render(&outcome.summary, false, width)
    );
    println!();
    use ragtester_stages::run_dir::{REPORT_HTML, RunDir};
    let run = RunDir::new(out);
    let next = format!(
        "next: open {}, or browse every answer: ragtester serve --run {}",
        run.file(REPORT_HTML).display(),
        out.display()
    );
    println!("{}", ragtester_stages::front::fold(&next, width));
    partial_if(outcome.partial())
}

/// Exit code 4 when a gate was missed; each miss is printed.
fn missed(misses: &[String]) -> u8 {
    for miss in misses {
        eprintln!("gate: {miss}");
    }
    threshold_if(!misses.is_empty())
}

/// `generate`: ingest the documents, write the suite and its generation report.
async fn generate(g: GenerateCli, cx: &StageContext<'_>) -> Result<u8> {
    let request = ragtester_stages::generate::SuiteRequest {
        docs: ragtester_stages::front::Input::of_paths(&g.docs),
        settings: GenerationSettings {
            strategies: parse_generators(&g.strategies)?,
            n_test: g.n_test,
            n_complex: g.n_complex,
            conversations: g.conversations,
            goals: g.goals,
            expected_tools: g.expected_tools,
            llm: g.llm,
            section_tokens: g.section_tokens,
            seed: g.seed,
            prompts: g.prompts,
            critic: g.critic,
            drop_leaky: g.drop_leaky,
            update: g.update,
            ..Default::default()
        },
        concurrency: g.concurrency,
        out: &g.out,
    };
    let cx = &(cx.clone()).with_token_budget(g.budget_tokens)?;
    let outcome = ragtester_stages::suite::generate_request(&request, cx).await?;
    let cases = outcome.generated.cases.len();
    eprintln!("wrote {cases} cases to {}", g.out.display());
    let docs = g
        .docs
        .first()
        .map_or(String::from("DOCS"), |d| d.display().to_string());
    eprintln!(
        "next: ragtester run --docs {docs} --suite {} --out run1",
        g.out.display()
    );
    if outcome.generated.halted > 0 {
        return Ok(EXIT_BUDGET);
    }
    Ok(partial_if(outcome.partial()))
}

/// `run`: the suite against the matrix the flags and config file declare (or only its estimate).
async fn run_matrix(run: RunCli, cx: &StageContext<'_>) -> Result<u8> {
    // A shard's next step is `merge` (the run's help says so), not judging it alone.
    let next = match &run.shard {
        None => format!("next: ragtester judge {}", run.out.display()),
        Some(_) => "next: ragtester merge every shard's --out, then judge the merged run".into(),
    };
    let shard = run
        .shard
        .as_deref()
        .map(ragtester_stages::front::Shard::parse)
        .transpose()?;
    let plan = ragtester_stages::plan::plan(&PlanArgs {
        config: run.config.as_deref(),
        overrides: MatrixOverrides {
            llms: run.llms,
            embedders: run.embedders,
            retrievers: run.retrievers,
            rerankers: run.rerankers,
            top_k: run.top_k,
            chunk_tokens: run.chunk_tokens,
            chunkers: run.chunkers,
            chunk_overlap: run.chunk_overlap,
            history: run.history,
        },
        concurrency: run.concurrency,
        budget_usd: run.budget_usd,
        budget_tokens: run.budget_tokens,
        repeat: run.repeat,
    })?;
    use ragtester_stages::run::{MatrixOutcome, MatrixRequest, run_request};
    let request = MatrixRequest {
        resume: run.resume,
        replay_answers: run.replay_answers,
        shard,
        vector_store: run.vector_store.clone(),
        dry_run: run.dry_run,
        ..MatrixRequest::from_plan(&plan, &run.docs, &run.suite, &run.out)
    };
    let cx = &(cx.clone()).planned(&plan)?;
    let (outcome, failed) = match run_request(&request, cx).await? {
        MatrixOutcome::Estimate(estimate) => {
            print!("{estimate}");
            return Ok(0);
        }
        MatrixOutcome::Ran {
            outcome,
            failed_documents,
        } => (outcome, failed_documents),
    };
    if outcome.over_budget > 0 {
        return Ok(EXIT_BUDGET);
    }
    eprintln!("{next}");
    Ok(partial_if(failed > 0 || outcome.errors > 0))
}

/// `docgen`: test documents from a model, or offline with planted facts.
async fn docgen(args: DocgenCli, cx: &StageContext<'_>) -> Result<u8> {
    let request = ragtester_stages::docgen::DocgenRequest {
        request: args.request()?,
        llm: &args.llm,
        count: args.count,
        out: &args.out,
        prompts: args.prompts.as_deref(),
        format: ragtester_stages::docgen::format_of(args.pdf, args.noise)?,
    };
    let written = ragtester_stages::docgen::docgen(&request, cx).await?;
    for path in &written {
        println!("{}", path.display());
    }
    Ok(0)
}

/// `judge`: every answer of a run judged (or two configurations compared); exit code 3 when verdicts or
/// comparisons are errors.
async fn judge_run(judge: JudgeCli, cx: &StageContext<'_>) -> Result<u8> {
    use ragtester_stages::judge::{ClaimChecker, JudgeArgs, JudgeRequest, judge_request};
    let request = JudgeRequest {
        run_dir: &judge.run_dir,
        args: JudgeArgs {
            judges: &judge.judges,
            samples: judge.samples,
            panel: ragtester_stages::front::PanelMethod::parse(&judge.panel)?,
            concurrency: judge.concurrency,
            sampling: Sampling::default(),
            prompts: judge.prompts.as_deref(),
            claims: ClaimChecker::parse(&judge.claims)?,
            profile: judge.judge_profile.as_deref(),
        },
        pairwise: (judge.pairwise.first().zip(judge.pairwise.get(1)))
            .map(|(a, b)| (a.as_str(), b.as_str())),
    };
    let outcome = judge_request(&request, cx).await?;
    let mut errors = outcome.errors;
    if let Some(summary) = &outcome.pairwise {
        print!("{}", ragtester_stages::pairwise::render(summary));
        errors = summary.errors;
    } else {
        eprintln!("next: ragtester report {}", judge.run_dir.display());
    }
    Ok(partial_if(errors > 0))
}

/// `audit`: the audit sheet drawn, or the labelled sample scored and printed.
async fn audit_run(audit: AuditCli, cx: &StageContext<'_>) -> Result<u8> {
    let args = ragtester_stages::audit::AuditRequest {
        run_dir: &audit.run_dir,
        confidence: audit.confidence,
        margin: audit.margin,
        seed: audit.seed,
        labels: audit.labels.as_deref(),
        judges: &audit.judges,
        concurrency: audit.concurrency,
    };
    if let ragtester_stages::audit::AuditOutcome::Scored(summary) =
        ragtester_stages::audit::audit(&args, cx).await?
    {
        println!("{}", ragtester_stages::front::render_audit(&summary));
    }
    Ok(0)
}

/// `bench retrieval`: the retrievers on a BEIR data set.
fn bench_retrieval(bench: RetrievalBenchCli, cx: &StageContext<'_>) -> Result<u8> {
    let args = ragtester_stages::bench_retrieval::BenchArgs {
        beir: &bench.beir,
        retrievers: &bench.retrievers,
        embedder: &bench.embedder,
        reranker: &bench.reranker,
        k: bench.k,
        ann_threshold: bench.ann_threshold,
        vector_store: bench.vector_store.as_deref(),
        json: bench.json.as_deref(),
    };
    let rows =
        tokio::task::block_in_place(|| ragtester_stages::bench_retrieval::retrieval(&args, cx))?;
    print!(
        "{}",
        ragtester_stages::bench_retrieval::render(&rows, bench.k)
    );
    Ok(0)
}

/// `bench index`: one index over a synthetic corpus.
fn bench_index(bench: IndexBenchCli, cx: &StageContext<'_>) -> Result<u8> {
    let figures = tokio::task::block_in_place(|| {
        ragtester_stages::bench_index::index(
            &ragtester_stages::bench_index::IndexBenchArgs {
                chunks: bench.chunks,
                words: bench.words,
                queries: bench.queries,
                seed: bench.seed,
                index: &bench.index,
                work: bench.work.as_deref(),
                json: bench.json.as_deref(),
            },
            cx,
        )
    })?;
    print!("{}", ragtester_stages::bench_index::render(&figures));
    Ok(0)
}

/// `bench oracle`: the judges against labelled answers; exit code 4 below a goal.
/// `diff`: the comparison printed, and the gate — a regression, or a diff that compared nothing, fails it
/// (with `--strict`, a drop held back as chance too).
fn diff_command(d: &crate::args::DiffCli) -> Result<u8> {
    let (json, md) = (d.json.as_deref(), d.markdown.as_deref());
    let pairs: Vec<(String, String)> = d
        .compare
        .chunks(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    let diff = ragtester_stages::diff::diff(&d.before, &d.after, (json, md), &pairs)?;
    print!(
        "{}",
        ragtester_stages::front::render_diff(&diff, crate::render::width(), d.full)
    );
    // A diff that compared nothing cannot vouch for anything: the gate fails on it, saying so.
    if d.fail_on_regression && diff.compared_nothing() {
        eprintln!("--fail-on-regression: {}", diff.headline());
    }
    let held = diff.held_drops().count();
    if d.strict && held > 0 {
        eprintln!(
            "--strict: {held} drop{} held back as chance fail{} the gate",
            if held == 1 { "" } else { "s" },
            if held == 1 { "s" } else { "" }
        );
    }
    Ok(threshold_if(
        d.fail_on_regression
            && (!diff.regressions.is_empty() || diff.compared_nothing() || (d.strict && held > 0)),
    ))
}

async fn bench_oracle(bench: OracleBenchCli, cx: &StageContext<'_>) -> Result<u8> {
    use ragtester_stages::bench_oracle::{OracleBenchRequest, bench_request};
    let request = OracleBenchRequest {
        judges: &bench.judges,
        panel: bench.panel.as_deref(),
        labels: bench.labels.as_deref(),
        documents: bench.documents,
        max_questions: bench.max_questions,
        cmrc: bench.cmrc.as_deref(),
        cmrc_limit: bench.cmrc_limit,
        concurrency: bench.concurrency,
        json: bench.json.as_deref(),
        min_precision: bench.min_precision,
        min_recall: bench.min_recall,
        min_other_words: bench.min_other_words,
        min_kind_recall: bench.min_kind_recall,
        profile: bench.judge_profile.as_deref(),
        items: bench.items.as_deref(),
    };
    let report = bench_request(&request, cx).await?;
    print!("{}", report.text);
    Ok(missed(&report.misses))
}
