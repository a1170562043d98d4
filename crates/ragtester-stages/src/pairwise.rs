//! `ragtester judge RUN --pairwise A B`: which of two configurations answered each case better, on
//! correctness and completeness, and A's win rate with its interval overall, per category and per language
//! (pairwise.json; the report shows it). The offline judge compares the verdicts the run already has, claim
//! by claim; an LLM judge is asked each pair in both orders.

use crate::events::Events;
use crate::run_dir::{self, RunDir};
use anyhow::{Context, Result, bail};
use futures::StreamExt;
use ragtester_core::oracle::{PairSide, PairwiseCase, PairwiseSummary, PairwiseTally};
use ragtester_core::{Answer, Configuration, TestCase, Verdict};
use ragtester_judge::Judge;
use ragtester_judge::pairwise::{PairVerdict, Winner};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// A configuration named by id, imported system or target name, label, the leading parts of a label
/// (`bm25 k=1` for `bm25 k=1 · offline`), or id prefix. A name that is a whole id, name or label wins over
/// the rest: a system imported as `a` is not made ambiguous by another configuration whose id happens to
/// start with `a`.
pub(crate) fn find<'a>(configs: &'a [Configuration], name: &str) -> Result<&'a Configuration> {
    let exact: Vec<&Configuration> = configs
        .iter()
        .filter(|c| {
            c.id == name || c.target.as_ref().is_some_and(|t| t.name == name) || c.label() == name
        })
        .collect();
    let leading: Vec<&Configuration> = configs
        .iter()
        .filter(|c| c.label().starts_with(&format!("{name} · ")))
        .collect();
    let matches = if !exact.is_empty() {
        exact
    } else if !leading.is_empty() {
        leading
    } else {
        configs.iter().filter(|c| c.id.starts_with(name)).collect()
    };
    match matches.as_slice() {
        [one] => Ok(one),
        [] => bail!(
            "no configuration `{name}` in this run (it has: {})",
            configs
                .iter()
                .map(|c| format!(
                    "{} = {}",
                    c.id.chars().take(12).collect::<String>(),
                    c.label()
                ))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        _ => bail!("`{name}` names several configurations: give more of the id"),
    }
}

fn tally(outcomes: &[Winner]) -> PairwiseTally {
    let count = |w: Winner| outcomes.iter().filter(|o| **o == w).count();
    let (a, b, ties) = (
        count(Winner::First),
        count(Winner::Second),
        count(Winner::Tie),
    );
    let n = a + b + ties;
    // A tie is half a win: Wilson over doubled counts would overstate n, so ties count as half-wins of n.
    let rate = ragtester_judge::stats::wilson(a + ties / 2, n, 0.95).map(|mut i| {
        i.estimate = (a as f64 + ties as f64 / 2.0) / n as f64;
        i
    });
    PairwiseTally {
        a_wins: a,
        b_wins: b,
        ties,
        a_win_rate: rate,
    }
}

