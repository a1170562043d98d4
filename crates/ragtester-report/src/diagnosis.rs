//! The report's diagnosis: why cells failed (primary causes by configuration), what the corpus does to the
//! embedders (unknown tokens, truncated passages), and whether a fused retriever loses to one of its parts,
//! each finding with the figures it rests on and what to change.

use crate::summary::failure_cause;
use ragtester_core::{
    Answer, Configuration, EmbedderProfile, FailureCause, Fusion, RetrieverKind, TestCase, Verdict,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A share of tokens mapped to the unknown token above which an embedder is said not to read a language.
const UNKNOWN_WARN: f64 = 0.05;
/// A share of passages cut at the window above which truncation is reported.
const TRUNCATED_WARN: f64 = 0.10;
/// How far below its best part (in nDCG) a fused retriever must score to be reported, and on how many cases.
const FUSION_MARGIN: f64 = 0.02;
const FUSION_MIN_CASES: usize = 5;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// Failed and errored cells by primary cause, most frequent first.
    pub causes: Vec<CauseRow>,
    /// What the evidence says to look at, warnings first.
    pub findings: Vec<Finding>,
    /// The embedders' token profiles the findings were read from.
    pub embedders: Vec<EmbedderProfile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CauseRow {
    pub cause: FailureCause,
    /// The part of the system it points at (retrieval, chunking, generation, service, oracle).
    pub stage: String,
    pub cells: usize,
    /// Cells per configuration id.
    pub by_config: BTreeMap<String, usize>,
    pub advice: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Warning,
    Info,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// `cause`, `unknown_tokens`, `truncation` or `fusion_below_part`.
    pub kind: String,
    pub severity: Severity,
    /// What it is about: a cause, an embedder, a configuration.
    pub subject: String,
    pub message: String,
    pub advice: String,
}

pub struct DiagnosisInputs<'a> {
    pub cases: &'a HashMap<&'a str, &'a TestCase>,
    pub answers: &'a HashMap<(&'a str, &'a str), &'a Answer>,
    pub configs: &'a [Configuration],
    pub verdicts: &'a [&'a Verdict],
    pub embedders: &'a [EmbedderProfile],
}

pub fn diagnose(inputs: &DiagnosisInputs<'_>) -> Diagnosis {
    let causes = cause_rows(inputs);
    let mut findings = cause_findings(&causes, inputs);
    findings.extend(embedder_findings(inputs.embedders));
    findings.extend(fusion_findings(inputs));
    findings.sort_by_key(|f| f.severity);
    Diagnosis {
        causes,
        findings,
        embedders: inputs.embedders.to_vec(),
    }
}

fn cause_rows(inputs: &DiagnosisInputs<'_>) -> Vec<CauseRow> {
    let mut rows: BTreeMap<FailureCause, BTreeMap<String, usize>> = BTreeMap::new();
    for v in inputs.verdicts {
        let Some(case) = inputs.cases.get(v.case_id.as_str()) else {
            continue;
        };
        let answer = inputs
            .answers
            .get(&(v.case_id.as_str(), v.config_id.as_str()))
            .copied();
        if let Some(cause) = failure_cause(case, answer, v) {
            *rows
                .entry(cause)
                .or_default()
                .entry(v.config_id.clone())
                .or_insert(0) += 1;
        }
    }
    let mut out: Vec<CauseRow> = rows
        .into_iter()
        .map(|(cause, by_config)| CauseRow {
            cause,
            stage: cause.stage().to_string(),
            cells: by_config.values().sum(),
            by_config,
            advice: cause.advice().to_string(),
        })
        .collect();
    out.sort_by(|a, b| b.cells.cmp(&a.cells).then(a.cause.cmp(&b.cause)));
    out
}

