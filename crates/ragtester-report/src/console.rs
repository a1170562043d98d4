//! The summary a command prints when a run is reported: one screen — what was tested, how far the judge can
//! be trusted, the best and worst configurations, the top causes of failure with what to change, flaky
//! cases, and what was left unjudged. Every table stays in the report (`report --full` prints them).

use crate::Summary;
use crate::glance::Glance;
use std::fmt::Write;

/// Configurations shown at each end of the ranking.
const ENDS: usize = 2;
/// Causes of failure listed (the report has them all).
const CAUSES: usize = 2;
/// Reasons a cell went unjudged, listed (the report has them all).
const REASONS: usize = 3;
/// Below this many columns the summary shows one configuration at each end, leaves out what to change for
/// each cause, the tools and users lines and its blank lines (the report has them all, and one line says
/// so), so that it still fits one screen folded that narrow.
const NARROW: usize = 80;

/// The summary's lines at most `width` characters (the terminal's, `COLUMNS`), longer ones folded with
/// their continuation indented.
pub fn render_summary(s: &Summary, width: usize) -> String {
    let wrap = |text: &str, indent: &str| wrap(text, indent, width);
    let mut out = String::new();
    // The heading, the note and the trust line as the full table prints them, folded to the width.
    let mut heading = String::new();
    crate::table::heading(&mut heading, s);
    let mut trusted = false;
    for line in heading.lines() {
        // How far the judge is trusted, in brief, where the full lines stood: the report and
        // summary.json hold every figure.
        if line.starts_with("TRUST: ") && !s.trust_brief.is_empty() {
            if !std::mem::replace(&mut trusted, true) {
                for brief in &s.trust_brief {
                    let _ = writeln!(out, "{}", wrap(&format!("TRUST: {brief}"), "  "));
                }
            }
            continue;
        }
        if line.is_empty() && width < NARROW {
            continue;
        }
        let _ = writeln!(out, "{}", wrap(line, "  "));
    }
    let glance = Glance::of(s);
    ends(&mut out, &glance, width);
    causes(&mut out, &glance, width);
    let narrow = width < NARROW;
    if !narrow {
        let _ = writeln!(out);
    }
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
    // Agents and simulated users in a line each: the report has their mistakes, turns and endings.
    let labels = crate::table::ShortLabels::of(s);
    if narrow {
        // What the narrow summary leaves out, in one line.
        let mut left = Vec::new();
        if !glance.causes.is_empty() {
            left.push("what to change");
        }
        if s.configs.iter().any(|c| c.tools.is_some()) {
            left.push("tools");
        }
        if !crate::glance::goals_best_and_worst_brief(s).is_empty() {
            left.push("simulated users");
        }
        if !left.is_empty() {
            let line = format!("in report.html: {}", left.join(", "));
            let _ = writeln!(out, "{}", wrap(&line, "  "));
        }
    }
    for c in s.configs.iter().filter(|_| !narrow) {
        if let Some(t) = &c.tools {
            let line = format!(
                "tools: {}",
                crate::tools::tool_brief(&labels.of_label(&c.label), t)
            );
            let _ = writeln!(out, "{}", wrap(&line, "  "));
        }
    }
    for line in crate::glance::goals_best_and_worst_brief(s)
        .into_iter()
        .filter(|_| !narrow)
    {
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
    left_out(&mut out, s, width);
    out
}

/// The best and the worst configurations by pass rate (all of them when there are few).
fn ends(out: &mut String, glance: &Glance, width: usize) {
    let mut rows: Vec<_> = glance.rows.iter().collect();
    rows.sort_by(|a, b| b.rate.total_cmp(&a.rate));
    let at_each_end = if width < NARROW { 1 } else { ENDS };
    let shown: Vec<(&str, _)> = if rows.len() <= 2 * at_each_end {
        rows.iter().map(|r| ("", *r)).collect()
    } else {
        let best = rows.iter().take(at_each_end).map(|r| ("best", *r));
        best.chain(
            rows.iter()
                .skip(rows.len() - at_each_end)
                .map(|r| ("worst", *r)),
        )
        .collect()
    };
    if shown.is_empty() {
        return;
    }
    if !glance.shared.is_empty() {
        let _ = writeln!(out, "every configuration: {}", glance.shared);
    }
    // What follows the label takes 45 characters at most (`  pass 100.0% [99.9–100.0%] of 99999 cells`);
    // a label longer than the room left is cut, its end marked.
    let room = width.saturating_sub(6 + 45).max(12);
    let label_width = shown
        .iter()
        .map(|(_, r)| r.label.chars().count())
        .max()
        .unwrap_or(0)
        .min(room);
    // Cut at the end; where that makes two rows read alike, at the start (where they differ); whole
    // where neither keeps them apart.
    let cut = |from_end: bool| -> Vec<String> {
        shown
            .iter()
            .map(|(_, r)| {
                let n = r.label.chars().count();
                if n <= label_width {
                    r.label.clone()
                } else if from_end {
                    let kept: String = r.label.chars().take(label_width - 1).collect();
                    format!("{kept}…")
                } else {
                    let kept: String = r.label.chars().skip(n + 1 - label_width).collect();
                    format!("…{kept}")
                }
            })
            .collect()
    };
    let distinct = |labels: &[String]| {
        labels
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
            == labels.len()
    };
    let mut labels = cut(true);
    if !distinct(&labels) {
        labels = cut(false);
    }
    if !distinct(&labels) {
        labels = shown.iter().map(|(_, r)| r.label.clone()).collect();
    }
    for ((end, r), label) in shown.into_iter().zip(labels) {
        let _ = writeln!(
            out,
            "{end:<5} {label:<label_width$}  pass {:>5.1}% [{:.1}–{:.1}%] of {} cells",
            r.rate, r.low, r.high, r.cells
        );
    }
}

/// The top causes of failure with what to change, and the largest headroom.
fn causes(out: &mut String, glance: &Glance, width: usize) {
    let wrap = |text: &str, indent: &str| wrap(text, indent, width);
    if !glance.causes.is_empty() {
        let gap = if width < NARROW { "" } else { "\n" };
        let _ = writeln!(out, "{gap}top causes of failure:");
        // The two largest, without where each was most and least common (the report's diagnosis has it).
        for c in glance.causes.iter().take(CAUSES) {
            let message = c.message.split("; most in").next().unwrap_or(&c.message);
            let cause = format!("  {}: {message}", c.cause);
            let _ = writeln!(out, "{}", wrap(&cause, "    "));
            if width >= NARROW {
                let _ = writeln!(out, "{}", wrap(&format!("    → {}", c.advice), "      "));
            }
        }
    }
    if let Some(h) = &glance.headroom {
        let _ = writeln!(out, "{}", wrap(&format!("headroom: {h}"), "  "));
    }
}

/// Cells with no verdict (and why) and cells not asked: every gate counts the first against a run.
fn left_out(out: &mut String, s: &Summary, width: usize) {
    let wrap = |text: &str, indent: &str| wrap(text, indent, width);
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

/// `text`'s lines each at most `width` characters, a long one folded with its continuation indented two
/// more than it.
pub fn fold(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let lead: String = body.chars().take_while(|c| *c == ' ').collect();
        let indent = format!("{lead}  ");
        let options = textwrap::Options::new(width)
            .wrap_algorithm(FEWEST_LINES)
            .initial_indent(&lead)
            .subsequent_indent(&indent);
        out.push_str(&textwrap::fill(body.trim_start(), options));
        out.push_str(end);
    }
    out
}

/// Lines filled as far as they go: textwrap's default (optimal fit) evens lines out at the cost of an
/// extra one, and a screen's worth of lines is the budget here.
const FEWEST_LINES: textwrap::WrapAlgorithm = textwrap::WrapAlgorithm::FirstFit;

/// A long line folded at `width`, its continuation lines indented.
fn wrap(text: &str, indent: &str, width: usize) -> String {
    textwrap::fill(
        text,
        textwrap::Options::new(width)
            .wrap_algorithm(FEWEST_LINES)
            .subsequent_indent(indent),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, summary_of, verdict};
    use ragtester_core::VerdictStatus;

    #[test]
    fn a_long_line_is_folded_under_its_own_indent_and_a_short_one_kept() {
        let text = "short\n  a line long enough that it must be folded somewhere\nlast";
        let folded = fold(text, 24);
        assert!(folded.lines().all(|l| l.chars().count() <= 24), "{folded}");
        assert!(folded.starts_with("short\n  a line"), "{folded}");
        assert!(
            folded.contains("\n    "),
            "continuations indented: {folded}"
        );
        assert!(folded.ends_with("\nlast"), "{folded}");
    }

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
        let text = render_summary(&s, 80);
        assert!(text.lines().count() <= 40, "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.contains("best ") && text.contains("worst"), "{text}");
    }
}
