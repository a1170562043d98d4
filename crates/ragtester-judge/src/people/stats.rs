//! The numbers that say how far a judge can be trusted: agreement between judges (percent, Cohen's κ,
//! Fleiss' κ), intervals (Wilson for proportions, Student's t for means of repeated samples, percentile
//! bootstrap for paired differences), McNemar's exact test for paired pass/fail, and Cochran's sample size
//! for audits. Quantiles and the binomial come from statrs. Undefined figures are `None`, never NaN.

use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal, StudentsT};

pub use ragtester_core::oracle::Interval;

/// The standard normal quantile for a two-sided `confidence` (0.95 → 1.96).
pub fn z_for(confidence: f64) -> f64 {
    let normal = Normal::new(0.0, 1.0).expect("the standard normal is valid");
    normal.inverse_cdf(0.5 + confidence / 2.0)
}

/// Cohen's κ of two raters' binary labels over the same items; None when chance agreement is total.
pub fn cohen_kappa(a: &[bool], b: &[bool]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "the raters label the same items");
    let n = a.len() as f64;
    if a.is_empty() {
        return None;
    }
    let observed = a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / n;
    let pa = a.iter().filter(|x| **x).count() as f64 / n;
    let pb = b.iter().filter(|x| **x).count() as f64 / n;
    let chance = pa * pb + (1.0 - pa) * (1.0 - pb);
    (chance < 1.0).then(|| (observed - chance) / (1.0 - chance))
}

/// Share of items two raters label alike.
pub fn percent_agreement(a: &[bool], b: &[bool]) -> Option<f64> {
    (!a.is_empty()).then(|| a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64)
}

/// Fleiss' κ from per-item category counts (every item rated by the same number of raters, at least two).
pub fn fleiss_kappa(counts: &[Vec<usize>]) -> Option<f64> {
    let raters: usize = counts.first()?.iter().sum();
    if raters < 2 || counts.iter().any(|row| row.iter().sum::<usize>() != raters) {
        return None;
    }
    let items = counts.len() as f64;
    let n = raters as f64;
    let categories = counts[0].len();
    let p_bar = counts
        .iter()
        .map(|row| (row.iter().map(|&c| (c * c) as f64).sum::<f64>() - n) / (n * (n - 1.0)))
        .sum::<f64>()
        / items;
    let p_e: f64 = (0..categories)
        .map(|j| {
            let p = counts.iter().map(|row| row[j] as f64).sum::<f64>() / (items * n);
            p * p
        })
        .sum();
    (p_e < 1.0).then(|| (p_bar - p_e) / (1.0 - p_e))
}

