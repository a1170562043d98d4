//! A simulated user's conversation with one configuration's system: the user model sends the goal's
//! opening message, reads each answer and chooses the next message (or ends), until it is satisfied,
//! gives up, or the turn budget or the time bound runs out. Every turn is committed as it is answered
//! (the answer record holds the conversation so far, its `ended` unset), so a killed run resumes after
//! the last recorded turn and never asks a turn twice. A user model that fails, answers in no known
//! shape or sends a message it sent before ends the conversation as the case's error, naming why.

use crate::pipeline::Pipeline;
use crate::run::{Cell, Slots, answer_cell};
use ragtester_core::secrets::error_text;
use ragtester_core::{
    Answer, ChatModel, ChatRequest, Ending, Goal, Message, OutputSchema, ReplyFormat, Role,
    SimulatedTurn, Simulation, TaskHint, TestCase, Usage, UserMove,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The user model that plays every goal's user, and how long one conversation may take in all.
pub struct Simulator {
    pub model: Arc<dyn ChatModel>,
    pub max_seconds: f64,
}

/// One simulated conversation: `resume` is the record a killed run left (its turns are kept, the rest
/// asked); each turn's record goes to `sender` as it is answered.
pub(crate) async fn simulate(
    pipeline: &Pipeline,
    case: &TestCase,
    simulator: &Simulator,
    resume: Option<Answer>,
    hidden: &Arc<Vec<String>>,
    slots: &Slots,
    sender: &tokio::sync::mpsc::UnboundedSender<Cell>,
) -> Cell {
    let Some(goal) = case.goal.as_ref() else {
        return answer_cell(pipeline, case, &[], hidden, slots).await;
    };
    let mut answer = resume.unwrap_or_else(|| fresh(case, &pipeline.config.id, simulator));
    let started = Instant::now();
    let mut next = if answer
        .simulation
        .as_ref()
        .is_none_or(|s| s.turns.is_empty())
    {
        Ok((UserMove::Open, case.query.clone()))
    } else {
        ask_user(simulator, goal, case, &mut answer, started).await
    };
    let ending = loop {
        let (user_move, message) = match next {
            Ok(next) => next,
            Err(why) => {
                answer.error = Some(why);
                break Ending::Error;
            }
        };
        if user_move.ends() {
            break if user_move == UserMove::Satisfied {
                Ending::Satisfied
            } else {
                Ending::GaveUp
            };
        }
        let sim = answer.simulation.as_ref().expect("a simulation");
        if sim.turns.len() >= goal.max_turns as usize {
            break Ending::TurnBudget;
        }
        if let Some(why) = out_of_time(simulator, started) {
            answer.error = Some(why);
            break Ending::Error;
        }
        if sim.turns.iter().any(|t| t.user == message) {
            answer.error = Some(format!(
                "the user model ({}) repeated itself at turn {}: «{}»",
                simulator.model.name(),
                sim.turns.len() + 1,
                clip(&message)
            ));
            break Ending::Error;
        }
        let asked = TestCase {
            query: message.clone(),
            ..case.clone()
        };
        let history = transcript(&answer);
        let left = (simulator.max_seconds - started.elapsed().as_secs_f64()).max(0.001);
        let asking = answer_cell(pipeline, &asked, &history, hidden, slots);
        let said = match tokio::time::timeout(Duration::from_secs_f64(left), asking).await {
            Ok(Cell::Answered(said)) => said,
            // The budget refused a call: the turns so far are kept; a resume asks the rest.
            Ok(_) => return Cell::OverBudget,
            Err(_) => {
                answer.error = out_of_time(simulator, started);
                break Ending::Error;
            }
        };
        let failed = said.error.clone();
        record(&mut answer, message, user_move, *said);
        let _ = sender.send(Cell::Progress(Box::new(answer.clone())));
        if let Some(e) = failed {
            let n = answer.simulation.as_ref().map_or(0, |s| s.turns.len());
            answer.error = Some(format!("turn {n}: {e}"));
            break Ending::Error;
        }
        next = ask_user(simulator, goal, case, &mut answer, started).await;
    };
    finish(&mut answer, ending);
    Cell::Answered(Box::new(answer))
}

fn fresh(case: &TestCase, config_id: &str, simulator: &Simulator) -> Answer {
    Answer {
        simulation: Some(Simulation {
            user_model: simulator.model.name(),
            turns: Vec::new(),
            ended: None,
            user_usage: Usage::default(),
            user_calls: 0,
            user_ms: 0.0,
        }),
        ..Answer::blank(&case.id, config_id)
    }
}

/// A turn answered: the system's answer, passages, time and tokens, as the record's latest.
fn record(answer: &mut Answer, user: String, user_move: UserMove, said: Answer) {
    answer.usage.add(said.usage);
    answer.latency.retrieval_ms += said.latency.retrieval_ms;
    answer.latency.generation_ms += said.latency.generation_ms;
    answer.latency.total_ms += said.latency.total_ms;
    answer.latency.queue_ms += said.latency.queue_ms;
    answer.answer = said.answer.clone();
    answer.contexts = said.contexts.clone();
    answer.tool_calls = said.tool_calls.clone();
    answer.trace = said.trace;
    if let Some(sim) = answer.simulation.as_mut() {
        sim.turns.push(SimulatedTurn {
            user,
            user_move,
            answer: said.answer,
            contexts: said.contexts,
            latency: said.latency,
            error: said.error,
            tool_calls: said.tool_calls,
        });
    }
}

fn finish(answer: &mut Answer, ending: Ending) {
    if let Some(sim) = answer.simulation.as_mut() {
        sim.ended = Some(ending);
    }
}

/// The conversation so far as chat messages: each user message, then the system's answer.
fn transcript(answer: &Answer) -> Vec<Message> {
    let mut out = Vec::new();
    for turn in answer.simulation.iter().flat_map(|s| &s.turns) {
        out.push(Message::user(turn.user.clone()));
        if turn.error.is_none() {
            out.push(Message {
                role: Role::Assistant,
                content: turn.answer.clone(),
            });
        }
    }
    out
}

fn out_of_time(simulator: &Simulator, started: Instant) -> Option<String> {
    (started.elapsed().as_secs_f64() > simulator.max_seconds).then(|| {
        format!(
            "the conversation ran past its time bound of {} s (simulation max_seconds)",
            simulator.max_seconds
        )
    })
}

/// The user model's next move and message, within what is left of the time bound.
async fn ask_user(
    simulator: &Simulator,
    goal: &Goal,
    case: &TestCase,
    answer: &mut Answer,
    started: Instant,
) -> Result<(UserMove, String), String> {
    let request = user_request(goal, case, &transcript(answer));
    let left = (simulator.max_seconds - started.elapsed().as_secs_f64()).max(0.001);
    let name = simulator.model.name();
    let asked = Instant::now();
    let reply = tokio::time::timeout(
        Duration::from_secs_f64(left),
        simulator.model.chat(&request),
    )
    .await;
    if let Some(sim) = answer.simulation.as_mut() {
        sim.user_ms += asked.elapsed().as_secs_f64() * 1000.0;
    }
    let response = match reply {
        Err(_) => return Err(out_of_time(simulator, started).unwrap_or_default()),
        Ok(Err(e)) => {
            return Err(format!(
                "the user model ({name}) failed: {}",
                error_text(&e)
            ));
        }
        Ok(Ok(response)) => response,
    };
    if let Some(sim) = answer.simulation.as_mut() {
        sim.user_usage.add(response.usage);
        sim.user_calls += 1;
    }
    read_move(&response.content).ok_or_else(|| {
        format!(
            "the user model ({name}) replied in no known shape: «{}»",
            clip(&response.content)
        )
    })
}

/// `{"move", "message"}` out of a reply.
fn read_move(reply: &str) -> Option<(UserMove, String)> {
    let (start, end) = (reply.find('{')?, reply.rfind('}')?);
    let value: Value = serde_json::from_str(reply.get(start..=end)?).ok()?;
    let user_move: UserMove = serde_json::from_value(value.get("move")?.clone()).ok()?;
    let message = value.get("message")?.as_str()?.trim().to_string();
    (user_move != UserMove::Open && (user_move.ends() || !message.is_empty()))
        .then_some((user_move, message))
}

/// What a language model playing the user is asked.
fn user_request(goal: &Goal, case: &TestCase, transcript: &[Message]) -> ChatRequest {
    let unanswerable = case.expects_refusal();
    let said: String = transcript
        .iter()
        .map(|m| match m.role {
            Role::User => format!("USER: {}\n", m.content),
            _ => format!("ASSISTANT: {}\n", m.content),
        })
        .collect();
    // The user knows what it wants, never what the documents say: told the answer, a user model hands
    // it to the system ("I mean 4.5 bar") and a system that echoes it back would reach the goal.
    let knows = if unanswerable {
        "The documents do not hold this; a good assistant says so."
    } else {
        "You do not know the answer: that is why you ask. Never state a figure, name or fact you want \
         to learn; judge the answer by whether it gives a specific answer to your goal, not a repeat \
         of your own words."
    };
    let language = if case.language == "zh" {
        "Chinese"
    } else {
        "English"
    };
    let system = format!(
        "You play a user of a documentation assistant. Persona: {}. Your goal: {}. You know these \
         details if asked: {}. {knows}\nRead the assistant's last answer and choose your next move: \
         `satisfied` if it gives what you wanted (or, where the documents cannot, says so plainly twice); \
         `clarify` if it asked you a question — answer it; `insist` if it refused — ask again in other \
         words; `correct` if it answered something else — say so and ask again; `give_up` after several \
         tries. Write your message in {language}, never the same message twice. Reply with JSON only: \
         {{\"move\": ..., \"message\": ...}}.",
        goal.persona,
        goal.want,
        if goal.details.is_empty() {
            "none".to_string()
        } else {
            goal.details.join("; ")
        },
    );
    let mut request = ChatRequest::new(
        vec![
            Message::system(system),
            Message::user(format!("The conversation so far:\n{said}")),
        ],
        TaskHint::SimulatedUser {
            goal: goal.clone(),
            unanswerable,
            language: case.language.clone(),
            transcript: transcript.to_vec(),
        },
    );
    request.format = ReplyFormat::Schema(OutputSchema {
        name: "user_turn".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "move": {"type": "string", "enum": ["clarify", "insist", "correct", "satisfied", "give_up"]},
                "message": {"type": "string", "maxLength": 600}
            },
            "required": ["move", "message"],
            "additionalProperties": false
        }),
    });
    request
}

