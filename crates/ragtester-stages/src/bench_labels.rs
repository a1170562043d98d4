//! `ragtester bench oracle --labels FILE`: every judge against answers people labelled (the judge crate's
//! `agreement`): verdicts, scores and preferences between two answers, each answer judged through the
//! same path as a run's (rule metrics, criteria, the rules that bound them, lexical claim metrics).
//! `bench/labels/` turns public human-labelled sets into this file shape.

use crate::events::Events;
use anyhow::{Context, Result, bail};
use futures::StreamExt;
use ragtester_core::{Answer, RetrievedContext, TestCase};
use ragtester_judge::Scoring;
use ragtester_judge::agreement::{Agreement, JudgedItem, LabelledItem, agreement};
use ragtester_judge::calibrate::{BestSignal, Observation, best_signals, defining_signals};
use ragtester_judge::meaning::Meaning;
use ragtester_judge::signals;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub struct LabelsBenchArgs<'a> {
    pub judges: Vec<Arc<dyn ragtester_judge::Judge>>,
    pub labels: &'a Path,
    pub concurrency: usize,
    pub json: Option<&'a Path>,
    /// Each item's verdict beside people's label, as JSON lines.
    pub items: Option<&'a Path>,
    /// How the offline judge's verdicts are scored (the built-in profile or the user's).
    pub scoring: &'a Scoring,
}

/// One judge's agreement with people.
#[derive(Debug, Serialize)]
pub struct LabelsScore {
    pub judge: String,
    pub items: usize,
    pub overall: Agreement,
    pub by_language: BTreeMap<String, Agreement>,
    pub seconds: f64,
    /// Per figure of agreement, the single signal of the judged answers that follows people best: what
    /// the judge's score must beat to be worth combining signals for.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub best_signals: BTreeMap<String, BestSignal>,
    /// Per criterion with a defining signal (faithfulness: the share of the answer's claims its passages
    /// support), how well that signal alone follows people: the floor the criterion is held to.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub defining_signals: BTreeMap<String, BestSignal>,
}

pub(crate) fn case_of(item: &LabelledItem, n: usize) -> TestCase {
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
        context_cut_from: None,
        tool_calls: None,
        simulation: None,
        citations: Vec::new(),
        rewritten_query: None,
        trace: None,
    }
}

/// One answer judged as a run judges it, with the lexical claim metrics a run's default adds.
async fn judged_answer(
    judge: &dyn ragtester_judge::Judge,
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

/// One labelled item as a judge saw it: the raw verdict on each answer (the second of a preference),
/// before any profile scored them, and the signals a profile reads.
pub(crate) struct Seen {
    pub case: TestCase,
    pub answers: Vec<Answer>,
    pub verdicts: Vec<ragtester_core::Verdict>,
    pub observation: Observation,
}

pub(crate) async fn see(
    judge: &dyn ragtester_judge::Judge,
    item: &LabelledItem,
    n: usize,
    meaning: Option<&Meaning>,
) -> Seen {
    let case = case_of(item, n);
    let texts = std::iter::once(&item.answer).chain(&item.answer_b);
    let answers: Vec<Answer> = texts.map(|t| answer_of(&case, item, t)).collect();
    let mut verdicts = Vec::with_capacity(answers.len());
    for answer in &answers {
        verdicts.push(judged_answer(judge, &case, answer).await);
    }
    let measure = |i: usize| signals::measure(&case, &answers[i], &verdicts[i], meaning);
    let observation = Observation {
        verdict: (verdicts[0].status == ragtester_core::VerdictStatus::Ok)
            .then_some(verdicts[0].passed)
            .flatten(),
        first: measure(0),
        second: (answers.len() > 1).then(|| measure(1)),
    };
    Seen {
        case,
        answers,
        verdicts,
        observation,
    }
}

/// What a judge makes of a labelled item, its verdicts scored as a run scores them ([`scored`]); an LLM
/// judge is asked to compare the two answers of a preference instead, in both orders.
async fn judge_item(
    judge: &dyn ragtester_judge::Judge,
    item: &LabelledItem,
    n: usize,
    scoring: &Scoring,
) -> ((JudgedItem, Observation), ragtester_core::Verdict) {
    let seen = see(judge, item, n, scoring.meaning.as_ref()).await;
    let observation = seen.observation.clone();
    let asked = judge.asks_preferences();
    let preference = match (&seen.answers[..], asked) {
        ([a, b], true) => judge
            .compare(&seen.case, (a, None), (b, None))
            .await
            .ok()
            .map(|p| p.overall),
        _ => None,
    };
    let (mut judged, first) = scored_with_verdict(scoring, seen);
    if asked {
        judged.preference = preference;
    }
    ((judged, observation), first)
}

/// One line of `--items`: a labelled item, what people said of it and the judge's verdict on its (first)
/// answer, criteria with their reasons — where the two part is where a judge or profile needs work.
#[derive(Serialize)]
struct ItemLine<'a> {
    judge: &'a str,
    id: &'a str,
    set: &'a str,
    language: &'a str,
    people: serde_json::Value,
    /// The judge's pass, score and criterion scores, as the agreement figures read them.
    passed: Option<bool>,
    score: Option<f64>,
    criteria: &'a BTreeMap<String, f64>,
    rule_failed: bool,
    verdict: &'a ragtester_core::Verdict,
    /// The raw signals a profile reads, of the first answer and (a preference) the second, before any
    /// profile combined them: what to look at when a profile's figure moves.
    signals: BTreeMap<&'static str, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signals_b: Option<BTreeMap<&'static str, f64>>,
}