/// Wilson score interval of `successes` out of `n`.
pub fn wilson(successes: usize, n: usize, confidence: f64) -> Option<Interval> {
    if n == 0 {
        return None;
    }
    let (n, p) = (n as f64, successes as f64 / n as f64);
    let z = z_for(confidence);
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Some(Interval {
        estimate: p,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// Mean of repeated measurements with Student's t interval; None for fewer than two.
pub fn mean_interval(values: &[f64], confidence: f64) -> Option<Interval> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let t = StudentsT::new(0.0, 1.0, n - 1.0)
        .expect("degrees of freedom are positive")
        .inverse_cdf(0.5 + confidence / 2.0);
    let half = t * (variance / n).sqrt();
    Some(Interval {
        estimate: mean,
        low: mean - half,
        high: mean + half,
    })
}

/// McNemar's exact two-sided p-value from the discordant pairs: `b` passed only before, `c` only after.
pub fn mcnemar_exact(b: usize, c: usize) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let binomial = Binomial::new(0.5, n as u64).expect("p = 0.5 is valid");
    (2.0 * binomial.cdf(b.min(c) as u64)).min(1.0)
}

/// Fisher's exact test, one-sided: the probability that a group of `n` trials holds `k` or more of all
/// `k + j` successes when `n` and `m` trials share them at random — small when the first group passed
/// more often than the second by more than chance (5 of 5 against 1 of 5: 0.024). 1.0 without trials.
pub fn fisher_greater(k: usize, n: usize, j: usize, m: usize) -> f64 {
    use statrs::distribution::Hypergeometric;
    let (population, successes) = ((n + m) as u64, (k + j) as u64);
    if n == 0 || m == 0 || k > n || j > m {
        return 1.0;
    }
    let Ok(h) = Hypergeometric::new(population, successes, n as u64) else {
        return 1.0;
    };
    if k == 0 {
        return 1.0;
    }
    // P(X >= k) = 1 - P(X <= k - 1); sf is the upper tail above its argument.
    h.sf(k as u64 - 1).clamp(0.0, 1.0)
}

/// Percentile bootstrap interval of the mean of paired differences, seeded so reports repeat.
pub fn bootstrap_mean(
    differences: &[f64],
    confidence: f64,
    resamples: usize,
    seed: u64,
) -> Option<Interval> {
    if differences.len() < 2 || resamples == 0 {
        return None;
    }
    let n = differences.len();
    let estimate = differences.iter().sum::<f64>() / n as f64;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut means: Vec<f64> = (0..resamples)
        .map(|_| (0..n).map(|_| differences[rng.usize(..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    let tail = (1.0 - confidence) / 2.0;
    Some(Interval {
        estimate,
        low: at(tail),
        high: at(1.0 - tail),
    })
}

/// Cochran's sample size for a proportion (worst case p = 0.5) at `confidence` and `margin`, corrected for
/// a finite population of `population`.
pub fn cochran_sample_size(population: usize, confidence: f64, margin: f64) -> usize {
    if population == 0 {
        return 0;
    }
    let z = z_for(confidence);
    let n0 = z * z * 0.25 / (margin * margin);
    let n = n0 / (1.0 + (n0 - 1.0) / population as f64);
    (n.ceil() as usize).min(population)
}

#[cfg(test)]
mod fisher_tests {
    use super::fisher_greater;

    #[test]
    fn fisher_one_sided_matches_the_hypergeometric_tail() {
        // [[5, 0], [1, 4]]: 6 / 252.
        assert!((fisher_greater(5, 5, 1, 5) - 6.0 / 252.0).abs() < 1e-9);
        // [[3, 0], [0, 3]]: 1 / 20.
        assert!((fisher_greater(3, 3, 0, 3) - 0.05).abs() < 1e-9);
        assert!((fisher_greater(3, 5, 2, 5) - 0.5).abs() < 1e-9);
        assert_eq!(fisher_greater(0, 5, 3, 5), 1.0);
        assert_eq!(fisher_greater(1, 0, 0, 3), 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) {
        assert!((a - b).abs() < tol, "{a} vs {b}");
    }

    #[test]
    fn cohen_kappa_by_hand() {
        // 50 items: both yes 20, only A yes 5, only B yes 10, both no 15.
        // p_o = 0.7, p_e = 0.5 × 0.6 + 0.5 × 0.4 = 0.5, κ = 0.4.
        let mut a = Vec::new();
        let mut b = Vec::new();
        for (x, y, n) in [
            (true, true, 20),
            (true, false, 5),
            (false, true, 10),
            (false, false, 15),
        ] {
            for _ in 0..n {
                a.push(x);
                b.push(y);
            }
        }
        close(cohen_kappa(&a, &b).unwrap(), 0.4, 1e-12);
        close(percent_agreement(&a, &b).unwrap(), 0.7, 1e-12);
        assert_eq!(
            cohen_kappa(&[true, true], &[true, true]),
            None,
            "chance agreement is total"
        );
    }

    #[test]
    fn fleiss_kappa_by_hand() {
        // Fleiss (1971) as reworked on Wikipedia: 10 items, 14 raters, 5 categories; P̄ = 0.378,
        // P̄e = 0.213, κ = 0.210.
        let counts = vec![
            vec![0, 0, 0, 0, 14],
            vec![0, 2, 6, 4, 2],
            vec![0, 0, 3, 5, 6],
            vec![0, 3, 9, 2, 0],
            vec![2, 2, 8, 1, 1],
            vec![7, 7, 0, 0, 0],
            vec![3, 2, 6, 3, 0],
            vec![2, 5, 3, 2, 2],
            vec![6, 5, 2, 1, 0],
            vec![0, 2, 2, 3, 7],
        ];
        close(fleiss_kappa(&counts).unwrap(), 0.2099, 5e-4);
        assert_eq!(fleiss_kappa(&[vec![1, 0]]), None, "one rater");
        assert_eq!(
            fleiss_kappa(&[vec![2, 0], vec![1, 0]]),
            None,
            "uneven raters"
        );
    }

    #[test]
    fn intervals_by_hand() {
        // Wilson, 8 of 10 at 95 %: 0.490–0.943.
        let w = wilson(8, 10, 0.95).unwrap();
        close(w.low, 0.4902, 5e-4);
        close(w.high, 0.9433, 5e-4);
        assert_eq!(wilson(0, 0, 0.95), None);
        // 1…5: mean 3, s = 1.5811, t(0.975, 4) = 2.7764 → 3 ± 1.9632.
        let m = mean_interval(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95).unwrap();
        close(m.low, 1.0368, 5e-4);
        close(m.high, 4.9632, 5e-4);
        assert_eq!(mean_interval(&[1.0], 0.95), None);
        close(z_for(0.95), 1.95996, 1e-4);
    }

    #[test]
    fn mcnemar_and_bootstrap_by_hand() {
        // b = 2, c = 8: 2 × P(X ≤ 2 | 10, ½) = 2 × (1 + 10 + 45) / 1024 = 0.109375.
        close(mcnemar_exact(2, 8), 0.109375, 1e-12);
        close(mcnemar_exact(8, 2), 0.109375, 1e-12);
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(5, 5), 1.0);
        let d = [0.5, 0.5, 0.5, 0.5];
        let b = bootstrap_mean(&d, 0.95, 500, 1).unwrap();
        assert_eq!((b.estimate, b.low, b.high), (0.5, 0.5, 0.5));
        let d: Vec<f64> = (0..40)
            .map(|i| if i % 2 == 0 { 1.0 } else { 0.0 })
            .collect();
        let b = bootstrap_mean(&d, 0.95, 2000, 7).unwrap();
        assert!(
            b.low < 0.5 && b.high > 0.5 && b.low > 0.25 && b.high < 0.75,
            "{b:?}"
        );
        assert_eq!(bootstrap_mean(&d, 0.95, 2000, 7), Some(b), "seeded");
    }

    #[test]
    fn cochran_by_hand() {
        // 95 %, ±5 %: n0 = 1.96² × 0.25 / 0.0025 = 384.15; N = 1000 → 384.15 / (1 + 383.15 / 1000) = 277.7.
        assert_eq!(cochran_sample_size(1_000_000_000, 0.95, 0.05), 385);
        assert_eq!(cochran_sample_size(1000, 0.95, 0.05), 278);
        assert_eq!(cochran_sample_size(10, 0.95, 0.05), 10);
        assert_eq!(cochran_sample_size(0, 0.95, 0.05), 0);
    }
}
