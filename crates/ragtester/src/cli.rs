//! The commands carried out: each maps its flags onto the pipeline's settings, runs the stages with the
//! terminal as their event sink, prints what a person reads on stdout, and returns the exit code.

use crate::args::{
    AuditCli, BenchCommand, Cli, Command, DocgenCli, GenerateCli, IndexBenchCli, JudgeCli,
    OracleBenchCli, RetrievalBenchCli, RunCli,
};
use crate::exit::{EXIT_BUDGET, EXIT_THRESHOLD, partial_if};
use anyhow::{Context, Result, bail};
use ragtester_core::config::{GenerationSettings, ProjectConfig, RunSettings};
use ragtester_core::{ModelSettings, RetrieverKind, Sampling};
use ragtester_pipeline::generate::{GenerateArgs, parse_generators};
use ragtester_pipeline::plan::{MatrixOverrides, PlanArgs};
use ragtester_pipeline::run_dir::RunDir;
use ragtester_pipeline::{Events, Models};
use std::path::Path;
use std::sync::Arc;

/// The registry of this command's models, under the global flags.
fn models_of(cli: &Cli) -> Result<Arc<Models>> {
    let flags = Sampling {
        max_tokens: cli.max_tokens,
        temperature: cli.temperature,
        seed: cli.llm_seed,
    };
    flags.validate("--temperature/--max-tokens")?;
    let fallback = ModelSettings {
        requests_per_minute: cli.requests_per_minute,
        tokens_per_minute: cli.tokens_per_minute,
        ..Default::default()
    };
    fallback.validate("--requests-per-minute/--tokens-per-minute")?;
    let models = Models::new(!cli.no_cache, cli.refresh_cache, flags, fallback)?;
    Ok(Arc::new(models))
}

pub async fn dispatch(cli: Cli) -> Result<u8> {
    ragtester_core::Limits::set_process(
        ragtester_core::Limits::default().with_overrides(&cli.limits)?,
    );
    let models = models_of(&cli)?;
    let terminal = crate::render::Terminal::new(cli.command.quiet());
    let events: &dyn Events = &terminal;
    match cli.command {
        Command::Ingest {
            paths,
            out,
            keep_running_lines,
            max_file_mb,
        } => ingest(&paths, &out, keep_running_lines, max_file_mb, events),
        Command::Generate(g) => generate(g, &models, events).await,
        Command::Run(run) => run_matrix(run, &models, events).await,
        Command::Judge(judge) => judge_run(judge, &models, events).await,
        Command::Export {
            input,
            format,
            out,
            docs,
            config,
        } => {
            let interop = ragtester_pipeline::interop::export;
            interop(&input, &format, &out, &docs, config.as_deref(), events)?;
            Ok(0)
        }
        Command::Import {
            input,
            format,
            docs,
            out,
            answers,
            system,
        } => {
            use ragtester_pipeline::interop;
            let imported = match input {
                None => interop::import_answers(
                    &interop::AnswersImport {
                        files: &answers,
                        systems: &system,
                        docs: &docs,
                        out: &out,
                    },
                    events,
                )?,
                Some(input) => {
                    if docs.is_empty() {
                        anyhow::bail!(
                            "importing a suite needs --docs, to find its reference contexts"
                        );
                    }
                    let format = format.unwrap_or_default();
                    interop::import(&input, &format, &docs, &out, events)?
                }
            };
            Ok(partial_if(imported.partial()))
        }
        Command::Audit(audit) => audit_run(audit, &models, events).await,
        Command::Report { run_dir, gates } => {
            let summary = ragtester_pipeline::report::report(&run_dir, events)?;
            print!("{}", ragtester_report::render_table(&summary));
            Ok(gate_code(&summary, &gates.into()))
        }
        Command::Merge { shards, out } => {
            ragtester_pipeline::merge::merge(&shards, &out, events)?;
            Ok(0)
        }
        Command::Diff {
            before,
            after,
            json,
            fail_on_regression,
        } => {
            let diff = ragtester_pipeline::diff::diff(&before, &after, json.as_deref())?;
            print!("{}", ragtester_report::render_diff(&diff));
            let regressed = fail_on_regression && !diff.regressions.is_empty();
            Ok(if regressed { EXIT_THRESHOLD } else { 0 })
        }
        Command::Test { config, out } => test(&config, &out, &models, events).await,
        Command::Bench(BenchCommand::Retrieval(bench)) => bench_retrieval(bench, &models, events),
        Command::Bench(BenchCommand::Oracle(bench)) => bench_oracle(bench, &models, events).await,
        Command::Bench(BenchCommand::Index(bench)) => bench_index(bench, events),
        Command::Docgen(args) => docgen(args, &models, events).await,
        Command::Serve {
            addr,
            allow_hosts,
            token,
            workspace,
            runs,
        } => {
            let guard = ragtester_web::Guard::new(addr, &allow_hosts, token)?;
            serve(addr, guard, &workspace, &runs, models).await
        }
        Command::Demo {
            out,
            embedders,
            rerankers,
        } => {
            let args = ragtester_pipeline::demo::DemoArgs {
                out: &out,
                embedders,
                rerankers,
            };
            let outcome = ragtester_pipeline::demo::demo(args, &models, events).await?;
            Ok(print_outcome(&outcome, &out))
        }
    }
}

