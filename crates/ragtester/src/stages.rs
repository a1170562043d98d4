//! The four stages as functions over run directories, shared by the single-stage commands, `test` and `demo`.
//! A run directory holds: documents.jsonl, suite.jsonl, configs.jsonl, answers.jsonl, verdicts.jsonl,
//! oracle.json, summary.json, report.html, results.csv, junit.xml, store.sqlite, and after an audit
//! audit.csv and audit.json.

use crate::manifest::{ManifestInputs, RunManifest};
use anyhow::{Context, Result, bail};
use ragtester_core::config::ProjectConfig;
use ragtester_core::{
    Answer, Configuration, Document, Generator, TestCase, Verdict, read_jsonl, write_jsonl_atomic,
};
use ragtester_ingest::IngestOptions;
use ragtester_report::Summary;
use ragtester_store::RunStore;
use ragtester_testgen::{GenerationOptions, GenerationReport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use crate::models::Models;

/// Ingest inputs with the default options, printing each failure. Errors when no document could be read.
pub fn ingest(paths: &[PathBuf]) -> Result<(Vec<Document>, usize)> {
    ingest_with(paths, &IngestOptions::default())
}

/// Ingest inputs, printing each failure and warning. Errors when no document could be read.
pub fn ingest_with(paths: &[PathBuf], options: &IngestOptions) -> Result<(Vec<Document>, usize)> {
    let report = ragtester_ingest::ingest_paths_with(paths, options);
    for f in &report.failures {
        eprintln!("error: {}: {}", f.path.display(), f.error);
    }
    for w in &report.warnings {
        eprintln!("warning: {}: {}", w.path.display(), w.error);
    }
    for d in &report.duplicates {
        eprintln!(
            "note: {} repeats the text of another document; ingested once",
            d.display()
        );
    }
    if report.documents.is_empty() {
        bail!(
            "no document could be read from {} ({} failed)",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            report.failures.len()
        );
    }
    eprintln!(
        "ingested {} documents ({} failed)",
        report.documents.len(),
        report.failures.len()
    );
    Ok((report.documents, report.failures.len()))
}

/// The planted facts of a document `ragtester docgen` wrote, from the manifest beside its file.
fn planted_facts(doc: &Document) -> Option<Vec<ragtester_core::generated::PlantedFact>> {
    ragtester_core::generated::GeneratedManifest::entry_for(Path::new(&doc.source))
        .ok()
        .flatten()
        .map(|e| e.facts)
}

pub struct GenerateArgs {
    pub generators: Vec<Generator>,
    pub n_test: usize,
    pub n_complex: Option<usize>,
    pub llm: String,
    pub section_tokens: usize,
    pub seed: u64,
    pub concurrency: usize,
    pub sampling: ragtester_core::Sampling,
    /// A folder with the user's question.en.j2 / question.zh.j2 (and critic.*.j2) templates.
    pub prompts: Option<PathBuf>,
    /// The quality gate's critic model; None turns the gate off.
    pub critic: Option<String>,
    /// What the writer's and critic's calls may spend.
    pub budget: Option<Arc<ragtester_llm::Budget>>,
}

/// A generated suite, and whether the budget stopped it short.
pub struct Generated {
    pub cases: Vec<TestCase>,
    /// Documents whose generation the spending cap stopped (their shortfall notes say so).
    pub halted: usize,
}

/// Generate the suite (ragtester first, so the baseline can match its counts), write it and its report.
/// Every reply goes through the response cache, so a generation stopped by its budget or killed is
/// resumed by running it again: the calls already answered are not paid for twice.
pub async fn generate(
    docs: &[Document],
    args: &GenerateArgs,
    out: &Path,
    models: &Models,
) -> Result<Generated> {
    if args.n_test == 0 {
        bail!("--n-test must be at least 1");
    }
    if args.section_tokens < 16 {
        bail!("--section-tokens must be at least 16");
    }
    let model = models
        .for_role(&args.llm, args.sampling, args.budget.as_ref())
        .context("question generator")?;
    let prompts = match &args.prompts {
        Some(dir) => ragtester_testgen::QuestionPrompts::from_dir(dir)?,
        None => ragtester_testgen::QuestionPrompts::default(),
    };
    let critic_prompts = match &args.prompts {
        Some(dir) if critic_templates_in(dir) => ragtester_testgen::CriticPrompts::from_dir(dir)?,
        _ => ragtester_testgen::CriticPrompts::default(),
    };
    let critic = match &args.critic {
        Some(spec) => Some(
            models
                .for_role(
                    spec,
                    ragtester_core::Sampling::default(),
                    args.budget.as_ref(),
                )
                .context("quality-gate critic")?,
        ),
        None => None,
    };
    let corpus = match &critic {
        Some(_) => Some(crate::corpus::KeywordCorpus::build(docs)?),
        None => None,
    };
    let gate = critic
        .as_deref()
        .zip(corpus.as_ref())
        .map(|(critic, corpus)| ragtester_testgen::QualityGate {
            critic,
            corpus,
            prompts: critic_prompts,
        });
    let mut generators = args.generators.clone();
    generators.sort();
    let mut cases = Vec::new();
    let mut reports: Vec<GenerationReport> = Vec::new();
    let mut targets: Option<HashMap<String, usize>> = None;
    for generator in generators {
        let options = GenerationOptions {
            generator,
            n_test: args.n_test,
            n_complex: args.n_complex,
            section_tokens: args.section_tokens,
            seed: args.seed,
            concurrency: args.concurrency,
            prompts: prompts.clone(),
        };
        let report = if generator == Generator::Planted {
            ragtester_testgen::planted_cases(docs, args.n_test, &planted_facts)
        } else {
            ragtester_testgen::generate(
                docs,
                &options,
                model.as_ref(),
                gate.as_ref(),
                targets.as_ref(),
            )
            .await?
        };
        if generator == Generator::Ragtester {
            targets = Some(
                report
                    .documents
                    .iter()
                    .map(|d| (d.document_id.clone(), d.produced))
                    .collect(),
            );
        }
        for d in &report.documents {
            let rejected = if d.rejected_by_critic > 0 {
                format!(", {} turned down by the critic", d.rejected_by_critic)
            } else {
                String::new()
            };
            eprintln!(
                "{:<9} {:<40} {:>2}/{:<2} cases, {:>2}/{:<2} sections used, coverage {:.0}%{rejected}",
                generator.as_str(),
                short(&d.source, 40),
                d.produced,
                d.requested,
                d.sections_used,
                d.sections,
                d.coverage * 100.0
            );
            if d.produced < d.requested {
                // The shortfall line and why slots went empty, then the distinct reasons sections were turned
                // down (the report lists every attempt).
                let (attempts, slots): (Vec<&String>, Vec<&String>) =
                    d.notes.iter().partition(|n| n.contains("(section "));
                let mut reasons: Vec<&str> = Vec::new();
                for n in &attempts {
                    let reason = n.split_once("): ").map_or(n.as_str(), |(_, r)| r);
                    if !reasons.contains(&reason) {
                        reasons.push(reason);
                    }
                }
                for n in slots.iter().take(3) {
                    eprintln!("          {n}");
                }
                for r in reasons.iter().take(3) {
                    eprintln!("          turned down: {r}");
                }
            }
        }
        cases.extend(report.cases.iter().cloned());
        reports.push(report);
    }
    let halted = reports
        .iter()
        .flat_map(|r| &r.documents)
        .filter(|d| d.halted.is_some())
        .count();
    if halted > 0 {
        let spent = args.budget.as_ref().map(|b| b.spent()).unwrap_or_default();
        eprintln!(
            "budget spent ({} tokens, ${:.4} in {} calls): generation stopped for {halted} documents; run \
             it again with a larger budget to finish (answered calls come from the response cache)",
            spent.tokens, spent.usd, spent.calls
        );
    }
    if cases.is_empty() && halted == 0 {
        bail!("no test case could be generated (see the notes above)");
    }
    write_jsonl_atomic(out, &cases)?;
    let report_path = out.with_extension("report.json");
    let documents: Vec<_> = reports.iter().flat_map(|r| r.documents.iter()).collect();
    ragtester_core::record::write_atomic(
        &report_path,
        serde_json::to_string_pretty(&documents)?.as_bytes(),
    )?;
    Ok(Generated { cases, halted })
}

/// Whether a prompts folder holds critic templates (it may hold only the question writer's).
fn critic_templates_in(dir: &Path) -> bool {
    ["critic.en.j2", "critic.zh.j2"]
        .iter()
        .any(|f| dir.join(f).exists())
}

fn short(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        format!("…{}", s.chars().skip(count - n + 1).collect::<String>())
    }
}

