//! Conversations as units: per configuration, how many conversations every turn of which passed, and the
//! conversation-level checks — referent kept (follow-ups and returns to an earlier topic passed), refusal
//! kept (an out-of-scope question pressed again still refused), correction followed, language switch
//! followed — each over the turns of that step, and consistency (no answer contradicting an earlier one)
//! over the conversations; and the failed conversations with their turns, for reading.

use ragtester_core::{Answer, Configuration, TestCase, TurnStep, Verdict};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One configuration's conversations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConversationSummary {
    pub config_id: String,
    pub label: String,
    /// Conversations every turn of which was put to this system.
    pub conversations: usize,
    /// Conversations with a turn the run could not fairly put to this system (skipped, with its reason):
    /// neither passed nor failed whole, since the system never had the whole conversation. Their asked
    /// turns still count in the per-step rates.
    #[serde(default)]
    pub incomplete: usize,
    /// Of `conversations`, those whose every turn passed (a turn with no verdict is not a pass).
    pub passed: usize,
    pub pass_rate: Option<f64>,
    /// Turns that name their subject only by reference (follow-ups, returns to an earlier topic,
    /// comparisons of earlier answers): the share that passed.
    pub referent_kept: Rate,
    /// Out-of-scope questions pressed again after other turns: the share still refused (passed).
    pub refusal_kept: Rate,
    /// Turns where the user corrected their question: the share answered as corrected.
    pub correction_followed: Rate,
    /// Turns in the other language: the share that passed (answered, in that language).
    pub language_followed: Rate,
    /// Conversations in which no answer contradicts an earlier one (a changed figure, a negated
    /// statement: `ragtester_text::contradicts`).
    pub consistent: Rate,
    /// Per kind of conversation: conversations and those passed.
    pub kinds: BTreeMap<String, Rate>,
}

/// `passed` of `of`, and their share when `of` > 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub passed: usize,
    pub of: usize,
    pub rate: Option<f64>,
}

impl Rate {
    fn add(&mut self, passed: bool) {
        self.of += 1;
        self.passed += usize::from(passed);
        self.rate = Some(self.passed as f64 / self.of as f64);
    }
}