/// `serve`: the web UI over a workspace, its jobs sharing this command's model registry.
async fn serve(
    addr: std::net::SocketAddr,
    guard: ragtester_web::Guard,
    workspace: &Path,
    runs: &[std::path::PathBuf],
    models: Arc<Models>,
) -> Result<u8> {
    let state = ragtester_web::AppState {
        workspace: ragtester_web::Workspace::open(workspace, runs)?,
        jobs: Default::default(),
        stages: Arc::new(ragtester_web::Stages { models }),
        runs: Default::default(),
        guard: Arc::new(guard),
        limits: ragtester_core::Limits::process(),
    };
    eprintln!("workspace: {}", workspace.display());
    ragtester_web::serve(addr, state).await?;
    Ok(0)
}

/// `ingest`: documents.jsonl in `out`; exit code 3 when some files failed.
fn ingest(
    paths: &[std::path::PathBuf],
    out: &Path,
    keep_running_lines: bool,
    max_file_mb: Option<u64>,
    events: &dyn Events,
) -> Result<u8> {
    let mut limits = ragtester_core::Limits::process();
    if let Some(mb) = max_file_mb {
        limits.file_mb = mb;
    }
    let options = ragtester_ingest::IngestOptions {
        strip_running_lines: !keep_running_lines,
        limits,
    };
    let (docs, failed) = ragtester_pipeline::ingest::ingest_with(
        &ragtester_ingest::Input::of_paths(paths),
        &options,
        events,
    )?;
    let path = RunDir::new(out).file(ragtester_pipeline::run_dir::DOCUMENTS);
    ragtester_core::write_jsonl_atomic(&path, &docs)?;
    eprintln!("wrote {} documents to {}", docs.len(), path.display());
    Ok(partial_if(failed > 0))
}

/// `test`: the whole pipeline a project file declares.
async fn test(config: &Path, out: &Path, models: &Models, events: &dyn Events) -> Result<u8> {
    let project = ProjectConfig::load(config)?;
    let corpus = project
        .corpus
        .as_ref()
        .with_context(|| format!("config file {} has no [corpus] paths", config.display()))?;
    let full = ragtester_pipeline::full::full_pipeline;
    let outcome = full(&corpus.paths, &project, out, models, events).await?;
    Ok(print_outcome(&outcome, out))
}

/// The matrix table and where the report is; exit code 3 when inputs, cells or verdicts were left out.
fn print_outcome(outcome: &ragtester_pipeline::full::PipelineOutcome, out: &Path) -> u8 {
    println!();
    print!("{}", ragtester_report::render_table(&outcome.summary));
    println!();
    let run = ragtester_pipeline::run_dir::RunDir::new(out);
    println!(
        "report: {}",
        run.file(ragtester_pipeline::run_dir::REPORT_HTML).display()
    );
    println!(
        "summary: {}",
        run.file(ragtester_pipeline::run_dir::SUMMARY).display()
    );
    partial_if(outcome.partial())
}

/// Exit code 4 when a configuration misses a gate; each miss is printed.
fn gate_code(summary: &ragtester_report::Summary, gates: &ragtester_report::Gates) -> u8 {
    let misses = ragtester_report::check_gates(summary, gates);
    for miss in &misses {
        eprintln!("gate: {miss}");
    }
    if misses.is_empty() { 0 } else { EXIT_THRESHOLD }
}

/// `generate`: ingest the documents, write the suite and its generation report.
async fn generate(g: GenerateCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let settings = GenerationSettings {
        strategies: parse_generators(&g.strategies)?,
        n_test: g.n_test,
        n_complex: g.n_complex,
        llm: g.llm,
        section_tokens: g.section_tokens,
        seed: g.seed,
        prompts: g.prompts,
        critic: g.critic,
        ..Default::default()
    };
    if g.budget_tokens == Some(0) {
        bail!("--budget-tokens must be at least 1");
    }
    let limits = RunSettings {
        budget_tokens: g.budget_tokens,
        ..Default::default()
    };
    let budget = ragtester_pipeline::run::budget_of(&limits, &Default::default());
    let args = GenerateArgs::from_settings(&settings, g.concurrency, budget);
    let (docs, failed) = ragtester_pipeline::ingest::ingest(&g.docs, events)?;
    let generate = ragtester_pipeline::generate::generate;
    let generated = generate(&docs, &args, &g.out, models, events).await?;
    eprintln!(
        "wrote {} cases to {}",
        generated.cases.len(),
        g.out.display()
    );
    if generated.halted > 0 {
        return Ok(EXIT_BUDGET);
    }
    Ok(partial_if(failed > 0))
}

