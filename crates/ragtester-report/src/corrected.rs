//! Pass rates corrected by an audit, after ARES's prediction-powered inference: the judge's verdicts on
//! every cell are the prediction, the audit's labelled sample of reported failures the correction. Each
//! configuration's reported failures are discounted by the share the audit found real (its own labelled
//! failures where it has some, the audit's pooled precision otherwise), and the interval carries that
//! share's Wilson interval. An audit labels reported failures only, so failures the judge missed are not
//! corrected for: the corrected rate is an upper bound on that side, and the report says so. Errored cells
//! count against the rate, as in the report's own pass rate.

use ragtester_core::oracle::{AuditSummary, CorrectedRate, Interval};

fn wilson(successes: usize, n: usize) -> Option<Interval> {
    ragtester_judge::stats::wilson(successes, n, 0.95)
}

/// What the correction needs of one configuration's cells.
#[derive(Debug, Clone, Copy)]
pub struct Tally<'a> {
    pub config_id: &'a str,
    pub label: &'a str,
    /// Every cell, errored ones included.
    pub cells: usize,
    pub passed: usize,
    pub failed: usize,
}

/// Corrected pass rates, best first, and the pairs of neighbours in that ranking whose intervals overlap
/// (not distinguishable at 95 %).
pub fn corrected_rates(
    configs: &[Tally<'_>],
    audit: &AuditSummary,
) -> (Vec<CorrectedRate>, Vec<(String, String)>) {
    let mut rates: Vec<CorrectedRate> = configs
        .iter()
        .filter_map(|c| {
            // Over every cell, as the report's own pass rate: an errored cell is no pass, and the audit
            // (which labels reported failures only) cannot turn it into one.
            if c.cells == 0 || c.passed + c.failed == 0 {
                return None;
            }
            let own = audit.per_config.iter().find(|a| a.config_id == c.config_id);
            let (precision, labelled) = match own {
                Some(a) if a.labelled > 0 => (wilson(a.true_failures, a.labelled)?, a.labelled),
                _ => (audit.precision?, 0),
            };
            let cells = c.cells as f64;
            let passing =
                |real_share: f64| (c.passed as f64 + c.failed as f64 * (1.0 - real_share)) / cells;
            Some(CorrectedRate {
                config_id: c.config_id.to_string(),
                label: c.label.to_string(),
                raw_pass_rate: c.passed as f64 / cells,
                pass_rate: Interval {
                    estimate: passing(precision.estimate),
                    low: passing(precision.high),
                    high: passing(precision.low),
                },
                labelled,
            })
        })
        .collect();
    rates.sort_by(|a, b| b.pass_rate.estimate.total_cmp(&a.pass_rate.estimate));
    let overlapping = rates
        .windows(2)
        .filter(|w| w[1].pass_rate.high >= w[0].pass_rate.low)
        .map(|w| (w[0].label.clone(), w[1].label.clone()))
        .collect();
    (rates, overlapping)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::ConfigSummary;
    use ragtester_core::oracle::ConfigAudit;

    fn corrected_rates(
        configs: &[ConfigSummary],
        audit: &AuditSummary,
    ) -> (Vec<CorrectedRate>, Vec<(String, String)>) {
        let tallies: Vec<Tally> = configs.iter().map(ConfigSummary::tally).collect();
        super::corrected_rates(&tallies, audit)
    }

    #[test]
    fn false_alarms_raise_the_pass_rate_and_close_rates_are_flagged() {
        let config = |id: &str, passed, failed| ConfigSummary {
            id: id.into(),
            label: id.into(),
            cases: passed + failed,
            passed,
            failed,
            ..Default::default()
        };
        let configs = [
            config("a", 60, 40),
            config("b", 58, 42),
            config("c", 90, 10),
        ];
        let audit = AuditSummary {
            failures: 92,
            confidence: 0.95,
            margin: 0.05,
            sample_size: 40,
            labeller: "person".into(),
            labelled: 40,
            true_failures: 30,
            false_failures: 10,
            precision: wilson(30, 40),
            false_discovery_rate: wilson(10, 40),
            per_config: vec![ConfigAudit {
                config_id: "a".into(),
                labelled: 20,
                true_failures: 10,
            }],
        };
        let (rates, overlapping) = corrected_rates(&configs, &audit);
        assert_eq!(rates[0].config_id, "c");
        let a = rates.iter().find(|r| r.config_id == "a").unwrap();
        // Half of a's labelled failures were false alarms: 40 % failing becomes 20 %.
        assert!((a.pass_rate.estimate - 0.8).abs() < 1e-12);
        assert!(a.pass_rate.low < 0.8 && a.pass_rate.high > 0.8);
        assert_eq!(a.labelled, 20);
        let b = rates.iter().find(|r| r.config_id == "b").unwrap();
        assert_eq!(b.labelled, 0, "b rests on the pooled precision");
        assert!((b.pass_rate.estimate - (1.0 - 0.42 * 0.75)).abs() < 1e-12);
        assert!(!overlapping.is_empty());
        // Errored cells stay against the rate: 60 passes, 40 failures (half false alarms), 100 errors.
        let errored = ConfigSummary {
            cases: 200,
            errors: 100,
            ..config("a", 60, 40)
        };
        let (rates, _) = corrected_rates(&[errored], &audit);
        assert!((rates[0].raw_pass_rate - 0.3).abs() < 1e-12);
        assert!((rates[0].pass_rate.estimate - 0.4).abs() < 1e-12);
    }
}
