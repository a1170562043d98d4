//! One run's results held in memory for browsing: a row per (case, configuration) with what filters need
//! precomputed, so filtering and paging 50,000 rows is a scan of plain fields, done on the server.

use anyhow::Result;
use ragtester_core::{Answer, Configuration, Document, TestCase, Verdict, VerdictStatus};
use ragtester_report::{FailureCause, Summary, attribution, failure_cause, primary_verdicts};
use ragtester_stages::run_dir::{self, RunDir};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// The outcome of one cell, as the filters name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// The system under test or the judge failed on this cell: neither pass nor fail.
    Error,
    /// Answered, not judged yet.
    Unjudged,
}

struct Row {
    case: usize,
    config: usize,
    answer: Option<usize>,
    verdict: Option<usize>,
    outcome: Outcome,
    cause: Option<FailureCause>,
    score: Option<f64>,
    /// Query, expected answer and answer, lower-cased, for text search.
    haystack: String,
    /// `real` or `generated`: the source document's origin.
    origin: &'static str,
}

pub struct RunIndex {
    pub documents: Vec<Document>,
    pub cases: Vec<TestCase>,
    pub configs: Vec<Configuration>,
    pub answers: Vec<Answer>,
    pub verdicts: Vec<Verdict>,
    pub summary: Option<Summary>,
    rows: Vec<Row>,
    facets: Facets,
    /// The summary without its bad-case list (the results table pages through those), for the overview.
    brief: Option<serde_json::Value>,
}

/// What the results table may be filtered by; an absent or empty field filters nothing.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Filter {
    pub config: Option<String>,
    pub category: Option<String>,
    pub strategy: Option<String>,
    pub generator: Option<String>,
    pub language: Option<String>,
    pub origin: Option<String>,
    pub outcome: Option<Outcome>,
    pub cause: Option<FailureCause>,
    /// Case-insensitive text in the query, expected answer or answer.
    pub q: Option<String>,
    /// `score` (lowest first) or `latency` (slowest first); case order otherwise.
    pub sort: Option<String>,
    #[serde(default)]
    pub page: usize,
    pub per_page: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct RowView {
    pub case_id: String,
    pub config_id: String,
    pub config: String,
    pub category: &'static str,
    pub strategy: &'static str,
    pub generator: &'static str,
    pub language: String,
    pub outcome: Outcome,
    pub cause: Option<FailureCause>,
    pub score: Option<f64>,
    pub latency_ms: Option<f64>,
    pub query: String,
    pub answer: String,
    /// For a turn of a conversation: `2/3 follow up`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
}

/// One turn of the conversation a cell belongs to, as the same configuration answered it.
#[derive(Debug, Serialize)]
pub struct TurnView<'a> {
    pub case_id: &'a str,
    pub index: usize,
    pub step: &'static str,
    pub query: &'a str,
    pub rewritten_query: Option<&'a str>,
    pub answer: Option<&'a str>,
    pub outcome: Outcome,
}

#[derive(Debug, Serialize)]
pub struct Page {
    pub total: usize,
    pub page: usize,
    pub per_page: usize,
    pub rows: Vec<RowView>,
}

/// The values each filter can take in this run, for the UI's menus.
#[derive(Debug, Default, Serialize)]
pub struct Facets {
    pub configs: Vec<(String, String)>,
    pub categories: BTreeSet<&'static str>,
    pub strategies: BTreeSet<&'static str>,
    pub generators: BTreeSet<&'static str>,
    pub languages: BTreeSet<String>,
    pub origins: BTreeSet<&'static str>,
    pub outcomes: BTreeMap<String, usize>,
    pub causes: BTreeMap<String, usize>,
}

/// Everything known about one cell, for the detail view.
#[derive(Debug, Serialize)]
pub struct CellDetail<'a> {
    pub case: &'a TestCase,
    pub config: &'a Configuration,
    pub config_label: String,
    pub document: Option<String>,
    pub answer: Option<&'a Answer>,
    pub outcome: Outcome,
    pub cause: Option<FailureCause>,
    /// What the cause was read from, and what to change when it recurs.
    pub evidence: Option<String>,
    pub advice: Option<&'static str>,
    /// Every judge's verdicts on the cell, the one reports follow first.
    pub verdicts: Vec<&'a Verdict>,
    /// For a turn: its conversation's turns in order, as this configuration answered them.
    pub conversation: Vec<TurnView<'a>>,
}