/// Compare configurations `a` and `b` of a judged run with `judge`; writes pairwise.json.
pub async fn compare(
    run_dir: &Path,
    a: &str,
    b: &str,
    judge: Arc<dyn Judge>,
    concurrency: usize,
    events: &dyn Events,
) -> Result<PairwiseSummary> {
    events.stage("judge");
    let run = RunDir::new(run_dir);
    let cases = run.cases()?;
    let configs = run.configs()?;
    let (ca, cb) = (find(&configs, a)?, find(&configs, b)?);
    if ca.id == cb.id {
        bail!("--pairwise needs two different configurations");
    }
    let answers = run.answers()?;
    let by_cell: HashMap<(&str, &str), &Answer> = answers
        .iter()
        .map(|x| ((x.case_id.as_str(), x.config_id.as_str()), x))
        .collect();
    let verdicts = if judge.compares_verdicts() {
        followed_verdicts(&run)?
    } else {
        HashMap::new()
    };
    // Every case both configurations were asked, errors included: an answer that failed loses to one
    // that came back, rather than leaving the comparison.
    let pairs: Vec<(&TestCase, &Answer, &Answer)> = cases
        .iter()
        .filter_map(|c| {
            let a = by_cell.get(&(c.id.as_str(), ca.id.as_str()))?;
            let b = by_cell.get(&(c.id.as_str(), cb.id.as_str()))?;
            Some((c, *a, *b))
        })
        .collect();
    if pairs.is_empty() {
        bail!("no case was asked of both configurations");
    }
    events.info(format!(
        "comparing {} cases asked of both {} and {}",
        pairs.len(),
        ca.label(),
        cb.label()
    ));
    let outcomes: Vec<Result<PairVerdict, String>> = futures::stream::iter(pairs.iter())
        .map(|&(case, aa, ab)| {
            let judged = |cell: &Configuration| verdicts.get(&(case.id.clone(), cell.id.clone()));
            compare_pair(judge.as_ref(), case, (aa, judged(ca)), (ab, judged(cb)))
        })
        .buffered(concurrency.max(1))
        .collect()
        .await;
    let mut summary = summarise(&pairs, &outcomes, (ca, cb), judge.as_ref());
    // The cases go to their own records; the summary file holds the figures.
    let cases = std::mem::take(&mut summary.cases);
    run.save_records(run_dir::PAIRWISE_CASES, &cases)?;
    run.save_json(run_dir::PAIRWISE, &summary)?;
    summary.cases = cases;
    if summary.errors > 0 {
        events.warning(format!(
            "{} of {} pairs could not be compared: {}",
            summary.errors,
            pairs.len(),
            summary.first_error.as_deref().unwrap_or("")
        ));
    }
    Ok(summary)
}

/// The verdict reports follow for every cell (it comes first per cell in verdicts.jsonl).
fn followed_verdicts(run: &RunDir) -> Result<HashMap<(String, String), Verdict>> {
    let mut verdicts = HashMap::new();
    for v in run
        .verdicts()
        .context("the offline comparison reads the run's verdicts")?
    {
        verdicts
            .entry((v.case_id.clone(), v.config_id.clone()))
            .or_insert(v);
    }
    Ok(verdicts)
}

/// One case's two answers compared: an errored answer loses; otherwise the judge compares them (a model
/// asked in both orders, the offline judge from the two verdicts' claims).
async fn compare_pair(
    judge: &dyn Judge,
    case: &TestCase,
    (aa, va): (&Answer, Option<&Verdict>),
    (ab, vb): (&Answer, Option<&Verdict>),
) -> Result<PairVerdict, String> {
    match (&aa.error, &ab.error) {
        (Some(_), Some(_)) => {
            return Err("neither configuration answered (both cells are errors)".into());
        }
        (Some(_), None) => return Ok(PairVerdict::decided(false)),
        (None, Some(_)) => return Ok(PairVerdict::decided(true)),
        (None, None) => {}
    }
    judge.compare(case, (aa, va), (ab, vb)).await
}

/// A's win rate overall, per category and per language, and the pairs that could not be compared.
fn summarise(
    pairs: &[(&TestCase, &Answer, &Answer)],
    outcomes: &[Result<PairVerdict, String>],
    (ca, cb): (&Configuration, &Configuration),
    judge: &dyn Judge,
) -> PairwiseSummary {
    let mut all = Vec::new();
    let mut by_category: HashMap<String, Vec<Winner>> = HashMap::new();
    let mut by_language: HashMap<String, Vec<Winner>> = HashMap::new();
    let (mut errors, mut first_error) = (0usize, None);
    let mut cases = Vec::with_capacity(pairs.len());
    for ((case, _, _), outcome) in pairs.iter().zip(outcomes) {
        cases.push(case_outcome(case, outcome));
        match outcome {
            Ok(p) => {
                let w = p.winner();
                all.push(w);
                let category = case.category.as_str().to_string();
                by_category.entry(category).or_default().push(w);
                by_language
                    .entry(case.language.clone())
                    .or_default()
                    .push(w);
            }
            Err(e) => {
                errors += 1;
                first_error.get_or_insert_with(|| e.clone());
            }
        }
    }
    let tallies =
        |m: &HashMap<String, Vec<Winner>>| m.iter().map(|(k, v)| (k.clone(), tally(v))).collect();
    PairwiseSummary {
        a: ca.id.clone(),
        a_label: ca.label(),
        b: cb.id.clone(),
        b_label: cb.label(),
        judge: judge.name(),
        method: judge.compare_method().into(),
        overall: tally(&all),
        by_category: tallies(&by_category),
        by_language: tallies(&by_language),
        errors,
        first_error,
        cases,
    }
}

