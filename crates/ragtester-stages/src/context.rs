//! What every stage runs with: the models, where it tells a person what it does, and what its calls may
//! spend. A front end builds one per command (or web job) from the command's plan and hands it to each
//! stage it runs; nothing changes it after, so two stages — or two web jobs — never see each other's
//! settings.

use crate::events::Events;
use anyhow::{Result, bail};
use ragtester_core::config::{PriceTable, RunSettings};
use ragtester_core::{Limits, ModelTable};
use ragtester_models::{Budget, BudgetLimits, Models};
use std::sync::Arc;

#[derive(Clone)]
pub struct StageContext<'a> {
    models: Models,
    events: &'a dyn Events,
    budget: Option<Arc<Budget>>,
    /// The front end's limits (`--limit`), read once there: a stage never reads the process's.
    limits: Limits,
}

impl<'a> StageContext<'a> {
    /// The registry as the command's flags built it, the front end's limits, no project settings and no
    /// spending cap.
    pub fn new(models: &Models, events: &'a dyn Events, limits: Limits) -> Self {
        Self {
            models: models.clone(),
            events,
            budget: None,
            limits,
        }
    }

    /// The same models, settings and cap, telling another sink (a demo's inner stages run quietly).
    pub fn telling(&self, events: &'a dyn Events) -> Self {
        Self {
            events,
            ..self.clone()
        }
    }

    /// The models under a project's `[models]` table (provider settings per spec).
    pub fn with_table(self, table: &ModelTable) -> Self {
        Self {
            models: self.models.with_table(table),
            ..self
        }
    }

    /// A spending cap from the run's limits (`budget_tokens`, `budget_usd`, priced by `prices`), shared by
    /// every role that spends; none when neither is set.
    pub fn with_budget(self, limits: &RunSettings, prices: &PriceTable) -> Result<Self> {
        if limits.budget_tokens == Some(0) {
            bail!("--budget-tokens must be at least 1");
        }
        let limits = BudgetLimits {
            usd: limits.budget_usd,
            tokens: limits.budget_tokens,
        };
        let budget = (!limits.is_unlimited()).then(|| Budget::new(limits, prices.clone()));
        Ok(Self { budget, ..self })
    }

    /// A cap on tokens alone (prompt plus reply), as `generate --budget-tokens` sets it.
    pub fn with_token_budget(self, tokens: Option<u64>) -> Result<Self> {
        let limits = RunSettings {
            budget_tokens: tokens,
            ..Default::default()
        };
        self.with_budget(&limits, &PriceTable::default())
    }

    /// What a planned run runs with: the plan's model table and its budget.
    pub fn planned(self, plan: &crate::plan::RunPlan) -> Result<Self> {
        self.with_table(&plan.models)
            .with_budget(&plan.settings, &plan.prices)
    }

    pub fn models(&self) -> &Models {
        &self.models
    }

    pub fn events(&self) -> &'a dyn Events {
        self.events
    }

    /// The cap the writer's, critic's and system's calls count against.
    pub fn budget(&self) -> Option<&Arc<Budget>> {
        self.budget.as_ref()
    }

    /// Sizes and counts no input may exceed (`--limit`).
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}
