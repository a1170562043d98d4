//! The plain-text summary the CLI prints.

use crate::Summary;
use std::fmt::Write;

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{:.1}%", v * 100.0))
}

fn ms(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.1}"))
}

pub fn render_table(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} documents, {} cases, {} configurations; judge: {}",
        s.documents,
        s.cases,
        s.configs.len(),
        s.judge.as_deref().unwrap_or("–")
    );
    if let Some(note) = &s.heuristic_note {
        let _ = writeln!(out, "NOTE: {note}");
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<40} {:>6} {:>6} {:>6} {:>6} {:>9} {:>8} {:>8} {:>9}",
        "configuration",
        "cases",
        "passed",
        "failed",
        "errors",
        "fail rate",
        "P50 ms",
        "P95 ms",
        "hit rate"
    );
    for c in &s.configs {
        let _ = writeln!(
            out,
            "{:<40} {:>6} {:>6} {:>6} {:>6} {:>9} {:>8} {:>8} {:>9}",
            truncate(&c.label, 40),
            c.cases,
            c.passed,
            c.failed,
            c.errors,
            pct(c.fail_rate),
            ms(c.latency_p50_ms),
            ms(c.latency_p95_ms),
            pct(c.hit_rate)
        );
    }
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
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "weakest category: {}",
        s.weakest_category.as_deref().unwrap_or("–")
    );
    let _ = writeln!(out, "bad cases: {}", s.bad_cases.len());
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}
