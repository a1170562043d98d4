//! `ragtester audit RUN`: how many of the oracle's reported failures are real. Without labels it writes
//! RUN/audit.csv — a Cochran-sized sample of the failures with what a person needs to decide — and says how
//! to label it; with `--labels FILE` (that CSV, filled in) or `--judge SPEC…` (a panel of larger judges
//! re-judging the sample) it writes RUN/audit.json, which the report shows.

use crate::context::StageContext;
use crate::models::Models;
use crate::run_dir::{self, RunDir};
use anyhow::{Context, Result, bail};
use ragtester_core::{Answer, TestCase, Verdict};
use ragtester_judge::audit::{self, AuditPlan};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

pub struct AuditRequest<'a> {
    pub run_dir: &'a Path,
    pub confidence: f64,
    pub margin: f64,
    pub seed: u64,
    pub labels: Option<&'a Path>,
    pub judges: &'a [String],
    pub concurrency: usize,
}

impl<'a> AuditRequest<'a> {
    /// The audit both front ends start from: 95 % confidence, a ±5 % margin, seed 0, labels by a person.
    pub fn new(run_dir: &'a Path) -> Self {
        Self {
            run_dir,
            confidence: 0.95,
            margin: 0.05,
            seed: 0,
            labels: None,
            judges: &[],
            concurrency: ragtester_core::config::RunSettings::default().concurrency,
        }
    }
}

const COLUMNS: [&str; 9] = [
    "case_id",
    "config_id",
    "category",
    "query",
    "expected_answer",
    "answer",
    "retrieved_context",
    "judge_reasons",
    "label",
];

/// How an audit ended.
pub enum AuditOutcome {
    /// No labels yet: the sample was written to this sheet for a person to label.
    Sheet(std::path::PathBuf),
    /// The labelled sample scored (written to audit.json, and the report redone).
    Scored(ragtester_core::oracle::AuditSummary),
}

pub async fn audit(args: &AuditRequest<'_>, cx: &StageContext<'_>) -> Result<AuditOutcome> {
    let events = cx.events();
    events.stage("audit");
    let within = |x: f64| x > 0.0 && x < 1.0;
    if !(within(args.confidence) && within(args.margin)) {
        bail!("--confidence and --margin must lie strictly between 0 and 1");
    }
    let dir = args.run_dir;
    let run = RunDir::new(dir);
    let cases = run.cases()?;
    let answers = run.answers()?;
    let verdicts = run.verdicts()?;
    let mut failures: Vec<&Verdict> = ragtester_report::primary_verdicts(&verdicts)
        .into_iter()
        .filter(|v| v.passed == Some(false))
        .collect();
    failures.sort_by(|a, b| (&a.case_id, &a.config_id).cmp(&(&b.case_id, &b.config_id)));
    let chosen = audit::draw(failures.len(), args.confidence, args.margin, args.seed);
    let plan = AuditPlan {
        failures: failures.len(),
        confidence: args.confidence,
        margin: args.margin,
        sample_size: chosen.len(),
    };
    let sample: Vec<&Verdict> = chosen.iter().map(|&i| failures[i]).collect();
    events.info(format!(
        "{} reported failures; audit sample of {} (Cochran, {:.0}% confidence, ±{:.0}%)",
        plan.failures,
        plan.sample_size,
        args.confidence * 100.0,
        args.margin * 100.0
    ));
    let case_of: HashMap<&str, &TestCase> = cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let answer_of: HashMap<(&str, &str), &Answer> = answers
        .iter()
        .map(|a| ((a.case_id.as_str(), a.config_id.as_str()), a))
        .collect();
    let (labeller, labels) = if let Some(file) = args.labels {
        ("person".to_string(), read_labels(file, &sample)?)
    } else if !args.judges.is_empty() {
        let labels = judge_labels(args, &sample, &cases, &answer_of, cx.models()).await?;
        (args.judges.join(" + "), labels)
    } else {
        let path = run.file(run_dir::AUDIT_SHEET);
        run.save_audit_sheet(&sheet(&sample, &case_of, &answer_of))?;
        events.info(format!(
            "wrote {}: fill its `label` column with true (a real failure) or false (a false alarm), then run\n  \
             ragtester audit {} --labels {}",
            path.display(),
            dir.display(),
            path.display()
        ));
        return Ok(AuditOutcome::Sheet(path));
    };
    let mut summary = audit::summarise(&plan, &labeller, &labels);
    let sampled: Vec<&str> = sample.iter().map(|v| v.config_id.as_str()).collect();
    summary.per_config = audit::per_config(&sampled, &labels);
    run.save_json(run_dir::AUDIT, &summary)?;
    if summary.labelled < summary.sample_size {
        events.note(format!(
            "{} of the sample are unlabelled; the interval is wider than planned",
            summary.sample_size - summary.labelled
        ));
    }
    crate::report::report(dir, events)?;
    Ok(AuditOutcome::Scored(summary))
}

