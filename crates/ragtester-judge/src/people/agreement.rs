//! Every judge measured against people (`ragtester bench oracle --labels FILE`). A labels file holds answers
//! people have judged, one JSON object a line, in any of three kinds:
//!
//! - a verdict: `{"question", "reference", "answer", "contexts"?, "label": "pass" | "fail"}`;
//! - a score on any scale (a 1–5 rating, the share of an answer's claims experts found correct):
//!   `{..., "answer", "score": 3.5}`;
//! - a preference between two answers to one question: `{..., "answer_a", "answer_b", "preference": "a" |
//!   "b" | "tie"}`.
//!
//! Each may carry `language` (detected from the question otherwise), `source` and `id`, and people's scores
//! of single criteria on any scale, `"scores": {"faithfulness": 4, "completeness": 3}` — alone or beside
//! one of the three. The judge's verdicts
//! are compared with the people's: precision and recall on failures and Cohen's κ for verdicts, Pearson and
//! Spearman correlations for scores and preferences, each with a 95 % interval, overall and per language.
//! A judge's graded opinion of one answer is [`crate::graded::judge_score`]; of two, the pairwise
//! module's comparison.

use crate::benchmark::Confusion;
use crate::stats::{Interval, cohen_kappa, z_for};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What people said of an item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HumanLabel {
    /// The answer passes (true) or fails.
    Verdict(bool),
    Score(f64),
    /// Which of two answers is better: +1 the first, -1 the second, 0 a tie.
    Preference(f64),
    /// Only scores of single criteria (the item's `criteria`).
    Criteria,
}

/// One labelled line.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelledItem {
    /// Where it is in its file (`line 12`).
    pub place: String,
    pub id: String,
    pub source: String,
    /// The label set (file) it came from: people's scores are put on one scale within a set.
    pub set: String,
    pub language: String,
    pub question: String,
    pub reference: String,
    pub contexts: Vec<String>,
    pub answer: String,
    /// The second answer of a preference.
    pub answer_b: Option<String>,
    pub label: HumanLabel,
    /// People's scores of single criteria, by criterion name (on the file's own scale).
    pub criteria: BTreeMap<String, f64>,
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    language: Option<String>,
    question: String,
    reference: String,
    #[serde(default)]
    contexts: Vec<String>,
    #[serde(default)]
    answer: Option<String>,
    #[serde(default)]
    answer_a: Option<String>,
    #[serde(default)]
    answer_b: Option<String>,
    #[serde(default)]
    label: Option<serde_json::Value>,
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    preference: Option<String>,
    #[serde(default)]
    scores: BTreeMap<String, f64>,
}

/// The items of a labels file, and `line N: why` for each line that cannot be used.
pub fn parse_labels(
    text: &str,
    limits: &ragtester_core::Limits,
) -> (Vec<LabelledItem>, Vec<String>) {
    let (mut items, mut rejected) = (Vec::new(), Vec::new());
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let place = format!("line {}", i + 1);
        match item_of(raw, &place, limits) {
            Ok(item) => items.push(item),
            Err(why) => rejected.push(format!("{place}: {why}")),
        }
    }
    (items, rejected)
}

