//! What a matrix run runs and under which settings: the project file's (or the built-in defaults), with
//! the axes and limits a command line or a web form gives laid over them. Both front ends plan a run here,
//! so a flag and a form field mean the same thing.

use anyhow::{Result, bail};
use ragtester_core::config::{MatrixSettings, PriceTable, ProjectConfig, RunSettings};
use ragtester_core::{ChunkStrategy, ChunkingSettings, Configuration, ModelTable, RetrieverKind};
use std::path::Path;

/// Matrix axes given outside the project file; an empty axis keeps the file's (or the default).
#[derive(Debug, Clone, Default)]
pub struct MatrixOverrides {
    pub llms: Vec<String>,
    pub embedders: Vec<String>,
    /// `bm25`, `dense`, `hybrid`, `hybrid-rerank`.
    pub retrievers: Vec<String>,
    pub rerankers: Vec<String>,
    pub top_k: Vec<usize>,
    /// Chunk sizes in tokens, crossed with `chunkers`.
    pub chunk_tokens: Vec<usize>,
    /// `paragraph`, `fixed`, `headings`.
    pub chunkers: Vec<String>,
    pub chunk_overlap: usize,
    /// `none`, `prompt`, `rewrite`: how a conversation's earlier turns reach the built-in pipeline.
    pub history: Vec<String>,
}

impl MatrixOverrides {
    pub fn is_empty(&self) -> bool {
        self.llms.is_empty()
            && self.embedders.is_empty()
            && self.retrievers.is_empty()
            && self.rerankers.is_empty()
            && self.top_k.is_empty()
            && self.chunk_tokens.is_empty()
            && self.chunkers.is_empty()
            && self.chunk_overlap == 0
            && self.history.is_empty()
    }

    /// Replace each axis that is given.
    pub fn apply(&self, matrix: &mut MatrixSettings) -> Result<()> {
        let replace = |axis: &mut Vec<String>, given: &Vec<String>| {
            if !given.is_empty() {
                *axis = given.clone();
            }
        };
        replace(&mut matrix.llm, &self.llms);
        replace(&mut matrix.embedder, &self.embedders);
        replace(&mut matrix.reranker, &self.rerankers);
        if !self.retrievers.is_empty() {
            matrix.retriever = parse_all(&self.retrievers, RetrieverKind::parse)?;
        }
        if !self.top_k.is_empty() {
            matrix.top_k = self.top_k.clone();
        }
        if !self.history.is_empty() {
            matrix.history = parse_all(&self.history, ragtester_core::HistoryMode::parse)?;
        }
        if !self.chunk_tokens.is_empty() || !self.chunkers.is_empty() || self.chunk_overlap > 0 {
            matrix.chunking = self.chunkings()?;
        }
        Ok(())
    }

    /// Every chunker crossed with every size; a missing axis takes the default chunking's.
    fn chunkings(&self) -> Result<Vec<ChunkingSettings>> {
        let sizes = match self.chunk_tokens.as_slice() {
            [] => vec![ChunkingSettings::default().max_tokens],
            given => given.to_vec(),
        };
        let strategies = match self.chunkers.as_slice() {
            [] => vec![ChunkStrategy::default()],
            given => parse_all(given, ChunkStrategy::parse)?,
        };
        Ok(strategies
            .iter()
            .flat_map(|&strategy| {
                sizes.iter().map(move |&max_tokens| ChunkingSettings {
                    max_tokens,
                    overlap_tokens: self.chunk_overlap,
                    strategy,
                })
            })
            .collect())
    }
}

fn parse_all<T>(names: &[String], parse: impl Fn(&str) -> Result<T>) -> Result<Vec<T>> {
    names.iter().map(|n| parse(n)).collect()
}

/// The inputs of a plan: the project file, if any, and what is laid over it.
#[derive(Debug, Clone, Default)]
pub struct PlanArgs<'a> {
    pub config: Option<&'a Path>,
    pub overrides: MatrixOverrides,
    pub concurrency: Option<usize>,
    pub budget_usd: Option<f64>,
    pub budget_tokens: Option<u64>,
    /// `--repeat N`: every cell answered N times.
    pub repeat: Option<usize>,
}