/// `run`: the suite against the matrix the flags and config file declare (or only its estimate).
async fn run_matrix(run: RunCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let shard = run
        .shard
        .as_deref()
        .map(ragtester_exec::Shard::parse)
        .transpose()?;
    let plan = ragtester_pipeline::plan::plan(&PlanArgs {
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
        },
        concurrency: run.concurrency,
        budget_usd: run.budget_usd,
        budget_tokens: run.budget_tokens,
    })?;
    use ragtester_pipeline::run::{MatrixOutcome, MatrixRequest, run_request};
    let request = MatrixRequest {
        plan: &plan,
        docs: &run.docs,
        suite: &run.suite,
        out: &run.out,
        resume: run.resume,
        replay_answers: run.replay_answers,
        shard,
        vector_store: run.vector_store.clone(),
        dry_run: run.dry_run,
    };
    let (outcome, failed) = match run_request(&request, models, events).await? {
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
    Ok(partial_if(failed > 0 || outcome.errors > 0))
}

/// `docgen`: test documents from a model, or offline with planted facts.
async fn docgen(args: DocgenCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let docgen_args = ragtester_pipeline::docgen::DocgenArgs {
        request: args.request()?,
        llm: &args.llm,
        count: args.count,
        out: &args.out,
        prompts: args.prompts.as_deref(),
        format: ragtester_pipeline::docgen::format_of(args.pdf, args.noise)?,
    };
    let written = ragtester_pipeline::docgen::docgen(&docgen_args, models, events).await?;
    for path in &written {
        println!("{}", path.display());
    }
    let manifest = args.out.join(ragtester_core::generated::MANIFEST_FILE);
    eprintln!(
        "wrote {} documents and {}",
        written.len(),
        manifest.display()
    );
    Ok(0)
}

/// `judge`: every answer of a run judged; exit code 3 when verdicts are errors.
async fn judge_run(judge: JudgeCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let JudgeCli {
        run_dir,
        judges,
        samples,
        panel,
        prompts,
        claims,
        concurrency,
        quiet: _,
        pairwise,
    } = judge;
    let judged = run_dir
        .join(ragtester_pipeline::run_dir::VERDICTS)
        .is_file();
    if let [a, b] = pairwise.as_slice()
        && judged
    {
        return pairwise_run(&run_dir, a, b, &judges[0], concurrency, models, events).await;
    }
    let args = ragtester_pipeline::judge::JudgeArgs {
        judges: &judges,
        samples,
        panel: ragtester_judge::PanelMethod::parse(&panel)?,
        concurrency,
        sampling: Sampling::default(),
        prompts: prompts.as_deref(),
        claims: ragtester_pipeline::judge::ClaimChecker::parse(&claims)?,
    };
    let errors = ragtester_pipeline::judge::judge(&run_dir, &args, models, events).await?;
    if let [a, b] = pairwise.as_slice() {
        return pairwise_run(&run_dir, a, b, &judges[0], concurrency, models, events).await;
    }
    Ok(partial_if(errors > 0))
}

/// `judge --pairwise A B`: the comparison printed and kept in pairwise.json.
async fn pairwise_run(
    run_dir: &std::path::Path,
    a: &str,
    b: &str,
    judge: &str,
    concurrency: usize,
    models: &Models,
    events: &dyn Events,
) -> Result<u8> {
    let judge = models
        .get(judge)
        .with_context(|| format!("judge `{judge}`"))?;
    let summary =
        ragtester_pipeline::pairwise::compare(run_dir, a, b, judge, concurrency, events).await?;
    print!("{}", ragtester_pipeline::pairwise::render(&summary));
    Ok(partial_if(summary.errors > 0))
}

/// `audit`: the audit sheet drawn, or the labelled sample scored and printed.
async fn audit_run(audit: AuditCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let AuditCli {
        run_dir,
        confidence,
        margin,
        seed,
        labels,
        judges,
        concurrency,
    } = audit;
    let args = ragtester_pipeline::audit::AuditArgs {
        run_dir: &run_dir,
        confidence,
        margin,
        seed,
        labels: labels.as_deref(),
        judges: &judges,
        concurrency,
    };
    if let ragtester_pipeline::audit::AuditOutcome::Scored(summary) =
        ragtester_pipeline::audit::audit(&args, models, events).await?
    {
        println!("{}", ragtester_report::render_audit(&summary));
    }
    Ok(0)
}

