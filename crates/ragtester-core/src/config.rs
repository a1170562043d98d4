//! One cell of the configuration matrix, and the TOML project file that declares corpus, generation and matrix.

use crate::ids::stable_id;
use crate::llm_settings::{ModelTable, Sampling};
use crate::record::default_schema_version;
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Retrieval modes of the spec's configuration matrix (§4.1, groups A–D).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetrieverKind {
    Bm25,
    Dense,
    Hybrid,
    HybridRerank,
    /// The user's own RAG service: retrieval happens inside it.
    External,
}

impl RetrieverKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RetrieverKind::Bm25 => "bm25",
            RetrieverKind::Dense => "dense",
            RetrieverKind::Hybrid => "hybrid",
            RetrieverKind::HybridRerank => "hybrid-rerank",
            RetrieverKind::External => "external",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "bm25" => RetrieverKind::Bm25,
            "dense" => RetrieverKind::Dense,
            "hybrid" => RetrieverKind::Hybrid,
            "hybrid-rerank" => RetrieverKind::HybridRerank,
            other => {
                bail!("unknown retriever `{other}`: expected bm25, dense, hybrid or hybrid-rerank")
            }
        })
    }

    pub fn uses_dense(self) -> bool {
        matches!(
            self,
            RetrieverKind::Dense | RetrieverKind::Hybrid | RetrieverKind::HybridRerank
        )
    }
}

/// How hybrid retrieval fuses the keyword and dense lists.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Fusion {
    /// Weighted sum of min–max normalised scores (the spec's 0.7 dense / 0.3 keyword).
    Weighted { dense: f64, keyword: f64 },
    /// Reciprocal-rank fusion with constant k.
    Rrf { k: f64 },
}

impl Default for Fusion {
    fn default() -> Self {
        Fusion::Weighted {
            dense: 0.7,
            keyword: 0.3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkingSettings {
    /// Maximum tokens per chunk (cl100k tokens).
    #[serde(default = "default_chunk_tokens")]
    pub max_tokens: usize,
    /// Tokens shared by consecutive chunks.
    #[serde(default)]
    pub overlap_tokens: usize,
    /// How boundaries are chosen. Omitted from records when it is the default, so configuration ids of
    /// earlier runs stay valid.
    #[serde(default, skip_serializing_if = "ChunkStrategy::is_default")]
    pub strategy: ChunkStrategy,
}

/// Chunk boundary strategies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkStrategy {
    /// The largest paragraphs, then sentences (。！？ included), then words that fit the budget.
    #[default]
    Paragraph,
    /// Fixed windows of the token budget with overlap, cut only between words (jieba words for Chinese)
    /// and never inside a number.
    Fixed,
    /// Sections first: a chunk never crosses a heading; inside a section, as `paragraph`.
    Headings,
}

impl ChunkStrategy {
    pub fn is_default(&self) -> bool {
        *self == Self::Paragraph
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "paragraph" => Self::Paragraph,
            "fixed" => Self::Fixed,
            "headings" => Self::Headings,
            other => bail!("unknown chunker `{other}` (known: paragraph, fixed, headings)"),
        })
    }
}

fn default_chunk_tokens() -> usize {
    64
}

impl Default for ChunkingSettings {
    fn default() -> Self {
        Self {
            max_tokens: default_chunk_tokens(),
            overlap_tokens: 0,
            strategy: ChunkStrategy::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RerankSettings {
    pub model: String,
    /// How many fused candidates the reranker sees before the top-k is cut.
    pub candidates: usize,
}

/// Every setting of one matrix cell. Its id is a stable hash of all of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configuration {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    pub id: String,
    pub llm: String,
    pub embedder: String,
    pub retriever: RetrieverKind,
    pub top_k: usize,
    pub chunking: ChunkingSettings,
    pub fusion: Fusion,
    pub rerank: Option<RerankSettings>,
    /// Set when the system under test is an external RAG service rather than the built-in pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetSettings>,
}

/// How a command target receives the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandInput {
    #[default]
    Stdin,
    Argument,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Http,
    Command,
}

/// The user's own RAG service as the system under test (`[[target]]` in the project file).
///
/// `http`: `url`, `method` (POST), `headers`, and a JSON `body` template in which `{{query}}` becomes the query
/// (JSON-escaped); `${VAR}` in the URL and headers is read from the environment. `command`: `command` as
/// program and arguments, the query on stdin or as the last argument, JSON on stdout. Both: JSON pointers
/// (RFC 6901) to the answer and, optionally, to the returned contexts (an array of strings, or of objects
/// whose text `context_text_pointer` names).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSettings {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: TargetKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub input: CommandInput,
    pub answer_pointer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts_pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_text_pointer: Option<String>,
    #[serde(default = "default_target_timeout")]
    pub timeout_s: f64,
}

