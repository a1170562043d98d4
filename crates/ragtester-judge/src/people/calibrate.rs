//! Learning a judge profile from a team's labels (`ragtester calibrate`): each labelled answer's signals
//! (`signals.rs`) against what people said of it, fitted per language and pooled (`fit.rs`), and measured by
//! k-fold cross-validation — every figure on answers the model was not fitted on, folds drawn by question
//! so two answers to one question never sit on both sides. The profile keeps the held-out figures, which
//! is what a report later states beside the verdicts.

use crate::agreement::{Agreement, HumanLabel, JudgedItem, LabelledItem};
use crate::fit::{Example, Logistic, fit_across_sets};
use crate::profile::{JudgeProfile, POOLED, PROFILE_FORMAT, ScoreModels};
use crate::signals::Signals;
use ragtester_core::oracle::{AgreementFigure, LabelSet, MeasuredAgreement};
use std::collections::{BTreeMap, HashMap};

/// What a profile starts from before any label (weights on raw signals; every other signal 0): the offline
/// judge's graded opinion — its verdict, its criteria and claims against the reference — with how far the
/// answer's words and negation agree with the reference's, which carry most of what separates a reworded
/// correct answer from a wrong one (docs/benchmarks.md). Calibration pulls each model towards it, as
/// strongly as held-out labels say: a few noisy labels keep it, many clear ones overrule it.
pub const PRIOR: &[(&str, f64)] = &[
    ("passed", 1.0),
    ("criteria_mean", 0.5),
    ("claim_precision", 0.25),
    ("claim_recall", 0.25),
    ("reference_term_f1", 2.0),
    ("negation_agrees", 2.0),
];

/// The prior's weight for each of a profile's signals.
fn prior(profile: &JudgeProfile) -> Vec<f64> {
    profile
        .signals
        .iter()
        .map(|s| PRIOR.iter().find(|(n, _)| n == s).map_or(0.0, |(_, w)| *w))
        .collect()
}

/// A language gets models of its own from this many labelled items; below it, the pooled model serves.
pub const MIN_ITEMS_PER_LANGUAGE: usize = 40;

/// One labelled item as the judge saw it: its verdict and the signals of its answer (and of the second
/// answer of a preference).
#[derive(Debug, Clone)]
pub struct Observation {
    pub verdict: Option<bool>,
    pub first: Signals,
    pub second: Option<Signals>,
}

/// What a profile is fitted for.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    pub judge: String,
    pub meaning: Option<String>,
    pub signals: Vec<String>,
}

/// People's scores scaled to [0, 1] within each label set (a 1–5 rating in one file and a share of correct
/// claims in another become one scale): by set, the least and greatest score, overall and per criterion.
struct Scales(HashMap<(String, String), (f64, f64)>);

impl Scales {
    fn of(items: &[LabelledItem]) -> Self {
        let mut ranges: HashMap<(String, String), (f64, f64)> = HashMap::new();
        let mut see = |source: &str, what: &str, x: f64| {
            let r = ranges
                .entry((source.to_string(), what.to_string()))
                .or_insert((x, x));
            *r = (r.0.min(x), r.1.max(x));
        };
        for item in items {
            if let HumanLabel::Score(s) = item.label {
                see(&item.set, "", s);
            }
            for (name, s) in &item.criteria {
                see(&item.set, name, *s);
            }
        }
        Self(ranges)
    }

    fn scaled(&self, source: &str, what: &str, x: f64) -> Option<f64> {
        let (low, high) = self.0.get(&(source.to_string(), what.to_string()))?;
        (high > low).then(|| (x - low) / (high - low))
    }
}

/// The examples for the overall model, or for one criterion, from the items at `indices`, each with its
/// question's group and its item.
fn examples(
    items: &[LabelledItem],
    seen: &[Observation],
    indices: &[usize],
    scales: &Scales,
    profile: &JudgeProfile,
    criterion: Option<&str>,
) -> Vec<(Example, (u64, usize))> {
    let vector = |s: &Signals| profile.vector(s);
    indices
        .iter()
        .filter_map(|&i| {
            let (item, o) = (&items[i], &seen[i]);
            let x = vector(&o.first)?;
            let group = question_group(&item.question);
            if let Some(name) = criterion {
                let y = scales.scaled(&item.set, name, *item.criteria.get(name)?)?;
                return Some((Example::Point { x, y }, (group, i)));
            }
            let example = match item.label {
                HumanLabel::Verdict(pass) => Some(Example::Point {
                    x,
                    y: f64::from(u8::from(pass)),
                }),
                HumanLabel::Score(s) => Some(Example::Point {
                    x,
                    y: scales.scaled(&item.set, "", s)?,
                }),
                HumanLabel::Preference(p) => Some(Example::Pair {
                    a: x,
                    b: vector(o.second.as_ref()?)?,
                    y: (p + 1.0) / 2.0,
                }),
                HumanLabel::Criteria => None,
            }?;
            Some((example, (group, i)))
        })
        .collect()
}

