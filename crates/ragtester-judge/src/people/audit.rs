//! Auditing the oracle (the paper's RQ4): a sample of the failures it reported, sized by Cochran's formula,
//! labelled true failure or false alarm by a person or by a panel of larger judges; the share of true
//! failures is the oracle's precision, the rest its false-discovery rate, each with a Wilson interval.

use crate::stats;
use ragtester_core::oracle::AuditSummary;

/// Which of `failures` reported failures to audit: Cochran's sample size at `confidence` and `margin`,
/// drawn without replacement by a seeded shuffle, returned in ascending order.
pub fn draw(failures: usize, confidence: f64, margin: f64, seed: u64) -> Vec<usize> {
    let n = stats::cochran_sample_size(failures, confidence, margin);
    let mut order: Vec<usize> = (0..failures).collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut order);
    let mut chosen = order[..n].to_vec();
    chosen.sort_unstable();
    chosen
}

/// A person's label: is this reported failure a real one? Empty or unreadable is unlabelled.
pub fn parse_label(text: &str) -> Option<bool> {
    match text.trim().to_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" | "tp" | "real" | "是" | "对" | "真" => Some(true),
        "false" | "f" | "no" | "n" | "0" | "fp" | "false alarm" | "否" | "错" | "假" => {
            Some(false)
        }
        _ => None,
    }
}

pub struct AuditPlan {
    pub failures: usize,
    pub confidence: f64,
    pub margin: f64,
    pub sample_size: usize,
}

/// The audit's figures from the labels given (None = not labelled).
pub fn summarise(plan: &AuditPlan, labeller: &str, labels: &[Option<bool>]) -> AuditSummary {
    let labelled = labels.iter().filter(|l| l.is_some()).count();
    let true_failures = labels.iter().filter(|l| **l == Some(true)).count();
    let false_failures = labelled - true_failures;
    AuditSummary {
        failures: plan.failures,
        confidence: plan.confidence,
        margin: plan.margin,
        sample_size: plan.sample_size,
        labeller: labeller.to_string(),
        labelled,
        true_failures,
        false_failures,
        precision: stats::wilson(true_failures, labelled, plan.confidence),
        false_discovery_rate: stats::wilson(false_failures, labelled, plan.confidence),
        per_config: Vec::new(),
    }
}

/// Labelled and confirmed failures per configuration, from the sample's configurations and their labels.
pub fn per_config(
    configs: &[&str],
    labels: &[Option<bool>],
) -> Vec<ragtester_core::oracle::ConfigAudit> {
    let mut out: Vec<ragtester_core::oracle::ConfigAudit> = Vec::new();
    for (config, label) in configs.iter().zip(labels) {
        let Some(real) = label else { continue };
        let i = match out.iter().position(|c| c.config_id == *config) {
            Some(i) => i,
            None => {
                out.push(ragtester_core::oracle::ConfigAudit {
                    config_id: config.to_string(),
                    labelled: 0,
                    true_failures: 0,
                });
                out.len() - 1
            }
        };
        out[i].labelled += 1;
        out[i].true_failures += usize::from(*real);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_cochran_sized_seeded_and_distinct() {
        let a = draw(1000, 0.95, 0.05, 3);
        assert_eq!(a.len(), 278);
        assert_eq!(a, draw(1000, 0.95, 0.05, 3));
        assert_ne!(a, draw(1000, 0.95, 0.05, 4));
        assert!(a.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(draw(5, 0.95, 0.05, 0), vec![0, 1, 2, 3, 4]);
        assert!(draw(0, 0.95, 0.05, 0).is_empty());
    }

    #[test]
    fn labels_and_precision() {
        assert_eq!(parse_label(" TRUE "), Some(true));
        assert_eq!(parse_label("否"), Some(false));
        assert_eq!(parse_label(""), None);
        let plan = AuditPlan {
            failures: 40,
            confidence: 0.95,
            margin: 0.05,
            sample_size: 37,
        };
        // The paper's figure: 80.6 % precision. 8 true of 10 labelled: Wilson 0.490–0.943.
        let mut labels = vec![Some(true); 8];
        labels.extend([Some(false), Some(false), None]);
        let s = summarise(&plan, "person", &labels);
        assert_eq!((s.labelled, s.true_failures, s.false_failures), (10, 8, 2));
        let p = s.precision.unwrap();
        assert!((p.estimate - 0.8).abs() < 1e-12);
        assert!((p.low - 0.4902).abs() < 5e-4 && (p.high - 0.9433).abs() < 5e-4);
        assert!((s.false_discovery_rate.unwrap().estimate - 0.2).abs() < 1e-12);
        assert_eq!(summarise(&plan, "person", &[None]).precision, None);
    }
}