fn default_target_timeout() -> f64 {
    60.0
}

impl TargetSettings {
    pub fn validate(&self) -> Result<()> {
        let name = &self.name;
        if name.trim().is_empty() {
            bail!("a target needs a name");
        }
        match self.kind {
            TargetKind::Http => {
                let url = self.url.as_deref().unwrap_or("");
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    bail!(
                        "target `{name}`: type http needs a url starting with http:// or https://"
                    );
                }
                if self.command.is_some() {
                    bail!("target `{name}`: `command` belongs to type command");
                }
            }
            TargetKind::Command => {
                if self.command.as_ref().is_none_or(|c| c.is_empty()) {
                    bail!(
                        "target `{name}`: type command needs `command = [\"program\", \"arg\", ...]`"
                    );
                }
                if self.url.is_some() || self.body.is_some() {
                    bail!("target `{name}`: `url` and `body` belong to type http");
                }
            }
        }
        for p in [
            Some(&self.answer_pointer),
            self.contexts_pointer.as_ref(),
            self.context_text_pointer.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if !p.is_empty() && !p.starts_with('/') {
                bail!("target `{name}`: JSON pointer `{p}` must be empty or start with /");
            }
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            bail!("target `{name}`: timeout_s must be positive");
        }
        Ok(())
    }
}

/// The settings a configuration id is computed from (everything but the id and schema version).
#[derive(Serialize)]
struct ConfigKey<'a> {
    llm: &'a str,
    embedder: &'a str,
    retriever: RetrieverKind,
    top_k: usize,
    chunking: &'a ChunkingSettings,
    fusion: &'a Fusion,
    rerank: &'a Option<RerankSettings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    target: &'a Option<TargetSettings>,
}

impl Configuration {
    pub fn new(
        llm: String,
        embedder: String,
        retriever: RetrieverKind,
        top_k: usize,
        chunking: ChunkingSettings,
        fusion: Fusion,
    ) -> Self {
        // Only the reranking mode carries rerank settings, so the other modes' ids do not depend on them.
        let rerank = (retriever == RetrieverKind::HybridRerank).then(|| RerankSettings {
            model: "offline".into(),
            candidates: (top_k * 4).max(20),
        });
        let fusion = if retriever.uses_dense() && retriever != RetrieverKind::Dense {
            fusion
        } else {
            Fusion::default()
        };
        let mut config = Self {
            schema_version: crate::SCHEMA_VERSION,
            id: String::new(),
            llm,
            embedder,
            retriever,
            top_k,
            chunking,
            fusion,
            rerank,
            target: None,
        };
        config.id = config.compute_id();
        config
    }

    /// The same cell reranked by another model (`offline`, `local:DIR` cross-encoder, `http:URL`, or a chat
    /// model spec for LLM reranking); the id follows.
    pub fn with_reranker(mut self, model: &str) -> Self {
        if let Some(r) = &mut self.rerank {
            r.model = model.to_string();
            self.id = self.compute_id();
        }
        self
    }

    /// The configuration that sends every case to an external RAG service.
    pub fn for_target(target: TargetSettings) -> Self {
        let mut config = Self {
            schema_version: crate::SCHEMA_VERSION,
            id: String::new(),
            llm: format!("target:{}", target.name),
            embedder: "none".into(),
            retriever: RetrieverKind::External,
            top_k: 0,
            chunking: ChunkingSettings::default(),
            fusion: Fusion::default(),
            rerank: None,
            target: Some(target),
        };
        config.id = config.compute_id();
        config
    }

    pub fn compute_id(&self) -> String {
        stable_id(
            "configuration",
            &ConfigKey {
                llm: &self.llm,
                embedder: &self.embedder,
                retriever: self.retriever,
                top_k: self.top_k,
                chunking: &self.chunking,
                fusion: &self.fusion,
                rerank: &self.rerank,
                target: &self.target,
            },
        )
    }

    /// A short human label: `hybrid k=5 · offline · hash`.
    pub fn label(&self) -> String {
        if let Some(t) = &self.target {
            return format!(
                "target {} ({})",
                t.name,
                if t.kind == TargetKind::Http {
                    "http"
                } else {
                    "command"
                }
            );
        }
        let embedder = if self.retriever.uses_dense() {
            format!(" · {}", self.embedder)
        } else {
            String::new()
        };
        // Chunking shows only when it differs from the default, so the common labels stay short.
        let chunking = if self.chunking == ChunkingSettings::default() {
            String::new()
        } else {
            let c = &self.chunking;
            let strategy = match c.strategy {
                ChunkStrategy::Paragraph => "",
                ChunkStrategy::Fixed => " fixed",
                ChunkStrategy::Headings => " headings",
            };
            let overlap = if c.overlap_tokens > 0 {
                format!("/{}", c.overlap_tokens)
            } else {
                String::new()
            };
            format!(" · chunk {}{overlap}{strategy}", c.max_tokens)
        };
        let reranker = match &self.rerank {
            Some(r) if r.model != "offline" => format!(" · rerank {}", r.model),
            _ => String::new(),
        };
        format!(
            "{} k={} · {}{}{}{}",
            self.retriever.as_str(),
            self.top_k,
            self.llm,
            embedder,
            reranker,
            chunking
        )
    }
}

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
        }
    }
}

