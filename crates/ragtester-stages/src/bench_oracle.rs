//! `ragtester bench oracle`: every judge against answers of known label (the judge crate's `benchmark`).
//!
//! The questions: the facts `docgen` plants in its offline handbooks, in English and Chinese (built in,
//! deterministic: the benchmark runs anywhere, CI included), and, with `--cmrc FILE`, the questions of the
//! CMRC 2018 development set (Chinese reading comprehension, CC BY-SA 4.0; its own JSON or the SQuAD layout), each with its
//! paragraph and first gold answer.

use crate::events::Events;
use anyhow::{Context, Result};
use ragtester_judge::benchmark::{
    JudgeScore, LabelledQuestion, judge_answers, labelled_answers, panel_verdicts, score,
};
use serde::Deserialize;
use std::path::Path;
use std::sync::Arc;

/// The planted facts of `count` offline handbooks per language: answerable ones, with their evidence.
fn planted_questions(count: usize) -> Vec<LabelledQuestion> {
    let mut out = Vec::new();
    for language in ["en", "zh"] {
        let req = ragtester_docgen::DocRequest {
            language: language.into(),
            seed: 2026,
            ..Default::default()
        };
        let mut taken = Default::default();
        for i in 0..count {
            let doc = ragtester_docgen::planted_document(&req, i, &mut taken);
            for fact in doc.facts {
                if fact.evidence.is_empty() || fact.category == ragtester_core::Category::Negative {
                    continue;
                }
                out.push(LabelledQuestion {
                    source: "docgen-planted".into(),
                    language: language.into(),
                    question: fact.question,
                    answer: fact.answer,
                    keywords: fact.keywords,
                    passage: fact.evidence.join(if language == "zh" { "" } else { " " }),
                    alternatives: Vec::new(),
                    other_words: Vec::new(),
                });
            }
        }
    }
    out
}

/// CMRC 2018 as released (a list of passages with their questions and three human answers each), or the
/// SQuAD layout the same data is also distributed in.
#[derive(Deserialize)]
#[serde(untagged)]
enum CmrcFile {
    Cmrc(Vec<CmrcPassage>),
    Squad { data: Vec<SquadArticle> },
}

#[derive(Deserialize)]
struct CmrcPassage {
    context_text: String,
    qas: Vec<CmrcQuestion>,
}

#[derive(Deserialize)]
struct CmrcQuestion {
    query_text: String,
    /// Mostly strings; the release has a few answers written as bare numbers (`4.9`).
    answers: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct SquadArticle {
    paragraphs: Vec<SquadParagraph>,
}

#[derive(Deserialize)]
struct SquadParagraph {
    context: String,
    qas: Vec<SquadQuestion>,
}

#[derive(Deserialize)]
struct SquadQuestion {
    question: String,
    answers: Vec<SquadAnswer>,
}

#[derive(Deserialize)]
struct SquadAnswer {
    text: String,
}

/// CMRC 2018 questions: the passage is the context, the first human answer the expected answer, the other
/// annotators' different answers correct alternatives.
fn cmrc_questions(path: &Path, limit: usize) -> Result<Vec<LabelledQuestion>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file: CmrcFile = serde_json::from_slice(&bytes).with_context(|| {
        format!(
            "{} is neither CMRC 2018's JSON nor the SQuAD layout",
            path.display()
        )
    })?;
    let triples: Vec<(String, String, Vec<String>)> = match file {
        CmrcFile::Cmrc(passages) => passages
            .into_iter()
            .flat_map(|p| {
                let context = p.context_text;
                p.qas.into_iter().map(move |q| {
                    // The release writes a few answers as bare numbers, some of them stray offsets: the
                    // written answers are the ones kept.
                    let answers = q
                        .answers
                        .into_iter()
                        .filter_map(|a| a.as_str().map(str::to_string))
                        .collect();
                    (context.clone(), q.query_text, answers)
                })
            })
            .collect(),
        CmrcFile::Squad { data } => data
            .into_iter()
            .flat_map(|a| a.paragraphs)
            .flat_map(|p| {
                let context = p.context;
                p.qas.into_iter().map(move |q| {
                    let answers = q.answers.into_iter().map(|a| a.text).collect();
                    (context.clone(), q.question, answers)
                })
            })
            .collect(),
    };
    Ok(triples
        .into_iter()
        .filter_map(|(passage, question, answers)| {
            let mut answers = answers.into_iter().map(|a| a.trim().to_string());
            let answer = answers.next().filter(|a| !a.is_empty())?;
            Some(LabelledQuestion {
                source: "cmrc2018-dev".into(),
                language: "zh".into(),
                question,
                // The set names no keywords (its answers are spans): keyword match does not apply.
                keywords: Vec::new(),
                alternatives: answers.filter(|a| !a.is_empty() && *a != answer).collect(),
                other_words: Vec::new(),
                answer,
                passage,
            })
        })
        .take(limit)
        .collect())
}

