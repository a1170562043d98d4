//! A judge profile: how a judge's signals (`signals.rs`) become the scores people would give — an overall
//! score that orders answers, and for criteria people scored, that criterion's score (its rating a threshold
//! on it) — fitted on labels by `ragtester calibrate` (`calibrate.rs`), per language with a pooled fallback,
//! and the agreement with people measured for it on held-out labels. A verdict records the profile's hash,
//! and the report states the measured agreement beside the verdicts.
//!
//! The built-in profile (`profiles/offline.json`) is fitted on public labelled sets in English and Chinese
//! (docs/benchmarks.md says which and how); a profile is data, checked when read, never code.

use crate::fit::Logistic;
use crate::signals::{LEXICAL, SEMANTIC, Signals};
use anyhow::{Context, Result, bail};
use ragtester_core::oracle::{MeasuredAgreement, PeopleAgreement};
use ragtester_core::{Criteria, Criterion, Verdict, VerdictStatus};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The profile file's format; a profile of another format is refused by name.
pub const PROFILE_FORMAT: u32 = 1;

/// The key of the model fitted on every language together, used for a language without its own.
pub const POOLED: &str = "*";

/// The criteria a profile can score from people's labels.
pub const SCORED_CRITERIA: [&str; 5] = ragtester_core::verdict::CRITERIA_NAMES;

const BUILTIN: &str = include_str!("../../profiles/offline.json");
const BUILTIN_SEMANTIC: &str = include_str!("../../profiles/offline-semantic.json");

