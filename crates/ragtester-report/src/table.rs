//! The plain-text summary the CLI prints.

use crate::Summary;
use crate::percent::pct;
use std::fmt::Write;

fn ms(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.1}"))
}

pub fn render_table(s: &Summary) -> String {
    let mut out = String::new();
    heading(&mut out, s);
    configurations(&mut out, s);
    repeats(&mut out, s);
    reference_points(&mut out, s);
    citations(&mut out, s);
    tool_calls(&mut out, s);
    groups(&mut out, s);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "weakest category: {}",
        s.weakest_category.as_deref().unwrap_or("–")
    );
    let _ = writeln!(out, "bad cases: {}", s.bad_cases.len());
    not_judged(&mut out, s);
    skipped(&mut out, s);
    refusals(&mut out, s);
    latency_notes(&mut out, s);
    paired(&mut out, s);
    oracle(&mut out, s);
    out
}

/// What the retrieval is worth: headroom against the oracle reference and the closed book's leaky cases.
fn reference_points(out: &mut String, s: &Summary) {
    if s.headroom.is_empty() && s.leaky.is_empty() && s.long_context.is_empty() {
        return;
    }
    let _ = writeln!(out);
    for h in &s.headroom {
        let _ = writeln!(out, "headroom: {}", h.line());
    }
    for l in &s.long_context {
        let _ = writeln!(out, "long context: {}", l.line());
    }
    for l in &s.leaky {
        let _ = writeln!(out, "leaky: {}", l.line());
    }
}

/// Checked citations, for the configurations whose answers cite their passages.
fn citations(out: &mut String, s: &Summary) {
    for c in s.configs.iter().filter(|c| c.citing_answers > 0) {
        let _ = writeln!(out, "citations: {}", citation_line(c));
    }
}

/// Tool-call figures, for the configurations whose cases expect tools or whose answers report calls.
pub(crate) fn tool_calls(out: &mut String, s: &Summary) {
    for c in &s.configs {
        if let Some(t) = &c.tools {
            let _ = writeln!(out, "tools: {}", crate::tools::tool_line(&c.label, t));
        }
        if let Some(g) = &c.goals {
            let _ = writeln!(out, "users: {}", crate::goals::goal_line(&c.label, g));
        }
    }
}

/// One configuration's checked citations, for a person.
pub fn citation_line(c: &crate::summary::ConfigSummary) -> String {
    format!(
        "{}: precision {}, recall {} over {} answers that cite their passages",
        c.label,
        pct(c.citation_precision),
        pct(c.citation_recall),
        c.citing_answers
    )
}

/// What was tested and by whom, and the heuristics note when there is one.
pub(crate) fn heading(out: &mut String, s: &Summary) {
    let _ = writeln!(
        out,
        "{} documents{}, {} cases, {} configurations; judge: {}",
        s.documents,
        if s.poisoned_copies > 0 {
            format!(" (+{} poisoned copies)", s.poisoned_copies)
        } else {
            String::new()
        },
        s.cases,
        s.configs.len(),
        s.judge.as_deref().unwrap_or("–")
    );
    // In brief on the screen; which roles ran on heuristics is in the report and summary.json.
    if s.heuristic_note.is_some() {
        let _ = writeln!(
            out,
            "NOTE: offline heuristics stand in for the models: the figures exercise the pipeline and \
             compare retrieval settings (which roles: report.html)"
        );
    }
    for line in &s.agreement_with_people {
        let _ = writeln!(out, "TRUST: {line}");
    }
    for o in s.rule_overrides.iter().take(3) {
        let _ = writeln!(out, "RULES: {}", o.line());
    }
    for line in &s.idle_axes {
        let _ = writeln!(out, "NOTE: {line}");
    }
    let _ = writeln!(out);
}

/// One row per configuration.
fn configurations(out: &mut String, s: &Summary) {
    let labels = ShortLabels::of(s);
    let w = labels.width;
    if !labels.shared.is_empty() {
        let _ = writeln!(out, "every configuration: {}", labels.shared.join(" · "));
    }
    let _ = writeln!(
        out,
        "{:<w$} {:>6} {:>6} {:>6} {:>6} {:>9} {:>8} {:>8} {:>9} {:>10}",
        "configuration",
        "cases",
        "passed",
        "failed",
        "errors",
        "fail rate",
        "P50 ms",
        "P95 ms",
        "hit rate",
        "chunk cov."
    );
    for c in &s.configs {
        let _ = writeln!(
            out,
            "{:<w$} {:>6} {:>6} {:>6} {:>6} {:>9} {:>8} {:>8} {:>9} {:>10}",
            labels.of_label(&c.label),
            c.cases,
            c.passed,
            c.failed,
            c.errors,
            pct(c.fail_rate),
            ms(c.latency_p50_ms),
            ms(c.latency_p95_ms),
            pct(c.hit_rate),
            pct(c.chunk_coverage)
        );
    }
}

