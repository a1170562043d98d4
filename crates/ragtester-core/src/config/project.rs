//! The TOML project file (`ragtester test --config FILE`): corpus, generation, matrix, targets, judge, run
//! settings, prices and models — and the defaults every front end shares.

use super::cell::{ChunkingSettings, Configuration, Fusion, HistoryMode, RetrieverKind};
use super::prices::PriceTable;
use super::target::TargetSettings;
use crate::llm_settings::{ModelTable, Sampling};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The matrix: every combination of these lists is one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixSettings {
    #[serde(default = "default_offline_list")]
    pub llm: Vec<String>,
    #[serde(default = "default_embedder_list")]
    pub embedder: Vec<String>,
    #[serde(default = "default_retrievers")]
    pub retriever: Vec<RetrieverKind>,
    #[serde(default = "default_top_k")]
    pub top_k: Vec<usize>,
    #[serde(default)]
    pub chunking: Vec<ChunkingSettings>,
    #[serde(default)]
    pub fusion: Option<Fusion>,
    /// Rerankers for the hybrid-rerank cells.
    #[serde(default = "default_offline_list")]
    pub reranker: Vec<String>,
    /// Where dense and hybrid retrieval keep their vectors: `chroma:http://HOST:PORT` (a Chroma server);
    /// unset keeps them in-process. Results are the same; where vectors live is not part of a cell's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_store: Option<String>,
    /// The conversation axis: how the built-in pipeline uses a conversation's earlier turns (`none`,
    /// `prompt`, `rewrite`). Cases that are not turns of a conversation are asked the same way in each.
    #[serde(default = "default_history")]
    pub history: Vec<HistoryMode>,
    /// Agent configurations: for each retriever named here, the reader decides whether to call a `search`
    /// tool over it, and with what query, before it answers (with every llm, embedder, top-k and
    /// chunking of the matrix). Its tool calls are recorded and checked against the cases' expected tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agent: Vec<RetrieverKind>,
}

fn default_history() -> Vec<HistoryMode> {
    vec![HistoryMode::default()]
}

fn default_offline_list() -> Vec<String> {
    vec!["offline".into()]
}
fn default_embedder_list() -> Vec<String> {
    vec!["hash".into()]
}
fn default_retrievers() -> Vec<RetrieverKind> {
    vec![
        RetrieverKind::Bm25,
        RetrieverKind::Dense,
        RetrieverKind::Hybrid,
        RetrieverKind::HybridRerank,
    ]
}
fn default_top_k() -> Vec<usize> {
    vec![3]
}

impl Default for MatrixSettings {
    fn default() -> Self {
        Self {
            llm: default_offline_list(),
            embedder: default_embedder_list(),
            retriever: default_retrievers(),
            top_k: default_top_k(),
            chunking: Vec::new(),
            fusion: None,
            reranker: default_offline_list(),
            vector_store: None,
            history: default_history(),
            agent: Vec::new(),
        }
    }
}

