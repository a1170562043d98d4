//! Fitting a profile's score models: L2-regularised logistic regression by Newton's method over
//! standardised signals, with the three kinds of labels people give in one objective — a verdict (target 0
//! or 1), a score on any scale (scaled to [0, 1]: a soft target of the same cross-entropy), and a preference
//! between two answers (Bradley–Terry: the difference of their signals, no intercept). Written here rather
//! than taken from linfa-logistic, which fits hard labels of one kind only; the linear solve is nalgebra's.

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

/// One labelled example.
#[derive(Debug, Clone)]
pub enum Example {
    /// One answer's signals and people's judgement of it in [0, 1].
    Point { x: Vec<f64>, y: f64 },
    /// Two answers' signals and how often people prefer the first (1, 0 or 0.5 for a tie).
    Pair { a: Vec<f64>, b: Vec<f64>, y: f64 },
}

/// A fitted model: σ(w · (x − center) / spread + bias).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logistic {
    pub center: Vec<f64>,
    pub spread: Vec<f64>,
    pub weights: Vec<f64>,
    pub bias: f64,
}

impl Logistic {
    /// The model's estimate for one answer's signals, in (0, 1).
    pub fn predict(&self, x: &[f64]) -> f64 {
        sigmoid(self.logit(x))
    }

    /// The cross-entropy of the model's estimate for an example against people's judgement.
    fn cross_entropy(&self, e: &Example) -> f64 {
        let (p, y) = match e {
            Example::Point { x, y } => (self.predict(x), *y),
            Example::Pair { a, b, y } => (sigmoid(self.logit(a) - self.logit(b)), *y),
        };
        let p = p.clamp(1e-9, 1.0 - 1e-9);
        -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
    }

