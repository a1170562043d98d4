//! Stage 2: the test suite — every generator over the documents, the critic's quality gate, the suite and
//! its generation report written beside it.

use crate::context::StageContext;
use crate::corpus::KeywordCorpus;
use crate::events::Events;
use anyhow::{Context, Result, bail};
use ragtester_core::{Document, Generator, TestCase, write_jsonl_atomic};
use ragtester_testgen::{GenerationOptions, GenerationReport};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    /// Conversations per document.
    pub conversations: usize,
    pub llm: String,
    pub section_tokens: usize,
    pub seed: u64,
    pub concurrency: usize,
    pub sampling: ragtester_core::Sampling,
    /// A folder with the user's question.en.j2 / question.zh.j2 (and critic.*.j2) templates.
    pub prompts: Option<PathBuf>,
    /// The quality gate's critic model; None turns the gate off.
    pub critic: Option<String>,
    /// Models whose closed-book passes leave a case out (`--drop-leaky`).
    pub drop_leaky: Vec<String>,
    /// Tools every case expects an agent to call (`[generation] expected_tools`).
    pub expected_tools: Vec<String>,
    /// Simulated users' goals per document, and their turn budget.
    pub goals: usize,
    pub goal_turns: u32,
}

impl GenerateArgs {
    /// The arguments a project file's `[generation]` section means, with the run's concurrency.
    pub fn from_settings(
        g: &ragtester_core::config::GenerationSettings,
        concurrency: usize,
    ) -> Self {
        Self {
            generators: g.strategies.clone(),
            n_test: g.n_test,
            n_complex: g.n_complex,
            conversations: g.conversations,
            llm: g.llm.clone(),
            section_tokens: g.section_tokens,
            seed: g.seed,
            concurrency,
            sampling: g.sampling,
            prompts: g.prompts.clone(),
            critic: g.critic_spec(),
            drop_leaky: g.drop_leaky.clone(),
            expected_tools: g.expected_tools.clone(),
            goals: g.goals,
            goal_turns: g.goal_turns,
        }
    }
}

impl GenerateArgs {
    /// Every written case without expected tools gets the ones the settings name (an imported case keeps
    /// its dataset's).
    pub(crate) fn expect_tools(&self, cases: &mut [TestCase]) {
        for case in cases.iter_mut() {
            if case.expected_tools.is_empty() && case.generator != Generator::Imported {
                case.expected_tools = self
                    .expected_tools
                    .iter()
                    .map(ragtester_core::ToolCall::named)
                    .collect();
            }
        }
    }

    /// The settings one generator writes under, with the writer's prompts.
    pub(crate) fn options(&self, generator: Generator, writers: &Writers) -> GenerationOptions {
        GenerationOptions {
            generator,
            n_test: self.n_test,
            n_complex: self.n_complex,
            conversations: self.conversations,
            section_tokens: self.section_tokens,
            seed: self.seed,
            concurrency: self.concurrency,
            prompts: writers.prompts.clone(),
        }
    }
}

/// `generate` as a front end asks for it: the documents to read, the `[generation]` settings with the front
/// end's choices laid over them, the calls in flight, and where the suite goes. What the writer's and
/// critic's calls may spend is the context's budget.
pub struct SuiteRequest<'a> {
    pub docs: Vec<crate::ingest::Input>,
    pub settings: ragtester_core::config::GenerationSettings,
    pub concurrency: usize,
    pub out: &'a Path,
}

impl<'a> SuiteRequest<'a> {
    /// A project's `[generation]` settings and `[run]` concurrency, for the front end to lay its choices
    /// over.
    pub fn from_project(
        project: &ragtester_core::config::ProjectConfig,
        docs: Vec<crate::ingest::Input>,
        out: &'a Path,
    ) -> Self {
        Self {
            docs,
            settings: project.generation.clone(),
            concurrency: project.run.concurrency,
            out,
        }
    }
}

/// A suite written, with what reading the documents left out.
pub struct SuiteOutcome {
    pub generated: Generated,
    pub documents: usize,
    pub failed_documents: usize,
}

impl SuiteOutcome {
    /// Whether a document failed or the budget stopped generation short.
    pub fn partial(&self) -> bool {
        self.failed_documents > 0 || self.generated.halted > 0
    }
}