impl MatrixSettings {
    /// Expand into configurations. BM25 ignores the embedder, so it appears once per embedder-free combination.
    pub fn expand(&self) -> Result<Vec<Configuration>> {
        if self.llm.is_empty()
            || self.retriever.is_empty()
            || self.top_k.is_empty()
            || self.history.is_empty()
        {
            bail!(
                "the matrix needs at least one llm, one retriever, one top_k and one history mode"
            );
        }
        if let Some(k) = self.top_k.iter().find(|k| **k == 0) {
            bail!("top_k must be at least 1 (got {k})");
        }
        let chunkings = if self.chunking.is_empty() {
            vec![ChunkingSettings::default()]
        } else {
            self.chunking.clone()
        };
        for c in &chunkings {
            if c.max_tokens < 8 || c.overlap_tokens >= c.max_tokens {
                bail!(
                    "chunking max_tokens must be at least 8 and overlap_tokens below it (got {} / {})",
                    c.max_tokens,
                    c.overlap_tokens
                );
            }
        }
        let fusion = self.fusion.unwrap_or_default();
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for llm in &self.llm {
            for chunking in &chunkings {
                for retriever in &self.retriever {
                    let embedders: Vec<String> = if retriever.uses_dense() {
                        if self.embedder.is_empty() {
                            bail!("retriever {} needs an embedder", retriever.as_str());
                        }
                        self.embedder.clone()
                    } else {
                        vec!["none".into()]
                    };
                    let rerankers: &[String] = if *retriever == RetrieverKind::HybridRerank {
                        if self.reranker.is_empty() {
                            bail!("retriever hybrid-rerank needs a reranker");
                        }
                        &self.reranker
                    } else {
                        &[]
                    };
                    for embedder in embedders {
                        for k in &self.top_k {
                            // A reference point has no top-k: one configuration, not one per k.
                            let k = if retriever.is_reference() {
                                self.top_k[0]
                            } else {
                                *k
                            };
                            let c = Configuration::new(
                                llm.clone(),
                                embedder.clone(),
                                *retriever,
                                k,
                                chunking.clone(),
                                fusion,
                            );
                            let reranked = if rerankers.is_empty() {
                                vec![c]
                            } else {
                                rerankers
                                    .iter()
                                    .map(|r| c.clone().with_reranker(r))
                                    .collect()
                            };
                            let cells = reranked.into_iter().flat_map(|c| {
                                self.history.iter().map(move |h| c.clone().with_history(*h))
                            });
                            let cells: Vec<Configuration> = cells.collect();
                            for c in cells {
                                if seen.insert(c.id.clone()) {
                                    out.push(c);
                                }
                            }
                        }
                    }
                }
            }
        }
        self.agents(&chunkings, fusion, &mut out, &mut seen)?;
        Ok(out)
    }

