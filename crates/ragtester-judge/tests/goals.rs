//! A simulated user's goal settled by the judge named: the offline judge compares each answer's facts with
//! the expected answer beyond what the user said; a model named as judge decides it turn by turn, and the
//! rules read its decision. An unreadable decision is the verdict's error, never a silent pass or fail.

mod common;

use common::{AskedOffline, Scripted, answer, ctx};
use ragtester_core::{
    Answer, Ending, Goal, Latency, SimulatedTurn, Simulation, TaskHint, TestCase, UserMove,
    VerdictStatus,
};
use ragtester_judge::{JudgePrompts, ModelJudge, judge_sample};
use ragtester_offline::OfflineModel;

const PASSING: &str = r#"{"criteria":{"faithfulness":{"rating":"True","reason":"r"},"relevance":{"rating":"True","reason":"r"},"completeness":{"rating":"True","reason":"r"},"clarity":{"rating":"True","reason":"r"},"keyword_match":{"rating":"True","reason":"r"}},"rubric":{"correctness":{"score":5,"reason":"r"},"completeness":{"score":5,"reason":"r"},"honesty":{"score":5,"reason":"r"}}}"#;

fn goal_case() -> TestCase {
    TestCase {
        goal: Some(Goal {
            want: "find out at what pressure the relief valve opens".into(),
            persona: "a new technician".into(),
            max_turns: 3,
            details: vec!["the boiler room's relief valve".into()],
        }),
        ..ragtester_testkit::case(
            "c1",
            "At what pressure does the relief valve open?",
            "The relief valve opens at 4.5 bar.",
        )
    }
}

/// A conversation whose first answer says the user's question back and whose second gives the fact.
fn conversation() -> Answer {
    let passage = ctx(1, "manual", 0, "The relief valve opens at 4.5 bar.");
    let turn = |user: &str, user_move, said: &str| SimulatedTurn {
        user: user.into(),
        user_move,
        answer: said.into(),
        contexts: vec![passage.clone()],
        latency: Latency::default(),
        error: None,
        tool_calls: None,
    };
    Answer {
        simulation: Some(Simulation {
            user_model: "offline".into(),
            turns: vec![
                turn(
                    "At what pressure does the relief valve open?",
                    UserMove::Open,
                    "You ask at what pressure the relief valve opens.",
                ),
                turn(
                    "Yes, the boiler room's relief valve.",
                    UserMove::Clarify,
                    "It opens at 4.5 bar.",
                ),
            ],
            ended: Some(Ending::Satisfied),
            user_usage: Default::default(),
            user_calls: 3,
            user_ms: 0.0,
        }),
        ..answer(
            "It opens at 4.5 bar.",
            vec![ctx(1, "manual", 0, "The relief valve opens at 4.5 bar.")],
        )
    }
}

/// A judge model that passes every answer and decides goals by `reply`.
fn scripted(reply: fn(&TaskHint) -> String) -> ModelJudge {
    ModelJudge::of(Scripted {
        name: "scripted:goals",
        reply,
    })
}

#[tokio::test]
async fn the_judge_named_decides_which_answer_met_the_goal() {
    let (case, answer) = (goal_case(), conversation());
    let prompts = JudgePrompts::default();
    let judged = |judge: ModelJudge| {
        let (case, answer, prompts) = (case.clone(), answer.clone(), prompts.clone());
        async move { judge_sample(Some(&case), &answer, &judge, (0, &prompts), &[]).await }
    };

    // The offline judge: the facts compared; the echo settles nothing, the second answer does.
    let offline = judge_sample(Some(&case), &answer, &OfflineModel, (0, &prompts), &[]).await;
    let goal = offline.metrics.goal.clone().unwrap();
    assert_eq!((goal.reached, goal.turns_to_goal), (true, Some(2)));
    assert_eq!(goal.settled_by, None);

    // The offline model asked through the goal prompt decides the same, recorded as its decision.
    let asked = judged(ModelJudge::of(AskedOffline)).await;
    let goal = asked.metrics.goal.clone().unwrap();
    assert_eq!(
        (goal.reached, goal.turns_to_goal),
        (true, Some(2)),
        "{goal:?}"
    );
    assert_eq!(goal.settled_by.as_deref(), Some("offline"));

    // A model that finds no answer settles the goal: not reached, and the rule fails the case, whatever
    // its ratings say.
    let never = judged(scripted(|hint| match hint {
        TaskHint::Judge { .. } => PASSING.into(),
        _ => r#"{"settled": false, "reason": "the figure is not the one asked for"}"#.into(),
    }))
    .await;
    let goal = never.metrics.goal.clone().unwrap();
    assert!(!goal.reached && goal.turns_to_goal.is_none());
    assert!(
        goal.why.as_deref().unwrap().contains("by scripted:goals"),
        "{goal:?}"
    );
    assert_eq!(never.passed, Some(false));
    assert!(
        never
            .rule_failure
            .as_deref()
            .unwrap()
            .contains("goal was not reached"),
        "{never:?}"
    );

    // A model that takes the echo as settling: its decision stands (turn 1).
    let eager = judged(scripted(|hint| match hint {
        TaskHint::Judge { .. } => PASSING.into(),
        _ => r#"{"settled": true, "reason": "answers it"}"#.into(),
    }))
    .await;
    assert_eq!(eager.metrics.goal.unwrap().turns_to_goal, Some(1));

    // An unreadable decision, asked again: the verdict's error, no pass or fail.
    let garbled = judged(scripted(|hint| match hint {
        TaskHint::Judge { .. } => PASSING.into(),
        _ => "I think so".into(),
    }))
    .await;
    assert_eq!(garbled.status, VerdictStatus::JudgeError);
    assert_eq!(garbled.passed, None);
    let error = garbled.error.unwrap();
    assert!(
        error.contains("goal") && error.contains("I think so"),
        "{error}"
    );
}
