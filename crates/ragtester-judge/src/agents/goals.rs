//! A simulated user's conversation judged turn by turn and whole: whether an answer settled the goal and
//! at which turn, whether the answers contradicted their passages, kept the user's language, and — for a
//! goal the documents cannot meet — kept refusing however the user pushed. Which answer settled the goal
//! is the answers compared with the expected answer as facts (`settles_beyond`), or, where a model is the
//! judge, that judge's decision turn by turn (`settled_by_judge`).

use crate::Judge;
use ragtester_core::{
    Answer, ChatModel, ChatRequest, GoalMetrics, Message, ReplyFormat, TaskHint, TestCase,
};
use ragtester_text::contradiction::{contradiction, settles_beyond};
use ragtester_text::is_refusal;

/// A judge's decision on which answer of a conversation settled its goal.
#[derive(Debug, Clone, PartialEq)]
pub struct Settling {
    pub judge: String,
    /// The first turn (1-based) the judge found settled it; None when none did.
    pub turn: Option<usize>,
    /// The judge's reason on that turn, or on the last it was asked about.
    pub reason: String,
}

/// The goal figures of a simulated conversation; None for a case without a goal or an answer without a
/// simulation.
pub fn goal_metrics(case: &TestCase, answer: &Answer) -> Option<GoalMetrics> {
    goal_metrics_settled(case, answer, None)
}

/// Each stated answer of a simulated conversation, with its 1-based turn and what the user had said up
/// to it: the answers a goal can be settled by.
fn stated_turns(answer: &Answer) -> Vec<(usize, String, &str)> {
    let Some(simulation) = answer.simulation.as_ref() else {
        return Vec::new();
    };
    let mut said_by_user = String::new();
    let mut out = Vec::new();
    for (i, turn) in simulation.turns.iter().enumerate() {
        said_by_user.push_str(&turn.user);
        said_by_user.push('\n');
        if turn.error.is_none() && !is_refusal(&turn.answer) {
            out.push((i + 1, said_by_user.clone(), turn.answer.as_str()));
        }
    }
    out
}

/// Which answer settled an answerable goal, by a judge that decides it (a model): asked turn by turn
/// until one settles it. None where the judge leaves it to the comparison of facts (the offline judge),
/// for a goal the documents cannot meet (refusals decide it), or a case without a simulation; an
/// unreadable or failed reply, after its re-ask, is the verdict's error.
pub async fn settled_by_judge(
    judge: &dyn Judge,
    case: &TestCase,
    answer: &Answer,
) -> Result<Option<Settling>, String> {
    let Some(goal) = case.goal.as_ref() else {
        return Ok(None);
    };
    if case.expects_refusal() || answer.simulation.is_none() {
        return Ok(None);
    }
    let mut reason = String::from("no answer stated anything");
    for (turn, user_said, said) in stated_turns(answer) {
        let Some(decided) = judge.settles(case, &goal.want, &user_said, said).await else {
            return Ok(None);
        };
        let (settled, why) = decided?;
        reason = why;
        if settled {
            return Ok(Some(Settling {
                judge: judge.name(),
                turn: Some(turn),
                reason,
            }));
        }
    }
    Ok(Some(Settling {
        judge: judge.name(),
        turn: None,
        reason,
    }))
}

/// A model's decision on one answer: whether it settled the goal, and why.
pub(crate) async fn ask_settled(
    model: &dyn ChatModel,
    case: &TestCase,
    want: &str,
    user_said: &str,
    said: &str,
) -> Result<(bool, String), String> {
    let language = case.language.as_str();
    let (system, user) =
        crate::prompt::goal_prompts(want, &case.expected_answer, user_said, said, language);
    let hint = TaskHint::GoalSettled {
        want: want.to_string(),
        expected_answer: case.expected_answer.clone(),
        user_said: user_said.to_string(),
        answer: said.to_string(),
        language: language.to_string(),
    };
    let mut request = ChatRequest::new(vec![Message::system(system), Message::user(user)], hint);
    request.format = ReplyFormat::Schema(crate::claims::schema(
        "goal_settled",
        serde_json::json!({"settled": {"type": "boolean"}, "reason": {"type": "string"}}),
    ));
    crate::claims::ask(model, request, language == "zh", "goal", |reply| {
        let object = crate::parse::json_values(reply)
            .into_iter()
            .find(|v| v.get("settled").is_some())
            .ok_or("reply holds no JSON object with `settled`")?;
        let settled = object["settled"]
            .as_bool()
            .ok_or("`settled` must be true or false")?;
        let reason = object
            .get("reason")
            .and_then(|r| r.as_str())
            .unwrap_or_default()
            .to_string();
        Ok((settled, reason))
    })
    .await
    .map_err(|e| ragtester_core::secrets::error_text(&e))
}

/// The goal figures with the settling turn decided by `settling` (a judge's) where given, else by
/// comparing each answer's facts with the expected answer beyond what the user said.
pub fn goal_metrics_settled(
    case: &TestCase,
    answer: &Answer,
    settling: Option<&Settling>,
) -> Option<GoalMetrics> {
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
            && settling.is_none()
            && out.turns_to_goal.is_none()
            && settles_beyond(&turn.answer, &case.expected_answer, &said_by_user)
        {
            out.turns_to_goal = Some(n);
        }
    }
    if let Some(s) = settling.filter(|_| !unanswerable) {
        out.turns_to_goal = s.turn;
        out.settled_by = Some(s.judge.clone());
        if s.turn.is_none() {
            out.why.get_or_insert(format!(
                "no answer settled it, by {}: {}",
                s.judge, s.reason
            ));
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
