//! How far a long pass has gone: what execution and judging report after each cell or verdict.

/// Counts so far of one pass (cells of a run, verdicts of a judging).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub done: usize,
    pub total: usize,
    pub errors: usize,
    /// Taken from earlier work (the response cache, a resumed judging) rather than made now.
    pub cached: usize,
    /// Cells not run because the budget was spent; left out of the sink so a resume runs them.
    pub over_budget: usize,
}

/// `n` with its noun in the number it takes, for messages: "1 answer", "0 answers", "2 systems".
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
