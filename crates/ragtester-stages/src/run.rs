//! Stage 3: execution — the suite against every configuration of the matrix, each cell committed to the
//! run store as it is answered, under a manifest that keeps two runs from mixing; and what a run would
//! cost before it runs.

use crate::context::StageContext;
use crate::events::Events;
use crate::manifest::{ManifestInputs, manifest_of};
use crate::run_dir::{self, RunDb, RunDir, SKIPPED};
use anyhow::{Context, Result, bail};
use ragtester_core::progress::counted;
use ragtester_core::{Configuration, Document, HistoryMode, TestCase};
use ragtester_text::tokens::count_tokens;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

struct RunArgs<'a> {
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
    /// Only this slice of the cells (`--shard K/N`); `merge` joins the slices.
    pub shard: Option<ragtester_exec::Shard>,
    /// Where dense retrieval keeps its vectors (`chroma:URL`); None keeps them in-process.
    pub vector_store: Option<String>,
    /// Where targets' traces are received (`[run] trace_port`), and how long each is waited for.
    pub trace_port: u16,
    pub trace_wait_ms: u64,
    /// Who plays simulated users, and how long one conversation may take.
    pub user_model: String,
    pub conversation_seconds: f64,
}

/// How a run ended.
pub struct RunOutcome {
    /// Cells recorded with an error.
    pub errors: usize,
    /// Cells left unrun because the budget was spent.
    pub over_budget: usize,
}

/// The corpus a run indexes: the documents, then the documents cases inject (poisoned copies), each once.
pub(crate) fn with_injected_documents(docs: &[Document], cases: &[TestCase]) -> Vec<Document> {
    let mut seen: std::collections::HashSet<&str> = docs.iter().map(|d| d.id.as_str()).collect();
    let mut corpus = docs.to_vec();
    for d in cases.iter().flat_map(|c| &c.injected_documents) {
        if seen.insert(d.id.as_str()) {
            corpus.push(d.clone());
        }
    }
    corpus
}

/// The OTLP receiver targets with `traces = true` send their spans to, for this run; none otherwise.
fn trace_receiver(
    args: &RunArgs<'_>,
    limits: &ragtester_core::Limits,
    events: &dyn Events,
) -> Result<Option<Arc<ragtester_exec::Tracing>>> {
    let traced = args
        .configs
        .iter()
        .any(|c| c.target.as_ref().is_some_and(|t| t.traces));
    if !traced {
        return Ok(None);
    }
    let limit = limits.request_bytes();
    let receiver = ragtester_trace::TraceReceiver::start(args.trace_port, limit as usize)
        .context("targets ask for their traces to be received")?;
    events.info(format!(
        "receiving OpenTelemetry traces (OTLP/HTTP) at {}/v1/traces",
        receiver.endpoint()
    ));
    Ok(Some(Arc::new(ragtester_exec::Tracing::new(
        receiver,
        std::time::Duration::from_millis(args.trace_wait_ms),
    ))))
}