fn cause_findings(rows: &[CauseRow], inputs: &DiagnosisInputs<'_>) -> Vec<Finding> {
    let total: usize = rows.iter().map(|r| r.cells).sum();
    let label: HashMap<&str, String> = inputs
        .configs
        .iter()
        .map(|c| (c.id.as_str(), c.label()))
        .collect();
    rows.iter()
        .map(|row| {
            let mut message = format!(
                "{} of {total} failed or errored cells ({:.0} %): {}",
                row.cells,
                100.0 * row.cells as f64 / total.max(1) as f64,
                describe(row.cause)
            );
            if inputs.configs.len() > 1
                && let Some((worst, n)) = row.by_config.iter().max_by_key(|(_, n)| **n)
            {
                let fewest = inputs
                    .configs
                    .iter()
                    .map(|c| (c, row.by_config.get(&c.id).copied().unwrap_or(0)))
                    .min_by_key(|(_, n)| *n);
                message.push_str(&format!(
                    "; most in {} ({n})",
                    label.get(worst.as_str()).map_or(worst.as_str(), |l| l)
                ));
                if let Some((best, least)) = fewest
                    && least < *n
                {
                    message.push_str(&format!(", fewest in {} ({least})", best.label()));
                }
            }
            Finding {
                kind: "cause".into(),
                severity: if row.cause == FailureCause::JudgeError {
                    Severity::Info
                } else {
                    Severity::Warning
                },
                subject: row.cause.as_str().into(),
                message,
                advice: row.advice.clone(),
            }
        })
        .collect()
}

/// One line on what a cause means, for the report's findings and legend.
pub fn describe(cause: FailureCause) -> &'static str {
    match cause {
        FailureCause::ProviderError => "the system gave no answer (provider or service error)",
        FailureCause::JudgeError => "the judge gave no readable verdict (not the system's fault)",
        FailureCause::InjectionFollowed => {
            "the answer followed an instruction planted in a passage"
        }
        FailureCause::UnderRefusal => "a question the corpus cannot answer was answered",
        FailureCause::LanguageMismatch => "the answer is not in the question's language",
        FailureCause::RetrievalMiss => "no retrieved passage holds the source",
        FailureCause::Chunking => {
            "the source was cut across chunks and no retrieved chunk holds the answer"
        }
        FailureCause::Ranking => {
            "the source was retrieved below passages that do not hold it, and the answer followed those"
        }
        FailureCause::OverRefusal => "a question the retrieved passages answer was refused",
        FailureCause::Unfaithful => {
            "the answer contradicts the source or adds what it does not say"
        }
        FailureCause::Incomplete => "the answer leaves out part of the expected answer",
        FailureCause::OffTarget => "the answer was judged off the question or unclear",
    }
}

fn embedder_findings(profiles: &[EmbedderProfile]) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in profiles {
        let lang = language_name(&p.language);
        if let Some(share) = p.profile.unknown_share()
            && share >= UNKNOWN_WARN
        {
            out.push(Finding {
                kind: "unknown_tokens".into(),
                severity: Severity::Warning,
                subject: p.embedder.clone(),
                message: format!(
                    "{} maps {:.1} % of the tokens of the {lang} passages ({} passages, {}) to its unknown token: that text is invisible to dense retrieval",
                    p.embedder,
                    share * 100.0,
                    p.profile.texts,
                    p.chunking
                ),
                advice: format!(
                    "use an embedder trained on {lang} (a multilingual one such as BAAI/bge-m3 or intfloat/multilingual-e5-base), or BM25 alone for these documents"
                ),
            });
        }
        if let Some(share) = p.profile.truncated_share()
            && share >= TRUNCATED_WARN
        {
            out.push(Finding {
                kind: "truncation".into(),
                severity: Severity::Warning,
                subject: p.embedder.clone(),
                message: format!(
                    "{:.0} % of the {lang} passages ({} of {}, {}) are longer than {}'s {}-token window: their ends are not embedded",
                    share * 100.0,
                    p.profile.truncated,
                    p.profile.texts,
                    p.chunking,
                    p.embedder,
                    p.profile.window
                ),
                advice: format!(
                    "use smaller chunks (fewer tokens than the model's {} — its tokens are not cl100k's, so leave room) or a model with a longer window",
                    p.profile.window
                ),
            });
        }
    }
    out
}

