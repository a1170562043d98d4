//! CI gates over a summary: pass rate overall and per category, error rate, over-refusal and hallucination
//! rates, each per configuration. A cell with no verdict (execution or judge error) counts against the pass
//! rate, and a gate that cannot be checked (no case it applies to) fails rather than passes silently.

use crate::summary::{ConfigSummary, Summary};
use ragtester_core::Category;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gates {
    /// Least pass rate (passed / cells) of every configuration.
    pub fail_under: Option<f64>,
    /// Least pass rate of every configuration on a category.
    pub fail_under_category: Vec<(Category, f64)>,
    /// Largest share of cells with no verdict. When unset it is 0 as soon as any other gate is set: a
    /// gate never passes a run whose cells errored.
    pub max_error_rate: Option<f64>,
    /// Largest share of answerable cases refused.
    pub max_over_refusal: Option<f64>,
    /// Largest share of negative cases answered instead of refused.
    pub max_hallucination: Option<f64>,
    /// Least agreement with people (held-out κ or Pearson's r) measured for the judge in use, in every
    /// language of the run.
    pub require_agreement: Option<f64>,
    /// How a repeated configuration's cases count as passed for `fail_under`: it is held per
    /// configuration over its repeats, not per repeat.
    pub repeat_policy: crate::repeats::RepeatPolicy,
}

/// `negative=0.95` → (Negative, 0.95): a `--fail-under-category` gate.
pub fn parse_category_gate(text: &str) -> anyhow::Result<(Category, f64)> {
    use anyhow::Context;
    let (name, share) = text
        .split_once('=')
        .with_context(|| format!("`{text}`: expected CATEGORY=SHARE, e.g. negative=0.95"))?;
    let category = Category::ALL
        .into_iter()
        .find(|c| c.as_str() == name.trim())
        .with_context(|| {
            let known: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
            format!("unknown category `{name}` (known: {})", known.join(", "))
        })?;
    let share: f64 = share
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| (0.0..=1.0).contains(s))
        .with_context(|| format!("`{share}` is not a share between 0 and 1"))?;
    Ok((category, share))
}