/// `bench retrieval`: the retrievers on a BEIR data set.
fn bench_retrieval(bench: RetrievalBenchCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let RetrievalBenchCli {
        beir,
        retrievers,
        embedder,
        reranker,
        k,
        ann_threshold,
        vector_store,
        json,
    } = bench;
    let retrievers = retrievers
        .iter()
        .map(|r| RetrieverKind::parse(r))
        .collect::<Result<Vec<_>>>()?;
    let rows = tokio::task::block_in_place(|| {
        ragtester_pipeline::bench_retrieval::retrieval(
            &ragtester_pipeline::bench_retrieval::BenchArgs {
                beir: &beir,
                retrievers: &retrievers,
                embedder: &embedder,
                reranker: &reranker,
                k,
                ann_threshold: ann_threshold.unwrap_or(models.ann_settings().threshold),
                vector_store: vector_store.as_deref(),
                json: json.as_deref(),
            },
            models,
            events,
        )
    })?;
    println!(
        "{:<15} {:>9} {:>10} {:>8} {:>9} {:>9}",
        "retriever",
        format!("nDCG@{k}"),
        format!("recall@{k}"),
        format!("MRR@{k}"),
        "index s",
        "query s"
    );
    for r in &rows {
        println!(
            "{:<15} {:>9.4} {:>10.4} {:>8.4} {:>9.2} {:>9.2}",
            r.name, r.ndcg, r.recall, r.mrr, r.index_s, r.query_s
        );
    }
    Ok(0)
}

/// `bench index`: one index over a synthetic corpus.
fn bench_index(bench: IndexBenchCli, events: &dyn Events) -> Result<u8> {
    if let Some(work) = &bench.work {
        std::fs::create_dir_all(work)?;
    }
    let figures = tokio::task::block_in_place(|| {
        ragtester_pipeline::bench_index::index(
            &ragtester_pipeline::bench_index::IndexBenchArgs {
                chunks: bench.chunks,
                words: bench.words,
                queries: bench.queries,
                seed: bench.seed,
                index: &bench.index,
                work: bench.work.as_deref(),
                json: bench.json.as_deref(),
            },
            events,
        )
    })?;
    let mib = |v: Option<f64>| v.map_or("-".to_string(), |m| format!("{m:.0} MiB"));
    println!(
        "{}: {} chunks, build {:.1} s, query P50 {:.2} ms, P95 {:.2} ms, source in top 10 {:.3}{}, RSS {} after the corpus, peak {}",
        figures.index,
        figures.chunks,
        figures.build_s,
        figures.query_p50_ms,
        figures.query_p95_ms,
        figures.source_at_10,
        figures
            .recall_vs_exact_at_10
            .map_or(String::new(), |r| format!(", recall@10 vs exact {r:.3}")),
        mib(figures.corpus_rss_mib),
        mib(figures.peak_rss_mib),
    );
    Ok(0)
}

/// `bench oracle`: the judges against labelled answers; exit code 4 below a goal.
async fn bench_oracle(bench: OracleBenchCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let OracleBenchCli {
        judges,
        panel,
        documents,
        max_questions,
        cmrc,
        cmrc_limit,
        concurrency,
        min_precision,
        min_recall,
        json,
        labels,
    } = bench;
    let specs = if judges.is_empty() {
        ragtester_core::config::JudgeSettings::default().judges
    } else {
        judges
    };
    let judges = specs
        .iter()
        .map(|s| models.get(s).with_context(|| format!("judge `{s}`")))
        .collect::<Result<Vec<_>>>()?;
    if let Some(labels) = labels {
        use ragtester_pipeline::bench_labels;
        let args = bench_labels::LabelsBenchArgs {
            judges,
            labels: &labels,
            concurrency,
            json: json.as_deref(),
        };
        for score in bench_labels::bench_labels(&args, events).await? {
            print!("{}", bench_labels::render(&score));
        }
        return Ok(0);
    }
    let outcome = ragtester_pipeline::bench_oracle::bench_oracle(
        &ragtester_pipeline::bench_oracle::OracleBenchArgs {
            judges,
            panel: panel
                .as_deref()
                .map(ragtester_judge::PanelMethod::parse)
                .transpose()?,
            documents,
            max_questions,
            cmrc: cmrc.as_deref(),
            cmrc_limit,
            concurrency,
            json: json.as_deref(),
            min_precision,
            min_recall,
        },
        events,
    )
    .await?;
    for score in &outcome.scores {
        print!("{}", ragtester_pipeline::bench_oracle::render(score));
    }
    for miss in &outcome.misses {
        eprintln!("gate: {miss}");
    }
    Ok(if outcome.misses.is_empty() {
        0
    } else {
        EXIT_THRESHOLD
    })
}