/// Each repeated configuration folded: how many cases passed in k of N repeats, the flaky ones.
fn repeats(out: &mut String, s: &Summary) {
    const FLAKY_SHOWN: usize = 5;
    for r in &s.repeats {
        let n = r.repeats as usize;
        let counts: Vec<String> = (0..=n)
            .rev()
            .map(|k| format!("{}/{n}: {}", k, r.passes[k]))
            .collect();
        let _ = writeln!(
            out,
            "\nrepeats of {}: {} cases; passed {}; {} flaky; {}",
            r.label,
            r.cases,
            counts.join(", "),
            r.flaky,
            r.rates()
        );
        for f in r.flaky_cases.iter().take(FLAKY_SHOWN) {
            let _ = writeln!(
                out,
                "  flaky {}/{}: {} {}",
                f.passed,
                f.of,
                f.case_id,
                f.query.chars().take(70).collect::<String>()
            );
        }
        if r.flaky > FLAKY_SHOWN {
            let _ = writeln!(
                out,
                "  … {} more flaky cases in summary.json",
                r.flaky - FLAKY_SHOWN
            );
        }
    }
}

/// Failures per category and per generator.
fn groups(out: &mut String, s: &Summary) {
    for (title, groups) in [("category", &s.categories), ("generator", &s.generators)] {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "{:<40} {:>6} {:>6} {:>6} {:>6} {:>9} {:>10}",
            title, "cases", "passed", "failed", "errors", "fail rate", "mean score"
        );
        for g in groups.iter() {
            let _ = writeln!(
                out,
                "{:<40} {:>6} {:>6} {:>6} {:>6} {:>9} {:>10}",
                g.name,
                g.cases,
                g.passed,
                g.failed,
                g.errors,
                pct(g.fail_rate),
                g.mean_score.map_or("–".into(), |m| format!("{m:.3}"))
            );
        }
    }
}

/// How many cells got no verdict and why: they count against every gate.
fn not_judged(out: &mut String, s: &Summary) {
    let n = &s.not_judged;
    if n.exec_errors + n.judge_errors == 0 {
        let _ = writeln!(out, "not judged: none (every cell has a verdict)");
        return;
    }
    let _ = writeln!(
        out,
        "not judged: {} cells ({} execution errors, {} judge errors) — they count against the pass rate",
        n.exec_errors + n.judge_errors,
        n.exec_errors,
        n.judge_errors
    );
    for r in &n.reasons {
        let _ = writeln!(out, "  {:>6} × {}: {}", r.count, r.kind, r.reason);
    }
}

/// Cells the run did not ask, by reason.
fn skipped(out: &mut String, s: &Summary) {
    for r in &s.skipped {
        let _ = writeln!(out, "not asked: {} cells: {}", r.count, r.reason);
    }
}

/// Should refuse × did refuse, per configuration, with language mismatches beside.
fn refusals(out: &mut String, s: &Summary) {
    let labels = ShortLabels::of(s);
    let w = labels.width;
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>9} {:>9} {:>9} {:>22} {:>22} {:>9}",
        "refusals",
        "refused",
        "answered",
        "over-ref.",
        "halluc.",
        "over-refusal (95%)",
        "hallucination (95%)",
        "lang. mism."
    );
    let interval = |i: &Option<ragtester_core::oracle::Interval>| {
        i.as_ref().map_or("–".to_string(), |i| {
            format!(
                "{} [{}–{}]",
                pct(Some(i.estimate)),
                pct(Some(i.low)),
                pct(Some(i.high))
            )
        })
    };
    for c in &s.configs {
        let r = &c.refusals;
        let _ = writeln!(
            out,
            "{:<w$} {:>9} {:>9} {:>9} {:>9} {:>22} {:>22} {:>9}",
            labels.of_label(&c.label),
            r.correct_refusals,
            r.answered,
            r.over_refusals,
            r.under_refusals,
            interval(&r.over_refusal_rate),
            interval(&r.hallucination_rate),
            pct(c.language_mismatch_rate)
        );
    }
}

/// What the latency columns do not say: answers replayed from the cache, runs with nothing measured.
fn latency_notes(out: &mut String, s: &Summary) {
    for c in &s.configs {
        if let Some(note) = &c.latency_note {
            let _ = writeln!(out, "latency of {}: {note}", c.label);
        } else if c.replayed_answers > 0 {
            let _ = writeln!(
                out,
                "latency of {}: over {} live answers; {} answers ({}) were replayed from the response cache{}",
                c.label,
                c.live_answers,
                c.replayed_answers,
                pct(c.replayed_share),
                c.replayed_since_utc
                    .as_deref()
                    .map_or(String::new(), |t| format!(", the oldest produced at {t}"))
            );
        }
    }
}

