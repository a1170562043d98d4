//! Like with like: the generators a suite compares (the ragtester strategies and the baseline, the paper's
//! RQ2) write the same number of cases per document, a conversation counted as its turns. The baseline is
//! asked for as many single questions as the strategies produced; what generation could not match — a
//! shortfall on one side, conversations one side could write and the other could not — is evened out here
//! by the side that has more giving up its last single questions (so its conversations stay in the suite),
//! then, where that is not enough, its last whole conversations; each document's report says what was left
//! out and why.

use crate::plan::GenerationReport;
use ragtester_core::{Generator, TestCase};
use std::collections::{BTreeMap, HashSet};

/// The generators compared case for case.
const COMPARED: [Generator; 2] = [Generator::Ragtester, Generator::Baseline];

/// A generator's cases of one document: its single questions and its conversations (case ids by
/// conversation, in the order written).
#[derive(Default)]
struct Written {
    singles: Vec<String>,
    conversations: Vec<(String, Vec<String>)>,
}

impl Written {
    fn of(cases: &[TestCase], document: &str) -> Self {
        let mut out = Written::default();
        for c in cases.iter().filter(|c| c.document_id == document) {
            match c.conversation() {
                None => out.singles.push(c.id.clone()),
                Some(id) => match out.conversations.iter_mut().find(|(k, _)| k == id) {
                    Some((_, turns)) => turns.push(c.id.clone()),
                    None => out.conversations.push((id.to_string(), vec![c.id.clone()])),
                },
            }
        }
        out
    }

    fn turns(&self) -> usize {
        self.conversations.iter().map(|(_, t)| t.len()).sum()
    }

    fn total(&self) -> usize {
        self.singles.len() + self.turns()
    }

    /// Down to at most `target` cases: as many of its first conversations as fit, then single questions
    /// (its first ones) to fill the rest.
    fn trim_to(&mut self, target: usize) {
        while self.turns() > target {
            self.conversations.pop();
        }
        let room = target - self.turns();
        self.singles.truncate(room);
    }
}

/// Trim the compared generators' reports so each document has as many cases from each, conversation turns
/// counted. Does nothing unless both generators are in `reports`.
pub fn equal_counts(reports: &mut [GenerationReport]) {
    let compared: Vec<usize> = COMPARED
        .iter()
        .filter_map(|g| {
            reports
                .iter()
                .position(|r| r.documents.iter().any(|d| d.generator == *g))
        })
        .collect();
    if compared.len() < 2 {
        return;
    }
    let documents: Vec<String> = reports[compared[0]]
        .documents
        .iter()
        .map(|d| d.document_id.clone())
        .collect();
    for document in documents {
        let mut written: Vec<Written> = compared
            .iter()
            .map(|&r| Written::of(&reports[r].cases, &document))
            .collect();
        // Dropping a whole conversation can overshoot: trim to the least total until every side has it.
        loop {
            let least = written.iter().map(Written::total).min().unwrap_or(0);
            if written.iter().all(|w| w.total() == least) {
                break;
            }
            for w in &mut written {
                w.trim_to(least);
            }
        }
        for (w, &r) in written.iter().zip(&compared) {
            leave_out(&mut reports[r], &document, w);
        }
    }
}

/// Keep only `kept`'s cases of `document` in a report, and say in its document report what went.
fn leave_out(report: &mut GenerationReport, document: &str, kept: &Written) {
    let before = Written::of(&report.cases, document);
    let keep: HashSet<&String> = kept
        .singles
        .iter()
        .chain(kept.conversations.iter().flat_map(|(_, t)| t))
        .collect();
    report
        .cases
        .retain(|c| c.document_id != document || keep.contains(&c.id));
    let singles = before.singles.len() - kept.singles.len();
    let conversations = before.conversations.len() - kept.conversations.len();
    if singles + conversations == 0 {
        return;
    }
    if let Some(d) = report
        .documents
        .iter_mut()
        .find(|d| d.document_id == document)
    {
        d.produced = kept.singles.len();
        d.conversations_produced = kept.conversations.len();
        d.notes.insert(
            0,
            format!(
                "left out to compare generators like with like: {singles} single question(s) and {conversations} \
                 conversation(s) ({} turn(s)), so this document has as many cases from each",
                before.turns() - kept.turns()
            ),
        );
    }
}