/// A run's configurations and the settings they run under.
#[derive(Debug, Clone)]
pub struct RunPlan {
    pub configs: Vec<Configuration>,
    pub settings: RunSettings,
    pub prices: PriceTable,
    pub models: ModelTable,
    /// `[matrix] vector_store`: where dense retrieval keeps its vectors.
    pub vector_store: Option<String>,
}

impl RunPlan {
    /// The run a project declares as it stands, nothing laid over it.
    pub fn of_project(project: &ProjectConfig) -> Result<Self> {
        Ok(Self {
            configs: project.configurations()?,
            vector_store: project.matrix.as_ref().and_then(|m| m.vector_store.clone()),
            settings: project.run.clone(),
            prices: project.prices.clone(),
            models: project.models.clone(),
        })
    }
}

/// Plan a run. A project file that declares only targets runs only them, unless matrix axes are given,
/// which add the built-in pipeline's matrix beside them.
pub fn plan(args: &PlanArgs<'_>) -> Result<RunPlan> {
    let mut project = match args.config {
        Some(path) => ProjectConfig::load(path)?,
        None => ProjectConfig::default(),
    };
    if project.matrix.is_none() && (project.target.is_empty() || !args.overrides.is_empty()) {
        project.matrix = Some(MatrixSettings::default());
    }
    if let Some(matrix) = &mut project.matrix {
        args.overrides.apply(matrix)?;
    }
    if let Some(n) = args.repeat {
        project.run.repeat = n;
        project.validate()?;
    }
    let mut settings = project.run.clone();
    if let Some(usd) = args.budget_usd {
        if !(usd.is_finite() && usd > 0.0) {
            bail!("--budget-usd must be a positive number");
        }
        settings.budget_usd = Some(usd);
    }
    if let Some(tokens) = args.budget_tokens {
        if tokens == 0 {
            bail!("--budget-tokens must be at least 1");
        }
        settings.budget_tokens = Some(tokens);
    }
    if let Some(concurrency) = args.concurrency {
        settings.concurrency = concurrency;
    }
    if settings.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    Ok(RunPlan {
        settings,
        ..RunPlan::of_project(&project)?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> std::path::PathBuf {
        let path = dir.join("ragtester.toml");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn axes_given_replace_the_defaults_and_cross() {
        let plan = plan(&PlanArgs {
            overrides: MatrixOverrides {
                retrievers: vec!["bm25".into(), "dense".into()],
                top_k: vec![1, 5],
                chunk_tokens: vec![64, 128],
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        assert_eq!(plan.configs.len(), 2 * 2 * 2);
        assert!(plan.configs.iter().all(|c| c.chunking.overlap_tokens == 0));
        assert_eq!(plan.settings, RunSettings::default());
    }

    #[test]
    fn a_targets_only_file_runs_its_targets_unless_axes_are_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "[[target]]\nname = \"svc\"\ntype = \"http\"\nurl = \"http://127.0.0.1:9/ask\"\nanswer_pointer = \"/answer\"\n",
        );
        let only = plan(&PlanArgs {
            config: Some(&path),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(only.configs.len(), 1);
        assert!(only.configs[0].target.is_some());
        let both = plan(&PlanArgs {
            config: Some(&path),
            overrides: MatrixOverrides {
                top_k: vec![3],
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        assert!(both.configs.len() > 1);
        assert!(
            both.configs
                .iter()
                .any(|c| c.target.is_none() && c.top_k == 3)
        );
    }

    #[test]
    fn bad_limits_and_axes_are_refused_by_name() {
        let refused = |args: PlanArgs| plan(&args).unwrap_err().to_string();
        assert!(
            refused(PlanArgs {
                concurrency: Some(0),
                ..Default::default()
            })
            .contains("--concurrency")
        );
        assert!(
            refused(PlanArgs {
                budget_usd: Some(f64::NAN),
                ..Default::default()
            })
            .contains("--budget-usd")
        );
        let unknown = refused(PlanArgs {
            overrides: MatrixOverrides {
                retrievers: vec!["grep".into()],
                ..Default::default()
            },
            ..Default::default()
        });
        assert!(unknown.contains("grep"), "{unknown}");
    }
}
