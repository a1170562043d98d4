//! The HTML report's charts and wide tables laid out to fit a laptop screen (1,280 px) whatever the
//! matrix's size: bars as rows whose label, track and printed value each keep a column of their own (so an
//! interval mark never crosses the value, and a label wraps in its cell instead of running under the bar),
//! an axis under each chart, latency printed with the decimals its spread needs, a configuration axis
//! longer than a few columns turned into rows (the heat map) or shown by its top entries with the whole
//! matrix one click away (causes), configurations grouped by retriever once each, and lines said once.

use crate::Summary;
use crate::table::ShortLabels;
use serde::Serialize;
use std::collections::BTreeMap;

/// Up to this many configurations stand as columns; beyond, the configuration axis becomes rows.
const MAX_CONFIG_COLUMNS: usize = 8;
/// Configurations named beside each cause in the main causes table.
const TOP_CONFIGS_PER_CAUSE: usize = 3;

#[derive(Debug, Serialize)]
pub struct Layout {
    pub fail: Vec<BarRow>,
    pub latency: Vec<LatencyRow>,
    /// The latency axis's ticks, in milliseconds.
    pub latency_ticks: Vec<String>,
    pub heat: Grid,
    pub causes: Vec<CauseRow>,
    /// Every cause by configuration: configurations as rows, causes as columns.
    pub causes_by_config: Grid,
    /// The configurations' indices in `Summary::configs`, grouped by retriever in the order each
    /// retriever first appears.
    pub groups: Vec<Group>,
    /// The retrieval's worth, each line once, with how many configurations said it.
    pub retrieval_worth: Vec<WorthLine>,
}