/// A suite written afresh from the request's documents.
pub(crate) async fn write_request(
    req: &SuiteRequest<'_>,
    args: &GenerateArgs,
    cx: &StageContext<'_>,
) -> Result<SuiteOutcome> {
    let options = crate::ingest::options_of(cx);
    let (docs, failed_documents) = crate::ingest::ingest_with(&req.docs, &options, cx.events())?;
    let generated = generate(&docs, args, req.out, cx).await?;
    Ok(SuiteOutcome {
        generated,
        documents: docs.len(),
        failed_documents,
    })
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
    cx: &StageContext<'_>,
) -> Result<Generated> {
    let events = cx.events();
    events.stage("generate");
    if args.n_test == 0 {
        bail!("--n-test must be at least 1");
    }
    if args.section_tokens < 16 {
        bail!("--section-tokens must be at least 16");
    }
    let writers = Writers::prepare(docs, args, cx)?;
    let reports = run_generators(docs, args, &writers, events).await?;
    let mut cases: Vec<TestCase> = reports
        .iter()
        .flat_map(|r| r.cases.iter().cloned())
        .collect();
    let leaks =
        crate::leaky::drop_leaky(&mut cases, &args.drop_leaky, args.concurrency, cx).await?;
    let halted = reports
        .iter()
        .flat_map(|r| &r.documents)
        .filter(|d| d.halted.is_some())
        .count();
    if halted > 0 {
        let spent = cx.budget().map(|b| b.spent()).unwrap_or_default();
        events.warning(format!(
            "budget spent ({} tokens, ${:.4} in {} calls): generation stopped for {halted} documents; run \
             it again with a larger budget to finish (answered calls come from the response cache)",
            spent.tokens, spent.usd, spent.calls
        ));
    }
    if cases.is_empty() && halted == 0 {
        bail!("no test case could be generated (see the notes above)");
    }
    let goals = ragtester_testgen::goals::goals(&cases, args.goals, args.goal_turns);
    if !goals.is_empty() {
        cx.events()
            .info(format!("wrote {} simulated users' goals", goals.len()));
    }
    cases.extend(goals);
    args.expect_tools(&mut cases);
    write_jsonl_atomic(out, &cases)?;
    write_jsonl_atomic(&crate::run_dir::suite_documents_path(out), docs)?;
    write_report(out, &cases, &reports, &leaks, None, events)?;
    Ok(Generated { cases, halted })
}

/// The question writer and, when the gate is on, the critic with the corpus it checks negatives against.
pub(crate) struct Writers {
    pub(crate) model: Arc<dyn ragtester_core::ChatModel>,
    pub(crate) prompts: ragtester_testgen::QuestionPrompts,
    critic: Option<(
        Arc<dyn ragtester_core::ChatModel>,
        KeywordCorpus,
        ragtester_testgen::CriticPrompts,
    )>,
}

impl Writers {
    pub(crate) fn prepare(
        docs: &[Document],
        args: &GenerateArgs,
        cx: &StageContext<'_>,
    ) -> Result<Self> {
        let (models, budget) = (cx.models(), cx.budget());
        let model = models
            .for_role(&args.llm, args.sampling, budget)
            .context("question generator")?;
        let prompts = match &args.prompts {
            Some(dir) => ragtester_testgen::QuestionPrompts::from_dir(dir)?,
            None => ragtester_testgen::QuestionPrompts::default(),
        };
        let critic = match &args.critic {
            None => None,
            Some(spec) => {
                let sampling = ragtester_core::Sampling::default();
                let critic = models
                    .for_role(spec, sampling, budget)
                    .context("quality-gate critic")?;
                let critic_prompts = match &args.prompts {
                    Some(dir) if critic_templates_in(dir) => {
                        ragtester_testgen::CriticPrompts::from_dir(dir)?
                    }
                    _ => ragtester_testgen::CriticPrompts::default(),
                };
                Some((critic, KeywordCorpus::build(docs)?, critic_prompts))
            }
        };
        Ok(Self {
            model,
            prompts,
            critic,
        })
    }

    pub(crate) fn gate(&self) -> Option<ragtester_testgen::QualityGate<'_>> {
        self.critic
            .as_ref()
            .map(|(critic, corpus, prompts)| ragtester_testgen::QualityGate {
                critic: critic.as_ref(),
                corpus,
                prompts: prompts.clone(),
            })
    }
}

/// Every generator in order (ragtester first, so the baseline can match its counts per document).
async fn run_generators(
    docs: &[Document],
    args: &GenerateArgs,
    writers: &Writers,
    events: &dyn Events,
) -> Result<Vec<GenerationReport>> {
    let gate = writers.gate();
    let mut generators = args.generators.clone();
    generators.sort();
    let mut reports: Vec<GenerationReport> = Vec::new();
    let mut targets: Option<HashMap<String, usize>> = None;
    for generator in generators {
        let options = args.options(generator, writers);
        let model = writers.model.as_ref();
        let report = if generator == Generator::Planted {
            ragtester_testgen::planted_cases(docs, args.n_test, &planted_facts)
        } else {
            ragtester_testgen::generate(docs, &options, model, gate.as_ref(), targets.as_ref())
                .await?
        };
        if generator == Generator::Ragtester {
            let produced = report.documents.iter();
            targets = Some(
                produced
                    .map(|d| (d.document_id.clone(), d.produced))
                    .collect(),
            );
        }
        reports.push(report);
    }
    // The generators compared case for case write as many cases per document, conversations as turns.
    ragtester_testgen::fair::equal_counts(&mut reports);
    // Where to read why is said once, on the last line that falls short.
    let last_short = reports.iter().rposition(falls_short);
    for (i, report) in reports.iter().enumerate() {
        tell_generator(report, Some(i) == last_short, events);
    }
    Ok(reports)
}

