//! Claim-level metrics of a configuration: the mean of each share over the answers that have one, with how
//! many answers were measured and how many could not be (an unreadable claim reply is counted, never
//! averaged in).

use ragtester_core::{ClaimMetrics, Verdict};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimSummary {
    /// How the claims were split and checked (`lexical` or a model spec); several when runs were mixed.
    pub method: String,
    /// Answers with claim metrics.
    pub measured: usize,
    /// Answers whose claims could not be checked.
    pub errors: usize,
    pub claim_recall: Option<f64>,
    pub claim_precision: Option<f64>,
    pub faithfulness: Option<f64>,
    pub hallucination: Option<f64>,
    pub noise_sensitivity: Option<f64>,
    pub context_utilization: Option<f64>,
    pub context_precision: Option<f64>,
    pub context_claim_recall: Option<f64>,
}

/// None when no verdict of the configuration carries claim metrics.
pub fn summarise_claims<'a>(verdicts: impl Iterator<Item = &'a Verdict>) -> Option<ClaimSummary> {
    let all: Vec<&ClaimMetrics> = verdicts.filter_map(|v| v.claims.as_ref()).collect();
    if all.is_empty() {
        return None;
    }
    let ok: Vec<&ClaimMetrics> = all.iter().copied().filter(|c| c.error.is_none()).collect();
    let mean = |pick: fn(&ClaimMetrics) -> Option<f64>| {
        let values: Vec<f64> = ok.iter().filter_map(|c| pick(c)).collect();
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    let mut methods: Vec<&str> = all.iter().map(|c| c.method.as_str()).collect();
    methods.sort_unstable();
    methods.dedup();
    Some(ClaimSummary {
        method: methods.join(", "),
        measured: ok.len(),
        errors: all.len() - ok.len(),
        claim_recall: mean(|c| c.claim_recall),
        claim_precision: mean(|c| c.claim_precision),
        faithfulness: mean(|c| c.faithfulness),
        hallucination: mean(|c| c.hallucination),
        noise_sensitivity: mean(|c| c.noise_sensitivity),
        context_utilization: mean(|c| c.context_utilization),
        context_precision: mean(|c| c.context_precision),
        context_claim_recall: mean(|c| c.context_claim_recall),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::verdict;
    use ragtester_core::VerdictStatus;

    #[test]
    fn errors_are_counted_not_averaged_and_undefined_shares_are_left_out() {
        let mut a = verdict("a", "k", Some(true), VerdictStatus::Ok);
        a.claims = Some(ClaimMetrics {
            method: "lexical".into(),
            claim_recall: Some(1.0),
            noise_sensitivity: None,
            ..Default::default()
        });
        let mut b = verdict("b", "k", Some(false), VerdictStatus::Ok);
        b.claims = Some(ClaimMetrics {
            method: "lexical".into(),
            claim_recall: Some(0.5),
            ..Default::default()
        });
        let mut c = verdict("c", "k", Some(false), VerdictStatus::Ok);
        c.claims = Some(ClaimMetrics {
            method: "lexical".into(),
            error: Some("unreadable claim reply".into()),
            ..Default::default()
        });
        let d = verdict("d", "k", None, VerdictStatus::ExecError);
        let s = summarise_claims([&a, &b, &c, &d].into_iter()).unwrap();
        assert_eq!((s.measured, s.errors), (2, 1));
        assert_eq!(s.claim_recall, Some(0.75));
        assert_eq!(s.noise_sensitivity, None);
        assert_eq!(s.method, "lexical");
        assert!(summarise_claims([&d].into_iter()).is_none());
    }
}
