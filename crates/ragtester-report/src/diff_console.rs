//! A diff as the command line prints it: one screen — what was compared and what the gate found, the
//! configurations that moved, the regressions and fixes first — folded to the terminal's width. `--full`
//! lists every configuration and cell; `--json` and `--markdown` keep everything too.

use crate::diff::{RunDiff, SuiteChangeKind, cell_line, counted, suite_change_lines};
use std::fmt::Write;

/// Configurations listed on one screen: those with the most regressions, then the most fixes.
const CONFIGS: usize = 6;
/// Lines one screen holds; the cells listed stop where the next would pass it.
const SCREEN: usize = 45;

/// The diff for a person, every line at most `width` characters. By default one screen: the headline, the
/// configurations that moved most, the counts, then regressions, fixes, inconclusive cells and conversations
/// as far as the screen goes; `full` lists every configuration and changed cell, flaky ones too.
pub fn render_diff(diff: &RunDiff, width: usize, full: bool) -> String {
    let mut out = Screen {
        text: String::new(),
        width,
        // Two lines kept for the closing count of what was left out.
        room: if full { usize::MAX } else { SCREEN - 2 },
        hidden: 0,
    };
    out.line(&diff.headline());
    out.line("");
    let mut moved: Vec<_> = diff.configs.iter().collect();
    if !full {
        moved.retain(|c| c.regressions + c.fixes > 0);
        moved.sort_by_key(|c| std::cmp::Reverse((c.regressions, c.fixes)));
        moved.truncate(CONFIGS);
    }
    for c in &moved {
        out.line(&config_line(c, full));
    }
    if moved.is_empty() && !diff.configs.is_empty() {
        out.line(&format!(
            "no configuration has a regression or a fix (--full lists all {})",
            diff.configs.len()
        ));
    } else if diff.configs.len() > moved.len() {
        out.line(&format!(
            "{} more configurations (--full lists every one)",
            diff.configs.len() - moved.len()
        ));
    }
    out.line("");
    out.line(&format!(
        "{}, {}, {} inconclusive, {}, {}; {} cells only before, {} only after",
        counted(diff.regressions.len(), "regression", "regressions"),
        counted(diff.fixes.len(), "fix", "fixes"),
        diff.inconclusive.len(),
        counted(diff.error_changes.len(), "error change", "error changes"),
        counted(diff.flaky.len(), "flaky cell", "flaky cells"),
        diff.only_before,
        diff.only_after
    ));
    if let Some(note) = diff.chance_note() {
        out.line(&note);
    }
    if !diff.suite_changes.is_empty() {
        out.line(&format!(
            "the suites differ (not counted as regressions): {} rewritten, {} retired, {} new, {} stale",
            diff.suite_count(SuiteChangeKind::Rewritten),
            diff.suite_count(SuiteChangeKind::Retired),
            diff.suite_count(SuiteChangeKind::New),
            diff.suite_count(SuiteChangeKind::Stale)
        ));
    }
    for (what, list) in [
        ("regressed", &diff.regressions),
        ("fixed", &diff.fixes),
        ("inconclusive (repeat more)", &diff.inconclusive),
    ] {
        for c in list {
            out.listed(&format!("{what}: {}", cell_line(c)));
        }
    }
    if full {
        let mut lines = String::new();
        suite_change_lines(&mut lines, diff);
        for l in lines.lines() {
            out.listed(l);
        }
        for c in &diff.flaky {
            out.listed(&format!("flaky: {}", cell_line(c)));
        }
    } else {
        out.hidden += diff.suite_changes.len() + diff.flaky.len();
    }
    for c in &diff.conversations {
        out.listed(&conversation_line(c));
    }
    if out.hidden > 0 {
        out.room = usize::MAX;
        out.line(&format!(
            "{} not listed: --full lists them, --markdown FILE or --json FILE keeps them",
            counted(out.hidden, "more change", "more changes")
        ));
    }
    out.text
}

/// Text folded to the width, with the lines left before the screen is full.
struct Screen {
    text: String,
    width: usize,
    room: usize,
    /// Listed items left out for want of room.
    hidden: usize,
}

impl Screen {
    fn line(&mut self, line: &str) {
        let folded = crate::console::fold(line, self.width);
        self.room = self.room.saturating_sub(folded.lines().count().max(1));
        let _ = writeln!(self.text, "{folded}");
    }