fn pct(i: Option<ragtester_core::oracle::Interval>) -> String {
    i.map_or("–".into(), |i| {
        format!(
            "{:.1}% [{:.1}–{:.1}]",
            i.estimate * 100.0,
            i.low * 100.0,
            i.high * 100.0
        )
    })
}

/// One judge's figures as a text table: overall, per language and per kind of answer.
pub fn render(score: &JudgeScore) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "judge {}", score.judge);
    let _ = writeln!(
        out,
        "  {:<16} {:>22} {:>22} {:>22} {:>8}",
        "slice", "precision (95%)", "recall (95%)", "accuracy (95%)", "errors"
    );
    let row = |out: &mut String, name: &str, c: &ragtester_judge::benchmark::Confusion| {
        let _ = writeln!(
            out,
            "  {:<16} {:>22} {:>22} {:>22} {:>7.1}%",
            name,
            pct(c.precision()),
            pct(c.recall()),
            pct(c.accuracy()),
            c.judge_error_rate().unwrap_or(0.0) * 100.0
        );
    };
    row(&mut out, "all", &score.overall);
    for (lang, c) in &score.by_language {
        row(&mut out, &format!("language {lang}"), c);
    }
    for (kind, c) in &score.by_kind_language {
        row(&mut out, kind, c);
    }
    let by_rule: Vec<String> = score
        .right_failed_by_rule
        .iter()
        .map(|(lang, n)| format!("{n} in {lang}"))
        .collect();
    let _ = writeln!(
        out,
        "  right answers failed by a rule: {}",
        if by_rule.is_empty() {
            "none".to_string()
        } else {
            by_rule.join(", ")
        }
    );
    out
}

/// The kinds of wrong answer whose recall `--min-kind-recall` holds per language: the ones a rule or a
/// lexical judge is most tempted to pass.
const HELD_KINDS: &[&str] = &[
    "changed_number",
    "swapped_name",
    "flipped_negation",
    "other_question",
    "other_passage",
    "truncated",
];

/// The per-kind goals a judge missed: right answers in other words passed (none failed by a rule), and
/// each held kind of wrong answer failed, per language.
fn kind_misses(scored: &JudgeScore, args: &OracleBenchRequest<'_>) -> Vec<String> {
    let mut misses = Vec::new();
    for (slice, c) in &scored.by_kind_language {
        let Some((kind, lang)) = slice.split_once('/') else {
            continue;
        };
        if let Some(min) = args.min_other_words.filter(|_| kind == "other_words") {
            let passed = c.true_passes as f64 / (c.true_passes + c.false_failures).max(1) as f64;
            if passed < min {
                misses.push(format!(
                    "{} passes {:.1}% of the right answers in other words in {lang}, below {:.1}%",
                    scored.judge,
                    passed * 100.0,
                    min * 100.0
                ));
            }
            let by_rule = scored.right_failed_by_rule.get(lang).copied().unwrap_or(0);
            if by_rule > 0 {
                misses.push(format!(
                    "{}: a rule failed {by_rule} right answers in {lang}",
                    scored.judge
                ));
            }
        }
        if let Some(min) = args.min_kind_recall.filter(|_| HELD_KINDS.contains(&kind)) {
            let failed =
                c.true_failures as f64 / (c.true_failures + c.missed_failures).max(1) as f64;
            if failed < min {
                misses.push(format!(
                    "{} fails {:.1}% of the {} answers in {lang}, below {:.1}%",
                    scored.judge,
                    failed * 100.0,
                    kind.replace('_', " "),
                    min * 100.0
                ));
            }
        }
    }
    misses
}

/// `bench oracle` as a front end asks for it: judges by spec (none: the project file's default), and the
/// labelled answers to score them on — a labels file of people's judgements, or the built-in questions.
pub struct OracleBenchRequest<'a> {
    pub judges: &'a [String],
    /// `majority` or `mean`: also score the judges' panel.
    pub panel: Option<&'a str>,
    /// People's labels (`bench oracle --labels`) instead of the built-in questions.
    pub labels: Option<&'a Path>,
    /// Planted-fact handbooks per language.
    pub documents: usize,
    /// At most this many questions per language, spread over the sources (the first ones of each).
    pub max_questions: Option<usize>,
    pub cmrc: Option<&'a Path>,
    /// At most this many CMRC questions (the first ones of the file).
    pub cmrc_limit: usize,
    pub concurrency: usize,
    pub json: Option<&'a Path>,
    /// Least precision and recall, per language, of every judge; below them the command exits 4.
    pub min_precision: Option<f64>,
    pub min_recall: Option<f64>,
    /// Least share of the right answers in other words passed, per language (and no rule failure among
    /// them); below it the command exits 4.
    pub min_other_words: Option<f64>,
    /// Least share of each kind of wrong answer failed, per language.
    pub min_kind_recall: Option<f64>,
    /// A judge profile for the offline judge's scores instead of the built-in one (with `labels`).
    pub profile: Option<&'a Path>,
    /// Each labelled item's verdict beside people's label, as JSON lines (with `labels`).
    pub items: Option<&'a Path>,
}