fn people_of(item: &LabelledItem) -> serde_json::Value {
    use ragtester_judge::agreement::HumanLabel;
    let label = match item.label {
        HumanLabel::Verdict(pass) => serde_json::json!({ "passed": pass }),
        HumanLabel::Score(score) => serde_json::json!({ "score": score }),
        HumanLabel::Preference(p) => serde_json::json!({ "preference": p }),
        HumanLabel::Criteria => serde_json::json!({}),
    };
    let mut label = label;
    if !item.criteria.is_empty() {
        label["scores"] = serde_json::json!(item.criteria);
    }
    label
}

fn write_items(
    path: &Path,
    judge: &str,
    items: &[LabelledItem],
    judged: &[JudgedItem],
    verdicts: &[ragtester_core::Verdict],
    observations: &[Observation],
) -> Result<()> {
    let mut out = String::new();
    let rows = items.iter().zip(judged).zip(verdicts).zip(observations);
    for (((item, j), verdict), seen) in rows {
        let line = ItemLine {
            judge,
            id: &item.id,
            set: &item.set,
            language: &item.language,
            people: people_of(item),
            passed: j.verdict,
            score: j.score,
            criteria: &j.criteria,
            rule_failed: j.rule_failed,
            verdict,
            signals: seen.first.named(),
            signals_b: seen.second.as_ref().map(|s| s.named()),
        };
        out.push_str(&serde_json::to_string(&line)?);
        out.push('\n');
    }
    ragtester_core::record::write_atomic(path, out.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// A labelled item's verdicts scored (`scoring`): the first answer's verdict, score and criterion scores,
/// and for a preference the difference of the two answers' scores.
pub(crate) fn scored(scoring: &Scoring, seen: Seen) -> JudgedItem {
    scored_with_verdict(scoring, seen).0
}

/// [`scored`], and the first answer's verdict as scored (what `--items` writes).
fn scored_with_verdict(scoring: &Scoring, seen: Seen) -> (JudgedItem, ragtester_core::Verdict) {
    let Seen {
        case,
        answers,
        mut verdicts,
        observation,
    } = seen;
    for (answer, verdict) in answers.iter().zip(verdicts.iter_mut()) {
        scoring.score(&case, answer, verdict);
    }
    let preference = verdicts[0]
        .score
        .zip(verdicts.get(1).and_then(|v| v.score))
        .map(|(a, b)| a - b);
    let first = &verdicts[0];
    let criteria = first.criteria.as_ref().map_or_else(Default::default, |c| {
        ragtester_core::verdict::CRITERIA_NAMES
            .iter()
            .zip(c.all())
            .filter_map(|(name, c)| Some((name.to_string(), c.graded()?)))
            .collect()
    });
    // The off-question rule reads the judge's own relevance rating: a judge replying with people's
    // ratings would rate a good answer relevant, so it is not counted against the rules.
    let rule_failed = first
        .rule_failure
        .as_deref()
        .is_some_and(|why| !why.starts_with(ragtester_judge::OFF_QUESTION_PREFIX));
    let judged = JudgedItem {
        verdict: observation.verdict,
        score: first.score,
        preference,
        criteria,
        rule_failed,
    };
    (judged, verdicts.swap_remove(0))
}

/// The usable items of a labels file (each line that is not named on the events), in file order, each
/// marked with the file's name as its set (scores are scaled within a set); `source` defaults to it.
pub(crate) fn read_labels(
    path: &Path,
    limits: &ragtester_core::Limits,
    events: &dyn Events,
) -> Result<Vec<LabelledItem>> {
    let text = ragtester_core::limits::read_text_file(path, limits)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let (mut items, rejected) = ragtester_judge::agreement::parse_labels(&text, limits);
    for why in &rejected {
        events.note(format!("{}: {why}", path.display()));
    }
    if items.is_empty() {
        bail!("{} holds no usable labelled answer", path.display());
    }
    let file = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    for item in &mut items {
        item.set = file.clone();
        if item.source.is_empty() {
            item.source = file.clone();
        }
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
        path.display()
    ));
    Ok(items)
}

/// Judge every labelled item with each judge and measure agreement with the labels.
pub async fn bench_labels(
    args: &LabelsBenchArgs<'_>,
    cx: &crate::StageContext<'_>,
) -> Result<Vec<LabelsScore>> {
    let events = cx.events();
    events.stage("judge");
    let items = read_labels(args.labels, cx.limits(), events)?;
    let mut scores = Vec::new();
    for judge in &args.judges {
        let started = std::time::Instant::now();
        let (pairs, verdicts): (Vec<(JudgedItem, Observation)>, Vec<ragtester_core::Verdict>) =
            futures::stream::iter(items.iter().enumerate())
                .map(|(n, item)| judge_item(judge.as_ref(), item, n, args.scoring))
                .buffered(args.concurrency.max(1))
                .collect::<Vec<_>>()
                .await
                .into_iter()
                .unzip();
        let (judged, observations): (Vec<JudgedItem>, Vec<Observation>) = pairs.into_iter().unzip();
        if let Some(path) = args.items {
            // Several judges: each writes its own lines, one file per judge past the first.
            let path = match scores.len() {
                0 => path.to_path_buf(),
                n => path.with_extension(format!("{n}.jsonl")),
            };
            write_items(
                &path,
                &judge.name(),
                &items,
                &judged,
                &verdicts,
                &observations,
            )?;
        }
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
            best_signals: best_signals(&items, &observations),
            defining_signals: defining_signals(&items, &observations),
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
        let (failed, good) = a.good_failed_by_rule;
        if good > 0 {
            let _ = writeln!(
                out,
                "    people's good answers failed by a rule: {failed} of {good} ({:.1}%)",
                failed as f64 * 100.0 / good as f64
            );
        }
        if a.verdict_pearson.is_some() {
            let _ = writeln!(
                out,
                "    score ~ verdict pearson {}",
                correlation(a.verdict_pearson)
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
        for (name, c) in &a.criteria {
            let _ = writeln!(out, "    {name:<12} pearson {}", correlation(Some(*c)));
        }
        if a.judge_errors > 0 {
            let _ = writeln!(out, "    judge errors {}", a.judge_errors);
        }
    };
    row(&mut out, "all", &score.overall);
    for (criterion, floor) in &score.defining_signals {
        let _ = writeln!(
            out,
            "    {criterion} by its defining signal ({}): pearson {}",
            floor.signal,
            correlation(Some(floor.correlation))
        );
    }
    for (figure, best) in &score.best_signals {
        let _ = writeln!(
            out,
            "    best single signal for {figure}: {} pearson {}",
            best.signal,
            correlation(Some(best.correlation))
        );
    }
    for (language, a) in &score.by_language {
        row(&mut out, &format!("language {language}"), a);
    }
    out
}