    fn logit(&self, x: &[f64]) -> f64 {
        self.bias
            + x.iter()
                .zip(&self.center)
                .zip(&self.spread)
                .zip(&self.weights)
                .map(|(((x, c), s), w)| w * (x - c) / s)
                .sum::<f64>()
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// How strongly weights are pulled to zero (on standardised signals), when it is not chosen from the data.
pub const L2: f64 = 1.0;

/// The strengths [`fit_tuned`] chooses among: from nearly free weights to weights held close to the
/// prior, which is what a few hundred noisy labels need.
pub const L2_GRID: [f64; 5] = [0.1, 1.0, 10.0, 100.0, 1000.0];

/// Inner folds of [`fit_tuned`]'s choice.
const INNER_FOLDS: usize = 3;

/// Fit with the strength of the pull towards `prior` that predicts best on examples left out: each strength of
/// [`L2_GRID`] is fitted on all but one of [`INNER_FOLDS`] folds of the groups (two answers of one
/// question stay together) and scored by the cross-entropy on the fold left out; the best is fitted on
/// every example. Returns the model and the strength chosen.
pub fn fit_tuned(
    examples: &[Example],
    groups: &[u64],
    width: usize,
    prior: &[f64],
) -> Option<(Logistic, f64)> {
    fit_tuned_weighted(examples, &vec![1.0; examples.len()], groups, width, prior)
}

/// [`fit_tuned`] with a weight per example (parallel to `examples`), in the fit and in the held-out loss:
/// what lets several label sets of very different sizes count alike.
pub fn fit_tuned_weighted(
    examples: &[Example],
    weights: &[f64],
    groups: &[u64],
    width: usize,
    prior: &[f64],
) -> Option<(Logistic, f64)> {
    let fold = |g: u64| (g % INNER_FOLDS as u64) as usize;
    let mut best: Option<(f64, f64)> = None;
    for l2 in L2_GRID {
        let mut loss = 0.0;
        for k in 0..INNER_FOLDS {
            let in_fold = |g: &u64| fold(*g) == k;
            let (train, train_weights): (Vec<Example>, Vec<f64>) = examples
                .iter()
                .zip(weights)
                .zip(groups)
                .filter(|(_, g)| !in_fold(g))
                .map(|((e, w), _)| (e.clone(), *w))
                .unzip();
            let test = examples
                .iter()
                .zip(weights)
                .zip(groups)
                .filter(|(_, g)| in_fold(g));
            let Some(model) = fit_weighted(&train, &train_weights, width, l2, prior) else {
                continue;
            };
            loss += test
                .map(|((e, w), _)| w * model.cross_entropy(e))
                .sum::<f64>();
        }
        if best.is_none_or(|(_, b)| loss < b) {
            best = Some((l2, loss));
        }
    }
    let l2 = best.map_or(L2, |(l2, _)| l2);
    Some((fit_weighted(examples, weights, width, l2, prior)?, l2))
}

/// How far below its floor a choice may order a left-out set: a hundredth of Pearson's r, well inside the
/// noise of any label set here (WiCE's 707 answers give ±0.06), so folds that differ by a few answers do
/// not flip a model between choices.
const FLOOR_TOLERANCE: f64 = 0.01;

/// What [`fit_across_sets`] chose: the combination of every signal, or one signal alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Combination,
    Signal(usize),
}

/// A model that carries what generalises from one label set to another: the combination [`fit_tuned_weighted`]
/// fits, or a model of one signal alone, whichever predicts a set left out best — each set of `sets` (one
/// per example) left out in turn, fitted on the others, how well it orders that set's answers averaged with
/// every set counting alike. A combination fitted on attribution labels of dialogue responses can order long expert
/// answers worse than one of its own inputs; this keeps the input then. With fewer than two sets there is
/// nothing to generalise across, and the combination is fitted as before.
///
/// `floor`, where given, is the signal that measures the target by definition (a criterion's defining
/// signal: the share of the answer's claims its passages support, for faithfulness): a choice that orders
/// any left-out set worse than that signal alone (by more than `FLOOR_TOLERANCE`) is not taken, so a
/// profile may refine the signal but never falls below it on a set it was not fitted on.
pub fn fit_across_sets(
    examples: &[Example],
    weights: &[f64],
    groups: &[u64],
    sets: &[usize],
    width: usize,
    prior: &[f64],
    floor: Option<usize>,
) -> Option<(Logistic, Choice)> {
    let (combination, l2) = fit_tuned_weighted(examples, weights, groups, width, prior)?;
    let mut distinct: Vec<usize> = sets.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        return Some((combination, Choice::Combination));
    }
    let candidates = std::iter::once(Choice::Combination).chain((0..width).map(Choice::Signal));
    let fit_choice = |choice: Choice, keep: &dyn Fn(usize) -> bool| -> Option<Logistic> {
        let (train, train_weights): (Vec<Example>, Vec<f64>) = (0..examples.len())
            .filter(|&i| keep(i))
            .map(|i| (examples[i].clone(), weights[i]))
            .unzip();
        match choice {
            Choice::Combination => fit_weighted(&train, &train_weights, width, l2, prior),
            Choice::Signal(s) => single(&train, &train_weights, width, s, prior[s]),
        }
    };
    // How well a choice orders the answers of each set left out (Pearson's r of its estimate with people's
    // judgement; for a pair, of the difference of its two estimates with the preference), averaged over the
    // sets. Ordering, not calibration: sets label on scales of their own, so one set's estimates can be
    // shifted against another's and still order its answers as people do — which is what is reported.
    let held_out = |choice: Choice| -> Option<Vec<f64>> {
        let mut each = Vec::with_capacity(distinct.len());
        for &set in &distinct {
            let model = fit_choice(choice, &|i| sets[i] != set)?;
            let (estimates, targets): (Vec<f64>, Vec<f64>) = (0..examples.len())
                .filter(|&i| sets[i] == set)
                .map(|i| match &examples[i] {
                    Example::Point { x, y } => (model.logit(x), *y),
                    Example::Pair { a, b, y } => (model.logit(a) - model.logit(b), *y),
                })
                .unzip();
            each.push(crate::agreement::pearson(&estimates, &targets).map_or(0.0, |r| r.estimate));
        }
        Some(each)
    };
    // Every candidate's figures once: the floor's are among them (its signal alone is a candidate).
    let figures: Vec<(Choice, Vec<f64>)> = candidates
        .filter_map(|choice| Some((choice, held_out(choice)?)))
        .collect();
    let floor_figures = floor.and_then(|s| {
        figures
            .iter()
            .find(|(c, _)| *c == Choice::Signal(s))
            .map(|(_, each)| each)
    });
    let at_least_the_floor = |each: &[f64]| {
        floor_figures.is_none_or(|f| each.iter().zip(f).all(|(r, f)| *r >= f - FLOOR_TOLERANCE))
    };
    let mut best: Option<(Choice, f64)> = None;
    for (choice, each) in &figures {
        if !at_least_the_floor(each) {
            continue;
        }
        let r = each.iter().sum::<f64>() / each.len() as f64;
        if best.is_none_or(|(_, b)| r > b) {
            best = Some((*choice, r));
        }
    }
    match best.map(|(c, _)| c) {
        Some(Choice::Signal(s)) => {
            let model = single(examples, weights, width, s, prior[s])?;
            Some((model, Choice::Signal(s)))
        }
        _ => Some((combination, Choice::Combination)),
    }
}