/// Each configuration against the best: McNemar's p and the score change with its interval.
fn paired(out: &mut String, s: &Summary) {
    let labels = ShortLabels::of(s);
    let w = labels.width;
    let compared: Vec<_> = s
        .configs
        .iter()
        .filter_map(|c| Some((c, c.vs_best.as_ref()?)))
        .collect();
    let Some((_, first)) = compared.first() else {
        return;
    };
    let best = s
        .configs
        .iter()
        .find(|c| c.id == first.against)
        .map_or(first.against.as_str(), |c| c.label.as_str());
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "against the best configuration ({best}), paired by case:"
    );
    for (c, p) in compared {
        let _ = writeln!(
            out,
            "  {:<w$} McNemar p {:>6}  Δ score {}  ({} cases)",
            labels.of_label(&c.label),
            p.mcnemar_p.map_or("–".into(), |x| format!("{x:.3}")),
            p.score_change.map_or("–".into(), |i| format!(
                "{:+.3} [{:+.3}, {:+.3}]",
                i.estimate, i.low, i.high
            )),
            p.paired
        );
    }
}

/// Judge errors per judge, agreement, intervals and the audit, when the run has them.
fn oracle(out: &mut String, s: &Summary) {
    if let Some(o) = &s.oracle {
        let _ = writeln!(out);
        let panel = o
            .panel
            .as_deref()
            .map_or(String::new(), |p| format!(", panel by {p}"));
        let _ = writeln!(
            out,
            "oracle: {} judge(s), {} sample(s) each{panel}",
            o.judges.len(),
            o.samples
        );
        for j in &o.judges {
            let _ = writeln!(
                out,
                "  {:<38} {:>6} verdicts {:>6} passed {:>6} failed {:>5} judge errors",
                truncate(&j.judge, 38),
                j.verdicts,
                j.passed,
                j.failed,
                j.judge_errors
            );
        }
        if let Some(a) = &o.agreement {
            for p in &a.pairs {
                let _ = writeln!(
                    out,
                    "  agreement {} vs {}: {} over {} cells, Cohen's κ {}",
                    p.a,
                    p.b,
                    pct(p.percent),
                    p.items,
                    p.cohen_kappa.map_or("–".into(), |k| format!("{k:.3}"))
                );
            }
            let _ = writeln!(
                out,
                "  Fleiss' κ over {} cells: {}",
                a.items,
                a.fleiss_kappa.map_or("–".into(), |k| format!("{k:.3}"))
            );
        }
        let labels: std::collections::HashMap<&str, &str> = s
            .configs
            .iter()
            .map(|c| (c.id.as_str(), c.label.as_str()))
            .collect();
        let short = ShortLabels::of(s);
        for i in o.intervals.iter().filter(|i| i.metric == "pass_rate") {
            let _ = writeln!(
                out,
                "  {:<w$} pass rate {} (95% {}–{}, {} over {}) [{}]",
                short.of_label(
                    labels
                        .get(i.config_id.as_str())
                        .copied()
                        .unwrap_or(&i.config_id),
                ),
                pct(Some(i.interval.estimate)),
                pct(Some(i.interval.low)),
                pct(Some(i.interval.high)),
                i.method,
                i.n,
                i.judge,
                w = short.width
            );
        }
    }
    if let Some(a) = &s.audit {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", render_audit(a));
    }
}

/// One line on an audit: who labelled how much, and the oracle's precision and false-discovery rate.
pub fn render_audit(a: &ragtester_core::oracle::AuditSummary) -> String {
    format!(
        "audit by {}: {} of {} sampled failures labelled, {} true failures, {} false alarms; oracle precision \
         {} (95% {}–{}), false-discovery rate {}",
        a.labeller,
        a.labelled,
        a.sample_size,
        a.true_failures,
        a.false_failures,
        pct(a.precision.map(|p| p.estimate)),
        pct(a.precision.map(|p| p.low)),
        pct(a.precision.map(|p| p.high)),
        pct(a.false_discovery_rate.map(|p| p.estimate)),
    )
}

/// Labels short enough for a 40-column cell and still distinct: the parts every configuration shares
/// (`offline`, a common embedder) said once above the table instead of in every row; a label still too long
/// keeps its end (where the varying axes are) when its start would make two alike, and stays whole when
/// neither cut keeps them apart.
pub(crate) struct ShortLabels {
    pub(crate) shared: Vec<String>,
    short: std::collections::HashMap<String, String>,
    /// The widest label kept, so the columns after it stay aligned.
    width: usize,
}

