//! The offline model: deterministic heuristics behind the chat-model trait, so the whole pipeline runs with
//! no server and no weights. Replies have exactly the shape a real model is asked for (JSON for questions and
//! verdicts, prose for answers), so the same parsers read both.

mod claims;
pub use claims::{ClaimJudgements, judge_claims};
pub use judge::ratings;
mod conversation;
mod critic;
mod judge;
mod out_of_scope;
mod reader;
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

    fn is_heuristic(&self) -> bool {
        true
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
            } => reader::answer(
                conversation::without_cue(query),
                conversation::referent(history, query),
                contexts,
            ),
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