/// A model of signal `s` alone over `width` signals: fitted on that signal, every other weight 0.
fn single(
    examples: &[Example],
    weights: &[f64],
    width: usize,
    s: usize,
    prior: f64,
) -> Option<Logistic> {
    let only = |x: &[f64]| vec![x[s]];
    let projected: Vec<Example> = examples
        .iter()
        .map(|e| match e {
            Example::Point { x, y } => Example::Point { x: only(x), y: *y },
            Example::Pair { a, b, y } => Example::Pair {
                a: only(a),
                b: only(b),
                y: *y,
            },
        })
        .collect();
    let one = fit_weighted(&projected, weights, 1, L2, &[prior])?;
    let mut model = Logistic {
        center: vec![0.0; width],
        spread: vec![1.0; width],
        weights: vec![0.0; width],
        bias: one.bias,
    };
    model.center[s] = one.center[0];
    model.spread[s] = one.spread[0];
    model.weights[s] = one.weights[0];
    Some(model)
}

const NEWTON_STEPS: usize = 50;

/// Fit a model to examples whose signal vectors all have `width` entries, its weights pulled towards
/// `prior` (weights on the raw signals; zeros for none) with strength `l2`. None without examples.
pub fn fit(examples: &[Example], width: usize, l2: f64, prior: &[f64]) -> Option<Logistic> {
    fit_weighted(examples, &vec![1.0; examples.len()], width, l2, prior)
}

/// [`fit`] with a weight per example (parallel to `examples`): each example's share of the likelihood.
pub fn fit_weighted(
    examples: &[Example],
    weights: &[f64],
    width: usize,
    l2: f64,
    prior: &[f64],
) -> Option<Logistic> {
    if examples.is_empty() || prior.len() != width || weights.len() != examples.len() {
        return None;
    }
    let (center, spread) = standardisation(examples, width);
    // The prior's weights on the standardised signals, the intercept free.
    let anchor = DVector::from_iterator(
        width + 1,
        prior.iter().zip(&spread).map(|(w, s)| w * s).chain([0.0]),
    );
    let z = |x: &[f64]| -> DVector<f64> {
        DVector::from_iterator(
            width + 1,
            x.iter()
                .zip(&center)
                .zip(&spread)
                .map(|((x, c), s)| (x - c) / s)
                .chain([1.0]),
        )
    };
    // Each example as (design row, target): a pair's row is the difference, without the intercept.
    let rows: Vec<(DVector<f64>, f64)> = examples
        .iter()
        .map(|e| match e {
            Example::Point { x, y } => (z(x), *y),
            Example::Pair { a, b, y } => {
                let mut d = z(a) - z(b);
                d[width] = 0.0;
                (d, *y)
            }
        })
        .collect();
    let mut w = DVector::<f64>::zeros(width + 1);
    let mut penalty = DMatrix::<f64>::identity(width + 1, width + 1) * l2;
    // The intercept is barely held: it only places the scale.
    penalty[(width, width)] = 1e-6;
    for _ in 0..NEWTON_STEPS {
        let mut gradient = &penalty * (&w - &anchor);
        let mut hessian = penalty.clone();
        for ((row, y), weight) in rows.iter().zip(weights) {
            let p = sigmoid(row.dot(&w));
            gradient.axpy(weight * (p - y), row, 1.0);
            hessian.ger(weight * p * (1.0 - p), row, row, 1.0);
        }
        let step = hessian.cholesky()?.solve(&gradient);
        w -= &step;
        if step.amax() < 1e-9 {
            break;
        }
    }
    Some(Logistic {
        center,
        spread,
        weights: w.rows(0, width).iter().copied().collect(),
        bias: w[width],
    })
}

