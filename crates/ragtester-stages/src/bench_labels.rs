//! `ragtester bench oracle --labels FILE`: every judge against answers people labelled (the judge crate's
//! `agreement`): verdicts, scores and preferences between two answers, each answer judged through the
//! same path as a run's (rule metrics, criteria, the rules that bound them, lexical claim metrics).
//! `bench/labels/` turns public human-labelled sets into this file shape.

use crate::events::Events;
use anyhow::{Context, Result, bail};
use futures::StreamExt;
use ragtester_core::{Answer, ChatModel, RetrievedContext, TestCase};
use ragtester_judge::agreement::{
    Agreement, JudgedItem, LabelledItem, agreement, judge_score, offline_score,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub struct LabelsBenchArgs<'a> {
    pub judges: Vec<Arc<dyn ChatModel>>,
    pub labels: &'a Path,
    pub concurrency: usize,
    pub json: Option<&'a Path>,
}

/// One judge's agreement with people.
#[derive(Debug, Serialize)]
pub struct LabelsScore {
    pub judge: String,
    pub items: usize,
    pub overall: Agreement,
    pub by_language: BTreeMap<String, Agreement>,
    pub seconds: f64,
}

fn case_of(item: &LabelledItem, n: usize) -> TestCase {
    let mut case = ragtester_testgen::interop::imported_case(
        item.question.clone(),
        item.reference.clone(),
        Vec::new(),
        &item.source,
    );
    case.id = format!("labelled-{n}");
    case.language = item.language.clone();
    case
}

fn answer_of(case: &TestCase, item: &LabelledItem, text: &str) -> Answer {
    Answer {
        schema_version: ragtester_core::SCHEMA_VERSION,
        case_id: case.id.clone(),
        config_id: "labelled".into(),
        contexts: item
            .contexts
            .iter()
            .enumerate()
            .map(|(i, c)| RetrievedContext {
                rank: i + 1,
                score: 0.0,
                chunk_id: format!("passage-{i}"),
                document_id: String::new(),
                start: 0,
                end: 0,
                text: c.clone(),
            })
            .collect(),
        answer: text.to_string(),
        latency: Default::default(),
        usage: Default::default(),
        cached: false,
        cached_at: None,
        error: None,
        truncated_from: None,
        rewritten_query: None,
        trace: None,
    }
}

/// One answer judged as a run judges it, with the lexical claim metrics a run's default adds.
async fn judged_answer(
    judge: &dyn ChatModel,
    case: &TestCase,
    answer: &Answer,
) -> ragtester_core::Verdict {
    let prompts = ragtester_judge::JudgePrompts::default();
    let mut verdict =
        ragtester_judge::judge_sample(Some(case), answer, judge, (0, &prompts), &[]).await;
    if verdict.status == ragtester_core::VerdictStatus::Ok {
        verdict.claims =
            ragtester_judge::claims::claim_metrics(&ragtester_offline::OfflineModel, case, answer)
                .await;
    }
    verdict
}

async fn judge_item(judge: &dyn ChatModel, item: &LabelledItem, n: usize) -> JudgedItem {
    let case = case_of(item, n);
    let first = judged_answer(judge, &case, &answer_of(&case, item, &item.answer)).await;
    let ok = |v: &ragtester_core::Verdict| {
        (v.status == ragtester_core::VerdictStatus::Ok)
            .then_some(v.passed)
            .flatten()
    };
    let preference = match &item.answer_b {
        None => None,
        Some(b) if judge.is_heuristic() => {
            let second = judged_answer(judge, &case, &answer_of(&case, item, b)).await;
            ragtester_judge::pairwise::offline_compare(
                &item.reference,
                (&item.answer, &first),
                (b, &second),
            )
            .map(|p| p.overall)
        }
        Some(b) => ragtester_judge::pairwise::llm_compare(judge, &case, &item.answer, b)
            .await
            .ok()
            .map(|p| p.overall),
    };
    let score = if judge.is_heuristic() {
        offline_score(&item.reference, &item.answer, &first)
    } else {
        judge_score(&first)
    };
    JudgedItem {
        verdict: ok(&first),
        score,
        preference,
    }
}