/// A weight per example (each placed by its question group and its item) that makes every label set count
/// alike, whatever its size: a set of 4,700 short dialogue responses does not drown 460 long answers. The
/// weights average 1, so the pull towards the prior keeps its strength.
fn set_weights(items: &[LabelledItem], placed: &[(u64, usize)]) -> Vec<f64> {
    let mut per_set: HashMap<&str, usize> = HashMap::new();
    for (_, i) in placed {
        *per_set.entry(items[*i].set.as_str()).or_default() += 1;
    }
    let (n, sets) = (placed.len() as f64, per_set.len() as f64);
    placed
        .iter()
        .map(|(_, i)| n / (sets * per_set[items[*i].set.as_str()] as f64))
        .collect()
}

/// The label set of each example, as a number.
fn set_indices(items: &[LabelledItem], placed: &[(u64, usize)]) -> Vec<usize> {
    let mut names: Vec<&str> = placed.iter().map(|(_, i)| items[*i].set.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    placed
        .iter()
        .map(|(_, i)| names.binary_search(&items[*i].set.as_str()).unwrap_or(0))
        .collect()
}

/// A stable number for a question: the group two answers to it share in the inner folds.
fn question_group(question: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    question.hash(&mut h);
    h.finish()
}

/// The criteria people scored anywhere in the items.
fn scored_criteria(items: &[LabelledItem]) -> Vec<String> {
    let mut names: Vec<String> = items
        .iter()
        .flat_map(|i| i.criteria.keys().cloned())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Fit a profile's models on the items at `indices`: pooled, and per language with enough items.
fn fit_models(
    items: &[LabelledItem],
    seen: &[Observation],
    indices: &[usize],
    profile: &JudgeProfile,
) -> BTreeMap<String, ScoreModels> {
    let scales = Scales::of(items);
    let width = profile.signals.len();
    let criteria = scored_criteria(items);
    let prior = prior(profile);
    let models_of = |subset: &[usize]| -> ScoreModels {
        let one = |criterion: Option<&str>| -> Option<Logistic> {
            let (examples, placed): (Vec<Example>, Vec<(u64, usize)>) =
                examples(items, seen, subset, &scales, profile, criterion)
                    .into_iter()
                    .unzip();
            let groups: Vec<u64> = placed.iter().map(|(g, _)| *g).collect();
            let weights = set_weights(items, &placed);
            let sets = set_indices(items, &placed);
            let floor = criterion
                .and_then(crate::signals::defining_signal)
                .and_then(|d| profile.signals.iter().position(|s| s == d));
            fit_across_sets(&examples, &weights, &groups, &sets, width, &prior, floor)
                .map(|(model, _)| model)
        };
        ScoreModels {
            overall: one(None),
            criteria: criteria
                .iter()
                .filter_map(|c| Some((c.clone(), one(Some(c))?)))
                .collect(),
        }
    };
    let mut by_language: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for &i in indices {
        by_language
            .entry(items[i].language.as_str())
            .or_default()
            .push(i);
    }
    let mut models = BTreeMap::from([(POOLED.to_string(), models_of(indices))]);
    for (language, subset) in by_language {
        if subset.len() >= MIN_ITEMS_PER_LANGUAGE {
            models.insert(language.to_string(), models_of(&subset));
        }
    }
    models
}

/// An empty profile for a target.
fn blank(target: &Target) -> JudgeProfile {
    JudgeProfile {
        format: PROFILE_FORMAT,
        name: target.name.clone(),
        judge: target.judge.clone(),
        meaning: target.meaning.clone(),
        signals: target.signals.clone(),
        models: BTreeMap::new(),
        measured: None,
    }
}

/// Fold of each item: its question's place in a seeded shuffle of the questions, dealt round.
fn folds_of(items: &[LabelledItem], folds: usize) -> Vec<usize> {
    let mut questions: Vec<&str> = items.iter().map(|i| i.question.as_str()).collect();
    questions.sort_unstable();
    questions.dedup();
    fastrand::Rng::with_seed(2026).shuffle(&mut questions);
    let fold: HashMap<&str, usize> = questions
        .iter()
        .enumerate()
        .map(|(n, q)| (*q, n % folds.max(1)))
        .collect();
    items.iter().map(|i| fold[i.question.as_str()]).collect()
}

/// What a profile makes of one item: the judge's verdict, the overall score of its answer, the difference
/// of its two answers' scores for a preference, its criterion scores.
pub fn judged_by(profile: &JudgeProfile, item: &LabelledItem, seen: &Observation) -> JudgedItem {
    let language = item.language.as_str();
    let score = profile.overall(language, &seen.first);
    let preference = match (&seen.second, score) {
        (Some(second), Some(a)) => profile.overall(language, second).map(|b| a - b),
        _ => None,
    };
    JudgedItem {
        verdict: seen.verdict,
        score,
        preference,
        criteria: profile.criteria(language, &seen.first),
        rule_failed: false,
    }
}

/// Every item judged by a profile fitted without its fold: the held-out judgements, in item order.
pub fn cross_validate(
    items: &[LabelledItem],
    seen: &[Observation],
    target: &Target,
    folds: usize,
) -> Vec<JudgedItem> {
    let fold = folds_of(items, folds);
    let mut out: Vec<Option<JudgedItem>> = vec![None; items.len()];
    for k in 0..folds.max(1) {
        let train: Vec<usize> = (0..items.len()).filter(|&i| fold[i] != k).collect();
        let mut profile = blank(target);
        profile.models = fit_models(items, seen, &train, &profile);
        for i in (0..items.len()).filter(|&i| fold[i] == k) {
            out[i] = Some(judged_by(&profile, &items[i], &seen[i]));
        }
    }
    out.into_iter()
        .map(|j| j.expect("every item lies in one fold"))
        .collect()
}

/// The profile fitted on every item, carrying the held-out agreement measured for it.
pub fn fit_profile(
    items: &[LabelledItem],
    seen: &[Observation],
    target: &Target,
    measured: MeasuredAgreement,
) -> JudgeProfile {
    let mut profile = blank(target);
    let all: Vec<usize> = (0..items.len()).collect();
    profile.models = fit_models(items, seen, &all, &profile);
    profile.measured = Some(measured);
    profile
}

/// Held-out agreement per language as a profile records it: κ on verdicts, Pearson's r on scores,
/// preferences and each scored criterion — each with the items it stands on.
pub fn measured(
    sets: Vec<LabelSet>,
    folds: usize,
    by_language: &BTreeMap<String, Agreement>,
) -> MeasuredAgreement {
    let figures = |a: &Agreement| {
        let mut out = Vec::new();
        if let Some(k) = a.kappa {
            out.push(AgreementFigure {
                measure: "verdicts kappa".into(),
                value: k.estimate,
                n: a.verdicts.true_failures
                    + a.verdicts.false_failures
                    + a.verdicts.missed_failures
                    + a.verdicts.true_passes,
            });
        }
        let mut correlation = |measure: String, c: &Option<crate::agreement::Correlation>| {
            if let Some(c) = c {
                out.push(AgreementFigure {
                    measure,
                    value: c.estimate,
                    n: c.n,
                });
            }
        };
        correlation("verdicts pearson".into(), &a.verdict_pearson);
        correlation("scores pearson".into(), &a.score_pearson);
        correlation("preferences pearson".into(), &a.preference_pearson);
        for (name, c) in &a.criteria {
            correlation(format!("{name} pearson"), &Some(*c));
        }
        out
    };
    MeasuredAgreement {
        labels: sets,
        folds,
        by_language: by_language
            .iter()
            .map(|(l, a)| (l.clone(), figures(a)))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agreement::agreement;
    use crate::signals::{LEXICAL, Signals};

    /// Items whose people's faithfulness score follows one signal (grounding in the passages) and whose
    /// overall score follows another (agreement with the reference), in two languages.
    fn items_and_observations() -> (Vec<LabelledItem>, Vec<Observation>) {
        let mut rng = fastrand::Rng::with_seed(11);
        let at = |name: &str| LEXICAL.iter().position(|n| *n == name).unwrap();
        let (mut items, mut seen) = (Vec::new(), Vec::new());
        for i in 0..240 {
            let (grounded, agrees) = (rng.f64(), rng.f64());
            let mut lexical = vec![0.5; LEXICAL.len()];
            lexical[at("context_support")] = grounded;
            lexical[at("reference_term_f1")] = agrees;
            items.push(LabelledItem {
                place: format!("line {i}"),
                id: i.to_string(),
                source: "ours".into(),
                set: "ours.jsonl".into(),
                language: if i % 2 == 0 { "en" } else { "zh" }.into(),
                question: format!("question {}", i / 2),
                reference: "r".into(),
                contexts: Vec::new(),
                answer: "a".into(),
                answer_b: None,
                label: HumanLabel::Score(1.0 + 4.0 * agrees),
                criteria: BTreeMap::from([("faithfulness".to_string(), 1.0 + 4.0 * grounded)]),
            });
            seen.push(Observation {
                verdict: Some(true),
                first: Signals {
                    lexical,
                    semantic: Vec::new(),
                },
                second: None,
            });
        }
        (items, seen)
    }

    #[test]
    fn the_defining_signal_of_faithfulness_is_measured_beside_the_best_one() {
        let (items, mut seen) = items_and_observations();
        let at = |name: &str| LEXICAL.iter().position(|n| *n == name).unwrap();
        // The claim share follows people's faithfulness loosely; grounding follows it exactly.
        for (i, o) in seen.iter_mut().enumerate() {
            let grounded = o.first.lexical[at("context_support")];
            o.first.lexical[at("claim_faithfulness")] =
                0.5 * grounded + 0.5 * ((i * 7 % 10) as f64 / 10.0);
        }
        let floors = defining_signals(&items, &seen);
        let floor = &floors["faithfulness"];
        assert_eq!(floor.signal, "claim_faithfulness");
        assert!(
            (0.3..0.99).contains(&floor.correlation.estimate),
            "{floor:?}"
        );
        assert!(
            !floors.contains_key("completeness"),
            "people scored no completeness"
        );
        let best = &best_signals(&items, &seen)["faithfulness"];
        assert_eq!(best.signal, "context_support");
        assert!(best.correlation.estimate > floor.correlation.estimate);
    }

    #[test]
    fn cross_validation_holds_out_and_the_profile_scores_each_criterion_people_scored() {
        let (items, seen) = items_and_observations();
        let target = Target {
            name: "ours".into(),
            judge: "offline".into(),
            meaning: None,
            signals: LEXICAL.iter().map(|s| s.to_string()).collect(),
        };
        // Two answers to one question never sit on both sides of a fold.
        let folds = folds_of(&items, 4);
        for pair in folds.chunks(2) {
            assert_eq!(pair[0], pair[1]);
        }
        let held_out = cross_validate(&items, &seen, &target, 4);
        let (all, by_language) = agreement(&items, &held_out);
        assert!(all.score_pearson.unwrap().estimate > 0.95, "{all:?}");
        assert!(all.criteria["faithfulness"].estimate > 0.95, "{all:?}");
        let measured = measured(
            vec![LabelSet {
                name: "ours.jsonl".into(),
                items: items.len(),
            }],
            4,
            &by_language,
        );
        assert!(measured.best("zh").unwrap().value > 0.95);
        let profile = fit_profile(&items, &seen, &target, measured);
        for language in [POOLED, "en", "zh"] {
            assert!(
                profile.models[language]
                    .criteria
                    .contains_key("faithfulness")
            );
        }
        // Applied to a verdict, the modelled criterion is rescored and its rating follows the new score.
        let mut verdict = ragtester_core::Verdict {
            schema_version: 2,
            case_id: "c".into(),
            config_id: "k".into(),
            judge: "offline".into(),
            status: ragtester_core::VerdictStatus::Ok,
            criteria: Some(ragtester_core::Criteria {
                faithfulness: ragtester_core::Criterion::scored(0.9, "grounded"),
                relevance: ragtester_core::Criterion::scored(0.9, "r"),
                completeness: ragtester_core::Criterion::scored(0.9, "c"),
                clarity: ragtester_core::Criterion::scored(0.9, "c"),
                keyword_match: ragtester_core::Criterion::rated(
                    ragtester_core::Rating::NotApplicable,
                    "none",
                ),
            }),
            criteria_mean: Some(0.9),
            rubric: None,
            metrics: Default::default(),
            passed: Some(true),
            error: None,
            sample: 0,
            notes: Vec::new(),
            rule_failure: None,
            overrode_judge: None,
            claims: None,
            attribution: None,
            score: None,
            profile: None,
            row_id: None,
        };
        let mut ungrounded = seen[0].first.clone();
        ungrounded.lexical[LEXICAL
            .iter()
            .position(|n| *n == "context_support")
            .unwrap()] = 0.0;
        assert!(profile.apply("en", &ungrounded, &mut verdict));
        let faithfulness = &verdict.criteria.as_ref().unwrap().faithfulness;
        assert!(faithfulness.score.unwrap() < ragtester_core::Rating::PARTLY_FROM);
        assert_eq!(faithfulness.rating, ragtester_core::Rating::False);
        assert_eq!(verdict.profile.as_deref(), Some(profile.hash().as_str()));
    }
}

/// The single signal that follows people best on one figure of agreement, and how well (signed: a signal
/// that falls as people's ratings rise, a hallucination share, has a negative estimate).
#[derive(Debug, Clone, serde::Serialize)]
pub struct BestSignal {
    pub signal: String,
    pub correlation: crate::agreement::Correlation,
}

/// For each figure people's labels give — `scores`, `verdicts` (point-biserial), `preferences` and each
/// criterion people scored — the one signal of the observations that correlates with people most strongly
/// (by the size of Pearson's r): what a profile that combines signals must beat on these items.
pub fn best_signals(
    items: &[LabelledItem],
    observations: &[Observation],
) -> BTreeMap<String, BestSignal> {
    let mut names: Vec<&str> = crate::signals::LEXICAL.to_vec();
    if observations.iter().any(|o| !o.first.semantic.is_empty()) {
        names.extend(crate::signals::SEMANTIC.iter().copied());
    }
    let mut best: BTreeMap<String, BestSignal> = BTreeMap::new();
    for name in names {
        for (figure, correlation) in signal_figures(items, observations, name) {
            let stronger = best
                .get(&figure)
                .is_none_or(|b| correlation.estimate.abs() > b.correlation.estimate.abs());
            if stronger {
                best.insert(
                    figure,
                    BestSignal {
                        signal: name.to_string(),
                        correlation,
                    },
                );
            }
        }
    }
    best
}

/// For each criterion people rated that has a defining signal (`signals::DEFINING`), how well that signal
/// alone follows them: the floor a judge's criterion is held to.
pub fn defining_signals(
    items: &[LabelledItem],
    observations: &[Observation],
) -> BTreeMap<String, BestSignal> {
    crate::signals::DEFINING
        .iter()
        .filter_map(|(criterion, signal)| {
            let (_, correlation) = signal_figures(items, observations, signal)
                .into_iter()
                .find(|(figure, _)| figure == criterion)?;
            Some((
                criterion.to_string(),
                BestSignal {
                    signal: signal.to_string(),
                    correlation,
                },
            ))
        })
        .collect()
}

/// How one signal alone follows people, per figure of agreement they give (scores, verdicts,
/// preferences, each criterion), leaving out figures it cannot be measured on.
fn signal_figures(
    items: &[LabelledItem],
    observations: &[Observation],
    name: &str,
) -> Vec<(String, crate::agreement::Correlation)> {
    let judged: Vec<JudgedItem> = items
        .iter()
        .zip(observations)
        .map(|(item, o)| {
            let value = o.first.get(name);
            JudgedItem {
                rule_failed: false,
                verdict: o.verdict,
                score: value,
                preference: value
                    .zip(o.second.as_ref().and_then(|s| s.get(name)))
                    .map(|(a, b)| a - b),
                criteria: item
                    .criteria
                    .keys()
                    .filter_map(|k| Some((k.clone(), value?)))
                    .collect(),
            }
        })
        .collect();
    let (overall, _) = crate::agreement::agreement(items, &judged);
    [
        ("scores".to_string(), overall.score_pearson),
        ("verdicts".to_string(), overall.verdict_pearson),
        ("preferences".to_string(), overall.preference_pearson),
    ]
    .into_iter()
    .chain(overall.criteria.iter().map(|(k, c)| (k.clone(), Some(*c))))
    .filter_map(|(figure, c)| Some((figure, c.filter(|c| c.estimate.is_finite())?)))
    .collect()
}