/// Execute the matrix, the system under test spending from the context's budget.
async fn run(args: &RunArgs<'_>, cx: &StageContext<'_>) -> Result<RunOutcome> {
    let (models, events) = (cx.models(), cx.events());
    events.stage("run");
    check_documents(args)?;
    let corpus = with_injected_documents(args.docs, args.cases);
    let source = RunModels { cx, args };
    let tracing = trace_receiver(args, cx.limits(), events)?;
    // Index building embeds every chunk on the CPU: keep it off the async workers' schedule.
    let pipelines = tokio::task::block_in_place(|| {
        ragtester_exec::build_pipelines(&corpus, args.configs, &source, tracing)
    })?;
    let run = RunDir::new(args.out);
    let db = run.db()?;
    let manifest = manifest_of(&ManifestInputs {
        docs: &corpus,
        cases: args.cases,
        configs: args.configs,
        pipelines: &pipelines,
        sampling: models.sampling_of(args.sampling),
        model_settings: models.table(),
        replay_answers: args.replay_answers,
        vector_store: args.vector_store.as_deref(),
    });
    db.check_resumable(&manifest, args.shard, args.resume, args.out)?;
    db.set_manifest(&manifest)?;
    db.set_shard(args.shard)?;
    run.commit_inputs(&db, &corpus, args.cases, args.configs)?;
    let profiles = tokio::task::block_in_place(|| {
        crate::diagnose::profile_embedders(&corpus, &pipelines, &source)
    })?;
    run.save_json(run_dir::EMBEDDERS, &profiles)?;
    save_skipped(&run, &pipelines, args, events)?;
    tell_cells(&db, args, events)?;
    let progress = |c: &ragtester_exec::Counts| events.progress("cells", "cached", *c);
    let started = std::time::Instant::now();
    let (cases, concurrency) = (args.cases, args.concurrency);
    let execute = ragtester_exec::execute;
    let simulator = simulator(args, cx)?;
    let counts = execute(
        &pipelines,
        cases,
        &DbSink(&db, cx.limits().answer_bytes()),
        concurrency,
        args.shard,
        simulator,
        &progress,
    )
    .await?;
    let seconds = started.elapsed().as_secs_f64();
    events.info(format!(
        "ran {} cells in {seconds:.2} s ({:.1} cells/s; {} served from the cache)",
        counts.done,
        counts.done as f64 / seconds.max(1e-9),
        counts.cached
    ));
    let configs: Vec<&str> = pipelines.iter().map(|p| p.config.id.as_str()).collect();
    let cases: Vec<&str> = args.cases.iter().map(|c| c.id.as_str()).collect();
    let (written, errors) = run.export_answers(&db, &configs, &cases)?;
    events.info(format!(
        "wrote {} ({}) to {}",
        counted(written, "answer", "answers"),
        counted(errors, "error", "errors"),
        run.file(run_dir::ANSWERS).display()
    ));
    if counts.over_budget > 0 {
        let spent = cx.budget().map(|b| b.spent()).unwrap_or_default();
        events.warning(format!(
            "budget spent ({} tokens, ${:.4} in {} calls): {} cells were not run; raise the budget and \
             pass --resume to finish",
            spent.tokens, spent.usd, spent.calls, counts.over_budget
        ));
    }
    Ok(RunOutcome {
        errors,
        over_budget: counts.over_budget,
    })
}

/// The user model for the suite's simulated users (none when it has no goals): its replies cached like
/// a judge's, its calls counted against the budget.
fn simulator(
    args: &RunArgs<'_>,
    cx: &StageContext<'_>,
) -> Result<Option<Arc<ragtester_exec::Simulator>>> {
    if !args.cases.iter().any(|c| c.goal.is_some()) {
        return Ok(None);
    }
    let model = cx
        .models()
        .for_role(
            &args.user_model,
            ragtester_core::Sampling::default(),
            cx.budget(),
        )
        .with_context(|| format!("the user model `{}`", args.user_model))?;
    Ok(Some(Arc::new(ragtester_exec::Simulator {
        model,
        max_seconds: args.conversation_seconds,
    })))
}

/// Every case is about a document the run was given (an empty document id is a corpus-wide case, such as
/// an imported negative question).
fn check_documents(args: &RunArgs<'_>) -> Result<()> {
    let known: std::collections::HashSet<&str> = args.docs.iter().map(|d| d.id.as_str()).collect();
    let foreign = args
        .cases
        .iter()
        .filter(|c| !c.document_id.is_empty() && !known.contains(c.document_id.as_str()))
        .count();
    if foreign > 0 {
        bail!(
            "{foreign} of {} cases were written about documents not in --docs: pass the documents the suite was generated from",
            args.cases.len()
        );
    }
    Ok(())
}

/// The cells no system of this run can fairly be asked (in this shard), kept with their reasons.
fn save_skipped(
    run: &RunDir,
    pipelines: &[Arc<ragtester_exec::Pipeline>],
    args: &RunArgs<'_>,
    events: &dyn Events,
) -> Result<()> {
    let mut skipped = ragtester_exec::skipped_cells(pipelines, args.cases);
    if let Some(shard) = args.shard {
        let units: std::collections::HashMap<&str, &str> = args
            .cases
            .iter()
            .map(|c| (c.id.as_str(), ragtester_exec::shard_unit(c)))
            .collect();
        skipped.retain(|s| {
            let unit = units.get(s.case_id.as_str()).copied();
            shard.holds(unit.unwrap_or(&s.case_id), &s.config_id)
        });
    }
    run.save_records(SKIPPED, &skipped)?;
    if !skipped.is_empty() {
        events.info(format!(
            "{} cells are not asked (listed in {SKIPPED}): {}",
            skipped.len(),
            skipped[0].reason
        ));
    }
    Ok(())
}