/// Each signal's mean and standard deviation over every answer the examples hold (a spread of 1 for a
/// signal that does not vary, so it contributes nothing).
fn standardisation(examples: &[Example], width: usize) -> (Vec<f64>, Vec<f64>) {
    let answers: Vec<&Vec<f64>> = examples
        .iter()
        .flat_map(|e| match e {
            Example::Point { x, .. } => vec![x],
            Example::Pair { a, b, .. } => vec![a, b],
        })
        .collect();
    let n = answers.len() as f64;
    let center: Vec<f64> = (0..width)
        .map(|i| answers.iter().map(|x| x[i]).sum::<f64>() / n)
        .collect();
    let spread = (0..width)
        .map(|i| {
            let var = answers
                .iter()
                .map(|x| (x[i] - center[i]).powi(2))
                .sum::<f64>()
                / n;
            if var.sqrt() > 1e-9 { var.sqrt() } else { 1.0 }
        })
        .collect();
    (center, spread)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_pairs_teach_the_same_direction() {
        // People's judgement follows the first signal; the second is noise.
        let mut rng = fastrand::Rng::with_seed(7);
        let mut examples = Vec::new();
        for _ in 0..200 {
            let (good, noise) = (rng.f64(), rng.f64());
            examples.push(Example::Point {
                x: vec![good, noise],
                y: f64::from(u8::from(good > 0.5)),
            });
            let (other, noise2) = (rng.f64(), rng.f64());
            examples.push(Example::Pair {
                a: vec![good, noise],
                b: vec![other, noise2],
                y: f64::from(u8::from(good > other)),
            });
        }
        let model = fit(&examples, 2, L2, &[0.0, 0.0]).unwrap();
        assert!(model.weights[0] > 2.0, "{model:?}");
        assert!(model.weights[1].abs() < 0.5, "{model:?}");
        assert!(model.predict(&[0.9, 0.1]) > 0.8);
        assert!(model.predict(&[0.1, 0.9]) < 0.2);
    }

    #[test]
    fn a_soft_target_is_matched_not_pushed_to_the_ends() {
        let examples: Vec<Example> = (0..100)
            .map(|_| Example::Point {
                x: vec![0.0],
                y: 0.75,
            })
            .collect();
        let model = fit(&examples, 1, L2, &[0.0]).unwrap();
        assert!((model.predict(&[0.0]) - 0.75).abs() < 1e-6, "{model:?}");
    }

    #[test]
    fn weights_make_a_small_set_count_as_much_as_a_large_one() {
        // A large set says the answer is good (0.9), a small one bad (0.1): unweighted, the large one wins;
        // each set weighted to the same total, the estimate lies between them.
        let mut examples = vec![
            Example::Point {
                x: vec![0.0],
                y: 0.9
            };
            900
        ];
        examples.extend(vec![
            Example::Point {
                x: vec![0.0],
                y: 0.1
            };
            100
        ]);
        let plain = fit(&examples, 1, L2, &[0.0]).unwrap();
        assert!((plain.predict(&[0.0]) - 0.82).abs() < 1e-3, "{plain:?}");
        let weights: Vec<f64> = (0..1000)
            .map(|i| {
                if i < 900 {
                    1000.0 / 1800.0
                } else {
                    1000.0 / 200.0
                }
            })
            .collect();
        let balanced = fit_weighted(&examples, &weights, 1, L2, &[0.0]).unwrap();
        assert!(
            (balanced.predict(&[0.0]) - 0.5).abs() < 1e-3,
            "{balanced:?}"
        );
    }

    #[test]
    fn a_signal_that_holds_in_every_set_beats_a_combination_that_holds_in_one() {
        // In each of three sets people follow the first signal. The second equals their label in the first
        // set and runs against it in the other two: a combination fitted on the first set alone would lean
        // on it. Left-out sets show that the first signal alone carries over.
        let mut rng = fastrand::Rng::with_seed(5);
        let (mut examples, mut sets) = (Vec::new(), Vec::new());
        for set in 0..3usize {
            for _ in 0..150 {
                let a = rng.f64();
                let noise = rng.f64() * 0.2;
                let y = f64::from(u8::from(a + noise > 0.6));
                let b = if set == 0 { y } else { 1.0 - y * rng.f64() };
                examples.push(Example::Point { x: vec![a, b], y });
                sets.push(set);
            }
        }
        let weights = vec![1.0; examples.len()];
        let groups: Vec<u64> = (0..examples.len() as u64).collect();
        let (model, choice) =
            fit_across_sets(&examples, &weights, &groups, &sets, 2, &[0.0, 0.0], None).unwrap();
        assert_eq!(choice, Choice::Signal(0), "{model:?}");
        assert_eq!(model.weights[1], 0.0);
        assert!(model.predict(&[0.9, 0.0]) > model.predict(&[0.1, 1.0]));
        // One set: nothing to generalise across, the combination as before.
        let (_, one) = fit_across_sets(
            &examples,
            &weights,
            &groups,
            &vec![0; examples.len()],
            2,
            &[0.0, 0.0],
            None,
        )
        .unwrap();
        assert_eq!(one, Choice::Combination);
    }

    #[test]
    fn no_choice_falls_below_the_defining_signal_on_a_set_left_out() {
        // People follow the first signal closely in two sets and not at all in the third, where the
        // second signal (the defining one) is exactly their label; elsewhere the second is weak. On
        // average the first signal alone orders best, but it orders the third set worse than the floor.
        let mut rng = fastrand::Rng::with_seed(9);
        let (mut examples, mut sets) = (Vec::new(), Vec::new());
        for set in 0..3usize {
            for _ in 0..200 {
                let y = f64::from(u8::from(rng.bool()));
                let a = if set == 2 {
                    rng.f64()
                } else {
                    0.8 * y + 0.2 * rng.f64()
                };
                let b = if set == 2 {
                    y
                } else {
                    0.2 * y + 0.8 * rng.f64()
                };
                examples.push(Example::Point { x: vec![a, b], y });
                sets.push(set);
            }
        }
        let weights = vec![1.0; examples.len()];
        let groups: Vec<u64> = (0..examples.len() as u64).collect();
        let fit =
            |floor| fit_across_sets(&examples, &weights, &groups, &sets, 2, &[0.0, 0.0], floor);
        let (_, free) = fit(None).unwrap();
        assert_eq!(free, Choice::Signal(0));
        let (model, floored) = fit(Some(1)).unwrap();
        assert_ne!(floored, Choice::Signal(0), "{model:?}");
        assert!(model.predict(&[0.5, 1.0]) > model.predict(&[0.5, 0.0]));
    }

    #[test]
    fn clear_labels_overrule_the_prior() {
        let mut rng = fastrand::Rng::with_seed(3);
        // People follow the second signal; the prior trusts the first.
        let (many, groups): (Vec<Example>, Vec<u64>) = (0..600)
            .map(|i| {
                let (a, b) = (rng.f64(), rng.f64());
                let y = f64::from(u8::from(b > 0.5));
                (Example::Point { x: vec![a, b], y }, i as u64)
            })
            .unzip();
        let prior = [4.0, 0.0];
        let (learnt, l2) = fit_tuned(&many, &groups, 2, &prior).unwrap();
        assert!(L2_GRID.contains(&l2));
        assert!(
            learnt.weights[1] > 2.0 * learnt.weights[0].abs(),
            "{learnt:?} at {l2}"
        );
        // Held to the prior as hard as the grid allows, the first signal keeps its weight.
        let held = fit(&many, 2, 1000.0, &prior).unwrap();
        assert!(held.weights[0] > 0.9 * 4.0 * held.spread[0], "{held:?}");
    }
}