pub struct RunArgs<'a> {
    pub quiet: bool,
    /// Told every cell's progress besides the terminal (the web UI's job view).
    pub observer: Option<&'a (dyn Fn(&ragtester_exec::Counts) + Send + Sync + 'a)>,
    pub docs: &'a [Document],
    pub cases: &'a [TestCase],
    pub configs: &'a [Configuration],
    pub out: &'a Path,
    pub concurrency: usize,
    pub resume: bool,
    /// Sampling of the system under test.
    pub sampling: ragtester_core::Sampling,
    /// Answer cells from the response cache (`--replay-answers`); otherwise the system is asked afresh.
    pub replay_answers: bool,
    /// What the run's chat calls may spend.
    pub budget: Option<Arc<ragtester_llm::Budget>>,
}

/// How a run ended.
pub struct RunOutcome {
    /// Cells recorded with an error.
    pub errors: usize,
    /// Cells left unrun because the budget was spent.
    pub over_budget: usize,
}

/// Refuse to add answers to a run directory that holds another run: one whose manifest differs in anything
/// that shapes an answer (each difference named), or answers of this run without `--resume`.
fn check_manifest(store: &RunStore, manifest: &RunManifest, args: &RunArgs<'_>) -> Result<()> {
    let Some(existing) = store.meta("manifest")? else {
        return Ok(());
    };
    let answered = store.count("answers")? > 0;
    match serde_json::from_str::<RunManifest>(&existing) {
        Err(_) if answered => bail!(
            "{} holds a run made by an earlier version of ragtester, whose manifest does not record what \
             shaped its answers: choose another --out",
            args.out.display()
        ),
        Err(_) => {}
        Ok(earlier) => {
            let differences = manifest.differences(&earlier);
            if !differences.is_empty() {
                bail!(
                    "{} holds a different run; resuming would mix answers of two runs. What differs:\n  {}\n\
                     Choose another --out, or run with the settings it was started with",
                    args.out.display(),
                    differences.join("\n  ")
                );
            }
        }
    }
    if !args.resume && answered {
        bail!(
            "{} already holds answers of this run: pass --resume to continue it, or choose another --out",
            args.out.display()
        );
    }
    Ok(())
}