fn side(w: Winner) -> PairSide {
    match w {
        Winner::First => PairSide::A,
        Winner::Second => PairSide::B,
        Winner::Tie => PairSide::Tie,
    }
}

/// One case's line of `pairwise.jsonl`.
fn case_outcome(case: &TestCase, outcome: &Result<PairVerdict, String>) -> PairwiseCase {
    let mut row = PairwiseCase {
        schema_version: ragtester_core::SCHEMA_VERSION,
        case_id: case.id.clone(),
        category: case.category.as_str().to_string(),
        language: case.language.clone(),
        query: case.query.clone(),
        winner: None,
        correctness: None,
        completeness: None,
        reason: String::new(),
        error: None,
    };
    match outcome {
        Ok(p) => {
            let (correctness, completeness) = p.criteria_winners();
            row.winner = Some(side(p.winner()));
            row.correctness = Some(side(correctness));
            row.completeness = Some(side(completeness));
            row.reason = p.reason.clone();
        }
        Err(e) => row.error = Some(e.clone()),
    }
    row
}

/// The comparison as text: A's wins, B's wins, ties and A's win rate, overall and per slice.
pub fn render(s: &PairwiseSummary) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "A = {}\nB = {}\njudge {} ({})\n",
        s.a_label, s.b_label, s.judge, s.method
    );
    let row = |out: &mut String, name: &str, t: &PairwiseTally| {
        let rate = t.a_win_rate.map_or("–".into(), |i| {
            format!(
                "{:.1}% [{:.1}–{:.1}]",
                i.estimate * 100.0,
                i.low * 100.0,
                i.high * 100.0
            )
        });
        let _ = writeln!(
            out,
            "  {name:<24} A wins {:>5}  B wins {:>5}  ties {:>5}  A's win rate {rate}",
            t.a_wins, t.b_wins, t.ties
        );
    };
    row(&mut out, "all", &s.overall);
    for (k, t) in &s.by_category {
        row(&mut out, &format!("category {k}"), t);
    }
    for (k, t) in &s.by_language {
        row(&mut out, &format!("language {k}"), t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::config::TargetSettings;

    fn imported(name: &str, id: &str) -> Configuration {
        let mut config = Configuration::for_target(TargetSettings::imported(name, "answers.jsonl"));
        config.id = id.to_string();
        config
    }

    #[test]
    fn a_whole_name_wins_over_id_prefixes() {
        // `b`'s id starts with `a`, as one id in sixteen does by chance.
        let configs = [
            imported("a", "3f00"),
            imported("b", "a9e1"),
            imported("c", "a9f2"),
        ];
        assert_eq!(find(&configs, "a").unwrap().id, "3f00");
        assert_eq!(find(&configs, "b").unwrap().id, "a9e1");
        assert_eq!(find(&configs, "a9e").unwrap().id, "a9e1");
        assert_eq!(find(&configs, "target c (imported)").unwrap().id, "a9f2");
        let ambiguous = find(&configs, "a9").unwrap_err().to_string();
        assert!(
            ambiguous.contains("names several configurations"),
            "{ambiguous}"
        );
        let unknown = find(&configs, "d").unwrap_err().to_string();
        assert!(unknown.contains("no configuration `d`"), "{unknown}");
    }
}