#[derive(Debug, Serialize)]
pub struct WorthLine {
    pub line: String,
    /// For a closed book's leaky cases: their questions.
    pub cases: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct BarRow {
    pub label: String,
    pub full: String,
    /// The value and its 95 % interval as percentages of the axis.
    pub value: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub figure: String,
}

#[derive(Debug, Serialize)]
pub struct LatencyRow {
    pub label: String,
    pub full: String,
    /// P50 and P95 as percentages of the axis.
    pub p50: f64,
    pub p95: f64,
    pub figure: String,
}

/// A table of short headers with their full names, and rows of cells with a shade in [0, 1].
#[derive(Debug, Default, Serialize)]
pub struct Grid {
    pub corner: String,
    pub columns: Vec<Header>,
    pub rows: Vec<GridRow>,
}

#[derive(Debug, Serialize)]
pub struct Header {
    pub label: String,
    pub full: String,
}

#[derive(Debug, Serialize)]
pub struct GridRow {
    pub head: Header,
    pub cells: Vec<Cell>,
}

#[derive(Debug, Serialize)]
pub struct Cell {
    pub text: String,
    pub shade: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct CauseRow {
    pub cause: String,
    pub name: String,
    pub stage: String,
    pub cells: usize,
    /// The configurations with the most cells of this cause, as "label: n".
    pub most: Vec<String>,
    pub more: usize,
    pub advice: String,
}

#[derive(Debug, Serialize)]
pub struct Group {
    pub retriever: String,
    pub configs: Vec<usize>,
}

impl Layout {
    pub fn of(s: &Summary) -> Self {
        let labels = ShortLabels::of(s);
        let fail = s
            .configs
            .iter()
            .map(|c| {
                let judged = c.passed + c.failed;
                let interval = ragtester_judge::stats::wilson(c.failed, judged, 0.95);
                BarRow {
                    label: labels.of_label(&c.label),
                    full: c.label.clone(),
                    value: c.fail_rate.unwrap_or(0.0) * 100.0,
                    low: interval.map(|i| i.low * 100.0),
                    high: interval.map(|i| i.high * 100.0),
                    figure: c
                        .fail_rate
                        .map_or("–".into(), |r| format!("{:.1}%", r * 100.0)),
                }
            })
            .collect();
        let (latency, latency_ticks) = latency_rows(s, &labels);
        let heat = heat_grid(s, &labels);
        let (causes, causes_by_config) = cause_tables(s, &labels);
        Self {
            fail,
            latency,
            latency_ticks,
            heat,
            causes,
            causes_by_config,
            groups: groups(s),
            retrieval_worth: retrieval_worth(s),
        }
    }
}

/// A configuration's header: its short label, the whole label on hover.
fn header(labels: &ShortLabels, c: &crate::summary::ConfigSummary) -> Header {
    Header {
        label: labels.of_label(&c.label),
        full: c.label.clone(),
    }
}

/// Fail rate by category and configuration: configurations as columns while a few, as rows beyond.
fn heat_grid(s: &Summary, labels: &ShortLabels) -> Grid {
    let header = |c| header(labels, c);
    let categories: Vec<&String> = s.heatmap.keys().collect();
    if s.configs.len() <= MAX_CONFIG_COLUMNS {
        Grid {
            corner: "category".into(),
            columns: s.configs.iter().map(header).collect(),
            rows: categories
                .iter()
                .map(|cat| GridRow {
                    head: plain(cat),
                    cells: s
                        .configs
                        .iter()
                        .map(|c| rate_cell(s.heatmap[*cat].get(&c.id)))
                        .collect(),
                })
                .collect(),
        }
    } else {
        Grid {
            corner: "configuration".into(),
            columns: categories.iter().map(|c| plain(c)).collect(),
            rows: s
                .configs
                .iter()
                .map(|c| GridRow {
                    head: header(c),
                    cells: categories
                        .iter()
                        .map(|cat| rate_cell(s.heatmap[*cat].get(&c.id)))
                        .collect(),
                })
                .collect(),
        }
    }
}

/// The causes with the configurations they strike most, and every cause by configuration.
fn cause_tables(s: &Summary, labels: &ShortLabels) -> (Vec<CauseRow>, Grid) {
    let header = |c| header(labels, c);
    let causes = s
        .diagnosis
        .causes
        .iter()
        .map(|r| {
            let mut counts: Vec<(&String, usize)> = s
                .configs
                .iter()
                .filter_map(|c| Some((&c.label, *r.by_config.get(&c.id).filter(|n| **n > 0)?)))
                .collect();
            counts.sort_by_key(|c| std::cmp::Reverse(c.1));
            CauseRow {
                cause: r.cause.as_str().to_string(),
                name: r.cause.as_str().replace('_', " "),
                stage: r.stage.clone(),
                cells: r.cells,
                most: counts
                    .iter()
                    .take(TOP_CONFIGS_PER_CAUSE)
                    .map(|(l, n)| format!("{}: {n}", labels.of_label(l)))
                    .collect(),
                more: counts.len().saturating_sub(TOP_CONFIGS_PER_CAUSE),
                advice: r.advice.clone(),
            }
        })
        .collect();
    let causes_by_config = Grid {
        corner: "configuration".into(),
        columns: s
            .diagnosis
            .causes
            .iter()
            .map(|r| plain(&r.cause.as_str().replace('_', " ")))
            .collect(),
        rows: s
            .configs
            .iter()
            .map(|c| GridRow {
                head: header(c),
                cells: s
                    .diagnosis
                    .causes
                    .iter()
                    .map(|r| Cell {
                        text: r.by_config.get(&c.id).copied().unwrap_or(0).to_string(),
                        shade: None,
                    })
                    .collect(),
            })
            .collect(),
    };
    (causes, causes_by_config)
}

fn plain(text: &str) -> Header {
    Header {
        label: text.to_string(),
        full: text.to_string(),
    }
}

fn rate_cell(rate: Option<&Option<f64>>) -> Cell {
    match rate.copied().flatten() {
        Some(r) => Cell {
            text: format!("{:.0}%", r * 100.0),
            shade: Some(r),
        },
        None => Cell {
            text: "–".into(),
            shade: None,
        },
    }
}

/// Decimals that tell the values apart: one more than the order of their spread, at most three (a
/// spread of 0.3 ms is printed to 0.01 ms; one of 300 ms to whole milliseconds).
pub fn decimals_for(values: &[f64]) -> usize {
    let (low, high) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(*v), h.max(*v))
        });
    let spread = high - low;
    if !spread.is_finite() || spread <= 0.0 {
        return if high.is_finite() && high < 10.0 {
            2
        } else {
            1
        };
    }
    (1.0 - spread.log10().floor()).clamp(0.0, 3.0) as usize
}