/// The run logged in the store, and told: its cells, those already answered, those to run.
fn tell_cells(db: &RunDb, args: &RunArgs<'_>, events: &dyn Events) -> Result<()> {
    let (cases, configs) = (args.cases.len(), args.configs.len());
    db.log_stage("run", &format!("{cases} cases × {configs} configurations"))?;
    let total = cases * configs;
    let done = db.answered()?.len();
    events.info(match args.shard {
        None => format!(
            "{cases} cases × {configs} configurations = {total} cells: {done} already answered, {} to run",
            total.saturating_sub(done)
        ),
        Some(shard) => format!(
            "{cases} cases × {configs} configurations = {total} cells, of which shard {shard} runs about 1/{}: {done} already answered",
            shard.count
        ),
    });
    Ok(())
}

/// The run stage as one request, what both front ends fill: the plan (from the project file and its
/// overrides), the documents and suite to read, the run directory, and how to run.
pub struct MatrixRequest<'a> {
    pub plan: &'a crate::plan::RunPlan,
    pub docs: &'a [std::path::PathBuf],
    pub suite: &'a Path,
    pub out: &'a Path,
    pub resume: bool,
    /// Answer cells from the response cache (or the plan's `replay_answers`).
    pub replay_answers: bool,
    pub shard: Option<ragtester_exec::Shard>,
    /// Where dense retrieval keeps its vectors; the plan's when None.
    pub vector_store: Option<String>,
    /// Only estimate what the run would cost.
    pub dry_run: bool,
}

impl<'a> MatrixRequest<'a> {
    /// A fresh, whole run of a plan (built from the project file and the front end's overrides): no resume,
    /// no replay, no shard, the plan's vector store.
    pub fn from_plan(
        plan: &'a crate::plan::RunPlan,
        docs: &'a [std::path::PathBuf],
        suite: &'a Path,
        out: &'a Path,
    ) -> Self {
        Self {
            plan,
            docs,
            suite,
            out,
            resume: false,
            replay_answers: false,
            shard: None,
            vector_store: None,
            dry_run: false,
        }
    }
}

/// How a requested run ended: its estimate (dry run), or the run and the documents that could not be read.
pub enum MatrixOutcome {
    Estimate(String),
    Ran {
        outcome: RunOutcome,
        failed_documents: usize,
    },
}

/// Run a request: the documents read, the suite checked, the prices kept beside the records, then the
/// matrix executed — under a context built for the request's plan ([`StageContext::planned`]).
pub async fn run_request(req: &MatrixRequest<'_>, cx: &StageContext<'_>) -> Result<MatrixOutcome> {
    let plan = req.plan;
    if plan.settings.repeat > 1 && req.replay_answers {
        bail!(
            "--repeat asks every cell afresh N times: it cannot be combined with --replay-answers"
        );
    }
    let (docs, failed_documents) = crate::ingest::ingest(req.docs, cx)?;
    let cases: Vec<TestCase> = ragtester_core::record::read_jsonl_under(req.suite, cx.limits())
        .map_err(|e| e.context(format!("cannot read suite {}", req.suite.display())))?;
    if cases.is_empty() {
        bail!("suite {} holds no cases", req.suite.display());
    }
    if req.dry_run {
        return Ok(MatrixOutcome::Estimate(estimate(
            &cases,
            &plan.configs,
            &plan.prices,
            &plan.settings,
        )));
    }
    RunDir::new(req.out).save_prices(&plan.prices)?;
    let args = RunArgs {
        docs: &docs,
        cases: &cases,
        configs: &plan.configs,
        out: req.out,
        concurrency: plan.settings.concurrency,
        resume: req.resume,
        sampling: plan.settings.sampling,
        replay_answers: req.replay_answers || plan.settings.replay_answers,
        shard: req.shard,
        vector_store: req.vector_store.clone().or(plan.vector_store.clone()),
        trace_port: plan.settings.trace_port,
        trace_wait_ms: plan.settings.trace_wait_ms,
        user_model: plan.settings.user_model.clone(),
        conversation_seconds: plan.settings.conversation_seconds,
    };
    let outcome = run(&args, cx).await?;
    Ok(MatrixOutcome::Ran {
        outcome,
        failed_documents,
    })
}

