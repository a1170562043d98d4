//! The summary a command prints when a run is reported: one screen — what was tested, how far the judge can
//! be trusted, the best and worst configurations, the top causes of failure with what to change, flaky
//! cases, and what was left unjudged. Every table stays in the report (`report --full` prints them).

use crate::Summary;
use crate::glance::Glance;
use std::fmt::Write;

/// Configurations shown at each end of the ranking.
const ENDS: usize = 3;
/// Reasons a cell went unjudged, listed (the report has them all).
const REASONS: usize = 3;
/// The widest line the summary prints; longer ones are wrapped.
const WIDTH: usize = 120;

pub fn render_summary(s: &Summary) -> String {
    let mut out = String::new();
    // The heading, the note and the trust line as the full table prints them: one line each (the
    // terminal folds them), so they read and search alike.
    crate::table::heading(&mut out, s);
    let glance = Glance::of(s);
    ends(&mut out, &glance);
    causes(&mut out, &glance);
    let _ = writeln!(out);
    if let Some(w) = &s.weakest_category {
        let rate = s
            .categories
            .iter()
            .find(|c| &c.name == w)
            .and_then(|c| c.fail_rate)
            .map_or(String::new(), |r| {
                format!(" ({:.1}% of its judged cells fail)", r * 100.0)
            });
        let _ = writeln!(out, "weakest category: {w}{rate}");
    }
    for c in &s.configs {
        if let Some(t) = &c.tools {
            let line = format!("tools: {}", crate::tools::tool_line(&c.label, t));
            let _ = writeln!(out, "{}", wrap(&line, "  "));
        }
    }
    for line in crate::glance::goals_best_and_worst(s) {
        let _ = writeln!(out, "{}", wrap(&format!("users: {line}"), "  "));
    }
    for r in &s.repeats {
        let line = format!(
            "repeats: {} × {}: {} flaky cases; {}",
            r.label,
            r.repeats,
            r.flaky,
            r.rates()
        );
        let _ = writeln!(out, "{}", wrap(&line, "  "));
    }
    left_out(&mut out, s);
    out
}

/// The best and the worst configurations by pass rate (all of them when there are few).
fn ends(out: &mut String, glance: &Glance) {
    let mut rows: Vec<_> = glance.rows.iter().collect();
    rows.sort_by(|a, b| b.rate.total_cmp(&a.rate));
    let shown: Vec<(&str, _)> = if rows.len() <= 2 * ENDS {
        rows.iter().map(|r| ("", *r)).collect()
    } else {
        let best = rows.iter().take(ENDS).map(|r| ("best", *r));
        best.chain(rows.iter().skip(rows.len() - ENDS).map(|r| ("worst", *r)))
            .collect()
    };
    if shown.is_empty() {
        return;
    }
    if !glance.shared.is_empty() {
        let _ = writeln!(out, "every configuration: {}", glance.shared);
    }
    let width = shown
        .iter()
        .map(|(_, r)| r.label.chars().count())
        .max()
        .unwrap_or(0);
    for (end, r) in shown {
        let _ = writeln!(
            out,
            "{end:<5} {:<width$}  pass {:>5.1}% [{:.1}–{:.1}%] of {} cells",
            r.label, r.rate, r.low, r.high, r.cells
        );
    }
}

/// The top causes of failure with what to change, and the largest headroom.
fn causes(out: &mut String, glance: &Glance) {
    if !glance.causes.is_empty() {
        let _ = writeln!(out, "\ntop causes of failure:");
        for c in &glance.causes {
            let cause = format!("  {}: {}", c.cause, c.message);
            let _ = writeln!(out, "{}", wrap(&cause, "    "));
            let _ = writeln!(out, "{}", wrap(&format!("    → {}", c.advice), "      "));
        }
    }
    if let Some(h) = &glance.headroom {
        let _ = writeln!(out, "{}", wrap(&format!("headroom: {h}"), "  "));
    }
}

/// Cells with no verdict (and why) and cells not asked: every gate counts the first against a run.
fn left_out(out: &mut String, s: &Summary) {
    let unjudged = s.not_judged.exec_errors + s.not_judged.judge_errors;
    if unjudged > 0 {
        let _ = writeln!(
            out,
            "not judged: {} cells ({} execution errors, {} judge errors), counted as failures by every gate",
            unjudged, s.not_judged.exec_errors, s.not_judged.judge_errors
        );
        for r in s.not_judged.reasons.iter().take(REASONS) {
            let reason = format!("  {} × {}: {}", r.count, r.kind, r.reason);
            let _ = writeln!(out, "{}", wrap(&reason, "    "));
        }
    }
    let skipped: usize = s.skipped.iter().map(|r| r.count).sum();
    if skipped > 0 {
        let _ = writeln!(out, "skipped: {skipped} cells (the report says why)");
    }
}

/// A long line folded at [`WIDTH`], its continuation lines indented.
fn wrap(text: &str, indent: &str) -> String {
    textwrap::fill(
        text,
        textwrap::Options::new(WIDTH).subsequent_indent(indent),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, summary_of, verdict};
    use ragtester_core::VerdictStatus;

    #[test]
    fn the_summary_fits_a_screen_whatever_the_matrix() {
        let cases: Vec<_> = (0..40).map(|i| case(&format!("c{i}"), "q")).collect();
        let verdicts: Vec<_> = (0..40)
            .map(|i| verdict(&format!("c{i}"), "k", Some(i % 3 != 0), VerdictStatus::Ok))
            .collect();
        let mut s = summary_of(&cases, &verdicts);
        s.configs = (0..24)
            .map(|i| crate::summary::ConfigSummary {
                id: format!("k{i}"),
                label: format!("hybrid k={i} · offline · hash"),
                cases: 40,
                passed: 10 + i,
                failed: 30 - i,
                ..Default::default()
            })
            .collect();
        let text = render_summary(&s);
        assert!(text.lines().count() <= 40, "{text}");
        let wrapped = |l: &&str| !l.starts_with("NOTE: ") && !l.starts_with("TRUST: ");
        assert!(
            text.lines()
                .filter(wrapped)
                .all(|l| l.chars().count() <= WIDTH),
            "{text}"
        );
        assert!(text.contains("best ") && text.contains("worst"), "{text}");
    }
}