/// The corpus a run indexes: the documents, then the documents cases inject (poisoned copies), each once.
fn with_injected_documents(docs: &[Document], cases: &[TestCase]) -> Vec<Document> {
    let mut seen: std::collections::HashSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    let mut corpus = docs.to_vec();
    for d in cases.iter().flat_map(|c| &c.injected_documents) {
        if seen.insert(d.id.as_str()) {
            corpus.push(d.clone());
        }
    }
    corpus
}

/// Execute the matrix.
pub async fn run(args: &RunArgs<'_>, models: &Models) -> Result<RunOutcome> {
    let known: std::collections::HashSet<&str> = args.docs.iter().map(|d| d.id.as_str()).collect();
    let foreign = args
        .cases
        .iter()
        // An empty document id is a corpus-wide case (an imported negative question).
        .filter(|c| !c.document_id.is_empty() && !known.contains(c.document_id.as_str()))
        .count();
    if foreign > 0 {
        bail!(
            "{foreign} of {} cases were written about documents not in --docs: pass the documents the suite was generated from",
            args.cases.len()
        );
    }
    let corpus = with_injected_documents(args.docs, args.cases);
    let embedding_cache = models.cache_subdir("embeddings");
    let index_cache = models.cache_subdir("indexes");
    let model_settings = models.table();
    let factories = ragtester_exec::Factories {
        chat: &|spec| {
            models.for_answers(
                spec,
                args.sampling,
                args.budget.as_ref(),
                args.replay_answers,
            )
        },
        embedding_cache: embedding_cache.as_deref(),
        index_cache: index_cache.as_deref(),
        model_settings: &model_settings,
    };
    // Index building embeds every chunk on the CPU: keep it off the async workers' schedule.
    let pipelines = tokio::task::block_in_place(|| {
        ragtester_exec::build_pipelines(&corpus, args.configs, &factories)
    })?;
    let store = RunStore::open(args.out)?;
    let manifest = RunManifest::new(&ManifestInputs {
        docs: &corpus,
        cases: args.cases,
        configs: args.configs,
        pipelines: &pipelines,
        sampling: models.sampling_of(args.sampling),
        model_settings: &model_settings,
        replay_answers: args.replay_answers,
    });
    check_manifest(&store, &manifest, args)?;
    store.set_meta("manifest", &serde_json::to_string(&manifest)?)?;
    store.put_documents(&corpus)?;
    store.put_cases(args.cases)?;
    store.put_configs(args.configs)?;
    write_jsonl_atomic(&args.out.join("documents.jsonl"), &corpus)?;
    write_jsonl_atomic(&args.out.join("suite.jsonl"), args.cases)?;
    write_jsonl_atomic(&args.out.join("configs.jsonl"), args.configs)?;
    let skipped = ragtester_exec::skipped_cells(&pipelines, args.cases);
    write_jsonl_atomic(&args.out.join(SKIPPED_FILE), &skipped)?;
    if !skipped.is_empty() {
        eprintln!(
            "{} cells are not asked (listed in {SKIPPED_FILE}): {}",
            skipped.len(),
            skipped[0].reason
        );
    }
    store.log_stage(
        "run",
        &format!(
            "{} cases × {} configurations",
            args.cases.len(),
            args.configs.len()
        ),
    )?;
    let total = args.cases.len() * args.configs.len();
    let done = store.answered()?.len();
    eprintln!(
        "{} cases × {} configurations = {total} cells: {done} already answered, {} to run",
        args.cases.len(),
        args.configs.len(),
        total.saturating_sub(done)
    );
    let reporter = progress_reporter(args.quiet, "cells", "cached");
    let progress = |c: &ragtester_exec::Counts| {
        reporter(c);
        if let Some(observer) = args.observer {
            observer(c);
        }
    };
    let started = std::time::Instant::now();
    let (answers, counts) =
        ragtester_exec::execute(&pipelines, args.cases, &store, args.concurrency, &progress)
            .await?;
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "ran {} cells in {seconds:.2} s ({:.1} cells/s; {} served from the cache)",
        counts.done,
        counts.done as f64 / seconds.max(1e-9),
        counts.cached
    );
    write_jsonl_atomic(&args.out.join("answers.jsonl"), &answers)?;
    let errors = answers.iter().filter(|a| a.error.is_some()).count();
    eprintln!(
        "wrote {} answers ({errors} errors) to {}",
        answers.len(),
        args.out.join("answers.jsonl").display()
    );
    if counts.over_budget > 0 {
        let spent = args.budget.as_ref().map(|b| b.spent()).unwrap_or_default();
        eprintln!(
            "budget spent ({} tokens, ${:.4} in {} calls): {} cells were not run; raise the budget and \
             pass --resume to finish",
            spent.tokens, spent.usd, spent.calls, counts.over_budget
        );
    }
    Ok(RunOutcome {
        errors,
        over_budget: counts.over_budget,
    })
}

