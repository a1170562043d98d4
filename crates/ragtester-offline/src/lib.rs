//! The offline model: deterministic heuristics behind the chat-model trait, so the whole pipeline runs with
//! no server and no weights. Replies have exactly the shape a real model is asked for (JSON for questions and
//! verdicts, prose for answers), so the same parsers read both. It also plays the simulated user (`user.rs`:
//! its next move read from the assistant's last answer) and the agent's search decision (always a search).

mod claims;
pub use claims::{ClaimJudgements, judge_claims};
pub use judge::ratings;
mod conversation;
mod critic;
mod judge;
mod out_of_scope;
mod reader;
mod user;
mod wh;
mod writer;

use anyhow::{Result, bail};
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, TaskHint, Usage};
use ragtester_text::tokens::count_tokens;

pub use reader::REFUSAL_THRESHOLD;

pub struct OfflineModel;

#[async_trait::async_trait]
impl ChatModel for OfflineModel {
    fn name(&self) -> String {
        "offline".into()
    }

    fn cacheable(&self) -> bool {
        false
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        let Some(hint) = &request.hint else {
            bail!(
                "the offline model needs a task hint: it answers ragtester's own tasks, not free prompts"
            );
        };
        let content = match hint {
            TaskHint::Question { .. } => writer::write_question(hint)?,
            TaskHint::Answer {
                query,
                contexts,
                history,
            } => {
                // A turn the `rewrite` mode rewrote carries its referent; any other turn finds it in
                // the history it was given.
                let (own, written_referent) = conversation::split_rewritten(query);
                reader::answer(
                    conversation::without_cue(own),
                    written_referent.or_else(|| conversation::referent(history, own)),
                    contexts,
                )
            }
            TaskHint::Judge { .. } => judge::judge(hint)?,
            TaskHint::Critic { .. } => critic::critique(hint)?,
            TaskHint::Claims { .. } => claims::split(hint)?,
            TaskHint::Entailment { .. } => claims::entail(hint)?,
            TaskHint::FollowUp {
                previous,
                question,
                language,
            } => serde_json::json!({
                "question": conversation::follow_up(previous, question, language)
            })
            .to_string(),
            TaskHint::Rewrite { history, query } => conversation::rewrite(history, query),
            // The offline agent always searches, with the question made to stand alone.
            TaskHint::SearchCall { query, history } => {
                let query = if history.is_empty() {
                    query.clone()
                } else {
                    conversation::rewrite(history, query)
                };
                serde_json::json!({"search": true, "query": query}).to_string()
            }
            TaskHint::GoalSettled {
                expected_answer,
                user_said,
                answer,
                ..
            } => {
                let settled = ragtester_text::contradiction::settles_beyond(
                    answer,
                    expected_answer,
                    user_said,
                );
                let reason = if settled {
                    "states the expected answer's facts beyond what the user said"
                } else {
                    "does not state the expected answer's facts beyond what the user said"
                };
                serde_json::json!({"settled": settled, "reason": reason}).to_string()
            }
            TaskHint::SimulatedUser {
                goal,
                unanswerable,
                language,
                transcript,
            } => {
                let (kind, message) = user::next_message(goal, *unanswerable, language, transcript);
                serde_json::json!({"move": kind, "message": message}).to_string()
            }
        };
        // Usage as a real model would report it: tokens of the prompt it was sent and of its reply.
        let prompt_tokens = request
            .messages
            .iter()
            .map(|m| count_tokens(&m.content))
            .sum::<usize>();
        Ok(ChatResponse {
            cached: false,
            cached_at: None,
            usage: Usage {
                prompt_tokens: prompt_tokens as u64,
                completion_tokens: count_tokens(&content) as u64,
            },
            content,
            notes: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{Message, RetrievedContext};

    async fn answer(query: &str, history: Vec<Message>, passages: &[&str]) -> String {
        let contexts = passages
            .iter()
            .enumerate()
            .map(|(i, text)| RetrievedContext {
                rank: i + 1,
                score: 1.0,
                chunk_id: format!("c{i}"),
                document_id: "d".into(),
                start: 0,
                end: text.chars().count(),
                text: text.to_string(),
            })
            .collect();
        let hint = TaskHint::Answer {
            query: query.into(),
            contexts,
            history,
        };
        let request = ChatRequest::new(vec![Message::user(query)], hint);
        OfflineModel.chat(&request).await.unwrap().content
    }

    #[tokio::test]
    async fn a_rewritten_turn_is_answered_for_what_the_turn_asks() {
        // The `rewrite` mode hands the reader "turn (referring to: earlier question)": the earlier
        // question's many words name the subject, they must not pull the answer to the earlier fact.
        let history = vec![Message::user(
            "To what number of litres per hour does the pump's flow fall at a head of 3 metres?",
        )];
        let passages = [
            "At zero head the pump moves 9,600 litres per hour. Flow falls to 6,100 litres per hour at \
             a head of 3 metres, and the pump stops delivering water at a shut-off head of 7.2 metres.",
            "The pump runs on 24 volt direct current and draws 7.5 amperes at full load.",
        ];
        let turn = "On what number of volt does it run?";
        let rewritten = conversation::rewrite(&history, turn);
        assert_ne!(rewritten, turn);
        let read = answer(&rewritten, history.clone(), &passages).await;
        assert!(read.starts_with("The pump runs on 24 volt"), "{read}");
        assert_eq!(read, answer(turn, history, &passages).await);
    }
}