/// Cases per document and generator, conversations counted as their turns (for tests and the report).
pub fn counts(cases: &[TestCase]) -> BTreeMap<(String, &'static str), usize> {
    let mut out = BTreeMap::new();
    for c in cases {
        *out.entry((c.document_id.clone(), c.generator.as_str()))
            .or_default() += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::DocumentReport;
    use ragtester_core::{ConversationKind, Turn, TurnStep};

    fn case(generator: Generator, id: &str, conversation: Option<(&str, usize)>) -> TestCase {
        let mut c = crate::interop::imported_case(id.into(), "r".into(), Vec::new(), "t");
        c.id = id.into();
        c.generator = generator;
        c.document_id = "d1".into();
        c.turn = conversation.map(|(id, index)| Turn {
            conversation: id.into(),
            index,
            of: 3,
            kind: ConversationKind::FollowUp,
            step: TurnStep::Opening,
            standalone: None,
            history: Vec::new(),
        });
        c
    }

    fn report(generator: Generator, cases: Vec<TestCase>) -> GenerationReport {
        GenerationReport {
            documents: vec![DocumentReport {
                document_id: "d1".into(),
                source: "d1.pdf".into(),
                generator,
                sections: 4,
                askable_sections: 4,
                section_classes: Default::default(),
                not_prose: Vec::new(),
                sections_used: 4,
                coverage: 1.0,
                requested: 4,
                produced: cases.iter().filter(|c| c.turn.is_none()).count(),
                conversations_requested: 2,
                conversations_produced: 0,
                rejected_by_critic: 0,
                halted: None,
                notes: Vec::new(),
            }],
            cases,
        }
    }

    #[test]
    fn compared_generators_keep_equal_counts_per_document() {
        use Generator::{Baseline, Ragtester};
        // The strategies wrote 4 singles and a 2-turn conversation (6 cases); the baseline 3 singles and no
        // conversation (3).
        let ours = vec![
            case(Ragtester, "r1", None),
            case(Ragtester, "r2", None),
            case(Ragtester, "r3", None),
            case(Ragtester, "r4", None),
            case(Ragtester, "rc1", Some(("rc", 1))),
            case(Ragtester, "rc2", Some(("rc", 2))),
        ];
        let theirs = vec![
            case(Baseline, "b1", None),
            case(Baseline, "b2", None),
            case(Baseline, "b3", None),
        ];
        let mut reports = vec![report(Ragtester, ours), report(Baseline, theirs)];
        equal_counts(&mut reports);
        let all: Vec<TestCase> = reports.iter().flat_map(|r| r.cases.clone()).collect();
        let counts = counts(&all);
        assert_eq!(counts[&("d1".to_string(), "ragtester")], 3);
        assert_eq!(counts[&("d1".to_string(), "baseline")], 3);
        // The strategies give up single questions, not their conversation.
        let kept: Vec<&str> = reports[0].cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(kept, ["r1", "rc1", "rc2"]);
        assert!(reports[0].documents[0].notes[0].starts_with("left out to compare generators"));
        assert!(reports[1].documents[0].notes.is_empty());

        // Where single questions are not enough, a whole conversation goes: 1 single + a 3-turn
        // conversation against 2 singles ends at 1 single each.
        let mut reports = vec![
            report(
                Ragtester,
                vec![
                    case(Ragtester, "r1", None),
                    case(Ragtester, "rc1", Some(("rc", 1))),
                    case(Ragtester, "rc2", Some(("rc", 2))),
                    case(Ragtester, "rc3", Some(("rc", 3))),
                ],
            ),
            report(
                Baseline,
                vec![case(Baseline, "b1", None), case(Baseline, "b2", None)],
            ),
        ];
        equal_counts(&mut reports);
        assert_eq!(reports[0].cases.len(), 1);
        assert_eq!(reports[1].cases.len(), 1);

        // A single generator is left alone.
        let mut alone = vec![report(Baseline, vec![case(Baseline, "b1", None)])];
        equal_counts(&mut alone);
        assert_eq!(alone[0].cases.len(), 1);
    }
}