/// A progress bar with rate, ETA, errors and cache hits on a terminal; a plain line every tenth otherwise;
/// nothing with `--quiet`.
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

/// Progress of `count` (cells, verdicts) on a terminal bar, or every tenth in a log; `reused` names the
/// ones taken from earlier work (cached answers, resumed verdicts).
fn progress_reporter(
    quiet: bool,
    count: &'static str,
    reused: &'static str,
) -> Box<ragtester_exec::Progress> {
    use std::io::IsTerminal;
    if quiet {
        return Box::new(|_| {});
    }
    if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(&format!(
                "{{bar:40}} {{pos}}/{{len}} {count} · {{per_sec}} · ETA {{eta}} · {{msg}}"
            ))
            .expect("valid progress template"),
        );
        return Box::new(move |c: &ragtester_exec::Counts| {
            bar.set_length(c.total as u64);
            bar.set_position(c.done as u64);
            bar.set_message(format!("{} errors · {} {reused}", c.errors, c.cached));
            if c.done == c.total {
                bar.finish();
            }
        });
    }
    Box::new(move |c: &ragtester_exec::Counts| {
        let step = (c.total / 10).max(1);
        if c.done.is_multiple_of(step) || c.done == c.total {
            eprintln!(
                "  {}/{} {count}, {} errors, {} {reused}",
                c.done, c.total, c.errors, c.cached
            );
        }
    })
}

