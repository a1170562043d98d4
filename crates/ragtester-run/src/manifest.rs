//! A run's manifest: everything that shapes its answers — the documents, the suite, the configurations, the
//! answer prompt, the sampling of the system under test, where each model is served and what it is (base
//! URL, a local file's digest), and whether cached answers are replayed. `--resume` into a run directory
//! whose manifest differs is refused, naming each setting that differs, so two runs are never mixed.

use anyhow::{Result, bail};
use ragtester_core::shard::Shard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

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

impl RunManifest {
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

/// A run directory's manifest as stored: this version's, or one an earlier version wrote (which does not
/// record what shaped its answers).
pub enum StoredManifest {
    Current(Box<RunManifest>),
    Older,
}

impl crate::RunDb {
    /// The manifest of the run started here, if one has started.
    pub fn manifest(&self) -> Result<Option<StoredManifest>> {
        Ok(self.manifest_json()?.map(|json| {
            serde_json::from_str(&json).map_or(StoredManifest::Older, |m| {
                StoredManifest::Current(Box::new(m))
            })
        }))
    }

    /// Refuse to add answers to a run directory (`out`) that holds another run: one whose manifest differs
    /// in anything that shapes an answer (each difference named), another slice of the cells, or answers of
    /// this run without `resume`.
    pub fn check_resumable(
        &self,
        manifest: &RunManifest,
        shard: Option<Shard>,
        resume: bool,
        out: &Path,
    ) -> Result<()> {
        let Some(existing) = self.manifest()? else {
            return Ok(());
        };
        let answered = self.has_answers()?;
        match existing {
            StoredManifest::Older if answered => bail!(
                "{} holds a run made by an earlier version of ragtester, whose manifest does not record \
                 what shaped its answers: choose another --out",
                out.display()
            ),
            StoredManifest::Older => {}
            StoredManifest::Current(earlier) => {
                let differences = manifest.differences(&earlier);
                if !differences.is_empty() {
                    bail!(
                        "{} holds a different run; resuming would mix answers of two runs. What differs:\n  {}\n\
                         Choose another --out, or run with the settings it was started with",
                        out.display(),
                        differences.join("\n  ")
                    );
                }
            }
        }
        let held = self.shard()?;
        if answered && held != shard {
            let name =
                |s: Option<Shard>| s.map_or("all cells".to_string(), |s| format!("shard {s}"));
            bail!(
                "{} holds {} of this run, not {}: resume it with the same --shard, or choose another --out",
                out.display(),
                name(held),
                name(shard)
            );
        }
        if !resume && answered {
            bail!(
                "{} already holds answers of this run: pass --resume to continue it, or choose another --out",
                out.display()
            );
        }
        Ok(())
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
