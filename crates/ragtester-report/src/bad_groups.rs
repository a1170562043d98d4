//! The report's bad cases, one card per case rather than one per failed cell: a matrix of 47
//! configurations fails the same question under many of them, and a card per cell repeated it page after
//! page. A case's card leads with one failure in full and names every configuration it failed under.

use crate::BadCase;
use serde::Serialize;

/// Cases shown as cards in the HTML; every failed cell is in summary.json and results.csv.
pub const MAX_SHOWN: usize = 40;

/// Configurations named on a card's first line; the rest are one click away.
const NAMED: usize = 3;

/// One case and the cells it failed in.
#[derive(Debug, Serialize)]
pub struct BadCaseGroup<'a> {
    /// The failure shown in full: the one the judge rated lowest, then the first listed.
    pub lead: &'a BadCase,
    /// Labels of the configurations it failed under, the lead's first.
    pub labels: Vec<&'a str>,
    /// Those named on the card's first line, and how many more there are.
    pub named: Vec<&'a str>,
    pub more: usize,
    /// The other failures of this case, each with its configuration, cause and answer.
    pub others: Vec<&'a BadCase>,
}

/// The bad cases grouped by case, those failed under the most configurations first (ties keep the
/// summary's order), with how many cases there are in all.
pub fn group(bad: &[BadCase]) -> (Vec<BadCaseGroup<'_>>, usize) {
    let mut order: Vec<&str> = Vec::new();
    let mut cells: std::collections::HashMap<&str, Vec<&BadCase>> = Default::default();
    for b in bad {
        let entry = cells.entry(b.case_id.as_str()).or_default();
        if entry.is_empty() {
            order.push(b.case_id.as_str());
        }
        entry.push(b);
    }
    let mut groups: Vec<BadCaseGroup<'_>> = order
        .into_iter()
        .map(|id| {
            let mut failed = cells.remove(id).unwrap_or_default();
            // Lowest correctness first; a cell without a rubric (an error) after those rated.
            failed.sort_by_key(|b| b.correctness.unwrap_or(u8::MAX));
            let labels: Vec<&str> = failed.iter().map(|b| b.config_label.as_str()).collect();
            BadCaseGroup {
                lead: failed[0],
                named: labels.iter().take(NAMED).copied().collect(),
                more: labels.len().saturating_sub(NAMED),
                labels,
                others: failed[1..].to_vec(),
            }
        })
        .collect();
    let total = groups.len();
    groups.sort_by_key(|g| std::cmp::Reverse(g.labels.len()));
    groups.truncate(MAX_SHOWN);
    (groups, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bad(case: &str, config: &str, correctness: Option<u8>) -> BadCase {
        BadCase {
            case_id: case.into(),
            config_id: config.into(),
            config_label: format!("{config} · offline"),
            category: "core".into(),
            strategy: "coverage".into(),
            query: format!("question {case}"),
            expected_answer: "4.5 bar".into(),
            keywords: vec![],
            answer: format!("answer of {config}"),
            contexts: vec![],
            cause: None,
            evidence: None,
            correctness,
            reasons: vec![],
            error: None,
            conversation: vec![],
        }
    }

    #[test]
    fn a_case_is_one_card_naming_every_configuration_it_failed_under() {
        let cells = vec![
            bad("a", "k1", Some(2)),
            bad("b", "k1", Some(2)),
            bad("a", "k2", Some(1)),
            bad("a", "k3", None),
            bad("a", "k4", Some(2)),
            bad("a", "k5", Some(2)),
        ];
        let (groups, total) = group(&cells);
        assert_eq!(total, 2);
        let a = &groups[0];
        assert_eq!(a.lead.case_id, "a");
        // The lowest-rated failure leads; one without a rubric comes last.
        assert_eq!(a.lead.config_id, "k2");
        assert_eq!(a.labels.len(), 5);
        assert_eq!(a.labels.last(), Some(&"k3 · offline"));
        assert_eq!((a.named.len(), a.more, a.others.len()), (3, 2, 4));
        assert_eq!(groups[1].lead.case_id, "b");
        assert_eq!((groups[1].more, groups[1].others.len()), (0, 0));
    }

    #[test]
    fn only_the_cases_failed_most_widely_are_shown() {
        let mut cells = Vec::new();
        for i in 0..MAX_SHOWN + 5 {
            cells.push(bad(&format!("c{i}"), "k1", Some(2)));
        }
        cells.push(bad("c44", "k2", Some(2)));
        let (groups, total) = group(&cells);
        assert_eq!((groups.len(), total), (MAX_SHOWN, MAX_SHOWN + 5));
        assert_eq!(groups[0].lead.case_id, "c44");
    }
}
