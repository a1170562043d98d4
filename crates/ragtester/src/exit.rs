//! Exit codes beyond 0 (success), 1 (error: nothing usable was produced) and 2 (usage, from clap);
//! docs/guide/ci.md lists them all.

/// Some inputs, cells or verdicts failed and were reported; the rest was processed.
pub const EXIT_PARTIAL: u8 = 3;
/// A `--fail-under` threshold or another gate was not met.
pub const EXIT_THRESHOLD: u8 = 4;
/// The run stopped at its budget; `--resume` with a larger one finishes it.
pub const EXIT_BUDGET: u8 = 5;

/// [`EXIT_PARTIAL`] when something was left out, else 0.
pub fn partial_if(left_out: bool) -> u8 {
    if left_out { EXIT_PARTIAL } else { 0 }
}

/// [`EXIT_THRESHOLD`] when a gate was missed, else 0.
pub fn threshold_if(missed: bool) -> u8 {
    if missed { EXIT_THRESHOLD } else { 0 }
}