    /// One agent configuration per llm, chunking, agent retriever, embedder (for dense ones) and top-k.
    fn agents(
        &self,
        chunkings: &[ChunkingSettings],
        fusion: Fusion,
        out: &mut Vec<Configuration>,
        seen: &mut std::collections::HashSet<String>,
    ) -> Result<()> {
        if let Some(r) = self.agent.iter().find(|r| r.is_reference()) {
            bail!(
                "an agent searches with a retriever: `{}` is a reference point, not one",
                r.as_str()
            );
        }
        for llm in &self.llm {
            for chunking in chunkings {
                for retriever in &self.agent {
                    let embedders = if retriever.uses_dense() {
                        self.embedder.clone()
                    } else {
                        vec!["none".into()]
                    };
                    for embedder in embedders {
                        for k in &self.top_k {
                            let c = Configuration::new(
                                llm.clone(),
                                embedder.clone(),
                                *retriever,
                                *k,
                                chunking.clone(),
                                fusion,
                            )
                            .with_agent();
                            if seen.insert(c.id.clone()) {
                                out.push(c);
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorpusSettings {
    /// Files or folders, relative to the config file.
    pub paths: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerationSettings {
    #[serde(default = "default_generators")]
    pub strategies: Vec<crate::case::Generator>,
    /// Cases per document (the paper's N_test).
    #[serde(default = "default_n_test")]
    pub n_test: usize,
    /// Hardest sections to query (the paper's N_complex); defaults to a quarter of n_test.
    #[serde(default)]
    pub n_complex: Option<usize>,
    /// Conversations per document (two or three turns each), beside the n_test single questions.
    #[serde(default = "default_conversations")]
    pub conversations: usize,
    #[serde(default = "default_offline")]
    pub llm: String,
    /// Maximum tokens of one section of the section split.
    #[serde(default = "default_section_tokens")]
    pub section_tokens: usize,
    #[serde(default)]
    pub seed: u64,
    /// Sampling of the question writer.
    #[serde(default, skip_serializing_if = "Sampling::is_default")]
    pub sampling: Sampling,
    /// A folder with question.en.j2 / question.zh.j2 prompt templates replacing the built-in ones (and
    /// critic.en.j2 / critic.zh.j2 for the quality gate, when present).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PathBuf>,
    /// The quality gate's critic model: unset means the question writer checks its own questions,
    /// `none` turns the gate off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critic: Option<String>,
    /// Models whose closed-book answers (no passage) leave a case out when the offline judge passes
    /// them: such a case tests the model's memory, not the documents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_leaky: Vec<String>,
    /// An earlier suite to bring in step with the documents instead of writing one afresh: untouched cases
    /// keep their ids, changed ones are written again, removed ones retired (`generate --update`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<PathBuf>,
    /// Tools every written case expects an agent to call (`["search"]`): an agent configuration or a
    /// target that reports its calls is held to them, and its tool-call F1 reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_tools: Vec<String>,
    /// Simulated users' goals per document (a fact to find out, with the passage that settles it, a
    /// persona and a turn budget), beside the single questions and scripted conversations.
    #[serde(default)]
    pub goals: usize,
    /// The most messages a simulated user sends.
    #[serde(default = "default_goal_turns")]
    pub goal_turns: u32,
}

fn default_goal_turns() -> u32 {
    5
}

impl GenerationSettings {
    /// The critic model spec, None when the gate is off.
    pub fn critic_spec(&self) -> Option<String> {
        critic_spec(self.critic.as_deref(), &self.llm)
    }
}

/// The critic a `--critic` value names: the writer when unset, none for `none`.
pub fn critic_spec(critic: Option<&str>, writer: &str) -> Option<String> {
    match critic {
        None => Some(writer.to_string()),
        Some(c) if c.eq_ignore_ascii_case("none") => None,
        Some(c) => Some(c.to_string()),
    }
}

fn default_generators() -> Vec<crate::case::Generator> {
    vec![
        crate::case::Generator::Ragtester,
        crate::case::Generator::Baseline,
    ]
}
fn default_conversations() -> usize {
    2
}
fn default_n_test() -> usize {
    8
}
fn default_offline() -> String {
    "offline".into()
}
fn default_section_tokens() -> usize {
    96
}

impl Default for GenerationSettings {
    fn default() -> Self {
        Self {
            strategies: default_generators(),
            n_test: default_n_test(),
            n_complex: None,
            conversations: default_conversations(),
            llm: default_offline(),
            section_tokens: default_section_tokens(),
            seed: 0,
            sampling: Sampling::default(),
            prompts: None,
            critic: None,
            drop_leaky: Vec::new(),
            update: None,
            expected_tools: Vec::new(),
            goals: 0,
            goal_turns: default_goal_turns(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeSettings {
    #[serde(default = "default_judges")]
    pub judges: Vec<String>,
    /// Verdicts per (answer, judge); above one, set a temperature above 0 in `sampling`.
    #[serde(default = "default_samples")]
    pub samples: u32,
    /// How several judges' (or samples') verdicts become one: `majority` or `mean`.
    #[serde(default = "default_panel")]
    pub panel: String,
    /// A folder with judge.en.j2 / judge.zh.j2 prompt templates replacing the built-in ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PathBuf>,
    /// Sampling of the judges.
    #[serde(default, skip_serializing_if = "Sampling::is_default")]
    pub sampling: Sampling,
    /// Who splits and checks claims for the claim-level metrics: `lexical` (sentences and shared terms, no
    /// model calls), `judge` (the first judge; two splits and about 5 + top-k checks per answer) or `off`.
    #[serde(default = "default_claims")]
    pub claims: String,
    /// A judge profile (`ragtester calibrate --out`) replacing the built-in one: how the judge's signals
    /// become scores, and the agreement with people measured for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<PathBuf>,
}

fn default_claims() -> String {
    "lexical".into()
}

fn default_samples() -> u32 {
    1
}
fn default_panel() -> String {
    "majority".into()
}

fn default_judges() -> Vec<String> {
    vec!["offline".into()]
}

impl Default for JudgeSettings {
    fn default() -> Self {
        Self {
            judges: default_judges(),
            samples: default_samples(),
            panel: default_panel(),
            prompts: None,
            sampling: Sampling::default(),
            claims: default_claims(),
            profile: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSettings {
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Sampling of the system under test.
    #[serde(default, skip_serializing_if = "Sampling::is_default")]
    pub sampling: Sampling,
    /// Stop starting calls once the run's chat calls have cost this many US dollars (by `[prices]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// Stop starting calls once the run's chat calls have used this many tokens (prompt plus reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
    /// Answer cells from the response cache when the same system was asked the same thing before (same
    /// endpoint, model, prompt and sampling). Off by default: a test of a system asks it afresh, so a
    /// regression re-run never shows last week's answers; judge, critic and question-writer replies are
    /// cached either way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replay_answers: bool,
    /// Where targets with `traces = true` send their spans: OTLP/HTTP on 127.0.0.1 at this port (4318 is
    /// the port an SDK's exporter uses by default; 0 picks a free one, told to command targets only).
    #[serde(default = "default_trace_port")]
    pub trace_port: u16,
    /// How long a call's trace is waited for once the call returned, in milliseconds.
    #[serde(default = "default_trace_wait_ms")]
    pub trace_wait_ms: u64,
    /// Times every cell is answered (`run --repeat N`): each repeat a new call to the system under test,
    /// never a cached answer; reports count each case's passes out of N and set flaky cases apart.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub repeat: usize,
    /// The model that plays simulated users (any chat model spec; `offline`, the deterministic user, by
    /// default).
    #[serde(default = "default_offline")]
    pub user_model: String,
    /// The most seconds one simulated conversation may take, every turn and the user's calls together:
    /// past it the conversation is the case's error.
    #[serde(default = "default_conversation_seconds")]
    pub conversation_seconds: f64,
}

fn default_conversation_seconds() -> f64 {
    300.0
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn default_trace_port() -> u16 {
    4318
}
fn default_trace_wait_ms() -> u64 {
    2000
}

fn default_concurrency() -> usize {
    4
}

impl Default for RunSettings {
    fn default() -> Self {
        Self {
            concurrency: default_concurrency(),
            sampling: Sampling::default(),
            budget_usd: None,
            budget_tokens: None,
            replay_answers: false,
            trace_port: default_trace_port(),
            trace_wait_ms: default_trace_wait_ms(),
            repeat: 1,
            user_model: default_offline(),
            conversation_seconds: default_conversation_seconds(),
        }
    }
}

/// The TOML file of `ragtester test --config FILE` (and the matrix part of `ragtester run --config FILE`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectConfig {
    pub corpus: Option<CorpusSettings>,
    #[serde(default)]
    pub generation: GenerationSettings,
    /// The built-in pipeline's matrix. Absent: the default matrix, unless targets are declared.
    #[serde(default)]
    pub matrix: Option<MatrixSettings>,
    /// External RAG services to test, each one configuration.
    #[serde(default)]
    pub target: Vec<TargetSettings>,
    #[serde(default)]
    pub judge: JudgeSettings,
    #[serde(default)]
    pub run: RunSettings,
    /// `[prices]`: `"openai:gpt-4o-mini" = { input_per_million = 0.15, output_per_million = 0.6 }`.
    #[serde(default)]
    pub prices: PriceTable,
    /// `[models."openai:gpt-4o-mini"]`: base URL, key variable and rate limits per model.
    #[serde(default)]
    pub models: ModelTable,
}

impl ProjectConfig {
    /// Read and validate a config file; corpus paths become relative to the file's folder.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read config file {}", path.display()))?;
        let mut config: ProjectConfig = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("invalid config file {}: {e}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        if let Some(corpus) = &mut config.corpus {
            for p in &mut corpus.paths {
                if p.is_relative() {
                    *p = base.join(&*p);
                }
            }
        }
        if let Some(p) = &mut config.generation.update
            && p.is_relative()
        {
            *p = base.join(&*p);
        }
        for p in [&mut config.judge.prompts, &mut config.judge.profile]
            .into_iter()
            .flatten()
        {
            // These name profiles built into the binary (the judge crate's `BUILTIN_NAMES`), not files.
            let builtin = matches!(
                p.to_str(),
                Some("builtin" | "builtin:lexical" | "builtin:semantic")
            );
            if p.is_relative() && !builtin {
                *p = base.join(&*p);
            }
        }
        config
            .validate()
            .with_context(|| format!("invalid config file {}", path.display()))?;
        Ok(config)
    }

    pub fn validate(&self) -> Result<()> {
        if self.generation.n_test == 0 {
            bail!("generation.n_test must be at least 1");
        }
        if self.generation.section_tokens < 16 {
            bail!("generation.section_tokens must be at least 16");
        }
        if self.run.repeat == 0 {
            bail!("run.repeat must be at least 1");
        }
        if self.run.repeat > 1 && self.run.replay_answers {
            bail!(
                "run.repeat asks every cell afresh N times: it cannot be combined with replay_answers, \
                 which answers from the cache"
            );
        }
        if self.run.concurrency == 0 {
            bail!("run.concurrency must be at least 1");
        }
        if !(self.run.conversation_seconds.is_finite() && self.run.conversation_seconds > 0.0) {
            bail!("run.conversation_seconds must be a positive number of seconds");
        }
        if self.generation.goals > 0 && self.generation.goal_turns < 2 {
            bail!(
                "generation.goal_turns must be at least 2: a user who cannot answer back is no simulation"
            );
        }
        if self.judge.judges.is_empty() {
            bail!("judge.judges must name at least one judge");
        }
        self.generation.sampling.validate("generation.sampling")?;
        self.run.sampling.validate("run.sampling")?;
        self.judge.sampling.validate("judge.sampling")?;
        if self.judge.samples == 0 {
            bail!("judge.samples must be at least 1");
        }
        if !matches!(self.judge.panel.as_str(), "majority" | "mean") {
            bail!(
                "judge.panel must be majority or mean (got `{}`)",
                self.judge.panel
            );
        }
        if let Some(b) = self.run.budget_usd
            && !(b.is_finite() && b > 0.0)
        {
            bail!("run.budget_usd must be a positive number");
        }
        if self.run.budget_tokens == Some(0) {
            bail!("run.budget_tokens must be at least 1");
        }
        for (model, settings) in &self.models {
            crate::spec::ModelSpec::parse(model)?;
            settings.validate(model)?;
        }
        for (model, p) in &self.prices {
            if !(p.input_per_million >= 0.0 && p.output_per_million >= 0.0) {
                bail!("prices for `{model}` must be non-negative numbers");
            }
        }
        self.configurations()?;
        Ok(())
    }

    /// Every configuration to run: the matrix's, then one per target.
    pub fn configurations(&self) -> Result<Vec<Configuration>> {
        let mut configs = match (&self.matrix, self.target.is_empty()) {
            (Some(m), _) => m.expand()?,
            (None, true) => MatrixSettings::default().expand()?,
            (None, false) => Vec::new(),
        };
        let mut names = std::collections::HashSet::new();
        for t in &self.target {
            t.validate()?;
            if !names.insert(t.name.clone()) {
                bail!("two targets are named `{}`", t.name);
            }
            configs.push(Configuration::for_target(t.clone()));
        }
        let n = self.run.repeat as u32;
        if n > 1 {
            configs = configs
                .into_iter()
                .flat_map(|c| (1..=n).map(move |i| c.clone().with_repeat(i, n)))
                .collect();
        }
        Ok(configs)
    }
}
