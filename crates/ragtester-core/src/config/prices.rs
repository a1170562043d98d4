//! What models cost, for the cost per configuration and the spending cap.

use serde::{Deserialize, Serialize};

/// What a model costs, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: f64,
    pub output_per_million: f64,
}

impl Price {
    pub fn cost(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input_per_million
            + completion_tokens as f64 * self.output_per_million)
            / 1e6
    }
}

/// Prices by model spec (`"openai:gpt-4o-mini"`), for cost per configuration.
pub type PriceTable = std::collections::BTreeMap<String, Price>;