/// A conversation one configuration failed, with its turns as asked and answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedConversation {
    pub conversation: String,
    pub config_id: String,
    pub label: String,
    pub kind: String,
    pub turns: Vec<TurnRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRow {
    pub index: usize,
    pub step: String,
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten_query: Option<String>,
    pub answer: String,
    /// None: no verdict (an error, or not asked).
    pub passed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

impl ConversationSummary {
    /// A turn's outcome in the figure of what its step tests: a referent kept, a refusal kept, a
    /// correction or a language switch followed.
    fn tally_turn(&mut self, case: &TestCase, passed: bool) {
        match case.turn.as_ref().map(|t| t.step) {
            Some(TurnStep::FollowUp | TurnStep::SwitchBack | TurnStep::Compare) => {
                self.referent_kept.add(passed)
            }
            Some(TurnStep::PressedAgain) => self.refusal_kept.add(passed),
            Some(TurnStep::Correction) => self.correction_followed.add(passed),
            Some(TurnStep::OtherLanguage) => self.language_followed.add(passed),
            _ => {}
        }
    }
}

/// Failed conversations listed in the summary (all of them count in the rates).
const MAX_FAILED: usize = 20;

/// The conversation summaries of every configuration with conversational cases, and the failed
/// conversations (the first `MAX_FAILED`, in configuration then suite order).
pub fn conversations(
    cases: &[TestCase],
    configs: &[Configuration],
    answers: &HashMap<(&str, &str), &Answer>,
    verdicts: &HashMap<(&str, &str), &Verdict>,
    skipped: &std::collections::HashSet<(&str, &str)>,
) -> (Vec<ConversationSummary>, Vec<FailedConversation>) {
    // Conversations in suite order, each with its turns in turn order.
    let mut order: Vec<&str> = Vec::new();
    let mut turns: HashMap<&str, Vec<&TestCase>> = HashMap::new();
    for case in cases {
        if let Some(id) = case.conversation() {
            let entry = turns.entry(id).or_default();
            if entry.is_empty() {
                order.push(id);
            }
            entry.push(case);
        }
    }
    if order.is_empty() {
        return (Vec::new(), Vec::new());
    }
    for list in turns.values_mut() {
        list.sort_by_key(|c| c.turn.as_ref().map_or(0, |t| t.index));
    }
    let mut summaries = Vec::new();
    let mut failed = Vec::new();
    for config in configs {
        let mut s = ConversationSummary {
            config_id: config.id.clone(),
            label: config.label(),
            ..Default::default()
        };
        for id in &order {
            // A turn the run could not fairly put to this system (skipped, with its reason) is neither a
            // pass nor a fail; its conversation is incomplete, and its other turns are judged as asked.
            let list: Vec<&TestCase> = turns[id]
                .iter()
                .copied()
                .filter(|c| !skipped.contains(&(c.id.as_str(), config.id.as_str())))
                .collect();
            if list.is_empty() {
                continue;
            }
            let complete = list.len() == turns[id].len();
            let passed_turn = |case: &TestCase| {
                verdicts
                    .get(&(case.id.as_str(), config.id.as_str()))
                    .and_then(|v| v.passed)
            };
            let all_passed = list.iter().all(|c| passed_turn(c) == Some(true));
            let said: Vec<&str> = list
                .iter()
                .filter_map(|c| answers.get(&(c.id.as_str(), config.id.as_str())))
                .filter(|a| a.error.is_none() && !a.answer.trim().is_empty())
                .map(|a| a.answer.as_str())
                .collect();
            let contradicted = said.iter().enumerate().any(|(i, later)| {
                said[..i]
                    .iter()
                    .any(|earlier| ragtester_text::contradicts(earlier, later))
            });
            s.consistent.add(!contradicted);
            let kind = list[0].turn.as_ref().map(|t| t.kind.as_str()).unwrap_or("");
            if complete {
                s.conversations += 1;
                s.passed += usize::from(all_passed);
                s.kinds.entry(kind.to_string()).or_default().add(all_passed);
            } else {
                s.incomplete += 1;
            }
            for case in &list {
                s.tally_turn(case, passed_turn(case) == Some(true));
            }
            if complete && !all_passed && failed.len() < MAX_FAILED {
                failed.push(FailedConversation {
                    conversation: id.to_string(),
                    config_id: config.id.clone(),
                    label: s.label.clone(),
                    kind: kind.to_string(),
                    turns: list
                        .iter()
                        .map(|case| turn_row(case, &config.id, answers, verdicts))
                        .collect(),
                });
            }
        }
        s.pass_rate = (s.conversations > 0).then(|| s.passed as f64 / s.conversations as f64);
        summaries.push(s);
    }
    (summaries, failed)
}

/// One turn of a failed conversation as the report lists it: what was asked, answered and concluded.
fn turn_row(
    case: &TestCase,
    config_id: &str,
    answers: &HashMap<(&str, &str), &Answer>,
    verdicts: &HashMap<(&str, &str), &Verdict>,
) -> TurnRow {
    let key = (case.id.as_str(), config_id);
    let answer = answers.get(&key);
    let verdict = verdicts.get(&key);
    TurnRow {
        index: case.turn.as_ref().map_or(0, |t| t.index),
        step: case
            .turn
            .as_ref()
            .map_or("", |t| t.step.as_str())
            .to_string(),
        query: case.query.clone(),
        rewritten_query: answer.and_then(|a| a.rewritten_query.clone()),
        answer: answer
            .map(|a| a.error.clone().unwrap_or_else(|| a.answer.clone()))
            .unwrap_or_default(),
        passed: verdict.and_then(|v| v.passed),
        cause: verdict
            .and_then(|v| v.attribution.as_ref())
            .map(|a| a.cause.as_str().to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{config, turn, verdict};
    use ragtester_core::VerdictStatus;
    use std::collections::HashSet;

    #[test]
    fn a_conversation_with_a_skipped_turn_is_incomplete_never_passed() {
        let cases = [
            turn("a1", "a", 1, 2),
            turn("a2", "a", 2, 2),
            turn("b1", "b", 1, 2),
            turn("b2", "b", 2, 2),
            turn("c1", "c", 1, 2),
            turn("c2", "c", 2, 2),
        ];
        let configs = [config()];
        let id = configs[0].id.as_str();
        let verdicts: Vec<Verdict> = [("a1", true), ("a2", true), ("b1", true), ("c1", true)]
            .iter()
            .chain(&[("c2", false)])
            .map(|(case, passed)| verdict(case, id, Some(*passed), VerdictStatus::Ok))
            .collect();
        let by_cell = verdicts
            .iter()
            .map(|v| ((v.case_id.as_str(), v.config_id.as_str()), v))
            .collect();
        let skipped: HashSet<(&str, &str)> = [("b2", id)].into();
        let (summaries, failed) =
            conversations(&cases, &configs, &HashMap::new(), &by_cell, &skipped);
        let s = &summaries[0];
        assert_eq!((s.conversations, s.incomplete, s.passed), (2, 1, 1));
        assert_eq!(s.pass_rate, Some(0.5));
        assert_eq!(s.kinds["follow_up"].of, 2);
        // The asked turns of the incomplete conversation still count per step; the skipped one does not.
        assert_eq!((s.referent_kept.passed, s.referent_kept.of), (1, 2));
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].conversation, "c");
    }
}
