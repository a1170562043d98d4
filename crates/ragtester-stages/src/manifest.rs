//! A run's manifest: everything that shapes its answers — the documents, the suite, the configurations, the
//! answer prompt, the sampling of the system under test, where each model is served and what it is (base
//! URL, a local file's digest), and whether cached answers are replayed. `--resume` into a run directory
//! whose manifest differs is refused, naming each setting that differs, so two runs are never mixed.

use ragtester_core::ids::stable_id;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunManifest {
    /// Hashes of the document, case and configuration ids (each id already hashes its content).
    pub documents: String,
    pub cases: String,
    pub configurations: String,
    /// The answer prompt: version and a hash of its text.
    pub answer_prompt: String,
    /// Sampling of the system under test (max tokens, temperature, seed).
    pub sampling: ragtester_core::Sampling,
    /// Per chat-model spec of the system under test: its identity (spec, endpoint, file digest).
    pub models: BTreeMap<String, String>,
    /// Per embedder or reranker spec served over HTTP: the base URL it was configured with.
    #[serde(default)]
    pub endpoints: BTreeMap<String, String>,
    pub replay_answers: bool,
    /// Where dense retrieval kept its vectors (`chroma:URL`); None in-process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_store: Option<String>,
}

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

impl RunManifest {
    pub fn new(inputs: &ManifestInputs<'_>) -> Self {
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

    /// Each setting that differs from `earlier`, named, with its value before and now where it has one.
    pub fn differences(&self, earlier: &RunManifest) -> Vec<String> {
        let mut out = Vec::new();
        for (what, before, now) in [
            ("the documents", &earlier.documents, &self.documents),
            ("the suite's cases", &earlier.cases, &self.cases),
            (
                "the configurations",
                &earlier.configurations,
                &self.configurations,
            ),
        ] {
            if before != now {
                out.push(format!("{what} differ"));
            }
        }
        let mut changed = |what: &str, before: String, now: String| {
            if before != now {
                out.push(format!("{what}: {before} before, {now} now"));
            }
        };
        changed(
            "answer prompt",
            earlier.answer_prompt.clone(),
            self.answer_prompt.clone(),
        );
        changed(
            "sampling of the system under test",
            format!("{:?}", earlier.sampling),
            format!("{:?}", self.sampling),
        );
        for (what, before, now) in [
            ("model", &earlier.models, &self.models),
            ("endpoint of", &earlier.endpoints, &self.endpoints),
        ] {
            let specs: std::collections::BTreeSet<&String> =
                before.keys().chain(now.keys()).collect();
            for spec in specs {
                let show = |m: &BTreeMap<String, String>| {
                    m.get(spec).cloned().unwrap_or_else(|| "(none)".to_string())
                };
                changed(&format!("{what} {spec}"), show(before), show(now));
            }
        }
        changed(
            "vector store",
            format!("{:?}", earlier.vector_store),
            format!("{:?}", self.vector_store),
        );
        changed(
            "replay of cached answers",
            earlier.replay_answers.to_string(),
            self.replay_answers.to_string(),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> RunManifest {
        RunManifest {
            documents: "d".into(),
            cases: "c".into(),
            configurations: "k".into(),
            answer_prompt: "answer-v1#x".into(),
            sampling: Default::default(),
            models: [("openai:m".to_string(), "openai:m@http://a/v1".to_string())].into(),
            endpoints: BTreeMap::new(),
            replay_answers: false,
            vector_store: None,
        }
    }

    #[test]
    fn each_difference_is_named() {
        let a = manifest();
        assert!(a.differences(&a).is_empty());
        let mut b = manifest();
        b.sampling.temperature = Some(0.7);
        b.models
            .insert("openai:m".into(), "openai:m@http://b/v1".into());
        b.cases = "other".into();
        let d = b.differences(&a);
        assert_eq!(d.len(), 3, "{d:?}");
        assert!(d[0].contains("suite"));
        assert!(d[1].contains("temperature: Some(0.7)"), "{d:?}");
        assert!(
            d[2].contains("http://a/v1 before, openai:m@http://b/v1 now"),
            "{d:?}"
        );
    }
}