/// Judge every labelled item with each judge and measure agreement with the labels.
pub async fn bench_labels(
    args: &LabelsBenchArgs<'_>,
    events: &dyn Events,
) -> Result<Vec<LabelsScore>> {
    events.stage("judge");
    let text = std::fs::read_to_string(args.labels)
        .with_context(|| format!("cannot read {}", args.labels.display()))?;
    let (items, rejected) = ragtester_judge::agreement::parse_labels(&text);
    for why in &rejected {
        events.note(format!("{}: {why}", args.labels.display()));
    }
    if items.is_empty() {
        bail!("{} holds no usable labelled answer", args.labels.display());
    }
    let mut by_language: BTreeMap<&str, usize> = BTreeMap::new();
    for item in &items {
        *by_language.entry(item.language.as_str()).or_default() += 1;
    }
    events.info(format!(
        "{} labelled items ({}) from {}",
        items.len(),
        by_language
            .iter()
            .map(|(l, n)| format!("{n} {l}"))
            .collect::<Vec<_>>()
            .join(", "),
        args.labels.display()
    ));
    let mut scores = Vec::new();
    for judge in &args.judges {
        let started = std::time::Instant::now();
        let judged: Vec<JudgedItem> = futures::stream::iter(items.iter().enumerate())
            .map(|(n, item)| judge_item(judge.as_ref(), item, n))
            .buffered(args.concurrency.max(1))
            .collect()
            .await;
        let (overall, by_language) = agreement(&items, &judged);
        let seconds = started.elapsed().as_secs_f64();
        events.info(format!(
            "{} judged {} items in {seconds:.1} s",
            judge.name(),
            items.len()
        ));
        scores.push(LabelsScore {
            judge: judge.name(),
            items: items.len(),
            overall,
            by_language,
            seconds,
        });
    }
    if let Some(path) = args.json {
        ragtester_core::record::write_atomic(
            path,
            serde_json::to_string_pretty(&scores)?.as_bytes(),
        )?;
    }
    Ok(scores)
}

fn interval(i: Option<ragtester_core::oracle::Interval>, percent: bool) -> String {
    let k = if percent { 100.0 } else { 1.0 };
    i.map_or("–".into(), |i| {
        if percent {
            format!(
                "{:.1}% [{:.1}–{:.1}]",
                i.estimate * k,
                i.low * k,
                i.high * k
            )
        } else {
            format!("{:.3} [{:.3}–{:.3}]", i.estimate, i.low, i.high)
        }
    })
}

fn correlation(c: Option<ragtester_judge::agreement::Correlation>) -> String {
    c.map_or("–".into(), |c| {
        format!("{:.3} [{:.3}–{:.3}] n={}", c.estimate, c.low, c.high, c.n)
    })
}

/// One judge's agreement as a text table: a row per slice, a column per figure.
pub fn render(score: &LabelsScore) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "judge {} ({} items)", score.judge, score.items);
    let row = |out: &mut String, name: &str, a: &Agreement| {
        let _ = writeln!(out, "  {name}");
        let c = &a.verdicts;
        if c.true_failures + c.false_failures + c.missed_failures + c.true_passes > 0 {
            let _ = writeln!(
                out,
                "    verdicts     precision {}  recall {}  κ {}",
                interval(c.precision(), true),
                interval(c.recall(), true),
                interval(a.kappa, false)
            );
        }
        if a.score_pearson.is_some() {
            let _ = writeln!(
                out,
                "    scores       pearson {}  spearman {}",
                correlation(a.score_pearson),
                correlation(a.score_spearman)
            );
        }
        if a.preference_pearson.is_some() || a.preference_accuracy.is_some() {
            let _ = writeln!(
                out,
                "    preferences  pearson {}  spearman {}  same order {}",
                correlation(a.preference_pearson),
                correlation(a.preference_spearman),
                interval(a.preference_accuracy, true)
            );
        }
        if a.judge_errors > 0 {
            let _ = writeln!(out, "    judge errors {}", a.judge_errors);
        }
    };
    row(&mut out, "all", &score.overall);
    for (language, a) in &score.by_language {
        row(&mut out, &format!("language {language}"), a);
    }
    out
}
