//! Whether the difference between two lists of verdicts on the same cases is more than noise: used by the
//! run diff and by the summary's comparison of each configuration with the best.

use ragtester_core::Verdict;
use std::collections::HashMap;

/// McNemar on cases judged in both lists (paired by case), and a bootstrap of their criteria-score
/// changes (second − first).
pub(crate) fn paired_tests(
    before: &[&Verdict],
    after: &[&Verdict],
) -> (usize, Option<f64>, Option<ragtester_core::oracle::Interval>) {
    let after_of: HashMap<&str, &Verdict> =
        after.iter().map(|v| (v.case_id.as_str(), *v)).collect();
    let (mut paired, mut regressed, mut fixed) = (0, 0, 0);
    let mut changes = Vec::new();
    for v in before {
        let Some(w) = after_of.get(v.case_id.as_str()) else {
            continue;
        };
        if let (Some(p), Some(q)) = (v.passed, w.passed) {
            paired += 1;
            regressed += usize::from(p && !q);
            fixed += usize::from(!p && q);
        }
        if let (Some(x), Some(y)) = (v.criteria_mean, w.criteria_mean) {
            changes.push(y - x);
        }
    }
    let p = (paired > 0).then(|| ragtester_judge::stats::mcnemar_exact(regressed, fixed));
    // Seeded: the same two runs always print the same interval.
    let change = ragtester_judge::stats::bootstrap_mean(&changes, 0.95, 2000, 0);
    (paired, p, change)
}