impl MatrixSettings {
    /// Expand into configurations. BM25 ignores the embedder, so it appears once per embedder-free combination.
    pub fn expand(&self) -> Result<Vec<Configuration>> {
        if self.llm.is_empty() || self.retriever.is_empty() || self.top_k.is_empty() {
            bail!("the matrix needs at least one llm, one retriever and one top_k");
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
                            let c = Configuration::new(
                                llm.clone(),
                                embedder.clone(),
                                *retriever,
                                *k,
                                chunking.clone(),
                                fusion,
                            );
                            let cells = if rerankers.is_empty() {
                                vec![c]
                            } else {
                                rerankers
                                    .iter()
                                    .map(|r| c.clone().with_reranker(r))
                                    .collect()
                            };
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
        Ok(out)
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
            llm: default_offline(),
            section_tokens: default_section_tokens(),
            seed: 0,
            sampling: Sampling::default(),
            prompts: None,
            critic: None,
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
        }
    }
}

/// What a model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Price {
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input_per_million
            + completion_tokens as f64 * self.output_per_million)
            / 1e6
    }
}

/// Prices by model spec (`"openai:gpt-4o-mini"`), for cost per configuration.
pub type PriceTable = std::collections::BTreeMap<String, Price>;

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
        if let Some(p) = &mut config.judge.prompts
            && p.is_relative()
        {
            *p = base.join(&*p);
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
        if self.run.concurrency == 0 {
            bail!("run.concurrency must be at least 1");
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
        Ok(configs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_id_is_stable_and_setting_sensitive() {
        let a = Configuration::new(
            "offline".into(),
            "hash".into(),
            RetrieverKind::Hybrid,
            5,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        let b = Configuration::new(
            "offline".into(),
            "hash".into(),
            RetrieverKind::Hybrid,
            5,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        assert_eq!(a.id, b.id);
        assert_eq!(a.id, a.compute_id());
        let c = Configuration::new(
            "offline".into(),
            "hash".into(),
            RetrieverKind::Hybrid,
            6,
            ChunkingSettings::default(),
            Fusion::default(),
        );
        assert_ne!(a.id, c.id);
    }

    #[test]
    fn matrix_expands_and_bm25_ignores_embedders() {
        let m = MatrixSettings {
            embedder: vec!["hash".into(), "local:x".into()],
            retriever: vec![RetrieverKind::Bm25, RetrieverKind::Dense],
            top_k: vec![3, 5],
            ..Default::default()
        };
        let configs = m.expand().unwrap();
        // bm25: 2 top-k; dense: 2 embedders × 2 top-k.
        assert_eq!(configs.len(), 6);
    }

    #[test]
    fn unknown_keys_are_rejected_with_the_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[matrix]\nretriever = [\"bm25\"]\ncolour = 1\n").unwrap();
        let err = format!("{:#}", ProjectConfig::load(&path).unwrap_err());
        assert!(err.contains("c.toml") && err.contains("colour"), "{err}");
    }

    #[test]
    fn targets_become_configurations_and_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.toml");
        std::fs::write(
            &path,
            "[[target]]\nname = \"svc\"\ntype = \"http\"\nurl = \"http://127.0.0.1:9/q\"\nbody = '{\"q\": \"{{query}}\"}'\nanswer_pointer = \"/answer\"\n",
        )
        .unwrap();
        let config = ProjectConfig::load(&path).unwrap();
        let configs = config.configurations().unwrap();
        assert_eq!(configs.len(), 1);
        assert_eq!(configs[0].retriever, RetrieverKind::External);
        assert_eq!(configs[0].label(), "target svc (http)");
        std::fs::write(
            &path,
            "[[target]]\nname = \"c\"\ntype = \"command\"\nanswer_pointer = \"answer\"\n",
        )
        .unwrap();
        let err = format!("{:#}", ProjectConfig::load(&path).unwrap_err());
        assert!(err.contains("needs `command"), "{err}");
    }

    #[test]
    fn prices_cost_tokens() {
        let p = Price {
            input_per_million: 0.15,
            output_per_million: 0.6,
        };
        // 2M prompt tokens and 0.5M reply tokens: 0.30 + 0.30.
        assert!((p.cost(2_000_000, 500_000) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn zero_top_k_is_invalid() {
        let m = MatrixSettings {
            top_k: vec![0],
            ..Default::default()
        };
        assert!(m.expand().is_err());
    }
}
