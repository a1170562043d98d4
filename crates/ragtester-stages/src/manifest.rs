//! A run's manifest: everything that shapes its answers — the documents, the suite, the configurations, the
//! answer prompt, the sampling of the system under test, where each model is served and what it is (base
//! URL, a local file's digest), and whether cached answers are replayed. `--resume` into a run directory
//! whose manifest differs is refused, naming each setting that differs, so two runs are never mixed.

use ragtester_core::ids::stable_id;
use ragtester_run::manifest::RunManifest;
use std::collections::BTreeMap;

pub struct ManifestInputs<'a> {
    pub docs: &'a [ragtester_core::Document],
    pub cases: &'a [ragtester_core::TestCase],
    pub configs: &'a [ragtester_core::Configuration],
    pub pipelines: &'a [std::sync::Arc<ragtester_exec::Pipeline>],
    pub sampling: ragtester_core::Sampling,
    pub model_settings: &'a ragtester_core::ModelTable,
    pub replay_answers: bool,
    pub vector_store: Option<&'a str>,
}

/// The manifest of a run about to start: what its inputs and built pipelines are.
pub fn manifest_of(inputs: &ManifestInputs<'_>) -> RunManifest {
    let ids = |name: &str, ids: Vec<&str>| stable_id(name, &ids);
    let mut models = BTreeMap::new();
    for p in inputs.pipelines {
        if let ragtester_exec::System::BuiltIn { model, .. } = &p.system {
            models.insert(p.config.llm.clone(), model.identity());
        }
    }
    let mut endpoints = BTreeMap::new();
    for c in inputs.configs {
        let rerankers = c.rerank.iter().map(|r| r.model.as_str());
        for spec in std::iter::once(c.embedder.as_str()).chain(rerankers) {
            if let Some(url) = inputs
                .model_settings
                .get(spec)
                .and_then(|s| s.base_url.clone())
            {
                endpoints.insert(spec.to_string(), url);
            }
        }
    }
    RunManifest {
        documents: ids(
            "documents",
            inputs.docs.iter().map(|d| d.id.as_str()).collect(),
        ),
        cases: ids(
            "cases",
            inputs.cases.iter().map(|c| c.id.as_str()).collect(),
        ),
        configurations: ids(
            "configurations",
            inputs.configs.iter().map(|c| c.id.as_str()).collect(),
        ),
        answer_prompt: ragtester_exec::answer_prompt_identity(),
        sampling: inputs.sampling,
        models,
        endpoints,
        replay_answers: inputs.replay_answers,
        vector_store: inputs.vector_store.map(str::to_string),
    }
}