fn item_of(
    raw: &str,
    place: &str,
    limits: &ragtester_core::Limits,
) -> Result<LabelledItem, String> {
    limits
        .check_json_depth(raw, place)
        .map_err(|e| format!("{e:#}"))?;
    let line: Line = serde_json::from_str(raw).map_err(|e| e.to_string())?;
    let (answer, answer_b, label) = match (&line.label, line.score, &line.preference) {
        (Some(label), None, None) => {
            let pass = match label {
                serde_json::Value::Bool(b) => Some(*b),
                serde_json::Value::String(s) => match s.trim().to_lowercase().as_str() {
                    "pass" | "passed" | "correct" | "通过" | "正确" => Some(true),
                    "fail" | "failed" | "incorrect" | "wrong" | "不通过" | "错误" => {
                        Some(false)
                    }
                    _ => None,
                },
                _ => None,
            }
            .ok_or("`label` is neither pass nor fail")?;
            (line.answer, None, HumanLabel::Verdict(pass))
        }
        (None, Some(score), None) if score.is_finite() => {
            (line.answer, None, HumanLabel::Score(score))
        }
        (None, None, Some(p)) => {
            let value = match p.trim().to_ascii_lowercase().as_str() {
                "a" => 1.0,
                "b" => -1.0,
                "tie" => 0.0,
                other => return Err(format!("`preference` is `{other}`, not a, b or tie")),
            };
            let b = line.answer_b.ok_or("a preference needs `answer_b`")?;
            (line.answer_a, Some(b), HumanLabel::Preference(value))
        }
        (None, None, None) if !line.scores.is_empty() => (line.answer, None, HumanLabel::Criteria),
        _ => return Err(
            "give exactly one of `label`, `score` (a number) and `preference`, or `scores` of criteria"
                .into(),
        ),
    };
    if let Some((name, value)) = line.scores.iter().find(|(name, value)| {
        !ragtester_core::verdict::CRITERIA_NAMES.contains(&name.as_str()) || !value.is_finite()
    }) {
        return Err(format!(
            "`scores` holds `{name}`: {value}; give finite scores of {}",
            ragtester_core::verdict::CRITERIA_NAMES.join(", ")
        ));
    }
    let answer = answer.ok_or("no answer (`answer`, or `answer_a` with a preference)")?;
    let language = line.language.unwrap_or_else(|| {
        ragtester_text::question_language(&line.question, &line.reference).to_string()
    });
    Ok(LabelledItem {
        place: place.to_string(),
        id: line.id.map_or_else(
            || place.to_string(),
            |v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            },
        ),
        source: line.source.unwrap_or_default(),
        set: String::new(),
        language,
        question: line.question,
        reference: line.reference,
        contexts: line.contexts,
        answer,
        answer_b,
        label,
        criteria: line.scores,
    })
}

/// A correlation with its interval (Fisher's z transform) and how many pairs it stands on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Correlation {
    pub n: usize,
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// Pearson's r with a 95 % interval; None below four pairs or when either side does not vary.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<Correlation> {
    let n = x.len();
    if n < 4 || n != y.len() {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n as f64;
    let (mx, my) = (mean(x), mean(y));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    let r = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let z = r.clamp(-0.999_999, 0.999_999).atanh();
    let half = z_for(0.95) / ((n - 3) as f64).sqrt();
    Some(Correlation {
        n,
        estimate: r,
        low: (z - half).tanh(),
        high: (z + half).tanh(),
    })
}

/// Ranks with ties given their mean rank.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut out = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for k in &order[i..=j] {
            out[*k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Spearman's ρ (Pearson's r of the ranks) with the same interval.
pub fn spearman(x: &[f64], y: &[f64]) -> Option<Correlation> {
    pearson(&ranks(x), &ranks(y))
}

/// Cohen's κ with a percentile-bootstrap 95 % interval (seeded, so figures repeat).
pub fn kappa_interval(judge: &[bool], people: &[bool]) -> Option<Interval> {
    let estimate = cohen_kappa(judge, people)?;
    let n = judge.len();
    let mut rng = fastrand::Rng::with_seed(2026);
    let mut draws: Vec<f64> = (0..1000)
        .filter_map(|_| {
            let picks: Vec<usize> = (0..n).map(|_| rng.usize(..n)).collect();
            let a: Vec<bool> = picks.iter().map(|&i| judge[i]).collect();
            let b: Vec<bool> = picks.iter().map(|&i| people[i]).collect();
            cohen_kappa(&a, &b)
        })
        .collect();
    if draws.len() < 100 {
        return None;
    }
    draws.sort_by(f64::total_cmp);
    let at = |q: f64| draws[((q * (draws.len() - 1) as f64).round() as usize).min(draws.len() - 1)];
    Some(Interval {
        estimate,
        low: at(0.025),
        high: at(0.975),
    })
}

/// One judge's agreement with people on one slice (all items, or one language).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Agreement {
    /// Verdict labels: failure is the positive class, as in the paper.
    pub verdicts: Confusion,
    pub kappa: Option<Interval>,
    /// Pearson's r of the judge's score with people's verdicts (pass 1, fail 0; point-biserial): how well
    /// the score orders what people passed above what they failed, whatever the pass/fail rule says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_pearson: Option<Correlation>,
    pub score_pearson: Option<Correlation>,
    pub score_spearman: Option<Correlation>,
    pub preference_pearson: Option<Correlation>,
    pub preference_spearman: Option<Correlation>,
    /// Of the preferences people did not call a tie, the share the judge ordered the same way (a judge tie
    /// counts as half).
    pub preference_accuracy: Option<Interval>,
    /// Per criterion people scored: Pearson's r of the judge's criterion score with theirs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub criteria: BTreeMap<String, Correlation>,
    /// Items whose judge verdict was an error, left out of every figure above.
    pub judge_errors: usize,
    /// Of the answers people rated good (a pass, or a score of at least 0.75), how many a rule failed —
    /// a rule that binds every judge, so a judge replying with people's own ratings would be overruled on
    /// them (the rule reading the judge's relevance is left out: such a judge rates them relevant).
    #[serde(default)]
    pub good_failed_by_rule: (usize, usize),
}

