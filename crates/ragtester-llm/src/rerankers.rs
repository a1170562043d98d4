//! Rerankers that need a provider: a rerank endpoint (TEI's `{"query","texts"}` → `[{"index","score"}]`,
//! Jina / Cohere / vLLM's `{"query","documents"}` → `{"results":[{"index","relevance_score"}]}`), and any chat
//! model asked to grade each passage from 0 to 10 (pointwise LLM reranking).

use crate::openai::snippet;
use anyhow::{Result, anyhow, bail};
use ragtester_core::{ChatModel, ChatRequest, Message, Reranker};
use ragtester_http::Bridge;
use ragtester_http::{HttpClient, RetryPolicy};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct HttpReranker {
    url: String,
    http: Arc<HttpClient>,
    bridge: Bridge,
}

impl HttpReranker {
    pub fn new(url: &str, policy: RetryPolicy) -> Result<Self> {
        Ok(Self {
            url: url.to_string(),
            http: Arc::new(HttpClient::new(policy)?),
            bridge: Bridge::new("reranker")?,
        })
    }

    /// A rerank endpoint under one command's HTTP settings.
    pub fn configured(url: &str, http: &ragtester_http::HttpSettings) -> Result<Self> {
        Ok(Self {
            url: url.to_string(),
            http: Arc::new(HttpClient::configured(http, Default::default())?),
            bridge: Bridge::new("reranker")?,
        })
    }
}

impl Reranker for HttpReranker {
    fn id(&self) -> String {
        format!("rerank-endpoint:{}", self.url)
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>> {
        if passages.is_empty() {
            return Ok(Vec::new());
        }
        // Both field names, so TEI and the Jina/Cohere shape are served by one request.
        let body = json!({ "query": query, "texts": passages, "documents": passages });
        let (http, url) = (self.http.clone(), self.url.clone());
        let reply = self
            .bridge
            .run(async move { http.post_json(&url, None, &body).await })??;
        rerank_scores(&reply, passages.len())
            .map_err(|e| anyhow!("{}: {e}: {}", self.url, snippet(&reply)))
    }
}

/// Scores in input order from either reply shape; every input must be scored exactly once.
fn rerank_scores(reply: &Value, expected: usize) -> Result<Vec<f64>> {
    let items = reply
        .as_array()
        .or_else(|| reply["results"].as_array())
        .or_else(|| reply["data"].as_array())
        .ok_or_else(|| anyhow!("reply is neither a list nor has a results list"))?;
    let mut scores = vec![None; expected];
    for item in items {
        let index = item["index"]
            .as_u64()
            .ok_or_else(|| anyhow!("a result has no index"))? as usize;
        let score = item["score"]
            .as_f64()
            .or_else(|| item["relevance_score"].as_f64())
            .filter(|s| s.is_finite())
            .ok_or_else(|| anyhow!("result {index} has no finite score"))?;
        match scores.get_mut(index) {
            Some(slot @ None) => *slot = Some(score),
            Some(Some(_)) => bail!("index {index} scored twice"),
            None => bail!("index {index} is out of range for {expected} passages"),
        }
    }
    scores
        .into_iter()
        .enumerate()
        .map(|(i, s)| s.ok_or_else(|| anyhow!("passage {i} was not scored")))
        .collect()
}

/// Pointwise LLM reranking: each passage graded 0–10 by a chat model, in parallel.
pub struct LlmReranker {
    model: Arc<dyn ChatModel>,
    bridge: Bridge,
}

impl LlmReranker {
    pub fn new(model: Arc<dyn ChatModel>) -> Result<Self> {
        Ok(Self {
            model,
            bridge: Bridge::new("llm-reranker")?,
        })
    }
}

pub(crate) fn grading_request(query: &str, passage: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![
            Message::system(
                "You grade search results. Reply with a single integer from 0 (irrelevant) to 10 \
                 (fully answers the query), nothing else. Query and passage may be in Chinese or English.",
            ),
            Message::user(format!("Query: {query}\n\nPassage:\n{passage}\n\nGrade:")),
        ],
        temperature: 0.0,
        max_tokens: Some(8),
        seed: None,
        format: ragtester_core::ReplyFormat::Text,
        sample: 0,
        hint: None,
    }
}

/// The first number in the reply, clamped to 0–10 and scaled to [0, 1].
pub(crate) fn parse_grade(reply: &str) -> Option<f64> {
    let start = reply.find(|c: char| c.is_ascii_digit())?;
    let digits: String = reply[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let grade: f64 = digits.trim_end_matches('.').parse().ok()?;
    Some(grade.clamp(0.0, 10.0) / 10.0)
}

impl Reranker for LlmReranker {
    fn id(&self) -> String {
        format!("llm-rerank:{}", self.model.name())
    }

    fn score(&self, query: &str, passages: &[&str]) -> Result<Vec<f64>> {
        let requests: Vec<ChatRequest> =
            passages.iter().map(|p| grading_request(query, p)).collect();
        let model = self.model.clone();
        let replies = self.bridge.run(async move {
            futures::future::join_all(requests.iter().map(|r| model.chat(r))).await
        })?;
        replies
            .into_iter()
            .enumerate()
            .map(|(i, reply)| {
                let reply = reply?;
                parse_grade(&reply.content).ok_or_else(|| {
                    anyhow!(
                        "{} gave passage {i} no grade: {:?}",
                        self.id(),
                        reply.content.chars().take(80).collect::<String>()
                    )
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_reply_shapes_map_back_to_input_order() {
        let tei = json!([{"index": 1, "score": 0.9}, {"index": 0, "score": 0.1}]);
        assert_eq!(rerank_scores(&tei, 2).unwrap(), vec![0.1, 0.9]);
        let jina = json!({"results": [{"index": 0, "relevance_score": 0.3}, {"index": 1, "relevance_score": 0.2}]});
        assert_eq!(rerank_scores(&jina, 2).unwrap(), vec![0.3, 0.2]);
        assert!(rerank_scores(&json!([{"index": 0, "score": 1.0}]), 2).is_err());
        assert!(rerank_scores(&json!([{"index": 5, "score": 1.0}]), 2).is_err());
        assert!(rerank_scores(&json!({"error": "x"}), 1).is_err());
    }

    #[test]
    fn grades_parse_from_chatty_replies() {
        assert_eq!(parse_grade("8"), Some(0.8));
        assert_eq!(parse_grade("Grade: 7/10"), Some(0.7));
        assert_eq!(parse_grade("评分：10"), Some(1.0));
        assert_eq!(parse_grade("42"), Some(1.0));
        assert_eq!(parse_grade("no idea"), None);
    }
}