/// The sheet a person labels: each sampled failure with what deciding it needs, the label left empty.
fn sheet(
    sample: &[&Verdict],
    case_of: &HashMap<&str, &TestCase>,
    answer_of: &HashMap<(&str, &str), &Answer>,
) -> run_dir::Sheet {
    let mut rows = Vec::with_capacity(sample.len());
    for v in sample {
        let case = case_of.get(v.case_id.as_str());
        let answer = answer_of.get(&(v.case_id.as_str(), v.config_id.as_str()));
        let reasons = v.criteria.as_ref().map_or(String::new(), |c| {
            c.all()
                .iter()
                .map(|c| format!("{:?}: {}", c.rating, c.reason))
                .collect::<Vec<_>>()
                .join(" | ")
        });
        let context = answer.map_or(String::new(), |a| {
            a.contexts
                .iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join("\n---\n")
        });
        let cells = [
            v.case_id.as_str(),
            v.config_id.as_str(),
            case.map_or("", |c| c.category.as_str()),
            case.map_or("", |c| c.query.as_str()),
            case.map_or("", |c| c.expected_answer.as_str()),
            answer.map_or("", |a| a.answer.as_str()),
            context.as_str(),
            reasons.as_str(),
            "",
        ];
        rows.push(cells.iter().map(|c| c.to_string()).collect());
    }
    run_dir::Sheet {
        headers: COLUMNS.iter().map(|c| c.to_string()).collect(),
        rows,
    }
}

/// Labels for the sample from a filled-in sheet, matched by (case, configuration). Rows of cells not in the
/// sample are ignored; a label that is not true/false is an error naming its row.
fn read_labels(file: &Path, sample: &[&Verdict]) -> Result<Vec<Option<bool>>> {
    use ragtester_core::spreadsheet::restore;
    let mut reader = csv::Reader::from_path(file)
        .with_context(|| format!("cannot read labels {}", file.display()))?;
    let headers = reader.headers()?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim() == name)
            .with_context(|| format!("{} has no `{name}` column", file.display()))
    };
    let (case, config, label) = (col("case_id")?, col("config_id")?, col("label")?);
    let mut given: HashMap<(String, String), bool> = HashMap::new();
    for (row, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("{}: row {}", file.display(), row + 2))?;
        let text = record.get(label).unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        let value = audit::parse_label(text).with_context(|| {
            format!(
                "{}: row {}: label `{text}` is neither true nor false",
                file.display(),
                row + 2
            )
        })?;
        given.insert(
            (
                restore(record.get(case).unwrap_or("")).into_owned(),
                restore(record.get(config).unwrap_or("")).into_owned(),
            ),
            value,
        );
    }
    Ok(sample
        .iter()
        .map(|v| {
            given
                .get(&(v.case_id.clone(), v.config_id.clone()))
                .copied()
        })
        .collect())
}

/// The audit judges re-judge each sampled failure; their majority failing it confirms it.
async fn judge_labels(
    args: &AuditRequest<'_>,
    sample: &[&Verdict],
    cases: &[TestCase],
    answer_of: &HashMap<(&str, &str), &Answer>,
    models: &Models,
) -> Result<Vec<Option<bool>>> {
    let judges: Vec<Arc<dyn ragtester_judge::Judge>> = args
        .judges
        .iter()
        .map(|s| {
            ragtester_judge::judge_for(s, || models.get(s))
                .with_context(|| format!("audit judge `{s}`"))
        })
        .collect::<Result<_>>()?;
    let answers: Vec<Answer> = sample
        .iter()
        .filter_map(|v| answer_of.get(&(v.case_id.as_str(), v.config_id.as_str())))
        .map(|a| (*a).clone())
        .collect();
    let raw = ragtester_judge::judge_all(
        cases,
        &answers,
        &judges,
        1,
        args.concurrency,
        &ragtester_judge::JudgePrompts::default(),
    )
    .await;
    let panel = ragtester_judge::consensus(&raw, ragtester_judge::PanelMethod::Majority);
    let decided: HashMap<(&str, &str), bool> = panel
        .iter()
        .filter_map(|v| Some(((v.case_id.as_str(), v.config_id.as_str()), v.passed?)))
        .collect();
    Ok(sample
        .iter()
        .map(|v| {
            decided
                .get(&(v.case_id.as_str(), v.config_id.as_str()))
                .map(|passed| !passed)
        })
        .collect())
}
