//! Markdown for a pull request: a run's summary, or the diff of a change's run against the base branch's,
//! held within GitHub's limits (a comment holds 65,536 characters; a job summary, 1 MiB). Lists are cut
//! shorter until the whole fits, each cut saying how many rows it left out; the full figures stay in
//! `summary.json`, the diff's JSON and the HTML report.

use crate::Summary;
use crate::diff::{Outcome, RunDiff, SuiteChangeKind};
use crate::glance::Glance;
use std::fmt::Write;

/// The most characters a GitHub pull-request comment holds.
pub const GITHUB_COMMENT_LIMIT: usize = 65_536;

/// Rows per list before any cut.
const FIRST_CAP: usize = 100;

/// The summary of one judged run, within `limit` characters.
pub fn summary_markdown(s: &Summary, limit: usize) -> String {
    fit(limit, |cap| {
        let mut out = String::new();
        let glance = Glance::of(s);
        let worst = glance
            .rows
            .iter()
            .map(|r| r.rate)
            .fold(f64::INFINITY, f64::min);
        let _ = writeln!(
            out,
            "## ragtester: {} cases × {} configurations\n",
            s.cases,
            s.configs.len()
        );
        trust(&mut out, s);
        if !glance.rows.is_empty() {
            let _ = writeln!(out, "Lowest pass rate: **{worst:.1}%**.\n");
        }
        pass_rates(&mut out, &glance, cap);
        causes(&mut out, &glance);
        tool_calls(&mut out, s);
        repeats(&mut out, s, cap);
        out
    })
}

/// Tool-call F1 and mistakes of each configuration that reports tool calls, and how its simulated users fared.
fn tool_calls(out: &mut String, s: &Summary) {
    let lines: Vec<String> = s
        .configs
        .iter()
        .filter_map(|c| Some(crate::tools::tool_line(&c.label, c.tools.as_ref()?)))
        .chain(crate::glance::goals_best_and_worst(s))
        .collect();
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "### Agents and simulated users\n");
    for line in lines {
        let _ = writeln!(out, "- {}", cell(&line));
    }
    let _ = writeln!(out);
}

/// A change's run against the base's, within `limit` characters: the verdict, pass rates per
/// configuration, each regression with its cause, flaky cells and the cases the suites differ on.
pub fn diff_markdown(diff: &RunDiff, after: Option<&Summary>, limit: usize) -> String {
    fit(limit, |cap| {
        let mut out = String::new();
        // The heading says what was compared: a diff of nothing is never a green check.
        let mark = if diff.compared_nothing() {
            "⚠️"
        } else if diff.regressions.is_empty() {
            "✅"
        } else {
            "❌"
        };
        let _ = writeln!(out, "## {mark} ragtester: {}\n", diff.headline());
        let _ = writeln!(
            out,
            "**{}** regressions · **{}** fixes · **{}** inconclusive · **{}** flaky cells · suite: {} rewritten, {} retired, {} new, {} stale\n",
            diff.regressions.len(),
            diff.fixes.len(),
            diff.inconclusive.len(),
            diff.flaky.len(),
            diff.suite_count(SuiteChangeKind::Rewritten),
            diff.suite_count(SuiteChangeKind::Retired),
            diff.suite_count(SuiteChangeKind::New),
            diff.suite_count(SuiteChangeKind::Stale),
        );
        if let Some(note) = diff.chance_note() {
            let _ = writeln!(out, "> {}\n", note.trim_start_matches("note: "));
        }
        if let Some(after) = after {
            trust(&mut out, after);
        }
        config_deltas(&mut out, diff, cap);
        regressions(&mut out, diff, cap);
        flaky(&mut out, diff, cap);
        suite_changes(&mut out, diff, cap);
        if let Some(after) = after {
            causes(&mut out, &Glance::of(after));
        }
        out
    })
}

/// A configuration's label by its id (the id when the diff has no such configuration).
fn label_of(diff: &RunDiff, id: &str) -> String {
    diff.configs
        .iter()
        .find(|c| c.config_id == id)
        .map_or(id.to_string(), |c| c.label.clone())
}

fn config_deltas(out: &mut String, diff: &RunDiff, cap: usize) {
    let _ = writeln!(
        out,
        "| configuration | pass rate before | after | regressions | fixes | flaky |\n|---|---:|---:|---:|---:|---:|"
    );
    let pct = crate::percent::pct;
    for c in diff.configs.iter().take(cap) {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            cell(&c.label),
            pct(c.pass_rate_before),
            pct(c.pass_rate_after),
            c.regressions,
            c.fixes,
            c.flaky
        );
    }
    more(out, diff.configs.len(), cap, "configurations");
}