/// Tokens assumed for each reply: the extractive answers of the spec's rubric rarely need more.
const REPLY_TOKENS: usize = 96;
/// Tokens assumed for a rewritten question (the `rewrite` history mode's reply).
const REWRITE_REPLY_TOKENS: usize = 48;

/// What a run would cost, before it runs: cells, and prompt tokens estimated from the query, the answer
/// prompt and top-k chunks of the configured size, plus an allowance for the reply; a conversation's later
/// turns add its earlier turns (each question and a reply's allowance) to the answer prompt when the history
/// is in it, and with `rewrite` a rewriting call of their own (the history and the turn) as well.
pub fn estimate(
    cases: &[TestCase],
    configs: &[Configuration],
    prices: &ragtester_core::config::PriceTable,
    run: &ragtester_core::config::RunSettings,
) -> String {
    let frame = prompt_tokens(&ragtester_exec::answer_messages("", &[], &[]));
    let rewrite_frame = prompt_tokens(&ragtester_exec::rewrite_messages(&[], ""));
    let queries: usize = cases.iter().map(|c| count_tokens(&c.query)).sum();
    let history = history_tokens(cases);
    let later: Vec<&TestCase> = cases
        .iter()
        .filter(|c| c.turn.as_ref().is_some_and(|t| t.index > 1))
        .collect();
    let later_turns = later.len();
    let later_queries: usize = later.iter().map(|c| count_tokens(&c.query)).sum();
    let mut out = String::new();
    let (mut all_prompt, mut all_reply, mut all_cost) = (0usize, 0usize, None::<f64>);
    for c in configs {
        let per_case_context = c.top_k * c.chunking.max_tokens;
        let mut prompt = queries + cases.len() * (frame + per_case_context);
        let mut reply = cases.len() * REPLY_TOKENS;
        let mut rewrites = String::new();
        match c.history {
            HistoryMode::None => {}
            HistoryMode::Prompt => prompt += history,
            // The rewriting call sees the history and the turn; the answer prompt still has the history.
            HistoryMode::Rewrite => {
                prompt += 2 * history + later_turns * rewrite_frame + later_queries;
                reply += later_turns * REWRITE_REPLY_TOKENS;
                rewrites = format!("  (with {later_turns} rewriting calls)");
            }
        }
        all_prompt += prompt;
        all_reply += reply;
        let cost = prices
            .get(&c.llm)
            .map(|p| p.cost(prompt as u64, reply as u64));
        if let Some(x) = cost {
            all_cost = Some(all_cost.unwrap_or(0.0) + x);
        }
        out.push_str(&format!(
            "{:<44} {:>6} cells  ~{:>9} prompt tokens  ~{:>8} reply tokens  {}{rewrites}\n",
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

fn prompt_tokens(messages: &[ragtester_core::Message]) -> usize {
    count_tokens(
        &messages
            .iter()
            .map(|m| m.content.as_str())
            .collect::<String>(),
    )
}

/// The earlier turns every later turn of a conversation carries: each earlier question and a reply's
/// allowance, summed over the suite's turns.
fn history_tokens(cases: &[TestCase]) -> usize {
    let mut turns: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for case in cases {
        if let (Some(id), Some(turn)) = (case.conversation(), case.turn.as_ref()) {
            let entry = turns.entry(id).or_default();
            entry.push((turn.index, count_tokens(&case.query)));
        }
    }
    turns
        .values()
        .flat_map(|list| {
            list.iter().map(|&(index, _)| {
                list.iter()
                    .filter(|&&(earlier, _)| earlier < index)
                    .map(|&(_, tokens)| tokens + REPLY_TOKENS)
                    .sum::<usize>()
            })
        })
        .sum()
}

/// The registry as a run's pipelines see it: chat models as the system under test (the run's sampling,
/// budget and replay choice), embedders and rerankers from the registry, graphs in its index cache.
struct RunModels<'a> {
    cx: &'a StageContext<'a>,
    args: &'a RunArgs<'a>,
}

impl ragtester_exec::ModelSource for RunModels<'_> {
    fn chat(&self, spec: &str) -> Result<Arc<dyn ragtester_core::ChatModel>> {
        let args = self.args;
        let budget = self.cx.budget();
        (self.cx.models()).for_answers(spec, args.sampling, budget, args.replay_answers)
    }
    fn embedder(&self, spec: &str) -> Result<Arc<dyn ragtester_core::Embedder>> {
        self.cx.models().embedder(spec)
    }
    fn reranker(&self, spec: &str) -> Result<Arc<dyn ragtester_core::Reranker>> {
        self.cx.models().reranker(spec, &|chat| self.chat(chat))
    }
    fn ann_settings(&self) -> ragtester_retrieve::AnnSettings {
        self.cx.models().ann_settings()
    }
    fn vector_store(&self) -> Option<String> {
        self.args.vector_store.clone()
    }
    fn http(&self) -> ragtester_llm::HttpSettings {
        self.cx.models().provider_env().http.clone()
    }
}

/// The run's database as execution's answer sink: answers committed to the run directory, each
/// cut at the front end's `answer_kb` limit.
struct DbSink<'a>(&'a RunDb, u64);

impl ragtester_exec::AnswerSink for DbSink<'_> {
    fn answered(&self) -> Result<std::collections::HashSet<(String, String)>> {
        self.0.answered()
    }
    fn answer(&self, case_id: &str, config_id: &str) -> Result<Option<ragtester_core::Answer>> {
        self.0.answer(case_id, config_id)
    }
    fn put_answer(&self, answer: &ragtester_core::Answer) -> Result<()> {
        self.0.put_answer(answer)
    }
    fn answer_bytes(&self) -> u64 {
        self.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{ConversationKind, RetrieverKind, Turn, TurnStep};

    fn case(id: &str, query: &str, turn: Option<(usize, usize)>) -> TestCase {
        TestCase {
            turn: turn.map(|(index, of)| Turn {
                conversation: "talk".into(),
                index,
                of,
                kind: ConversationKind::FollowUp,
                step: TurnStep::FollowUp,
                standalone: None,
                history: Vec::new(),
            }),
            ..ragtester_testkit::case(id, query, "e")
        }
    }

    /// The prompt and reply tokens of each configuration's line of the estimate.
    fn tokens(line: &str) -> (usize, usize) {
        let numbers: Vec<usize> = line
            .split('~')
            .skip(1)
            .map(|part| part.trim().split(' ').next().unwrap().parse().unwrap())
            .collect();
        (numbers[0], numbers[1])
    }

    #[test]
    fn the_estimate_counts_history_in_the_prompt_and_rewriting_calls() {
        let cases = [
            case("single", "What is the maximum pressure of the pump?", None),
            case("t1", "Who designed the Harbor pump?", Some((1, 3))),
            case("t2", "When did they design it?", Some((2, 3))),
            case("t3", "And where?", Some((3, 3))),
        ];
        let config = |history| {
            Configuration::new(
                "offline".into(),
                "none".into(),
                RetrieverKind::Bm25,
                3,
                Default::default(),
                Default::default(),
            )
            .with_history(history)
        };
        let configs = [
            config(HistoryMode::None),
            config(HistoryMode::Prompt),
            config(HistoryMode::Rewrite),
        ];
        let text = estimate(&cases, &configs, &Default::default(), &Default::default());
        let lines: Vec<&str> = text.lines().take(3).collect();
        let [none, prompt, rewrite] = [0, 1, 2].map(|i| tokens(lines[i]));
        // Turn 2 carries turn 1 (a question and a reply's allowance); turn 3 carries both.
        let earlier = |q: &str| count_tokens(q) + REPLY_TOKENS;
        let history =
            earlier(&cases[1].query) + (earlier(&cases[1].query) + earlier(&cases[2].query));
        assert_eq!(prompt.0 - none.0, history, "{text}");
        assert_eq!(prompt.1, none.1);
        let rewrite_frame = prompt_tokens(&ragtester_exec::rewrite_messages(&[], ""));
        let later_queries = count_tokens(&cases[2].query) + count_tokens(&cases[3].query);
        assert_eq!(
            rewrite.0 - prompt.0,
            history + 2 * rewrite_frame + later_queries,
            "{text}"
        );
        assert_eq!(rewrite.1 - none.1, 2 * REWRITE_REPLY_TOKENS, "{text}");
        assert!(lines[2].contains("with 2 rewriting calls"), "{text}");
        assert!(!lines[1].contains("rewriting"), "{text}");
    }
}