/// The suite's quality, every document's generation report and, for an update, what it changed, beside
/// the suite (`*.report.json`).
pub(crate) fn write_report(
    out: &Path,
    cases: &[TestCase],
    reports: &[GenerationReport],
    leaks: &[crate::leaky::LeakCheck],
    update: Option<&ragtester_testgen::update::UpdateReport>,
    events: &dyn Events,
) -> Result<()> {
    let documents: Vec<_> = reports.iter().flat_map(|r| r.documents.iter()).collect();
    let owned: Vec<_> = documents.iter().map(|d| (*d).clone()).collect();
    let quality = ragtester_testgen::SuiteQuality::measure(cases, &owned);
    events.info(quality.summary());
    let mut report = serde_json::json!({ "quality": quality, "documents": documents });
    if !leaks.is_empty() {
        report["leaky"] = serde_json::to_value(leaks)?;
    }
    if let Some(update) = update {
        report["update"] = serde_json::to_value(update)?;
    }
    crate::run_dir::save_suite_report(out, &report)
}

/// Whether a generator wrote fewer cases than asked of some document.
fn falls_short(report: &GenerationReport) -> bool {
    report
        .documents
        .iter()
        .any(|d| d.requested > 0 && d.produced < d.requested)
}

/// One generator's line of the generation summary — cases over requested, documents, coverage — and the
/// documents it fell short on, by name; why each slot went empty is in the suite's `.report.json`. A
/// document the generator had nothing to ask of (planted facts where none were planted) is left out.
fn tell_generator(report: &GenerationReport, say_where: bool, events: &dyn Events) {
    let docs: Vec<_> = report
        .documents
        .iter()
        .filter(|d| d.requested > 0)
        .collect();
    let Some(first) = docs.first() else {
        return;
    };
    let produced: usize = docs.iter().map(|d| d.produced).sum();
    let requested: usize = docs.iter().map(|d| d.requested).sum();
    let critic: usize = docs.iter().map(|d| d.rejected_by_critic).sum();
    let askable: Vec<_> = docs.iter().filter(|d| d.askable_sections > 0).collect();
    let coverage = if askable.is_empty() {
        String::new()
    } else {
        let mean = askable.iter().map(|d| d.coverage).sum::<f64>() / askable.len() as f64;
        format!(" ({:.0}% of sections)", mean * 100.0)
    };
    let critic = match critic {
        0 => String::new(),
        n => format!(", {n} turned down by the critic"),
    };
    // Named when few; when many, counted (the suite's `.report.json` names each, with why).
    let short: Vec<String> = docs
        .iter()
        .filter(|d| d.produced < d.requested)
        .map(|d| {
            let name = Path::new(&d.source)
                .file_name()
                .map_or(d.source.clone(), |n| n.to_string_lossy().into_owned());
            format!("{name} {}/{}", d.produced, d.requested)
        })
        .collect();
    let why = if say_where {
        " (why: the suite's .report.json)"
    } else {
        ""
    };
    let short = match short.len() {
        0 => String::new(),
        1 | 2 => format!("; short on {}{why}", short.join(", ")),
        n => format!("; short on {n} documents{why}"),
    };
    events.info(format!(
        "{} questions: {produced}/{requested} cases from {} documents{coverage}{critic}{short}",
        first.generator.as_str(),
        docs.len()
    ));
    // Most of the suite missing is what a person must act on: why, here.
    if produced * 2 < requested {
        for reason in shortfall_reasons(&docs) {
            events.info(format!("    {reason}"));
        }
    }
}

/// Why slots went empty and the distinct reasons sections were turned down, at most three of each,
/// over the documents given (the report lists every attempt).
fn shortfall_reasons(docs: &[&ragtester_testgen::DocumentReport]) -> Vec<String> {
    let mut slots: Vec<String> = Vec::new();
    let mut turned_down: Vec<String> = Vec::new();
    for d in docs.iter().filter(|d| d.produced < d.requested) {
        for note in &d.notes {
            let (list, text) = match note.split_once("): ") {
                Some((_, reason)) if note.contains("(section ") => {
                    (&mut turned_down, format!("turned down: {reason}"))
                }
                _ => (&mut slots, note.clone()),
            };
            if !list.contains(&text) {
                list.push(text);
            }
        }
    }
    slots.truncate(3);
    slots.extend(turned_down.into_iter().take(3));
    slots
}

/// Generators by name (`ragtester`, `baseline`, `planted`), each once, in the order named.
pub fn parse_generators(names: &[String]) -> Result<Vec<Generator>> {
    let mut out = Vec::new();
    for n in names {
        let g = match n.as_str() {
            "ragtester" => Generator::Ragtester,
            "baseline" => Generator::Baseline,
            "planted" => Generator::Planted,
            other => bail!("unknown strategy `{other}`: expected ragtester, baseline or planted"),
        };
        if !out.contains(&g) {
            out.push(g);
        }
    }
    Ok(out)
}

/// Whether a prompts folder holds critic templates (it may hold only the question writer's).
fn critic_templates_in(dir: &Path) -> bool {
    ["critic.en.j2", "critic.zh.j2"]
        .iter()
        .any(|f| dir.join(f).exists())
}