fn regressions(out: &mut String, diff: &RunDiff, cap: usize) {
    if diff.regressions.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Regressions\n\n| case | configuration | passed before → after | cause |\n|---|---|---|---|"
    );
    for r in diff.regressions.iter().take(cap) {
        let _ = writeln!(
            out,
            "| {} | {} | {} → {} | {} |",
            case_of(r),
            cell(&label_of(diff, &r.config_id)),
            r.passes_before,
            r.passes_after,
            cell(&clip(r.cause.as_deref().unwrap_or("–"), 200))
        );
    }
    more(out, diff.regressions.len(), cap, "regressions");
}

/// A listed cell's case: its id, and its question where the suite gave it.
fn case_of(c: &crate::diff::CellChange) -> String {
    if c.query.is_empty() {
        format!("`{}`", c.case_id)
    } else {
        format!("`{}` {}", c.case_id, cell(&clip(&c.query, 80)))
    }
}

fn flaky(out: &mut String, diff: &RunDiff, cap: usize) {
    for (list, heading, name) in [
        (
            &diff.inconclusive,
            "Inconclusive cells (moved more than chance usually does; repeat more to tell)",
            "inconclusive cells",
        ),
        (
            &diff.flaky,
            "Flaky cells (repeats disagree; moved as chance moves them)",
            "flaky cells",
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n### {heading}\n");
        for f in list.iter().take(cap) {
            let _ = writeln!(
                out,
                "- {} in {}: passed {} → {}",
                case_of(f),
                cell(&label_of(diff, &f.config_id)),
                f.passes_before,
                f.passes_after
            );
        }
        more(out, list.len(), cap, name);
    }
}

fn suite_changes(out: &mut String, diff: &RunDiff, cap: usize) {
    if diff.suite_changes.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Cases the suites differ on (not counted as regressions)\n"
    );
    for c in diff.suite_changes.iter().take(cap) {
        let now: Vec<&str> = c
            .cells
            .iter()
            .filter_map(|(_, _, y)| y.map(Outcome::as_str))
            .collect();
        let _ = writeln!(
            out,
            "- **{}** `{}` {}{}",
            c.kind.as_str(),
            c.lineage,
            cell(&clip(&c.query, 120)),
            if now.is_empty() {
                String::new()
            } else {
                format!(" — now {}", now.join(", "))
            }
        );
    }
    more(out, diff.suite_changes.len(), cap, "suite changes");
}

/// The judge's trust line and the heuristics note, as a quote.
fn trust(out: &mut String, s: &Summary) {
    if let Some(note) = &s.heuristic_note {
        let _ = writeln!(out, "> **Note:** {}\n", clip(note, 400));
    }
    if let Some(line) = s.agreement_with_people.first() {
        let _ = writeln!(out, "> **Trust:** {}\n", clip(line, 400));
    }
}

fn pass_rates(out: &mut String, glance: &Glance, cap: usize) {
    let mut rows: Vec<_> = glance.rows.iter().collect();
    rows.sort_by(|a, b| b.rate.total_cmp(&a.rate));
    let _ = writeln!(
        out,
        "| configuration | pass rate | 95% interval | cells |\n|---|---:|---:|---:|"
    );
    for r in rows.iter().take(cap) {
        let _ = writeln!(
            out,
            "| {} | {:.1}% | {:.1}–{:.1}% | {} |",
            cell(&r.full),
            r.rate,
            r.low,
            r.high,
            r.cells
        );
    }
    more(out, rows.len(), cap, "configurations");
}

fn causes(out: &mut String, glance: &Glance) {
    if glance.causes.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### Top causes of failure\n");
    for c in &glance.causes {
        let _ = writeln!(
            out,
            "- **{}**: {} — {}",
            c.cause,
            clip(&c.message, 300),
            clip(&c.advice, 300)
        );
    }
}

fn repeats(out: &mut String, s: &Summary, cap: usize) {
    for r in &s.repeats {
        let _ = writeln!(
            out,
            "\n### {} × {} repeats: {} flaky cases\n\n{}.\n",
            cell(&r.label),
            r.repeats,
            r.flaky,
            r.rates()
        );
        for f in r.flaky_cases.iter().take(cap) {
            let _ = writeln!(
                out,
                "- passed {}/{}: `{}` {}",
                f.passed,
                f.of,
                f.case_id,
                cell(&clip(&f.query, 120))
            );
        }
        more(out, r.flaky, cap.min(r.flaky_cases.len()), "flaky cases");
    }
}