const LABEL_WIDTH: usize = 40;

impl ShortLabels {
    pub(crate) fn of(s: &Summary) -> Self {
        let labels: Vec<&str> = s.configs.iter().map(|c| c.label.as_str()).collect();
        Self::from_labels(&labels)
    }

    fn from_labels(labels: &[&str]) -> Self {
        let whole: Vec<Vec<&str>> = labels.iter().map(|l| l.split(" · ").collect()).collect();
        // A model or embedder named by its path ("local:.models/multilingual-e5-small") is named by its
        // last part, unless two configurations would then read alike.
        let named: Vec<Vec<&str>> = whole
            .iter()
            .map(|ps| ps.iter().map(|p| last_path_part(p)).collect())
            .collect();
        let joined = |v: &[Vec<&str>]| {
            v.iter()
                .map(|ps| ps.join(" · "))
                .collect::<std::collections::HashSet<_>>()
                .len()
        };
        let parts = if joined(&named) == joined(&whole) {
            named
        } else {
            whole
        };
        let shared: Vec<String> = if labels.len() < 2 {
            Vec::new()
        } else {
            parts[0]
                .iter()
                .filter(|p| parts.iter().all(|ps| ps.contains(p)))
                .map(|p| p.to_string())
                .collect()
        };
        let kept: Vec<String> = parts
            .iter()
            .map(|ps| {
                let rest: Vec<&str> = ps
                    .iter()
                    .copied()
                    .filter(|p| !shared.iter().any(|s| s == p))
                    .collect();
                if rest.is_empty() {
                    ps.join(" · ")
                } else {
                    rest.join(" · ")
                }
            })
            .collect();
        let distinct = |v: &[String]| {
            let set: std::collections::HashSet<&String> = v.iter().collect();
            set.len() == v.len()
        };
        let heads: Vec<String> = kept.iter().map(|k| truncate(k, LABEL_WIDTH)).collect();
        let cut = if distinct(&heads) || !distinct(&kept) {
            heads
        } else {
            let tails: Vec<String> = kept.iter().map(|k| tail(k, LABEL_WIDTH)).collect();
            if distinct(&tails) { tails } else { kept }
        };
        let width = cut
            .iter()
            .map(|c| c.chars().count())
            .chain(["configuration".len()])
            .max()
            .unwrap_or(LABEL_WIDTH);
        Self {
            shared,
            short: labels.iter().map(|l| l.to_string()).zip(cut).collect(),
            width,
        }
    }

    pub(crate) fn of_label(&self, label: &str) -> String {
        self.short
            .get(label)
            .cloned()
            .unwrap_or_else(|| truncate(label, LABEL_WIDTH))
    }
}

/// What follows the last `/` of a part naming a path (`local:.models/e5` → `e5`); any other part whole.
fn last_path_part(part: &str) -> &str {
    match part.rsplit_once('/') {
        Some((_, last)) if !last.is_empty() && !part.contains(' ') => last,
        _ => part,
    }
}

/// The last `n` characters of `s`, an ellipsis in front when cut.
fn tail(s: &str, n: usize) -> String {
    let count = s.chars().count();
    if count <= n {
        s.to_string()
    } else {
        format!("…{}", s.chars().skip(count - (n - 1)).collect::<String>())
    }
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortened_labels_stay_distinct() {
        let labels = [
            "hybrid-rerank k=3 · offline · hash · history none",
            "hybrid-rerank k=3 · offline · hash · history rewrite",
            "hybrid-rerank k=3 · offline · local:.models/multilingual-e5-small · history none",
        ];
        let short = ShortLabels::from_labels(&labels);
        assert_eq!(short.shared, ["hybrid-rerank k=3", "offline"]);
        let cut: Vec<String> = labels.iter().map(|l| short.of_label(l)).collect();
        assert_eq!(cut[0], "hash · history none");
        assert_eq!(cut[2], "multilingual-e5-small · history none");
        assert_eq!(short.width, cut[2].chars().count());
        // Two embedders with one file name keep their paths.
        let same_name = ["bm25 · local:a/e5", "bm25 · local:b/e5"];
        let short = ShortLabels::from_labels(&same_name);
        assert_eq!(short.of_label(same_name[0]), "local:a/e5");
        let set: std::collections::HashSet<&String> = cut.iter().collect();
        assert_eq!(set.len(), 3, "{cut:?}");
        assert!(
            cut.iter().all(|c| c.chars().count() <= LABEL_WIDTH),
            "{cut:?}"
        );
    }
}