fn clip(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(160) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::System;
    use crate::sink::{AnswerSink, InMemory};
    use ragtester_core::{ChatResponse, Configuration, Document, DocumentFormat};
    use ragtester_llm::{RagTarget, TargetReply, TargetRequest};
    use std::sync::Mutex;

    /// A system that asks back on the first message of a conversation and answers on the next,
    /// remembering every message it was sent.
    #[derive(Default)]
    struct AsksBack(Mutex<Vec<String>>);

    #[async_trait::async_trait]
    impl RagTarget for AsksBack {
        fn name(&self) -> String {
            "asks-back".into()
        }
        async fn ask(&self, request: &TargetRequest<'_>) -> anyhow::Result<TargetReply> {
            self.0.lock().unwrap().push(request.query.to_string());
            let answer = if request.history.is_empty() {
                "Which model do you mean?"
            } else {
                "The X2 battery warranty lasts two years."
            };
            Ok(TargetReply {
                answer: answer.into(),
                contexts: Vec::new(),
                citations: Vec::new(),
                tool_calls: None,
            })
        }
    }

    /// A user model that replies with each of its lines in turn, or fails.
    struct Scripted(Vec<&'static str>, Mutex<usize>);

    #[async_trait::async_trait]
    impl ChatModel for Scripted {
        fn name(&self) -> String {
            "scripted-user".into()
        }
        async fn chat(&self, _: &ChatRequest) -> anyhow::Result<ChatResponse> {
            let mut at = self.1.lock().unwrap();
            let Some(line) = self.0.get(*at) else {
                anyhow::bail!("HTTP 500 from the user model")
            };
            *at += 1;
            Ok(ChatResponse {
                content: line.to_string(),
                usage: Usage::default(),
                cached: false,
                cached_at: None,
                notes: Vec::new(),
            })
        }
    }

    fn case() -> TestCase {
        let mut case = ragtester_testkit::case(
            "goal",
            "How long is the battery warranty?",
            "The X2 battery warranty lasts two years.",
        );
        case.goal = Some(Goal {
            want: case.query.clone(),
            persona: "a new owner".into(),
            max_turns: 4,
            details: vec!["X2".into()],
        });
        case
    }

    fn pipeline(target: Arc<AsksBack>) -> Arc<Pipeline> {
        let doc = Document::new(
            "d".into(),
            DocumentFormat::Text,
            "d".into(),
            "The X2 battery warranty lasts two years.".into(),
            None,
        );
        let config =
            Configuration::for_target(ragtester_core::config::TargetSettings::imported("t", "f"));
        Arc::new(Pipeline {
            config,
            system: System::External {
                target,
                documents: Arc::new(vec![doc]),
                tracing: None,
            },
        })
    }

    async fn converse(target: &Arc<AsksBack>, user: Arc<dyn ChatModel>, sink: &InMemory) -> Answer {
        let simulator = Arc::new(Simulator {
            model: user,
            max_seconds: 30.0,
        });
        let pipelines = [pipeline(target.clone())];
        crate::execute(
            &pipelines,
            &[case()],
            sink,
            2,
            None,
            Some(simulator),
            &|_| {},
        )
        .await
        .unwrap();
        sink.answers().remove(0)
    }

    #[tokio::test]
    async fn a_killed_conversation_resumes_after_its_last_turn_without_asking_it_again() {
        let target = Arc::new(AsksBack::default());
        let sink = InMemory::default();
        // A run killed after the first turn left its record under way.
        let user: Arc<dyn ChatModel> = Arc::new(ragtester_offline::OfflineModel);
        let mut left = converse(&target, user.clone(), &sink).await;
        assert_eq!(
            left.simulation.as_ref().unwrap().ended,
            Some(Ending::Satisfied)
        );
        let sim = left.simulation.as_mut().unwrap();
        sim.turns.truncate(1);
        sim.ended = None;
        sink.put_answer(&left).unwrap();
        target.0.lock().unwrap().clear();
        let resumed = converse(&target, user, &sink).await;
        let asked = target.0.lock().unwrap().clone();
        assert_eq!(
            asked,
            ["I mean X2. How long is the battery warranty?"],
            "only the turn left"
        );
        let sim = resumed.simulation.unwrap();
        assert!(
            sim.user_ms > 0.0 && sim.user_calls >= 1,
            "the user model's time is its own"
        );
        assert_eq!(sim.turns.len(), 2);
        assert_eq!(sim.ended, Some(Ending::Satisfied));
        assert_eq!(resumed.answer, "The X2 battery warranty lasts two years.");
    }

    #[tokio::test]
    async fn a_user_model_that_repeats_itself_fails_or_replies_in_no_shape_is_the_case_s_error() {
        let repeating = Scripted(
            vec![r#"{"move": "correct", "message": "How long is the battery warranty?"}"#],
            Mutex::new(0),
        );
        let cases: [(Arc<dyn ChatModel>, &str); 3] = [
            (Arc::new(repeating), "repeated itself at turn 2"),
            (
                Arc::new(Scripted(vec![], Mutex::new(0))),
                "failed: HTTP 500",
            ),
            (
                Arc::new(Scripted(vec!["Sure, I will ask again."], Mutex::new(0))),
                "no known shape",
            ),
        ];
        for (user, why) in cases {
            let target = Arc::new(AsksBack::default());
            let sink = InMemory::default();
            let answer = converse(&target, user, &sink).await;
            let error = answer.error.as_deref().unwrap_or_default();
            assert!(
                error.contains("scripted-user") && error.contains(why),
                "{error}"
            );
            let sim = answer.simulation.unwrap();
            assert_eq!(sim.ended, Some(Ending::Error));
            assert_eq!(sim.turns.len(), 1, "the opening turn is kept");
        }
    }
}