/// What a run would cost, before it runs: cells, and prompt tokens estimated from the query, the answer
/// prompt and top-k chunks of the configured size, plus an allowance for the reply.
pub fn estimate(
    cases: &[TestCase],
    configs: &[Configuration],
    prices: &ragtester_core::config::PriceTable,
    run: &ragtester_core::config::RunSettings,
) -> String {
    use ragtester_core::tokens::count_tokens;
    /// Tokens assumed for each reply: the extractive answers of the spec's rubric rarely need more.
    const REPLY_TOKENS: usize = 96;
    let frame = count_tokens(
        &ragtester_exec::answer_messages("", &[])
            .iter()
            .map(|m| m.content.as_str())
            .collect::<String>(),
    );
    let queries: usize = cases.iter().map(|c| count_tokens(&c.query)).sum();
    let mut out = String::new();
    let (mut all_prompt, mut all_reply, mut all_cost) = (0usize, 0usize, None::<f64>);
    for c in configs {
        let per_case_context = c.top_k * c.chunking.max_tokens;
        let prompt = queries + cases.len() * (frame + per_case_context);
        let reply = cases.len() * REPLY_TOKENS;
        all_prompt += prompt;
        all_reply += reply;
        let cost = prices
            .get(&c.llm)
            .map(|p| p.cost(prompt as u64, reply as u64));
        if let Some(x) = cost {
            all_cost = Some(all_cost.unwrap_or(0.0) + x);
        }
        out.push_str(&format!(
            "{:<44} {:>6} cells  ~{:>9} prompt tokens  ~{:>8} reply tokens  {}\n",
            c.label(),
            cases.len(),
            prompt,
            reply,
            cost.map_or("no price".to_string(), |x| format!("~${x:.4}"))
        ));
    }
    out.push_str(&format!(
        "total: {} cells, ~{} prompt tokens, ~{} reply tokens{} (upper bound for built-in configurations; \
         external targets count their own)\n",
        cases.len() * configs.len(),
        all_prompt,
        all_reply,
        all_cost.map_or(String::new(), |x| format!(", ~${x:.4} for the priced models"))
    ));
    let over_tokens = run
        .budget_tokens
        .filter(|&t| (all_prompt + all_reply) as u64 > t);
    let over_usd = run.budget_usd.filter(|&u| all_cost.is_some_and(|c| c > u));
    if let Some(t) = over_tokens {
        out.push_str(&format!(
            "budget: the estimate exceeds the {t}-token cap; the run will stop when it is spent (--resume continues)\n"
        ));
    }
    if let Some(u) = over_usd {
        out.push_str(&format!(
            "budget: the estimate exceeds the ${u:.4} cap; the run will stop when it is spent (--resume continues)\n"
        ));
    }
    if (run.budget_tokens.is_some() || run.budget_usd.is_some())
        && over_tokens.is_none()
        && over_usd.is_none()
    {
        out.push_str("budget: the estimate fits the cap\n");
    }
    out
}

/// How to judge a run.
pub struct JudgeArgs<'a> {
    pub judges: &'a [String],
    /// No progress lines.
    pub quiet: bool,
    /// Verdicts per (answer, judge); above one, at the judges' temperature.
    pub samples: u32,
    /// How several verdicts of a cell become the one reports follow.
    pub panel: ragtester_judge::PanelMethod,
    pub concurrency: usize,
    pub sampling: ragtester_core::Sampling,
    /// A folder with the user's judge.en.j2 / judge.zh.j2 prompt templates.
    pub prompts: Option<&'a Path>,
}

/// The oracle's figures, kept beside the verdicts.
pub const ORACLE_FILE: &str = "oracle.json";

