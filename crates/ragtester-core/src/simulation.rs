//! Simulated users: a goal grounded in the documents (`TestCase::goal`), the moves a user makes (the
//! conversation itself is the answer's record: `answer::Simulation`, turn by turn, each next turn chosen
//! from the assistant's last answer), and how far it got (`GoalMetrics`, on a verdict's rule metrics).

use serde::{Deserialize, Serialize};

/// What a simulated user wants and who they are. The case's query is their opening message, its
/// expected answer and source spans what settles the goal; a negative case's goal cannot be met from
/// the documents, and a correct system keeps saying so.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Goal {
    /// What the user wants to find out, in their words.
    pub want: String,
    /// Who the user is and how they talk.
    pub persona: String,
    /// The most messages the user sends, the opening one included.
    pub max_turns: u32,
    /// What the user knows and gives when the assistant asks (the subject's name, a detail).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

/// Why the user said what they said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UserMove {
    /// The opening message.
    Open,
    /// An answer to the assistant's clarifying question.
    Clarify,
    /// The goal asked again in other words, after a refusal of what the documents answer (or, for a goal
    /// they do not answer, a push to answer anyway).
    Insist,
    /// The assistant answered something else: the user says so and asks again.
    Correct,
    /// The goal is met (or, where the documents cannot meet it, the refusal accepted): the conversation
    /// ends.
    Satisfied,
    /// The user stops without reaching the goal.
    GiveUp,
}

impl UserMove {
    pub fn as_str(self) -> &'static str {
        match self {
            UserMove::Open => "open",
            UserMove::Clarify => "clarify",
            UserMove::Insist => "insist",
            UserMove::Correct => "correct",
            UserMove::Satisfied => "satisfied",
            UserMove::GiveUp => "give_up",
        }
    }

    /// Whether the move ends the conversation.
    pub fn ends(self) -> bool {
        matches!(self, UserMove::Satisfied | UserMove::GiveUp)
    }
}

/// How far a simulated conversation got, judged turn by turn (`ragtester_judge::goals`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GoalMetrics {
    pub turns: usize,
    /// Whether an answer gave what settles the goal (for a goal the documents cannot meet: whether the
    /// system refused every time, however the user pushed).
    pub reached: bool,
    /// The turn (1-based) whose answer first gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_to_goal: Option<usize>,
    /// Of the answers that state something, the share that contradicts none of their passages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faithful_share: Option<f64>,
    /// For a goal the documents cannot meet: whether every answer refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusals_kept: Option<bool>,
    /// Whether every answer whose language could be told was in the user's.
    pub language_kept: bool,
    /// How it ended (`satisfied`, `gave_up`, `turn_budget`, `error`).
    pub ending: String,
    /// The first turn that went wrong and how (an answer to something else, a contradiction, another
    /// language, a refusal given up on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The judge that decided which answer settled the goal (a model named as judge); absent where the
    /// answers were compared with the expected answer as facts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_by: Option<String>,
}