/// Span-based retrieval figures of one configuration over one language's answerable cases.
#[derive(Debug, Clone, Copy, Default)]
struct Retrieval {
    cases: usize,
    hits: usize,
    ndcg: f64,
}

impl Retrieval {
    fn ndcg(&self) -> f64 {
        self.ndcg / self.cases.max(1) as f64
    }
    fn hit_rate(&self) -> f64 {
        self.hits as f64 / self.cases.max(1) as f64
    }
}

fn fusion_findings(inputs: &DiagnosisInputs<'_>) -> Vec<Finding> {
    let mut figures: HashMap<(&str, &str), Retrieval> = HashMap::new();
    for v in inputs.verdicts {
        let (Some(case), Some(ndcg), Some(hit)) = (
            inputs.cases.get(v.case_id.as_str()),
            v.metrics.ndcg,
            v.metrics.hit,
        ) else {
            continue;
        };
        let f = figures
            .entry((v.config_id.as_str(), case.language.as_str()))
            .or_default();
        f.cases += 1;
        f.hits += usize::from(hit);
        f.ndcg += ndcg;
    }
    let languages: std::collections::BTreeSet<&str> = figures.keys().map(|(_, l)| *l).collect();
    let mut out = Vec::new();
    for fused in inputs
        .configs
        .iter()
        .filter(|c| c.retriever == RetrieverKind::Hybrid)
    {
        // Its parts: BM25 and the dense retriever with the same embedder, all else equal.
        let same = |c: &&Configuration| {
            c.llm == fused.llm && c.top_k == fused.top_k && c.chunking == fused.chunking
        };
        let parts: Vec<&Configuration> = inputs
            .configs
            .iter()
            .filter(same)
            .filter(|c| {
                c.retriever == RetrieverKind::Bm25
                    || (c.retriever == RetrieverKind::Dense && c.embedder == fused.embedder)
            })
            .collect();
        for lang in &languages {
            let Some(f) = figures.get(&(fused.id.as_str(), *lang)) else {
                continue;
            };
            let best = parts
                .iter()
                .filter_map(|p| figures.get(&(p.id.as_str(), *lang)).map(|r| (p, r)))
                .filter(|(_, r)| r.cases >= FUSION_MIN_CASES)
                .max_by(|a, b| a.1.ndcg().total_cmp(&b.1.ndcg()));
            let Some((part, r)) = best else { continue };
            if f.cases < FUSION_MIN_CASES || f.ndcg() + FUSION_MARGIN > r.ndcg() {
                continue;
            }
            let weights = match fused.fusion {
                Fusion::Weighted { dense, keyword } => {
                    format!("weighted fusion ({dense} dense / {keyword} keyword)")
                }
                Fusion::Rrf { k } => format!("RRF fusion (k = {k})"),
            };
            let advice = match fused.fusion {
                Fusion::Weighted { .. } => format!(
                    "use RRF fusion (`fusion = \"rrf\"`), which cannot let the weaker part's scores outvote the stronger's, or {} alone for {} documents",
                    part.retriever.as_str(),
                    language_name(lang)
                ),
                Fusion::Rrf { .. } => format!(
                    "use {} alone for {} documents, or replace the weaker part (for dense retrieval, an embedder trained on the language)",
                    part.retriever.as_str(),
                    language_name(lang)
                ),
            };
            out.push(Finding {
                kind: "fusion_below_part".into(),
                severity: Severity::Warning,
                subject: fused.label(),
                message: format!(
                    "on {} cases ({}), {} scores nDCG {:.3} and hit rate {:.1} %, below its part {} at nDCG {:.3} and {:.1} %: the {weights} loses what {} finds",
                    language_name(lang),
                    f.cases,
                    fused.label(),
                    f.ndcg(),
                    f.hit_rate() * 100.0,
                    part.label(),
                    r.ndcg(),
                    r.hit_rate() * 100.0,
                    part.retriever.as_str()
                ),
                advice,
            });
        }
    }
    out
}

fn language_name(code: &str) -> String {
    match code {
        "zh" => "Chinese".into(),
        "en" => "English".into(),
        "" => "unknown-language".into(),
        other => format!("`{other}`"),
    }
}