/// Judge a run directory. Returns the number of verdicts that are errors. With several judges or samples,
/// the panel's verdicts come first in verdicts.jsonl (reports follow them) and every judge's follow.
pub async fn judge(run_dir: &Path, args: &JudgeArgs<'_>, models: &Models) -> Result<usize> {
    if args.judges.is_empty() {
        bail!("name at least one --judge");
    }
    if args.samples == 0 {
        bail!("--samples must be at least 1");
    }
    let cases: Vec<TestCase> =
        read_jsonl(&run_dir.join("suite.jsonl")).context("is this a run directory?")?;
    let answers: Vec<Answer> =
        read_jsonl(&run_dir.join("answers.jsonl")).context("has `ragtester run` finished here?")?;
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
        eprintln!(
            "note: {} samples at temperature 0 repeat one verdict; set --temperature (or [judge.sampling]) above 0",
            args.samples
        );
    }
    let prompts = match args.prompts {
        Some(dir) => ragtester_judge::JudgePrompts::from_dir(dir)?,
        None => ragtester_judge::JudgePrompts::default(),
    };
    let store = RunStore::open(run_dir)?;
    remember_structured_output(&store)?;
    let job = ragtester_judge::JudgeJob {
        cases: &cases,
        answers: &answers,
        judges: &judges,
        samples: args.samples,
        concurrency: args.concurrency,
        prompts: &prompts,
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
        ),
    );
    // A judge error (an outage, an unreadable reply) is asked again rather than kept: resuming must not
    // fix an error in place that a rerun could clear.
    let done: Vec<_> = store
        .judged(&session)?
        .into_iter()
        .filter(|v| v.status != ragtester_core::VerdictStatus::JudgeError)
        .collect();
    if !done.is_empty() && !args.quiet {
        eprintln!(
            "resuming: {} of {} verdicts were made by an earlier judge of these answers",
            done.len(),
            job.len()
        );
    }
    let report = progress_reporter(args.quiet, "verdicts", "resumed");
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
            report(&c);
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
    store.put_verdicts(&verdicts)?;
    store.log_stage("judge", &args.judges.join(","))?;
    write_jsonl_atomic(&run_dir.join("verdicts.jsonl"), &verdicts)?;
    ragtester_core::record::write_atomic(
        &run_dir.join(ORACLE_FILE),
        serde_json::to_string_pretty(&oracle)?.as_bytes(),
    )?;
    let primary = ragtester_report::primary_verdicts(&verdicts);
    let errors = primary
        .iter()
        .filter(|v| v.status != ragtester_core::VerdictStatus::Ok)
        .count();
    eprintln!(
        "wrote {} verdicts ({errors} errors in the verdicts reports follow) to {}",
        verdicts.len(),
        run_dir.join("verdicts.jsonl").display()
    );
    Ok(errors)
}

/// An optional JSON record of the run directory.
fn read_optional<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(serde_json::from_slice(&bytes).with_context(|| {
            format!("{} is not what ragtester wrote there", path.display())
        })?)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Summarise a judged run directory into summary.json, report.html, results.csv and junit.xml.
/// Per built-in configuration, the share of its chunks that hold some case's source span: how much of the
/// corpus, as that configuration cuts it, the suite tests. Poisoned copies are not the user's corpus and
/// are left out; chunking is deterministic, so cutting the documents again gives the run's chunks.
fn chunk_coverage(
    documents: &[Document],
    cases: &[TestCase],
    configs: &[Configuration],
) -> Result<HashMap<String, f64>> {
    let corpus: Vec<&Document> = documents
        .iter()
        .filter(|d| d.origin != ragtester_core::document::DocumentOrigin::Poisoned)
        .collect();
    let spans: Vec<&ragtester_core::SourceSpan> =
        cases.iter().flat_map(|c| &c.source_spans).collect();
    let mut by_chunking: HashMap<String, f64> = HashMap::new();
    let mut out = HashMap::new();
    for config in configs.iter().filter(|c| c.target.is_none()) {
        let key = serde_json::to_string(&config.chunking)?;
        if !by_chunking.contains_key(&key) {
            let mut total = 0usize;
            let mut covered = 0usize;
            for doc in &corpus {
                for chunk in ragtester_ingest::chunk_document(doc, &config.chunking)? {
                    total += 1;
                    covered += usize::from(
                        spans
                            .iter()
                            .any(|s| s.overlaps(&chunk.document_id, chunk.start, chunk.end)),
                    );
                }
            }
            if total > 0 {
                by_chunking.insert(key.clone(), covered as f64 / total as f64);
            }
        }
        if let Some(share) = by_chunking.get(&key) {
            out.insert(config.id.clone(), *share);
        }
    }
    Ok(out)
}

