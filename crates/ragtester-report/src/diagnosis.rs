//! The report's diagnosis: why cells failed (primary causes by configuration), what the corpus does to the
//! embedders (unknown tokens, truncated passages), and whether a fused retriever loses to one of its parts,
//! each finding with the figures it rests on and what to change.

use crate::cause::failure_cause;
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
                "{} of {total} failed or errored cells ({:.0}%): {}",
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
        FailureCause::LostContext => {
            "a follow-up lost what it refers to: retrieval or the answer missed the earlier turn's subject"
        }
        FailureCause::ContradictsEarlier => {
            "the answer contradicts what the system said earlier in the conversation"
        }
        FailureCause::Misattributed => {
            "the answer cites passages that do not support it, while another retrieved passage does"
        }
        FailureCause::StaleSource => "the answer gives a superseded value, not the current one",
        FailureCause::ConflictHidden => {
            "the sources disagree and the answer gives one value as if it were the only one"
        }
        FailureCause::WrongTool => {
            "the agent called a tool the case does not expect, left one out, or called them out of order"
        }
        FailureCause::WrongArgument => {
            "the agent called the right tool with an argument that does not hold what was expected"
        }
        FailureCause::MissingSearch => "the agent answered without searching the documents",
    }
}

/// Warnings on tokens an embedder cannot map and passages cut at its window.
pub fn embedder_findings(profiles: &[EmbedderProfile]) -> Vec<Finding> {
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
    fn figures(&self) -> RetrievalFigures {
        RetrievalFigures {
            cases: self.cases,
            ndcg: self.ndcg / self.cases.max(1) as f64,
            hit_rate: Some(self.hits as f64 / self.cases.max(1) as f64),
        }
    }
}

/// A retriever's quality on a set of queries: what fusion findings compare.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetrievalFigures {
    pub cases: usize,
    pub ndcg: f64,
    pub hit_rate: Option<f64>,
}

/// A fused retriever and its best part, as named in a finding.
pub struct FusionPair<'a> {
    pub fused: &'a str,
    pub fusion: Fusion,
    pub part: &'a str,
    pub part_kind: RetrieverKind,
    /// The queries' language code.
    pub language: &'a str,
}

