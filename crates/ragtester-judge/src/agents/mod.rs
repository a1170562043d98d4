//! Tools and goals: an agent's tool calls against the ones its case expects, and a simulated user's
//! conversation judged turn by turn.

pub mod goals;
pub mod tools;