/// What a benchmark request printed and which goals were missed.
pub struct OracleBenchReport {
    pub text: String,
    pub misses: Vec<String>,
}

/// Carry out a benchmark request: the judges built from the registry, scored against people's labels or
/// the built-in labelled answers.
pub async fn bench_request(
    req: &OracleBenchRequest<'_>,
    cx: &crate::context::StageContext<'_>,
) -> Result<OracleBenchReport> {
    let (models, events) = (cx.models(), cx.events());
    let specs = if req.judges.is_empty() {
        ragtester_core::config::JudgeSettings::default().judges
    } else {
        req.judges.to_vec()
    };
    let judges = specs
        .iter()
        .map(|s| {
            ragtester_judge::judge_for(s, || models.get(s)).with_context(|| format!("judge `{s}`"))
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some(labels) = req.labels {
        use crate::bench_labels;
        let scoring = crate::judge::scoring(req.profile, cx)?;
        let args = bench_labels::LabelsBenchArgs {
            judges,
            labels,
            concurrency: req.concurrency,
            json: req.json,
            items: req.items,
            scoring: &scoring,
        };
        let scores = bench_labels::bench_labels(&args, cx).await?;
        return Ok(OracleBenchReport {
            text: scores.iter().map(bench_labels::render).collect(),
            misses: Vec::new(),
        });
    }
    let panel = req
        .panel
        .map(ragtester_judge::PanelMethod::parse)
        .transpose()?;
    let outcome = bench_oracle(req, &judges, panel, events).await?;
    Ok(OracleBenchReport {
        text: outcome.scores.iter().map(render).collect(),
        misses: outcome.misses,
    })
}

/// How the benchmark came out: each judge's figures (and the panel's), and every goal a judge missed.
pub struct OracleBenchOutcome {
    pub scores: Vec<JudgeScore>,
    /// `judge precision in zh is 61.0%, below 90.0%`, one per judge, figure and language missed.
    pub misses: Vec<String>,
}

/// Run the benchmark, telling each judge's time as it finishes.
pub async fn bench_oracle(
    args: &OracleBenchRequest<'_>,
    judges: &[Arc<dyn ragtester_judge::Judge>],
    panel: Option<ragtester_judge::PanelMethod>,
    events: &dyn Events,
) -> Result<OracleBenchOutcome> {
    events.stage("judge");
    let mut questions = planted_questions(args.documents);
    questions.extend(ragtester_judge::benchmark::other_words_questions());
    if let Some(path) = args.cmrc {
        questions.extend(cmrc_questions(path, args.cmrc_limit)?);
    }
    if let Some(max) = args.max_questions {
        let mut kept: std::collections::HashMap<String, usize> = Default::default();
        questions.retain(|q| {
            let n = kept.entry(q.language.clone()).or_default();
            *n += 1;
            *n <= max
        });
    }
    let answers = labelled_answers(&questions);
    events.info(format!(
        "{} questions ({} en, {} zh), {} labelled answers",
        questions.len(),
        questions.iter().filter(|q| q.language == "en").count(),
        questions.iter().filter(|q| q.language == "zh").count(),
        answers.len()
    ));
    let mut scores = Vec::new();
    let mut per_judge = Vec::new();
    for judge in judges {
        let started = std::time::Instant::now();
        let verdicts = judge_answers(judge.as_ref(), &questions, &answers, args.concurrency).await;
        let scored = score(judge.name(), &questions, &answers, &verdicts);
        events.info(format!(
            "{} judged {} answers in {:.1} s",
            scored.judge,
            answers.len(),
            started.elapsed().as_secs_f64()
        ));
        scores.push(scored);
        per_judge.push(verdicts);
    }
    if let Some(method) = panel.filter(|_| per_judge.len() > 1) {
        let verdicts = panel_verdicts(&per_judge, method);
        scores.push(score(method.judge_name(), &questions, &answers, &verdicts));
    }
    let mut misses = Vec::new();
    for scored in &scores {
        for (lang, c) in &scored.by_language {
            for (what, figure, min) in [
                ("precision", c.precision(), args.min_precision),
                ("recall", c.recall(), args.min_recall),
            ] {
                let Some(min) = min else { continue };
                if figure.is_none_or(|f| f.estimate < min) {
                    misses.push(format!(
                        "{} {what} in {lang} is {}, below {:.1}%",
                        scored.judge,
                        pct(figure),
                        min * 100.0
                    ));
                }
            }
        }
    }
    for scored in &scores {
        misses.extend(kind_misses(scored, args));
    }
    if let Some(path) = args.json {
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&scores)?.as_bytes(),
        )?;
    }
    Ok(OracleBenchOutcome { scores, misses })
}