/// What the judge made of each item: its verdict for the answer, and for a preference its comparison
/// (positive when it prefers the first answer).
#[derive(Debug, Clone)]
pub struct JudgedItem {
    pub verdict: Option<bool>,
    pub score: Option<f64>,
    pub preference: Option<f64>,
    /// The judge's score of each criterion (of the first answer).
    pub criteria: BTreeMap<String, f64>,
    /// A rule that binds every judge failed the first answer (not the one that reads the judge's relevance).
    pub rule_failed: bool,
}

/// Agreement of a judge with people over items (parallel slices), overall and per language.
pub fn agreement(
    items: &[LabelledItem],
    judged: &[JudgedItem],
) -> (Agreement, BTreeMap<String, Agreement>) {
    let overall = slice(items.iter().zip(judged).collect());
    let mut languages: BTreeMap<String, Vec<(&LabelledItem, &JudgedItem)>> = BTreeMap::new();
    for (item, j) in items.iter().zip(judged) {
        languages
            .entry(item.language.clone())
            .or_default()
            .push((item, j));
    }
    let per_language = languages
        .into_iter()
        .map(|(language, pairs)| (language, slice(pairs)))
        .collect();
    (overall, per_language)
}

fn slice(pairs: Vec<(&LabelledItem, &JudgedItem)>) -> Agreement {
    let mut out = Agreement::default();
    let (mut judge_pass, mut people_pass) = (Vec::new(), Vec::new());
    let (mut scores, mut human_scores) = (Vec::new(), Vec::new());
    let (mut verdict_scores, mut human_verdicts) = (Vec::new(), Vec::new());
    let (mut prefs, mut human_prefs) = (Vec::new(), Vec::new());
    let (mut agreed, mut decided) = (0.0f64, 0usize);
    let mut criteria: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (item, judged) in pairs {
        for (name, people) in &item.criteria {
            if let Some(j) = judged.criteria.get(name) {
                let entry = criteria.entry(name.as_str()).or_default();
                entry.0.push(*j);
                entry.1.push(*people);
            }
        }
        let good = match item.label {
            HumanLabel::Verdict(pass) => pass,
            HumanLabel::Score(s) => s >= 0.75,
            _ => false,
        };
        if good {
            out.good_failed_by_rule.1 += 1;
            out.good_failed_by_rule.0 += usize::from(judged.rule_failed);
        }
        match item.label {
            HumanLabel::Criteria => {}
            HumanLabel::Verdict(pass) => {
                out.verdicts.add(!pass, judged.verdict);
                if let Some(score) = judged.score {
                    verdict_scores.push(score);
                    human_verdicts.push(f64::from(u8::from(pass)));
                }
                if let Some(v) = judged.verdict {
                    judge_pass.push(v);
                    people_pass.push(pass);
                } else {
                    out.judge_errors += 1;
                }
            }
            HumanLabel::Score(s) => match judged.score {
                Some(j) => {
                    scores.push(j);
                    human_scores.push(s);
                }
                None => out.judge_errors += 1,
            },
            HumanLabel::Preference(p) => match judged.preference {
                Some(j) => {
                    prefs.push(j);
                    human_prefs.push(p);
                    if p != 0.0 {
                        decided += 1;
                        agreed += if j == 0.0 {
                            0.5
                        } else {
                            f64::from(u8::from(j.signum() == p.signum()))
                        };
                    }
                }
                None => out.judge_errors += 1,
            },
        }
    }
    out.kappa = kappa_interval(&judge_pass, &people_pass);
    out.score_pearson = pearson(&scores, &human_scores);
    out.verdict_pearson = pearson(&verdict_scores, &human_verdicts);
    out.score_spearman = spearman(&scores, &human_scores);
    out.preference_pearson = pearson(&prefs, &human_prefs);
    out.preference_spearman = spearman(&prefs, &human_prefs);
    out.criteria = criteria
        .into_iter()
        .filter_map(|(name, (j, p))| Some((name.to_string(), pearson(&j, &p)?)))
        .collect();
    // Half-agreements are rounded down to whole items for the Wilson interval.
    out.preference_accuracy =
        crate::stats::wilson(agreed.floor() as usize, decided, 0.95).map(|mut i| {
            i.estimate = agreed / decided as f64;
            i
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn correlations_match_known_values() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 4.0, 5.0, 4.0, 5.0];
        let r = pearson(&x, &y).unwrap();
        assert!((r.estimate - 0.7745966692).abs() < 1e-9, "{r:?}");
        assert!(r.low < r.estimate && r.estimate < r.high);
        // scipy.stats.spearmanr([1,2,3,4,5],[2,4,5,4,5]) = 0.7378647873726218
        let rho = spearman(&x, &y).unwrap();
        assert!(
            (rho.estimate - 0.737_864_787_372_621_8).abs() < 1e-9,
            "{rho:?}"
        );
        assert!(
            pearson(&x, &[1.0; 5]).is_none(),
            "no variation, no correlation"
        );
        assert_eq!(ranks(&[3.0, 1.0, 3.0, 2.0]), vec![3.5, 1.0, 3.5, 2.0]);
    }

    #[test]
    fn a_labels_file_reads_each_kind_and_names_bad_lines() {
        let text = r#"{"question": "Q?", "reference": "R", "answer": "A", "label": "fail"}
{"question": "问题？", "reference": "R", "answer": "A", "score": 4}
{"question": "Q?", "reference": "R", "answer_a": "A", "answer_b": "B", "preference": "b"}
{"question": "Q?", "reference": "R", "answer": "A", "label": "maybe"}
{"question": "Q?", "reference": "R", "answer": "A", "score": 2, "label": "pass"}
{"question": "Q?", "reference": "R", "answer_a": "A", "preference": "a"}"#;
        let (items, rejected) = parse_labels(text, &ragtester_core::Limits::default());
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].label, HumanLabel::Verdict(false));
        assert_eq!(items[1].language, "zh");
        assert_eq!(items[2].label, HumanLabel::Preference(-1.0));
        assert_eq!(items[2].answer_b.as_deref(), Some("B"));
        assert_eq!(rejected.len(), 3);
        assert!(rejected[0].starts_with("line 4: `label`"), "{rejected:?}");
        assert!(
            rejected[1].starts_with("line 5: give exactly one"),
            "{rejected:?}"
        );
        assert!(
            rejected[2].starts_with("line 6: a preference needs"),
            "{rejected:?}"
        );
    }

    #[test]
    fn agreement_counts_each_kind() {
        let item = |label| LabelledItem {
            place: String::new(),
            id: String::new(),
            source: String::new(),
            set: String::new(),
            language: "en".into(),
            question: "q".into(),
            reference: "r".into(),
            contexts: Vec::new(),
            answer: "a".into(),
            answer_b: None,
            label,
            criteria: BTreeMap::new(),
        };
        let judged = |verdict: Option<bool>, preference: Option<f64>| JudgedItem {
            rule_failed: false,
            verdict,
            score: verdict.map(|v| f64::from(u8::from(v))),
            preference,
            criteria: BTreeMap::new(),
        };
        let items = vec![
            item(HumanLabel::Verdict(false)),
            item(HumanLabel::Verdict(true)),
            item(HumanLabel::Verdict(true)),
            item(HumanLabel::Preference(1.0)),
            item(HumanLabel::Preference(-1.0)),
            item(HumanLabel::Preference(1.0)),
        ];
        let judgements = vec![
            judged(Some(false), None),
            judged(Some(false), None),
            judged(None, None),
            judged(None, Some(0.4)),
            judged(None, Some(-0.2)),
            judged(None, Some(0.0)),
        ];
        let (all, per_language) = agreement(&items, &judgements);
        assert_eq!(all.verdicts.true_failures, 1);
        assert_eq!(all.verdicts.false_failures, 1);
        assert_eq!(all.judge_errors, 1);
        let accuracy = all.preference_accuracy.unwrap();
        assert!((accuracy.estimate - 2.5 / 3.0).abs() < 1e-12);
        assert_eq!(per_language.len(), 1);
        // Of the two answers people passed, the one a rule failed is counted; a failed one is not.
        let mut ruled = judgements.clone();
        ruled[0].rule_failed = true;
        ruled[1].rule_failed = true;
        let (all, _) = agreement(&items, &ruled);
        assert_eq!(all.good_failed_by_rule, (1, 2));
    }
}
