//! A spending cap enforced during a run: every reply a model actually produces (cache hits are free) adds
//! its tokens, and its cost by the price table; once either cap is reached, no further call starts and each
//! is refused with [`BudgetExhausted`], which the engine records as "not run" rather than as an answer, so
//! `--resume` with a larger budget finishes the run. Calls already in flight finish and are counted, so a
//! run may pass its cap by at most the calls in flight.

use anyhow::{Result, bail};
use ragtester_core::config::PriceTable;
use ragtester_core::{ChatModel, ChatRequest, ChatResponse, ModelSpec, Usage};
use std::sync::{Arc, Mutex};

pub use ragtester_core::spend::{BudgetExhausted, BudgetLimits, Spent};

pub struct Budget {
    limits: BudgetLimits,
    prices: PriceTable,
    spent: Mutex<Spent>,
}

impl Budget {
    pub fn new(limits: BudgetLimits, prices: PriceTable) -> Arc<Self> {
        Arc::new(Self {
            limits,
            prices,
            spent: Mutex::new(Spent::default()),
        })
    }

    pub fn limits(&self) -> BudgetLimits {
        self.limits
    }

    pub fn spent(&self) -> Spent {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuse a dollar cap that cannot be enforced: a hosted model (`openai:`) with no price. Servers on
    /// the user's machine (`ollama:`, `local:`) and the offline model cost nothing unless priced.
    pub fn check_priced(&self, spec: &str) -> Result<()> {
        if self.limits.usd.is_some()
            && !self.prices.contains_key(spec)
            && matches!(ModelSpec::parse(spec)?, ModelSpec::OpenAi(_))
        {
            bail!(
                "a dollar budget needs the price of `{spec}`: add it to [prices] in the config file, \
                 or cap tokens instead"
            );
        }
        Ok(())
    }

    fn admit(&self) -> Result<(), BudgetExhausted> {
        let spent = self.spent();
        let over = self.limits.tokens.is_some_and(|t| spent.tokens >= t)
            || self.limits.usd.is_some_and(|u| spent.usd >= u);
        if over {
            Err(BudgetExhausted {
                spent,
                limits: self.limits,
            })
        } else {
            Ok(())
        }
    }

    fn record(&self, spec: &str, usage: &Usage) {
        let cost = self.prices.get(spec).map_or(0.0, |p| {
            p.cost(usage.prompt_tokens, usage.completion_tokens)
        });
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        spent.tokens = spent.tokens.saturating_add(usage.total());
        spent.usd += cost;
        spent.calls += 1;
    }
}

/// A chat model whose calls count against a budget. Wrap it outside the response cache: hits cost nothing.
pub struct Budgeted {
    pub inner: Arc<dyn ChatModel>,
    pub budget: Arc<Budget>,
}

#[async_trait::async_trait]
impl ChatModel for Budgeted {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn identity(&self) -> String {
        self.inner.identity()
    }

    fn cacheable(&self) -> bool {
        self.inner.cacheable()
    }

    fn context_window(&self) -> Option<usize> {
        self.inner.context_window()
    }

    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
        self.budget.admit()?;
        let response = self.inner.chat(request).await?;
        if !response.cached {
            self.budget.record(&self.inner.name(), &response.usage);
        }
        Ok(response)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::config::Price;
    use ragtester_core::{Message, TaskHint};

    struct Fixed;

    #[async_trait::async_trait]
    impl ChatModel for Fixed {
        fn name(&self) -> String {
            "openai:m".into()
        }
        async fn chat(&self, _: &ChatRequest) -> Result<ChatResponse> {
            Ok(ChatResponse {
                content: "ok".into(),
                usage: Usage {
                    prompt_tokens: 900,
                    completion_tokens: 100,
                },
                cached: false,
                cached_at: None,
                notes: Vec::new(),
            })
        }
    }

    fn request() -> ChatRequest {
        ChatRequest::new(
            vec![Message::user("q")],
            TaskHint::Answer {
                query: "q".into(),
                contexts: vec![],
                history: vec![],
            },
        )
    }

    #[tokio::test]
    async fn calls_stop_once_the_cap_is_reached() {
        let prices = PriceTable::from([(
            "openai:m".to_string(),
            Price {
                input_per_million: 1000.0,
                output_per_million: 2000.0,
            },
        )]);
        // Each call: 900 × $1000/M + 100 × $2000/M = $1.10.
        let budget = Budget::new(
            BudgetLimits {
                usd: Some(2.0),
                tokens: None,
            },
            prices,
        );
        let model = Budgeted {
            inner: Arc::new(Fixed),
            budget: budget.clone(),
        };
        model.chat(&request()).await.unwrap();
        model.chat(&request()).await.unwrap();
        let err = model.chat(&request()).await.unwrap_err();
        assert!(BudgetExhausted::caused(&err), "{err}");
        assert!(BudgetExhausted::caused(&err.context("generation failed")));
        let spent = budget.spent();
        assert_eq!((spent.calls, spent.tokens), (2, 2000));
        assert!((spent.usd - 2.2).abs() < 1e-9);
        assert!(budget.check_priced("openai:m").is_ok());
        assert!(budget.check_priced("openai:other").is_err());
        assert!(budget.check_priced("ollama:qwen3").is_ok());
    }

    #[tokio::test]
    async fn token_caps_count_prompt_and_reply() {
        let budget = Budget::new(
            BudgetLimits {
                usd: None,
                tokens: Some(1500),
            },
            PriceTable::new(),
        );
        let model = Budgeted {
            inner: Arc::new(Fixed),
            budget: budget.clone(),
        };
        model.chat(&request()).await.unwrap();
        model.chat(&request()).await.unwrap();
        assert!(model.chat(&request()).await.is_err());
        assert_eq!(budget.spent().tokens, 2000);
    }
}
