//! What a spending cap reports. The cap itself (prices, counting) lives with the providers; the refusal is
//! here because every stage that calls models must tell "the budget is spent" from a failure: the run
//! leaves such cells unrun for `--resume`, and suite generation stops instead of noting the same refusal
//! for every section.

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BudgetLimits {
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
}

impl BudgetLimits {
    pub fn is_unlimited(&self) -> bool {
        self.usd.is_none() && self.tokens.is_none()
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub usd: f64,
    pub tokens: u64,
    pub calls: u64,
}

/// The refusal of a call once the budget is spent; find it with `error.chain().any(BudgetExhausted::is)`.
#[derive(Debug, Clone)]
pub struct BudgetExhausted {
    pub spent: Spent,
    pub limits: BudgetLimits,
}

impl BudgetExhausted {
    pub fn is(error: &(dyn std::error::Error + 'static)) -> bool {
        error.is::<BudgetExhausted>()
    }

    /// Whether an error, or anything it wraps, is a budget refusal.
    pub fn caused(error: &anyhow::Error) -> bool {
        error.chain().any(Self::is)
    }
}

impl std::fmt::Display for BudgetExhausted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "budget spent: {} tokens, ${:.4} in {} calls",
            self.spent.tokens, self.spent.usd, self.spent.calls
        )?;
        if let Some(t) = self.limits.tokens {
            write!(f, " (cap {t} tokens)")?;
        }
        if let Some(u) = self.limits.usd {
            write!(f, " (cap ${u:.4})")?;
        }
        Ok(())
    }
}

impl std::error::Error for BudgetExhausted {}