/// A warning when the fused retriever scores below its best part by more than the margin, on enough cases.
pub fn fusion_finding(
    pair: &FusionPair<'_>,
    fused: RetrievalFigures,
    part: RetrievalFigures,
) -> Option<Finding> {
    if fused.cases < FUSION_MIN_CASES
        || part.cases < FUSION_MIN_CASES
        || fused.ndcg + FUSION_MARGIN > part.ndcg
    {
        return None;
    }
    let lang = language_name(pair.language);
    let kind = pair.part_kind.as_str();
    let weights = match pair.fusion {
        Fusion::Weighted { dense, keyword } => {
            format!("weighted fusion ({dense} dense / {keyword} keyword)")
        }
        Fusion::Rrf { k } => format!("RRF fusion (k = {k})"),
    };
    let advice = match pair.fusion {
        Fusion::Weighted { .. } => format!(
            "use RRF fusion (`fusion = \"rrf\"`), which cannot let the weaker part's scores outvote the stronger's, or {kind} alone for {lang} documents"
        ),
        Fusion::Rrf { .. } => format!(
            "use {kind} alone for {lang} documents, or replace the weaker part (for dense retrieval, an embedder trained on the language)"
        ),
    };
    let hit = |f: RetrievalFigures| {
        f.hit_rate.map_or(String::new(), |h| {
            format!(" and hit rate {:.1} %", h * 100.0)
        })
    };
    Some(Finding {
        kind: "fusion_below_part".into(),
        severity: Severity::Warning,
        subject: pair.fused.to_string(),
        message: format!(
            "on {lang} cases ({}), {} scores nDCG {:.3}{}, below its part {} at nDCG {:.3}{}: the {weights} loses what {kind} finds",
            fused.cases,
            pair.fused,
            fused.ndcg,
            hit(fused),
            pair.part,
            part.ndcg,
            hit(part),
        ),
        advice,
    })
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
        let parts: Vec<&Configuration> = inputs
            .configs
            .iter()
            .filter(|c| {
                c.llm == fused.llm && c.top_k == fused.top_k && c.chunking == fused.chunking
            })
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
                .filter_map(|p| {
                    figures
                        .get(&(p.id.as_str(), *lang))
                        .map(|r| (p, r.figures()))
                })
                .max_by(|a, b| a.1.ndcg.total_cmp(&b.1.ndcg));
            let Some((part, r)) = best else { continue };
            let pair = FusionPair {
                fused: &fused.label(),
                fusion: fused.fusion,
                part: &part.label(),
                part_kind: part.retriever,
                language: lang,
            };
            out.extend(fusion_finding(&pair, f.figures(), r));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, verdict};
    use ragtester_core::{Configuration, TokenProfile, VerdictStatus};

    fn config(retriever: RetrieverKind) -> Configuration {
        Configuration::new(
            "offline".into(),
            "local:all-MiniLM-L6-v2".into(),
            retriever,
            5,
            Default::default(),
            Default::default(),
        )
    }

    /// Chinese cases where BM25 finds the source at rank 1 and the weighted hybrid mostly does not: the
    /// shape of CMRC 2018 under all-MiniLM-L6-v2 (docs/benchmarks.md).
    fn fusion_run() -> (Vec<TestCase>, Vec<Configuration>, Vec<Verdict>) {
        let configs = vec![
            config(RetrieverKind::Bm25),
            config(RetrieverKind::Dense),
            config(RetrieverKind::Hybrid),
        ];
        let mut cases = Vec::new();
        let mut verdicts = Vec::new();
        for i in 0..10 {
            let mut c = case(&format!("c{i}"), "问题？");
            c.language = "zh".into();
            cases.push(c);
            for (config, hit) in [
                (&configs[0], true),
                (&configs[1], i < 2),
                (&configs[2], i < 5),
            ] {
                let mut v = verdict(&format!("c{i}"), &config.id, Some(hit), VerdictStatus::Ok);
                v.metrics.hit = Some(hit);
                v.metrics.ndcg = Some(if hit { 1.0 } else { 0.0 });
                verdicts.push(v);
            }
        }
        (cases, configs, verdicts)
    }

    fn run(
        cases: &[TestCase],
        configs: &[Configuration],
        verdicts: &[Verdict],
        embedders: &[EmbedderProfile],
    ) -> Diagnosis {
        let cases: HashMap<&str, &TestCase> = cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let answers = HashMap::new();
        let verdicts: Vec<&Verdict> = verdicts.iter().collect();
        diagnose(&DiagnosisInputs {
            cases: &cases,
            answers: &answers,
            configs,
            verdicts: &verdicts,
            embedders,
        })
    }

    #[test]
    fn a_hybrid_below_its_best_part_is_reported_per_language_with_advice() {
        let (cases, configs, verdicts) = fusion_run();
        let d = run(&cases, &configs, &verdicts, &[]);
        let fusion: Vec<&Finding> = d
            .findings
            .iter()
            .filter(|f| f.kind == "fusion_below_part")
            .collect();
        assert_eq!(fusion.len(), 1, "{:?}", d.findings);
        let f = fusion[0];
        assert!(f.message.contains("on Chinese cases (10)"), "{}", f.message);
        assert!(f.message.contains("nDCG 0.500"), "{}", f.message);
        assert!(
            f.message.contains("bm25 · k=5") || f.message.contains("nDCG 1.000"),
            "{}",
            f.message
        );
        assert!(f.advice.contains("RRF"), "{}", f.advice);

        // With the hybrid as good as BM25 there is nothing to say.
        let even: Vec<Verdict> = verdicts
            .into_iter()
            .map(|mut v| {
                if v.config_id == configs[2].id {
                    v.metrics.hit = Some(true);
                    v.metrics.ndcg = Some(1.0);
                }
                v
            })
            .collect();
        let d = run(&cases, &configs, &even, &[]);
        assert!(d.findings.iter().all(|f| f.kind != "fusion_below_part"));
    }

    #[test]
    fn unknown_tokens_and_truncation_are_warned_about_above_their_thresholds() {
        let profile = |language: &str, tokens, unknown, truncated| EmbedderProfile {
            embedder: "local:all-MiniLM-L6-v2".into(),
            chunking: "paragraph 256 tokens, overlap 0".into(),
            language: language.into(),
            profile: TokenProfile {
                texts: 40,
                tokens,
                unknown,
                truncated,
                window: 256,
            },
        };
        let profiles = [profile("zh", 1000, 540, 0), profile("en", 1000, 2, 12)];
        let d = run(&[], &[], &[], &profiles);
        let unknown: Vec<&Finding> = d
            .findings
            .iter()
            .filter(|f| f.kind == "unknown_tokens")
            .collect();
        assert_eq!(unknown.len(), 1, "{:?}", d.findings);
        assert!(
            unknown[0]
                .message
                .contains("54.0 % of the tokens of the Chinese passages")
        );
        assert!(unknown[0].advice.contains("multilingual"));
        let truncated: Vec<&Finding> = d
            .findings
            .iter()
            .filter(|f| f.kind == "truncation")
            .collect();
        assert_eq!(truncated.len(), 1);
        assert!(
            truncated[0]
                .message
                .contains("30 % of the English passages (12 of 40")
        );
        assert_eq!(d.embedders.len(), 2);
    }

    #[test]
    fn causes_are_counted_per_configuration_most_frequent_first() {
        let (cases, configs, verdicts) = fusion_run();
        let d = run(&cases, &configs, &verdicts, &[]);
        // The failed cells (no answer recorded, faithfulness False) are judged unfaithful.
        let row = &d.causes[0];
        assert_eq!(row.cause, FailureCause::Unfaithful);
        assert_eq!(row.cells, 8 + 5);
        assert_eq!(row.by_config.get(&configs[1].id), Some(&8));
        assert_eq!(row.by_config.get(&configs[0].id), None);
        let finding = d.findings.iter().find(|f| f.kind == "cause").unwrap();
        assert!(
            finding
                .message
                .starts_with("13 of 13 failed or errored cells"),
            "{}",
            finding.message
        );
        assert!(finding.message.contains("fewest in"), "{}", finding.message);
    }
}
