//! `ragtester calibrate --labels FILE… --out PROFILE`: the offline judge fitted to a team's labels. Every
//! labelled answer is judged as a run judges it (`bench_labels`), its signals kept; a profile is fitted per
//! language and pooled (the judge crate's `calibrate`), measured by k-fold cross-validation against the
//! profile in use before, and written with its held-out agreement — what every report then states beside
//! the verdicts it scores.

use crate::bench_labels::{LabelsScore, Seen, read_labels, scored, see};
use anyhow::{Context, Result, bail};
use ragtester_core::oracle::LabelSet;
use ragtester_judge::Scoring;
use ragtester_judge::agreement::{JudgedItem, LabelledItem, agreement};
use ragtester_judge::calibrate::{Target, cross_validate, fit_profile, measured};
use ragtester_judge::profile::JudgeProfile;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

pub struct CalibrateRequest<'a> {
    pub labels: &'a [PathBuf],
    pub out: &'a Path,
    /// Folds of the cross-validation (at least 2).
    pub folds: usize,
    /// An embedder whose semantic signals the profile also reads (`local:.models/multilingual-e5-small`).
    pub meaning: Option<&'a str>,
    /// The profile measured as "before" (the built-in one when None).
    pub baseline: Option<&'a Path>,
    /// The profile's name (the output file's stem when None).
    pub name: Option<&'a str>,
}

/// What calibration measured and wrote.
pub struct Calibration {
    pub before: LabelsScore,
    pub after: LabelsScore,
    pub profile: JudgeProfile,
}

/// The offline judge's sight of every item, on every core (the offline judge and the lexical claims only
/// compute; an embedder runs on the calling thread's share).
fn see_all(items: &[LabelledItem], scoring: &Scoring) -> Vec<Seen> {
    let judge = ragtester_offline::OfflineModel;
    items
        .par_iter()
        .enumerate()
        .map(|(n, item)| {
            futures::executor::block_on(see(&judge, item, n, scoring.meaning.as_ref()))
        })
        .collect()
}

fn score_of(
    name: String,
    items: &[LabelledItem],
    judged: &[JudgedItem],
    seconds: f64,
) -> LabelsScore {
    let (overall, by_language) = agreement(items, judged);
    LabelsScore {
        judge: name,
        items: items.len(),
        overall,
        by_language,
        seconds,
        best_signals: Default::default(),
        defining_signals: Default::default(),
    }
}

pub fn calibrate(req: &CalibrateRequest<'_>, cx: &crate::StageContext<'_>) -> Result<Calibration> {
    let (models, events) = (cx.models(), cx.events());
    if req.folds < 2 {
        bail!(
            "--folds must be at least 2: held-out figures need answers the model was not fitted on"
        );
    }
    events.stage("calibrate");
    let mut items = Vec::new();
    let mut sets = Vec::new();
    for path in req.labels {
        let read = read_labels(path, cx.limits(), events)?;
        sets.push(LabelSet {
            name: path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            items: read.len(),
        });
        items.extend(read);
    }
    let mut baseline = crate::judge::scoring(req.baseline, cx)?;
    if let Some(spec) = req.meaning {
        let embedder = models
            .embedder(spec)
            .with_context(|| format!("--meaning {spec}"))?;
        baseline.meaning = Some(ragtester_judge::meaning::Meaning::new(embedder));
    }
    let started = std::time::Instant::now();
    let seen = see_all(&items, &baseline);
    let observations: Vec<_> = seen.iter().map(|s| s.observation.clone()).collect();
    events.info(format!(
        "judged {} labelled items in {:.1} s",
        items.len(),
        started.elapsed().as_secs_f64()
    ));
    let before_judged: Vec<JudgedItem> = seen.into_iter().map(|s| scored(&baseline, s)).collect();
    let mut before = score_of(
        format!("before: profile {}", baseline.profile.name),
        &items,
        &before_judged,
        started.elapsed().as_secs_f64(),
    );
    before.best_signals = ragtester_judge::calibrate::best_signals(&items, &observations);
    before.defining_signals = ragtester_judge::calibrate::defining_signals(&items, &observations);
    let mut signals: Vec<String> = ragtester_judge::signals::LEXICAL
        .iter()
        .map(|s| s.to_string())
        .collect();
    if baseline.meaning.is_some() {
        signals.extend(
            ragtester_judge::signals::SEMANTIC
                .iter()
                .map(|s| s.to_string()),
        );
    }
    let target = Target {
        name: req.name.map_or_else(
            || {
                req.out
                    .file_stem()
                    .map_or("calibrated".into(), |s| s.to_string_lossy().into_owned())
            },
            str::to_string,
        ),
        judge: "offline".into(),
        meaning: req.meaning.map(str::to_string),
        signals,
    };
    let fitted = std::time::Instant::now();
    let held_out = cross_validate(&items, &observations, &target, req.folds);
    let after = score_of(
        format!("after: held out in {} folds", req.folds),
        &items,
        &held_out,
        fitted.elapsed().as_secs_f64(),
    );
    let profile = fit_profile(
        &items,
        &observations,
        &target,
        measured(sets, req.folds, &after.by_language),
    );
    ragtester_core::record::write_atomic(
        req.out,
        serde_json::to_string_pretty(&profile)?.as_bytes(),
    )?;
    events.info(format!(
        "wrote the judge profile `{}` ({}) to {}",
        profile.name,
        profile.hash(),
        req.out.display()
    ));
    Ok(Calibration {
        before,
        after,
        profile,
    })
}

/// Held-out agreement before and after, as the text tables `bench oracle --labels` prints.
pub fn render(c: &Calibration) -> String {
    let mut out = crate::bench_labels::render(&c.before);
    out.push_str(&crate::bench_labels::render(&c.after));
    out
}