pub fn report(run_dir: &Path) -> Result<Summary> {
    let documents: Vec<Document> =
        read_jsonl(&run_dir.join("documents.jsonl")).context("is this a run directory?")?;
    let cases: Vec<TestCase> = read_jsonl(&run_dir.join("suite.jsonl"))?;
    let configs: Vec<Configuration> = read_jsonl(&run_dir.join("configs.jsonl"))?;
    let answers: Vec<Answer> = read_jsonl(&run_dir.join("answers.jsonl"))?;
    let verdicts: Vec<Verdict> =
        read_jsonl(&run_dir.join("verdicts.jsonl")).context("has `ragtester judge` run here?")?;
    let prices: ragtester_core::config::PriceTable =
        read_optional(&run_dir.join(PRICES_FILE))?.unwrap_or_default();
    let oracle: Option<ragtester_core::oracle::OracleSummary> =
        read_optional(&run_dir.join(ORACLE_FILE))?;
    let audit: Option<ragtester_core::oracle::AuditSummary> =
        read_optional(&run_dir.join(AUDIT_FILE))?;
    let chunk_coverage = chunk_coverage(&documents, &cases, &configs)?;
    let skipped: Vec<ragtester_core::SkippedCell> =
        read_optional_jsonl(&run_dir.join(SKIPPED_FILE))?.unwrap_or_default();
    let inputs = ragtester_report::ReportInputs {
        skipped: &skipped,
        chunk_coverage: &chunk_coverage,
        prices: &prices,
        documents: &documents,
        cases: &cases,
        configs: &configs,
        answers: &answers,
        verdicts: &verdicts,
        oracle: oracle.as_ref(),
        audit: audit.as_ref(),
    };
    let summary = ragtester_report::summarise(&inputs);
    ragtester_core::record::write_atomic(
        &run_dir.join("summary.json"),
        serde_json::to_string_pretty(&summary)?.as_bytes(),
    )?;
    ragtester_core::record::write_atomic(
        &run_dir.join("results.csv"),
        ragtester_report::render_csv(&inputs)?.as_bytes(),
    )?;
    ragtester_core::record::write_atomic(
        &run_dir.join("junit.xml"),
        ragtester_report::render_junit(&inputs)?.as_bytes(),
    )?;
    let html = ragtester_report::render_html(&summary)?;
    ragtester_core::record::write_atomic(&run_dir.join("report.html"), html.as_bytes())?;
    eprintln!(
        "wrote report.html, summary.json, results.csv and junit.xml to {}",
        run_dir.display()
    );
    Ok(summary)
}

/// Exit code 4 when a configuration misses a gate; each miss is printed.
pub fn gate_code(summary: &Summary, gates: &ragtester_report::Gates) -> u8 {
    let misses = ragtester_report::check_gates(summary, gates);
    for miss in &misses {
        eprintln!("gate: {miss}");
    }
    if misses.is_empty() {
        0
    } else {
        crate::EXIT_THRESHOLD
    }
}

/// The cells a run did not ask, and why.
pub const SKIPPED_FILE: &str = "skipped.jsonl";

/// Records of an optional JSONL file; None when the file does not exist.
fn read_optional_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<Vec<T>>> {
    if !path.exists() {
        return Ok(None);
    }
    Ok(Some(read_jsonl(path)?))
}

/// The audit of a run's reported failures.
pub const AUDIT_FILE: &str = "audit.json";

/// The prices a run was configured with, kept beside its records so the report can cost it.
pub const PRICES_FILE: &str = "prices.json";

/// Keep the price table in the run directory (nothing is written for an empty table).
pub fn save_prices(run_dir: &Path, prices: &ragtester_core::config::PriceTable) -> Result<()> {
    if prices.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(run_dir)?;
    ragtester_core::record::write_atomic(
        &run_dir.join(PRICES_FILE),
        serde_json::to_string_pretty(prices)?.as_bytes(),
    )
}

/// The budget a `[run]` section declares, if any.
pub fn budget_of(
    run: &ragtester_core::config::RunSettings,
    prices: &ragtester_core::config::PriceTable,
) -> Option<Arc<ragtester_llm::Budget>> {
    let limits = ragtester_llm::BudgetLimits {
        usd: run.budget_usd,
        tokens: run.budget_tokens,
    };
    (!limits.is_unlimited()).then(|| ragtester_llm::Budget::new(limits, prices.clone()))
}

/// Files a pipeline writes into its output folder; removed before a fresh `test` or `demo` run there.
const RUN_FILES: &[&str] = &[
    "documents.jsonl",
    "suite.jsonl",
    "suite.report.json",
    "configs.jsonl",
    "answers.jsonl",
    "verdicts.jsonl",
    "summary.json",
    "report.html",
    "results.csv",
    "junit.xml",
    "prices.json",
    "oracle.json",
    "audit.json",
    "audit.csv",
    "store.sqlite",
    "store.sqlite-wal",
    "store.sqlite-shm",
];