/// How `--judge-profile` and `[judge] profile` name the built-in profiles: the lexical one (the default)
/// and the one that also reads meaning with multilingual-e5-small (`scripts/fetch-models.sh`).
pub const BUILTIN_NAMES: [&str; 3] = ["builtin", "builtin:lexical", "builtin:semantic"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeProfile {
    pub format: u32,
    pub name: String,
    /// The judge whose ratings it reads (its spec): another judge's verdicts are left unscored by it.
    pub judge: String,
    /// The embedder whose semantic signals it reads; None for a profile of lexical signals alone.
    #[serde(default)]
    pub meaning: Option<String>,
    /// The signals its models read, in their order.
    pub signals: Vec<String>,
    /// Models per language, and [`POOLED`].
    pub models: BTreeMap<String, ScoreModels>,
    /// Agreement with people on held-out labels; None: not measured against people.
    #[serde(default)]
    pub measured: Option<MeasuredAgreement>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ScoreModels {
    pub overall: Option<Logistic>,
    /// Per criterion people scored.
    #[serde(default)]
    pub criteria: BTreeMap<String, Logistic>,
}

impl JudgeProfile {
    /// The profile built in for the offline judge.
    pub fn builtin() -> Self {
        Self::parse(BUILTIN, "the built-in profile").expect("the built-in profile is valid")
    }

    /// A built-in profile by name ([`BUILTIN_NAMES`]), or a profile file.
    pub fn open(spec: &Path, limits: &ragtester_core::Limits) -> Result<Self> {
        match spec.to_str() {
            Some("builtin" | "builtin:lexical") => Ok(Self::builtin()),
            Some("builtin:semantic") => {
                Self::parse(BUILTIN_SEMANTIC, "the built-in semantic profile")
            }
            _ => Self::load(spec, limits),
        }
    }

    /// A profile file, read under the command's limits and checked: its format, every signal it names,
    /// every model's width.
    pub fn load(path: &Path, limits: &ragtester_core::Limits) -> Result<Self> {
        let text = ragtester_core::limits::read_text_file(path, limits)
            .with_context(|| format!("cannot read the judge profile {}", path.display()))?;
        Self::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, name: &str) -> Result<Self> {
        let profile: JudgeProfile =
            serde_json::from_str(text).with_context(|| format!("{name} is not a judge profile"))?;
        if profile.format != PROFILE_FORMAT {
            bail!(
                "{name} is a judge profile of format {}; this version reads format {PROFILE_FORMAT}",
                profile.format
            );
        }
        for signal in &profile.signals {
            let semantic = SEMANTIC.contains(&signal.as_str());
            if !LEXICAL.contains(&signal.as_str()) && !semantic {
                bail!("{name} reads a signal this version does not measure: `{signal}`");
            }
            if semantic && profile.meaning.is_none() {
                bail!(
                    "{name} reads the semantic signal `{signal}` but names no embedder (`meaning`)"
                );
            }
        }
        let width = profile.signals.len();
        for (language, models) in &profile.models {
            let all = models.overall.iter().chain(models.criteria.values());
            for m in all {
                if [m.center.len(), m.spread.len(), m.weights.len()] != [width; 3]
                    || m.spread.iter().any(|s| !(s.is_finite() && *s > 0.0))
                    || m.weights.iter().chain(&m.center).any(|x| !x.is_finite())
                    || !m.bias.is_finite()
                {
                    bail!("{name}: a model for `{language}` does not fit its {width} signals");
                }
            }
            if let Some(c) = models
                .criteria
                .keys()
                .find(|c| !SCORED_CRITERIA.contains(&c.as_str()))
            {
                bail!("{name}: `{c}` is not one of the five criteria");
            }
        }
        Ok(profile)
    }

    /// The profile's content hash: what a verdict records of it.
    pub fn hash(&self) -> String {
        ragtester_core::ids::stable_id("profile", self)
    }

    /// Whether it reads semantic signals (and so needs its embedder).
    pub fn needs_meaning(&self) -> bool {
        self.meaning.is_some()
    }

    /// The models for a language: its own, else the pooled ones.
    fn models_for(&self, language: &str) -> Option<&ScoreModels> {
        self.models
            .get(language)
            .or_else(|| self.models.get(POOLED))
    }

    /// An answer's signals in the profile's order; None when a signal it reads was not measured.
    pub fn vector(&self, signals: &Signals) -> Option<Vec<f64>> {
        self.signals.iter().map(|n| signals.get(n)).collect()
    }

    /// The overall score of an answer in a language.
    pub fn overall(&self, language: &str, signals: &Signals) -> Option<f64> {
        let x = self.vector(signals)?;
        Some(self.models_for(language)?.overall.as_ref()?.predict(&x))
    }

    /// The criterion scores of an answer, for the criteria the profile models.
    pub fn criteria(&self, language: &str, signals: &Signals) -> BTreeMap<String, f64> {
        let (Some(x), Some(models)) = (self.vector(signals), self.models_for(language)) else {
            return BTreeMap::new();
        };
        models
            .criteria
            .iter()
            .map(|(name, m)| (name.clone(), m.predict(&x)))
            .collect()
    }

    /// Score a judged verdict: its overall score, and the criteria this profile models rescored (their
    /// rating a threshold on the new score). Returns whether a criterion's rating changed, after which the
    /// caller settles pass and fail again by the paper's rule. Leaves errors and other judges' verdicts
    /// alone.
    pub fn apply(&self, language: &str, signals: &Signals, verdict: &mut Verdict) -> bool {
        if verdict.status != VerdictStatus::Ok || verdict.judge != self.judge {
            return false;
        }
        verdict.score = self.overall(language, signals);
        verdict.profile = Some(self.hash());
        let Some(criteria) = verdict.criteria.as_mut() else {
            return false;
        };
        let mut changed = false;
        for (name, score) in self.criteria(language, signals) {
            let Some(c) = criterion_mut(criteria, &name) else {
                continue;
            };
            if c.rating == ragtester_core::Rating::NotApplicable {
                continue;
            }
            let rescored = Criterion::scored(
                score,
                format!("{} (calibrated by profile {})", c.reason, self.name),
            );
            changed |= rescored.rating != c.rating;
            *c = rescored;
        }
        changed
    }

    /// What a report states of the judge using this profile.
    pub fn people(&self, judge: &str) -> PeopleAgreement {
        PeopleAgreement {
            judge: judge.to_string(),
            profile: Some(self.name.clone()),
            profile_hash: Some(self.hash()),
            measured: self.measured.clone(),
        }
    }
}

fn criterion_mut<'a>(criteria: &'a mut Criteria, name: &str) -> Option<&'a mut Criterion> {
    Some(match name {
        "faithfulness" => &mut criteria.faithfulness,
        "relevance" => &mut criteria.relevance,
        "completeness" => &mut criteria.completeness,
        "clarity" => &mut criteria.clarity,
        "keyword_match" => &mut criteria.keyword_match,
        _ => return None,
    })
}

/// A verdict's overall score where no profile scores it: the judge's own graded opinion (pass, criteria,
/// claims) on [0, 1] — ordered, but not calibrated against people.
pub fn unprofiled_score(v: &Verdict) -> Option<f64> {
    crate::graded::judge_score(v).map(|s| s / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_profile_reads_and_a_bad_one_is_named() {
        let builtin = JudgeProfile::builtin();
        assert_eq!(builtin.judge, "offline");
        assert!(!builtin.needs_meaning() && builtin.measured.is_some());
        let semantic =
            JudgeProfile::open(Path::new("builtin:semantic"), &Default::default()).unwrap();
        assert_eq!(
            semantic.meaning.as_deref(),
            Some("local:.models/multilingual-e5-small")
        );
        assert_ne!(semantic.hash(), builtin.hash());
        assert_eq!(builtin.hash().len(), 16);
        let mut bad: serde_json::Value = serde_json::from_str(BUILTIN).unwrap();
        bad["signals"][0] = "the_moon".into();
        let e = JudgeProfile::parse(&bad.to_string(), "mine.json").unwrap_err();
        assert!(
            format!("{e:#}").contains("mine.json reads a signal"),
            "{e:#}"
        );
        bad["format"] = 9.into();
        let e = JudgeProfile::parse(&bad.to_string(), "mine.json").unwrap_err();
        assert!(format!("{e:#}").contains("format 9"), "{e:#}");
    }
}