pub const MAX_PER_PAGE: usize = 500;
/// Cases of a pairwise comparison the overview lists per side.
const PAIRWISE_LISTED: usize = 50;

/// A pairwise summary's cases as the overview shows them: for each side, the first cases it won and how many
/// it won in all (`a_won`, `b_won`), instead of every case.
fn won_by_side(pairwise: &mut serde_json::Map<String, serde_json::Value>) {
    let cases = pairwise
        .remove("cases")
        .and_then(|c| match c {
            serde_json::Value::Array(a) => Some(a),
            _ => None,
        })
        .unwrap_or_default();
    for (side, key) in [("a", "a_won"), ("b", "b_won")] {
        let won: Vec<&serde_json::Value> = cases.iter().filter(|c| c["winner"] == side).collect();
        let listed: Vec<&serde_json::Value> = won.iter().take(PAIRWISE_LISTED).copied().collect();
        pairwise.insert(
            key.into(),
            serde_json::json!({ "total": won.len(), "cases": listed }),
        );
    }
}

fn snippet(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

impl RunIndex {
    pub fn load(dir: &Path) -> Result<Self> {
        // A run being made is shown as far as it has got: only its suite must exist.
        let run = RunDir::new(dir);
        let cases = run.cases()?;
        let documents: Vec<Document> = run.records_or_empty(run_dir::DOCUMENTS)?;
        let configs: Vec<Configuration> = run.records_or_empty(run_dir::CONFIGS)?;
        let answers: Vec<Answer> = run.records_or_empty(run_dir::ANSWERS)?;
        let verdicts: Vec<Verdict> = run.records_or_empty(run_dir::VERDICTS)?;
        let summary = run.json(run_dir::SUMMARY)?;
        let mut index = Self {
            documents,
            cases,
            configs,
            answers,
            verdicts,
            summary,
            rows: Vec::new(),
            facets: Facets::default(),
            brief: None,
        };
        index.brief = index.summary.as_ref().map(|summary| {
            let mut brief = serde_json::to_value(summary).unwrap_or_default();
            if let Some(fields) = brief.as_object_mut() {
                let bad = fields.remove("bad_cases");
                let count = bad.as_ref().and_then(|b| b.as_array()).map_or(0, Vec::len);
                fields.insert("bad_case_count".into(), count.into());
                if let Some(pairwise) = fields.get_mut("pairwise").and_then(|p| p.as_object_mut()) {
                    won_by_side(pairwise);
                }
            }
            brief
        });
        index.rows = index.build_rows();
        index.facets = index.compute_facets();
        Ok(index)
    }

    fn build_rows(&self) -> Vec<Row> {
        let case_at: HashMap<&str, usize> = self
            .cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();
        let config_at: HashMap<&str, usize> = self
            .configs
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.as_str(), i))
            .collect();
        let first = primary_verdicts(&self.verdicts);
        let judge = first.first().map(|v| v.judge.clone());
        let verdict_at: HashMap<(&str, &str), usize> = self
            .verdicts
            .iter()
            .enumerate()
            .filter(|(_, v)| Some(&v.judge) == judge.as_ref())
            .map(|(i, v)| ((v.case_id.as_str(), v.config_id.as_str()), i))
            .collect();
        let mut rows: Vec<Row> = self
            .answers
            .iter()
            .enumerate()
            .filter_map(|(ai, a)| {
                let case = *case_at.get(a.case_id.as_str())?;
                let config = *config_at.get(a.config_id.as_str())?;
                let vi = verdict_at
                    .get(&(a.case_id.as_str(), a.config_id.as_str()))
                    .copied();
                let c = &self.cases[case];
                let (outcome, cause, score) = match vi.map(|i| &self.verdicts[i]) {
                    None if a.error.is_some() => {
                        (Outcome::Error, Some(FailureCause::ProviderError), None)
                    }
                    None => (Outcome::Unjudged, None, None),
                    Some(v) if v.status != VerdictStatus::Ok => {
                        (Outcome::Error, failure_cause(c, Some(a), v), None)
                    }
                    Some(v) => (
                        if v.passed == Some(true) {
                            Outcome::Passed
                        } else {
                            Outcome::Failed
                        },
                        failure_cause(c, Some(a), v),
                        v.criteria_mean,
                    ),
                };
                let haystack =
                    format!("{}\n{}\n{}", c.query, c.expected_answer, a.answer).to_lowercase();
                Some(Row {
                    case,
                    config,
                    answer: Some(ai),
                    verdict: vi,
                    outcome,
                    cause,
                    score,
                    haystack,
                    origin: self.origin_of(c),
                })
            })
            .collect();
        rows.sort_by_key(|r| (r.case, r.config));
        rows
    }

    fn origin_of(&self, case: &TestCase) -> &'static str {
        self.documents
            .iter()
            .find(|d| d.id == case.document_id)
            .map_or("real", |d| d.origin.as_str())
    }

    fn matches(&self, row: &Row, f: &Filter, needle: Option<&str>) -> bool {
        let case = &self.cases[row.case];
        let eq = |want: &Option<String>, have: &str| {
            want.as_deref().is_none_or(|w| w.is_empty() || w == have)
        };
        eq(&f.config, &self.configs[row.config].id)
            && eq(&f.category, case.category.as_str())
            && eq(&f.strategy, case.strategy.as_str())
            && eq(&f.generator, case.generator.as_str())
            && eq(&f.language, &case.language)
            && f.outcome.is_none_or(|o| o == row.outcome)
            && f.cause.is_none_or(|c| Some(c) == row.cause)
            && eq(&f.origin, row.origin)
            && needle.is_none_or(|n| row.haystack.contains(n))
    }

    pub fn page(&self, f: &Filter) -> Page {
        let per_page = f.per_page.unwrap_or(50).clamp(1, MAX_PER_PAGE);
        let needle =
            f.q.as_deref()
                .map(str::trim)
                .filter(|q| !q.is_empty())
                .map(str::to_lowercase);
        let mut hits: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| self.matches(r, f, needle.as_deref()))
            .collect();
        let latency = |r: &Row| r.answer.map(|a| self.answers[a].latency.total_ms);
        match f.sort.as_deref() {
            // Unscored rows (errors) after the scored ones.
            Some("score") => hits.sort_by(|a, b| {
                let key = |r: &Row| r.score.unwrap_or(f64::INFINITY);
                key(a).total_cmp(&key(b))
            }),
            Some("latency") => hits.sort_by(|a, b| {
                let key = |r: &Row| latency(r).unwrap_or(f64::NEG_INFINITY);
                key(b).total_cmp(&key(a))
            }),
            _ => {}
        }
        let total = hits.len();
        let rows = hits
            .into_iter()
            .skip(f.page.saturating_mul(per_page))
            .take(per_page)
            .map(|r| {
                let case = &self.cases[r.case];
                let config = &self.configs[r.config];
                let answer = r.answer.map(|a| &self.answers[a]);
                RowView {
                    case_id: case.id.clone(),
                    config_id: config.id.clone(),
                    config: config.label(),
                    category: case.category.as_str(),
                    strategy: case.strategy.as_str(),
                    generator: case.generator.as_str(),
                    language: case.language.clone(),
                    outcome: r.outcome,
                    cause: r.cause,
                    score: r.score,
                    latency_ms: latency(r),
                    query: snippet(&case.query, 160),
                    answer: snippet(answer.map_or("", |a| a.answer.as_str()), 200),
                    turn: case.turn.as_ref().map(|t| {
                        format!("{}/{} {}", t.index, t.of, t.step.as_str().replace('_', " "))
                    }),
                }
            })
            .collect();
        Page {
            total,
            page: f.page,
            per_page,
            rows,
        }
    }

    /// The summary as the overview shows it: every figure but the bad-case list, and its length.
    pub fn brief_summary(&self) -> Option<&serde_json::Value> {
        self.brief.as_ref()
    }

    /// The values each filter can take, computed once at load.
    pub fn facets(&self) -> &Facets {
        &self.facets
    }

    fn compute_facets(&self) -> Facets {
        let name = |v: serde_json::Value| v.as_str().unwrap_or_default().to_string();
        let mut outcomes = BTreeMap::new();
        let mut causes = BTreeMap::new();
        for r in &self.rows {
            *outcomes
                .entry(name(serde_json::json!(r.outcome)))
                .or_insert(0) += 1;
            if let Some(c) = r.cause {
                *causes.entry(name(serde_json::json!(c))).or_insert(0) += 1;
            }
        }
        Facets {
            configs: self
                .configs
                .iter()
                .map(|c| (c.id.clone(), c.label()))
                .collect(),
            categories: self.cases.iter().map(|c| c.category.as_str()).collect(),
            strategies: self.cases.iter().map(|c| c.strategy.as_str()).collect(),
            generators: self.cases.iter().map(|c| c.generator.as_str()).collect(),
            languages: self.cases.iter().map(|c| c.language.clone()).collect(),
            origins: self.documents.iter().map(|d| d.origin.as_str()).collect(),
            outcomes,
            causes,
        }
    }

    pub fn detail(&self, case_id: &str, config_id: &str) -> Option<CellDetail<'_>> {
        let row = self
            .rows
            .iter()
            .find(|r| self.cases[r.case].id == case_id && self.configs[r.config].id == config_id)?;
        let case = &self.cases[row.case];
        let config = &self.configs[row.config];
        let mut verdicts: Vec<&Verdict> = self
            .verdicts
            .iter()
            .filter(|v| v.case_id == case_id && v.config_id == config_id)
            .collect();
        // The verdict the row shows first, the other judges' after it.
        if let Some(i) = row.verdict {
            let primary = &self.verdicts[i];
            verdicts.retain(|v| !std::ptr::eq(*v, primary));
            verdicts.insert(0, primary);
        }
        Some(CellDetail {
            case,
            config,
            config_label: config.label(),
            document: self
                .documents
                .iter()
                .find(|d| d.id == case.document_id)
                // The file name: where the server keeps it is no business of the page.
                .map(|d| {
                    std::path::Path::new(&d.source)
                        .file_name()
                        .map_or_else(|| d.source.clone(), |n| n.to_string_lossy().into_owned())
                }),
            answer: row.answer.map(|a| &self.answers[a]),
            outcome: row.outcome,
            cause: row.cause,
            evidence: row.verdict.and_then(|i| {
                let answer = row.answer.map(|a| &self.answers[a]);
                attribution(case, answer, &self.verdicts[i]).map(|a| a.evidence)
            }),
            advice: row.cause.map(FailureCause::advice),
            verdicts,
            conversation: self.conversation(case, row.config),
        })
    }

    /// The turns of `case`'s conversation against configuration `config`, in order; empty for a single
    /// question.
    fn conversation(&self, case: &TestCase, config: usize) -> Vec<TurnView<'_>> {
        let Some(id) = case.conversation() else {
            return Vec::new();
        };
        let mut turns: Vec<TurnView<'_>> = self
            .rows
            .iter()
            .filter(|r| r.config == config && self.cases[r.case].conversation() == Some(id))
            .filter_map(|r| {
                let c = &self.cases[r.case];
                let turn = c.turn.as_ref()?;
                let answer = r.answer.map(|a| &self.answers[a]);
                Some(TurnView {
                    case_id: &c.id,
                    index: turn.index,
                    step: turn.step.as_str(),
                    query: &c.query,
                    rewritten_query: answer.and_then(|a| a.rewritten_query.as_deref()),
                    answer: answer.map(|a| a.error.as_deref().unwrap_or(&a.answer)),
                    outcome: r.outcome,
                })
            })
            .collect();
        turns.sort_by_key(|t| t.index);
        turns
    }
}