/// ingest → generate → run → judge → report, from a project config.
pub async fn full_pipeline(
    corpus: &[PathBuf],
    project: &ProjectConfig,
    out: &Path,
    models: &Models,
) -> Result<u8> {
    project.validate()?;
    models.configure(&project.models);
    for f in RUN_FILES {
        let p = out.join(f);
        if p.exists() {
            std::fs::remove_file(&p)
                .with_context(|| format!("cannot remove the previous {}", p.display()))?;
        }
    }
    let (docs, failed) = ingest(corpus)?;
    let g = &project.generation;
    // One budget for the whole command: generation spends from it first, the run from what is left.
    let budget = budget_of(&project.run, &project.prices);
    let generated = generate(
        &docs,
        &GenerateArgs {
            generators: g.strategies.clone(),
            n_test: g.n_test,
            n_complex: g.n_complex,
            llm: g.llm.clone(),
            section_tokens: g.section_tokens,
            seed: g.seed,
            concurrency: project.run.concurrency,
            sampling: g.sampling,
            prompts: g.prompts.clone(),
            critic: g.critic_spec(),
            budget: budget.clone(),
        },
        &out.join("suite.jsonl"),
        models,
    )
    .await?;
    if generated.halted > 0 {
        bail!(
            "generation stopped at the budget; raise [run] budget_tokens / budget_usd and run again (replies \
             already paid for come from the response cache)"
        );
    }
    let cases = generated.cases;
    let configs = project.configurations()?;
    let outcome = run(
        &RunArgs {
            quiet: false,
            observer: None,
            docs: &docs,
            cases: &cases,
            configs: &configs,
            out,
            concurrency: project.run.concurrency,
            resume: false,
            sampling: project.run.sampling,
            replay_answers: project.run.replay_answers,
            budget,
        },
        models,
    )
    .await?;
    save_prices(out, &project.prices)?;
    if outcome.over_budget > 0 {
        // Judging a partial run would report a matrix that was not run: stop, so the run can be resumed.
        bail!(
            "the run stopped at its budget with {} cells unrun; resume it with `ragtester run --resume`, \
             then judge and report",
            outcome.over_budget
        );
    }
    let exec_errors = outcome.errors;
    let judge_errors = judge(
        out,
        &JudgeArgs {
            judges: &project.judge.judges,
            quiet: false,
            samples: project.judge.samples,
            panel: ragtester_judge::PanelMethod::parse(&project.judge.panel)?,
            concurrency: project.run.concurrency,
            sampling: project.judge.sampling,
            prompts: project.judge.prompts.as_deref(),
        },
        models,
    )
    .await?;
    let summary = report(out)?;
    println!();
    print!("{}", ragtester_report::render_table(&summary));
    println!();
    println!("report: {}", out.join("report.html").display());
    println!("summary: {}", out.join("summary.json").display());
    Ok(if failed + exec_errors + judge_errors > 0 {
        crate::EXIT_PARTIAL
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{ChunkingSettings, DocumentFormat, SourceSpan};

    #[test]
    fn chunk_coverage_is_the_share_of_chunks_holding_a_span() {
        let text = "First paragraph about valves.\n\nSecond paragraph about pumps.\n\nThird paragraph about seals.\n\nFourth paragraph about gaskets.";
        let doc = Document::new(
            "d.md".into(),
            DocumentFormat::Markdown,
            "d".into(),
            text.into(),
            None,
        );
        let mut poisoned = Document::new(
            "p".into(),
            DocumentFormat::Text,
            "p".into(),
            "Copy.".into(),
            None,
        );
        poisoned.origin = ragtester_core::document::DocumentOrigin::Poisoned;
        let chunking = ChunkingSettings {
            max_tokens: 8,
            ..Default::default()
        };
        let chunks = ragtester_ingest::chunk_document(&doc, &chunking).unwrap();
        assert_eq!(chunks.len(), 4, "one chunk per paragraph");
        // A span inside the second paragraph.
        let start = text.find("Second").unwrap();
        let case: TestCase = serde_json::from_value(serde_json::json!({
            "id": "c", "category": "core", "strategy": "coverage", "generator": "ragtester",
            "query": "q", "expected_answer": "a", "keywords": [], "document_id": doc.id,
            "source_spans": [SourceSpan { document_id: doc.id.clone(), start, end: start + 6, page: 1 }],
            "language": "en", "readability": null, "readability_measure": null,
            "generator_model": "offline", "prompt_version": "v"
        }))
        .unwrap();
        let config = Configuration::new(
            "offline".into(),
            "hash".into(),
            ragtester_core::RetrieverKind::Bm25,
            1,
            chunking,
            Default::default(),
        );
        let config_id = config.id.clone();
        let coverage = chunk_coverage(&[doc, poisoned], &[case], &[config]).unwrap();
        assert_eq!(
            coverage[&config_id], 0.25,
            "one of four chunks; the poisoned copy is not counted"
        );
    }
}
