//! A simulated user's conversation judged turn by turn and whole: whether an answer settled the goal and
//! at which turn, whether the answers contradicted their passages, kept the user's language, and — for a
//! goal the documents cannot meet — kept refusing however the user pushed.

use ragtester_core::{Answer, GoalMetrics, TestCase};
use ragtester_text::contradiction::{contradiction, settles_beyond};
use ragtester_text::is_refusal;

/// The goal figures of a simulated conversation; None for a case without a goal or an answer without a
/// simulation.
pub fn goal_metrics(case: &TestCase, answer: &Answer) -> Option<GoalMetrics> {
    case.goal.as_ref()?;
    let simulation = answer.simulation.as_ref()?;
    let unanswerable = case.expects_refusal();
    let mut out = GoalMetrics {
        turns: simulation.turns.len(),
        language_kept: true,
        ending: simulation
            .ended
            .map_or("cut off", |e| e.as_str())
            .to_string(),
        ..Default::default()
    };
    let (mut stated, mut faithful, mut refused_all) = (0, 0, true);
    // What the user has said so far: an answer settles the goal only by what it adds to it.
    let mut said_by_user = String::new();
    for (i, turn) in simulation.turns.iter().enumerate() {
        let n = i + 1;
        said_by_user.push_str(&turn.user);
        said_by_user.push('\n');
        let mut wrong = |why: String| {
            out.why.get_or_insert(format!("turn {n}: {why}"));
        };
        if turn.error.is_some() {
            wrong("no answer".into());
            refused_all = false;
            continue;
        }
        let refused = is_refusal(&turn.answer);
        refused_all &= refused;
        if refused {
            if !unanswerable {
                wrong("refused what the documents answer".into());
            }
            continue;
        }
        if unanswerable {
            wrong(format!(
                "answered what the documents do not say: «{}»",
                clip(&turn.answer)
            ));
        }
        stated += 1;
        let passages: Vec<&str> = turn.contexts.iter().map(|c| c.text.as_str()).collect();
        match contradiction(&turn.answer, &case.expected_answer, &passages) {
            Some(c) => wrong(format!("contradicts its sources: it {c}")),
            None => faithful += 1,
        }
        if crate::language::in_language(&turn.answer, &case.language) == Some(false) {
            out.language_kept = false;
            wrong(format!(
                "answered in another language than the user's ({})",
                case.language
            ));
        }
        if !unanswerable
            && out.turns_to_goal.is_none()
            && settles_beyond(&turn.answer, &case.expected_answer, &said_by_user)
        {
            out.turns_to_goal = Some(n);
        }
    }
    out.faithful_share = (stated > 0).then(|| faithful as f64 / stated as f64);
    if unanswerable {
        out.refusals_kept = Some(refused_all && !simulation.turns.is_empty());
        out.reached = out.refusals_kept == Some(true);
    } else {
        out.reached = out.turns_to_goal.is_some();
        if !out.reached {
            let last = simulation.turns.last().map_or("", |t| t.answer.as_str());
            out.why
                .get_or_insert(format!("no answer settled it; the last: «{}»", clip(last)));
        }
    }
    Some(out)
}

/// Why the rules fail a simulated conversation, if they do.
pub fn goal_failure(metrics: &GoalMetrics) -> Option<String> {
    let why = metrics.why.as_deref().unwrap_or("");
    if !metrics.reached {
        return Some(format!(
            "the simulated user's goal was not reached in {} turns (ended: {}): {why}",
            metrics.turns,
            metrics.ending.replace('_', " ")
        ));
    }
    if !metrics.language_kept {
        return Some(format!("the conversation left the user's language: {why}"));
    }
    None
}

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