impl Gates {
    fn any(&self) -> bool {
        self.fail_under.is_some()
            || !self.fail_under_category.is_empty()
            || self.max_error_rate.is_some()
            || self.max_over_refusal.is_some()
            || self.max_hallucination.is_some()
            || self.require_agreement.is_some()
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Every gate a configuration misses, as a sentence naming the configuration, the figure and the limit.
/// A rate held to a maximum: the miss, if it is above it or cannot be computed.
fn rate_gate(
    label: &str,
    rate: Option<&ragtester_core::oracle::Interval>,
    max: f64,
    (did, count): (&str, usize),
    (of, total): (&str, usize),
    name: &str,
) -> Option<String> {
    match rate {
        Some(r) if r.estimate <= max => None,
        Some(r) => Some(format!(
            "{label}: {did} {count} of {total} {of}: {name} {} is above {}",
            pct(r.estimate),
            pct(max)
        )),
        None => Some(format!(
            "{label}: no judged {of}, so {name} cannot be held to {}",
            pct(max)
        )),
    }
}

/// Every gate a configuration misses, and every category gate no configuration has cases for. Empty when
/// all gates hold (or none is set).
pub fn check_gates(summary: &Summary, gates: &Gates) -> Vec<String> {
    let mut misses = Vec::new();
    if !gates.any() {
        return misses;
    }
    for c in &summary.configs {
        misses.extend(config_misses(c, gates));
    }
    if let Some(min) = gates.fail_under {
        for r in &summary.repeats {
            misses.extend(repeated_miss(r, gates.repeat_policy, min));
        }
    }
    if let Some(level) = gates.require_agreement {
        misses.extend(agreement_misses(summary, level));
    }
    for (category, _) in &gates.fail_under_category {
        if !summary
            .configs
            .iter()
            .any(|c| c.by_category.contains_key(category.as_str()))
        {
            misses.push(format!(
                "no {} cases in this run: the category gate cannot be checked",
                category.as_str()
            ));
        }
    }
    misses
}

/// Why the judges in use cannot be trusted to `level`: a judge with no agreement with people measured, or
/// none measured at that level in a language of the run.
fn agreement_misses(summary: &Summary, level: f64) -> Vec<String> {
    let people = summary.oracle.as_ref().map_or(&[][..], |o| &o.people[..]);
    if people.is_empty() {
        return vec![format!(
            "no judge of this run has a recorded agreement with people to hold to {level:.2} \
             (judge it again with this version)"
        )];
    }
    let mut misses = Vec::new();
    for p in people {
        let Some(measured) = &p.measured else {
            misses.push(format!(
                "judge {}: not measured against people, so its agreement cannot be held to {level:.2}",
                p.judge
            ));
            continue;
        };
        for language in summary.languages.iter().map(|l| l.name.as_str()) {
            match measured.best(language) {
                Some(f) if f.value >= level => {}
                Some(f) => misses.push(format!(
                    "judge {} in {language}: its best held-out agreement with people, {} {:.2} \
                     (n = {}), is below {level:.2}",
                    p.judge, f.measure, f.value, f.n
                )),
                None => misses.push(format!(
                    "judge {} in {language}: not measured against people in this language, so its \
                     agreement cannot be held to {level:.2}",
                    p.judge
                )),
            }
        }
    }
    misses
}

/// The pass rate gate of a configuration answered N times, under the policy.
fn repeated_miss(
    r: &crate::repeats::RepeatedConfig,
    policy: crate::repeats::RepeatPolicy,
    min: f64,
) -> Option<String> {
    if let crate::repeats::RepeatPolicy::AtLeast { k } = policy
        && k > r.repeats
    {
        return Some(format!(
            "{}: the repeat policy asks for {k} passes of {} repeats run; choose K of at most {}",
            r.label, r.repeats, r.repeats
        ));
    }
    let rate = r.pass_rate(policy)?;
    (rate < min).then(|| {
        format!(
            "{}: pass rate over {} repeats ({}) {} is below {} ({} flaky cases)",
            r.label,
            r.repeats,
            policy.describe(),
            pct(rate),
            pct(min),
            r.flaky
        )
    })
}

/// The gates one configuration misses: pass rate, error rate, per category, over-refusal, hallucination.
/// A repeat's own pass rate is not gated: its configuration's, over every repeat, is.
fn config_misses(c: &ConfigSummary, gates: &Gates) -> Vec<String> {
    let label = &c.label;
    let mut misses = Vec::new();
    if let Some(min) = gates.fail_under.filter(|_| c.repeat_of.is_none()) {
        misses.push(match c.pass_rate {
            Some(p) if p >= min => None,
            Some(p) => Some(format!(
                "{label}: pass rate {} ({} passed of {} cells, {} errors) is below {}",
                pct(p),
                c.passed,
                c.cases,
                c.errors,
                pct(min)
            )),
            None => Some(format!(
                "{label}: no cells, so no pass rate to hold to {}",
                pct(min)
            )),
        });
    }
    let max_error = gates.max_error_rate.unwrap_or(0.0);
    if let Some(rate) = c.error_rate
        && rate > max_error
    {
        misses.push(Some(format!(
            "{label}: {} of {} cells have no verdict ({} exec errors, {} judge errors): error rate {} is above {}",
            c.errors,
            c.cases,
            c.exec_errors,
            c.judge_errors,
            pct(rate),
            pct(max_error)
        )));
    }
    for (category, min) in &gates.fail_under_category {
        let Some(group) = c.by_category.get(category.as_str()) else {
            continue;
        };
        if let Some(p) = group.pass_rate
            && p < *min
        {
            misses.push(Some(format!(
                "{label}: pass rate on {} is {} ({} passed of {}, {} errors), below {}",
                category.as_str(),
                pct(p),
                group.passed,
                group.cases,
                group.errors,
                pct(*min)
            )));
        }
    }
    let r = &c.refusals;
    if let Some(max) = gates.max_over_refusal {
        misses.push(rate_gate(
            label,
            r.over_refusal_rate.as_ref(),
            max,
            ("refused", r.over_refusals),
            ("answerable questions", r.over_refusals + r.answered),
            "over-refusal",
        ));
    }
    if let Some(max) = gates.max_hallucination {
        misses.push(rate_gate(
            label,
            r.hallucination_rate.as_ref(),
            max,
            ("answered", r.under_refusals),
            ("negative cases", r.under_refusals + r.correct_refusals),
            "hallucination",
        ));
    }
    misses.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{case, config, summary_of, verdict};
    use ragtester_core::VerdictStatus;

    #[test]
    fn category_gates_parse_or_say_what_is_wrong() {
        assert_eq!(
            parse_category_gate("negative=0.95").unwrap(),
            (Category::Negative, 0.95)
        );
        let unknown = parse_category_gate("vibes=0.5").unwrap_err().to_string();
        assert!(unknown.contains("unknown category `vibes`"), "{unknown}");
        assert!(parse_category_gate("negative=1.5").is_err());
        assert!(parse_category_gate("negative").is_err());
    }

    /// A service that errors on 19 of 20 cells and passes the last.
    fn mostly_errors() -> crate::Summary {
        let id = config().id;
        let cases: Vec<_> = (0..20).map(|i| case(&format!("c{i}"), "q?")).collect();
        let verdicts: Vec<_> = (0..20)
            .map(|i| {
                if i == 0 {
                    verdict("c0", &id, Some(true), VerdictStatus::Ok)
                } else {
                    verdict(&format!("c{i}"), &id, None, VerdictStatus::ExecError)
                }
            })
            .collect();
        summary_of(&cases, &verdicts)
    }

    #[test]
    fn errors_count_against_the_pass_rate_and_fail_the_error_gate() {
        let s = mostly_errors();
        assert_eq!(s.configs[0].pass_rate, Some(0.05));
        assert_eq!(
            s.configs[0].fail_rate,
            Some(0.0),
            "the judged cells all passed"
        );
        let misses = check_gates(
            &s,
            &Gates {
                fail_under: Some(0.8),
                ..Gates::default()
            },
        );
        assert_eq!(misses.len(), 2, "{misses:?}");
        assert!(misses[0].contains("pass rate 5.0%"), "{misses:?}");
        assert!(
            misses[1].contains("19 of 20 cells have no verdict"),
            "{misses:?}"
        );
        // Only the error gate, with a tolerance that 95 % errors exceeds.
        let misses = check_gates(
            &s,
            &Gates {
                max_error_rate: Some(0.5),
                ..Gates::default()
            },
        );
        assert_eq!(misses.len(), 1, "{misses:?}");
        assert!(
            check_gates(&s, &Gates::default()).is_empty(),
            "no gate, no miss"
        );
        assert_eq!(s.not_judged.exec_errors, 19);
        assert_eq!(s.not_judged.reasons[0].count, 19);
    }

    #[test]
    fn refusal_gates_read_the_matrix_and_fail_when_they_cannot_be_checked() {
        let id = config().id;
        let mut negative = case("n", "q?");
        negative.category = ragtester_core::Category::Negative;
        let positive = case("p", "q?");
        let mut refused = verdict("p", &id, Some(false), VerdictStatus::Ok);
        refused.metrics.refused = true;
        let answered_negative = verdict("n", &id, Some(false), VerdictStatus::Ok);
        let s = summary_of(&[negative, positive.clone()], &[refused, answered_negative]);
        let r = &s.configs[0].refusals;
        assert_eq!(
            (
                r.over_refusals,
                r.under_refusals,
                r.correct_refusals,
                r.answered
            ),
            (1, 1, 0, 0)
        );
        let gates = Gates {
            max_over_refusal: Some(0.5),
            max_hallucination: Some(0.5),
            ..Gates::default()
        };
        let misses = check_gates(&s, &gates);
        assert_eq!(misses.len(), 2, "{misses:?}");
        assert!(misses[0].contains("over-refusal 100.0%"));
        assert!(misses[1].contains("hallucination 100.0%"));
        // A suite with no negative case cannot show that the system refuses: the gate fails, saying so.
        let only_positive = summary_of(
            &[positive],
            &[verdict("p", &id, Some(true), VerdictStatus::Ok)],
        );
        let misses = check_gates(&only_positive, &gates);
        assert_eq!(misses.len(), 1, "{misses:?}");
        assert!(misses[0].contains("no judged negative case"));
    }
}