    /// A listed item: printed while the screen has room for it, else counted.
    fn listed(&mut self, line: &str) {
        let folded = crate::console::fold(line, self.width);
        let lines = folded.lines().count().max(1);
        if lines <= self.room {
            self.room -= lines;
            let _ = writeln!(self.text, "{folded}");
        } else {
            self.room = 0;
            self.hidden += 1;
        }
    }
}

fn config_line(c: &crate::diff::ConfigDelta, full: bool) -> String {
    let mut line = format!(
        "{}: pass rate {} → {}, {}, {}",
        c.label,
        crate::percent::pct(c.pass_rate_before),
        crate::percent::pct(c.pass_rate_after),
        counted(c.regressions, "regression", "regressions"),
        counted(c.fixes, "fix", "fixes"),
    );
    if let Some(p) = c.mcnemar_p {
        let _ = write!(line, " (McNemar p = {p:.3})");
    }
    if let Some(i) = c.score_change.as_ref().filter(|_| full) {
        let _ = write!(
            line,
            "; Δ score {:+.3} [{:+.3}, {:+.3}]",
            i.estimate, i.low, i.high
        );
    }
    line
}

fn conversation_line(c: &crate::diff::ConversationChange) -> String {
    let turns: Vec<String> = c.changed_turns.iter().map(usize::to_string).collect();
    format!(
        "conversation {} ({}) in configuration {}: {} (turns {} changed)",
        c.conversation,
        c.kind.replace('_', " "),
        c.config_id,
        if c.passed_after {
            "now passes whole"
        } else {
            "no longer passes whole"
        },
        turns.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{CellChange, ConfigDelta};

    fn cell(case: &str) -> CellChange {
        CellChange {
            label: "bm25 k=3 · offline · a label long enough to be folded at a narrow width".into(),
            ..crate::testdata::regressed_cell(case)
        }
    }

    fn big_diff() -> RunDiff {
        RunDiff {
            regressions: (0..40)
                .map(|i| CellChange {
                    query: format!("How many r{i} does the pump hold?"),
                    ..cell(&format!("r{i}"))
                })
                .collect(),
            fixes: (0..30).map(|i| cell(&format!("f{i}"))).collect(),
            flaky: (0..20).map(|i| cell(&format!("x{i}"))).collect(),
            compared: 2000,
            configs: (0..30)
                .map(|i| ConfigDelta {
                    config_id: format!("k{i}"),
                    label: format!("hybrid-rerank k={i} · offline · hash · history rewrite"),
                    regressions: i % 3,
                    fixes: i % 2,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_large_diff_fits_one_screen_at_the_terminal_width() {
        let d = big_diff();
        let text = render_diff(&d, 80, false);
        assert!(text.lines().count() <= 45, "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.starts_with("2000 cells compared, 40 regressions, 30 fixes"));
        assert!(
            text.contains("regressed: \"How many r0 does the pump hold?\" in"),
            "{text}"
        );
        assert!(text.contains("more configurations (--full"), "{text}");
        assert!(text.contains("--full lists them"), "{text}");
    }

    #[test]
    fn a_marginal_regression_among_flaky_cells_is_said_to_be_possibly_chance() {
        let mut d = big_diff();
        assert!(
            d.chance_note().is_none(),
            "one-repeat regressions carry no p"
        );
        for c in &mut d.regressions {
            c.p_value = Some(0.024);
        }
        let text = render_diff(&d, 100, false);
        assert!(
            text.contains("note: these runs have 20 flaky cells"),
            "{text}"
        );
        d.regressions[0].p_value = Some(0.004);
        assert!(d.chance_note().is_none(), "a clear drop is no chance");
        d.regressions[0].p_value = Some(0.03);
        d.flaky.clear();
        assert!(d.chance_note().is_none(), "a steady system gets no excuse");
    }

    #[test]
    fn full_lists_every_configuration_and_cell() {
        let d = big_diff();
        let text = render_diff(&d, 100, true);
        assert_eq!(text.matches("regressed: ").count(), 40);
        assert_eq!(text.matches("flaky: ").count(), 20);
        assert_eq!(text.matches("hybrid-rerank k=").count(), 30);
        assert!(!text.contains("not listed"), "{text}");
    }
}