/// Render with lists of at most `cap` rows, halving the cap until the text fits `limit`; at a cap of zero
/// the text is cut at the limit with a last line saying so.
fn fit(limit: usize, render: impl Fn(usize) -> String) -> String {
    let mut cap = FIRST_CAP;
    loop {
        let text = render(cap);
        if text.chars().count() <= limit {
            return text;
        }
        if cap == 0 {
            let tail = "\n\n… cut to fit; the full figures are in the run's summary.json.\n";
            let keep = limit.saturating_sub(tail.chars().count());
            return text.chars().take(keep).collect::<String>() + tail;
        }
        cap /= 2;
    }
}

fn more(out: &mut String, total: usize, shown: usize, what: &str) {
    if total > shown {
        let _ = writeln!(
            out,
            "\n… and {} more {what} (see the report).",
            total - shown
        );
    }
}

/// A table cell: no line breaks, no bare pipes.
fn cell(text: &str) -> String {
    text.replace(['\n', '\r'], " ").replace('|', "\\|")
}

fn clip(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(n).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{CellChange, ConfigDelta, SuiteChange};

    fn diff_with(regressions: usize) -> RunDiff {
        let change = |i: usize| CellChange {
            cause: Some("wrong passage | retrieval: ".repeat(20)),
            ..crate::testdata::regressed_cell(&format!("case-{i:05}"))
        };
        RunDiff {
            regressions: (0..regressions).map(change).collect(),
            fixes: vec![],
            error_changes: vec![],
            inconclusive: vec![],
            compared: 40,
            flaky: vec![CellChange {
                before: Outcome::Flaky,
                ..change(99_999)
            }],
            suite_changes: vec![SuiteChange {
                kind: SuiteChangeKind::Rewritten,
                lineage: "old".into(),
                query: "How many volts?".into(),
                reason: None,
                cells: vec![("k".into(), Some(Outcome::Passed), Some(Outcome::Failed))],
            }],
            only_before: 0,
            only_after: 0,
            configs: vec![ConfigDelta {
                config_id: "k".into(),
                label: "bm25 k=3 | offline".into(),
                pass_rate_before: Some(0.9),
                pass_rate_after: Some(0.8),
                regressions,
                fixes: 0,
                flaky: 1,
                paired: regressions,
                mcnemar_p: None,
                score_change: None,
            }],
            conversations: vec![],
        }
    }

    #[test]
    fn a_diff_names_regressions_with_causes_apart_from_flaky_and_suite_changes() {
        let summary = crate::testdata::summary_of(&[], &[]);
        let md = diff_markdown(&diff_with(2), Some(&summary), GITHUB_COMMENT_LIMIT);
        assert!(
            md.starts_with("## ❌ ragtester: 40 cells compared, 2 regressions, 0 fixes, 1 flaky"),
            "{md}"
        );
        assert!(
            md.contains("**2** regressions · **0** fixes · **0** inconclusive · **1** flaky cells")
        );
        assert!(md.contains("| `case-00000` | bm25 k=3 \\| offline | 1/1 → 0/1 | wrong passage"));
        assert!(md.contains("### Flaky cells") && md.contains("`case-99999`"));
        assert!(md.contains("- **rewritten** `old` How many volts? — now failed"));
        let clean = diff_markdown(&diff_with(0), Some(&summary), GITHUB_COMMENT_LIMIT);
        assert!(clean.starts_with("## ✅ ragtester: 40 cells compared, 0 regressions"));
        let nothing = RunDiff {
            compared: 0,
            ..diff_with(0)
        };
        let md = diff_markdown(&nothing, Some(&summary), GITHUB_COMMENT_LIMIT);
        assert!(md.starts_with("## ⚠️ ragtester: nothing compared"), "{md}");
    }

    #[test]
    fn a_long_diff_is_cut_to_the_limit_saying_what_it_left_out() {
        let summary = crate::testdata::summary_of(&[], &[]);
        let md = diff_markdown(&diff_with(5_000), Some(&summary), GITHUB_COMMENT_LIMIT);
        assert!(md.chars().count() <= GITHUB_COMMENT_LIMIT);
        assert!(md.contains("more regressions (see the report)"), "{md}");
        let tiny = diff_markdown(&diff_with(5_000), Some(&summary), 300);
        assert!(tiny.chars().count() <= 300 && tiny.ends_with("summary.json.\n"));
    }
}