fn latency_rows(s: &Summary, labels: &ShortLabels) -> (Vec<LatencyRow>, Vec<String>) {
    let values: Vec<f64> = s
        .configs
        .iter()
        .flat_map(|c| [c.latency_p50_ms, c.latency_p95_ms])
        .flatten()
        .collect();
    let top = values.iter().copied().fold(0.0, f64::max);
    let axis = if top > 0.0 { nice_ceiling(top) } else { 1.0 };
    // Each series told apart within itself: medians close together get the decimals they need.
    let series = |pick: fn(&crate::summary::ConfigSummary) -> Option<f64>| -> Vec<f64> {
        s.configs.iter().filter_map(pick).collect()
    };
    let places = decimals_for(&series(|c| c.latency_p50_ms))
        .max(decimals_for(&series(|c| c.latency_p95_ms)));
    let ms = |v: Option<f64>| v.map_or("–".into(), |v| format!("{v:.places$}"));
    let rows = s
        .configs
        .iter()
        .map(|c| LatencyRow {
            label: labels.of_label(&c.label),
            full: c.label.clone(),
            p50: c.latency_p50_ms.unwrap_or(0.0) / axis * 100.0,
            p95: c.latency_p95_ms.unwrap_or(0.0) / axis * 100.0,
            figure: format!("{} / {} ms", ms(c.latency_p50_ms), ms(c.latency_p95_ms)),
        })
        .collect();
    let tick_places = decimals_for(&[0.0, axis]).saturating_sub(1);
    let ticks = (0..=4)
        .map(|i| format!("{:.tick_places$}", axis * i as f64 / 4.0))
        .collect();
    (rows, ticks)
}

/// The least of 1, 2, 2.5 or 5 times a power of ten at or above `x`: an axis end that reads well.
fn nice_ceiling(x: f64) -> f64 {
    let power = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|v| *v >= x)
        .unwrap_or(10.0 * power)
}

fn groups(s: &Summary) -> Vec<Group> {
    let mut order: Vec<&str> = Vec::new();
    let mut by: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, c) in s.configs.iter().enumerate() {
        if !by.contains_key(c.retriever.as_str()) {
            order.push(&c.retriever);
        }
        by.entry(&c.retriever).or_default().push(i);
    }
    order
        .into_iter()
        .map(|r| Group {
            retriever: r.to_string(),
            configs: by.remove(r).unwrap_or_default(),
        })
        .collect()
}

/// Headroom, long-context and leaky lines, each said once: three closed-book configurations of one
/// model that differ only in history give one line, with how many said it.
fn retrieval_worth(s: &Summary) -> Vec<WorthLine> {
    /// Leaky questions listed under their line; all of them are in summary.json.
    const MAX_LISTED: usize = 300;
    let lines = s
        .headroom
        .iter()
        .map(|h| (h.line(), Vec::new()))
        .chain(s.long_context.iter().map(|l| (l.line(), Vec::new())))
        .chain(s.leaky.iter().map(|l| {
            let cases = l.leaky.iter().take(MAX_LISTED).map(|c| c.query.clone());
            (l.line(), cases.collect())
        }));
    let mut once: Vec<(WorthLine, usize)> = Vec::new();
    for (line, cases) in lines {
        match once.iter_mut().find(|(w, _)| w.line == line) {
            Some((_, n)) => *n += 1,
            None => once.push((WorthLine { line, cases }, 1)),
        }
    }
    once.into_iter()
        .map(|(mut w, n)| {
            if n > 1 {
                w.line = format!("{} (in each of {n} configurations)", w.line);
            }
            w
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_keeps_the_decimals_its_spread_needs() {
        assert_eq!(decimals_for(&[0.21, 0.48, 0.33]), 2);
        assert_eq!(decimals_for(&[12.0, 19.5]), 1);
        assert_eq!(decimals_for(&[120.0, 950.0]), 0);
        assert_eq!(decimals_for(&[0.0004, 0.0009]), 3);
        assert_eq!(decimals_for(&[3.0, 3.0]), 2);
        assert_eq!(nice_ceiling(0.48), 0.5);
        assert_eq!(nice_ceiling(7.0), 10.0);
        assert_eq!(nice_ceiling(180.0), 200.0);
    }
}
