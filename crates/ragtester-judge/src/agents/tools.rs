//! An agent's tool calls against the ones its case expects: precision, recall and F1 of the calls matched
//! by name (RAGAS's tool-call F1, DeepEval's tool correctness), how far the matched calls hold the expected
//! arguments, whether they came in order where order matters, calls repeated with the same arguments, and
//! the agent's own searches scored as retrieval. The first mistake found is what fails the case and names
//! its cause: a tool that should not have been called or was left out (or came out of order), a search
//! never made, an argument that does not hold what was expected.

use ragtester_core::{Answer, TestCase, ToolCall, ToolMetrics, ToolMistake, ToolMistakeKind};
use serde_json::Value;
use std::collections::HashSet;

/// The tool figures of a cell; None when its case expects no tools and the answer reports none, or the
/// answer's calls were not observed (the target reports neither a `tool_calls` field nor tool spans).
pub fn tool_metrics(case: &TestCase, answer: &Answer) -> Option<ToolMetrics> {
    if answer.error.is_some() {
        return None;
    }
    let called = answer.tool_calls.as_deref()?;
    let expected = &case.expected_tools;
    if expected.is_empty() && called.is_empty() {
        return None;
    }
    let pairs = match_calls(expected, called);
    let matched = pairs.len();
    let share = |n: usize, of: usize| (of > 0).then(|| n as f64 / of as f64);
    let (precision, recall) = if expected.is_empty() {
        (None, None)
    } else {
        (
            share(matched, called.len()).or(Some(0.0)),
            share(matched, expected.len()),
        )
    };
    let f1 = match (precision, recall) {
        (Some(p), Some(r)) if p + r > 0.0 => Some(2.0 * p * r / (p + r)),
        (Some(_), Some(_)) => Some(0.0),
        _ => None,
    };
    let argument_match = argument_share(expected, called, &pairs);
    let in_order = case
        .tools_in_order
        .then(|| in_expected_order(&pairs))
        .filter(|_| !expected.is_empty());
    let (search_hit, search_rank) = searched(case, called);
    let mut metrics = ToolMetrics {
        expected: expected.len(),
        called: called.len(),
        precision,
        recall,
        f1,
        argument_match,
        in_order,
        redundant: redundant(called),
        search_hit,
        search_rank,
        mistake: None,
    };
    metrics.mistake = mistake(expected, called, &pairs, &metrics);
    Some(metrics)
}

/// Expected calls paired with the calls made (indexes into each), by name: the pairing with the most
/// pairs, and among those the most arguments held (Kuhn–Munkres over every expected × called pair) — not
/// first-come, where an early call holding the wrong arguments would take the pair a later right one
/// should have.
fn match_calls(expected: &[ToolCall], called: &[ToolCall]) -> Vec<(usize, usize)> {
    if expected.is_empty() || called.is_empty() {
        return Vec::new();
    }
    // A pair of the same name outweighs any number of arguments held; other pairs weigh nothing.
    let weight = |e: usize, c: usize| -> i64 {
        if expected[e].name != called[c].name {
            return 0;
        }
        1_000_000 + (args_held(&expected[e], &called[c]) * 1000.0).round() as i64
    };
    let transpose = expected.len() > called.len();
    let (rows, columns) = if transpose {
        (called.len(), expected.len())
    } else {
        (expected.len(), called.len())
    };
    let cells: Vec<i64> = (0..rows)
        .flat_map(|r| (0..columns).map(move |c| (r, c)))
        .map(|(r, c)| {
            if transpose {
                weight(c, r)
            } else {
                weight(r, c)
            }
        })
        .collect();
    let Ok(matrix) = pathfinding::matrix::Matrix::from_vec(rows, columns, cells) else {
        return Vec::new();
    };
    let (_, assigned) = pathfinding::kuhn_munkres::kuhn_munkres(&matrix);
    let mut pairs: Vec<(usize, usize)> = assigned
        .into_iter()
        .enumerate()
        .map(|(r, c)| if transpose { (c, r) } else { (r, c) })
        .filter(|&(e, c)| weight(e, c) > 0)
        .collect();
    pairs.sort_unstable();
    pairs
}

/// The share of `want`'s arguments `got` holds (1 when it names none). A call whose input was plain text
/// (a tool span's `input.value` that is no JSON object, kept as `input`) holds it as the one argument the
/// expected call names.
fn args_held(want: &ToolCall, got: &ToolCall) -> f64 {
    if want.args.is_empty() {
        return 1.0;
    }
    let plain = (got.args.len() == 1 && want.args.len() == 1)
        .then(|| got.args.get("input"))
        .flatten();
    let held = want
        .args
        .iter()
        .filter(|(key, value)| {
            got.args
                .get(*key)
                .or(plain)
                .is_some_and(|v| value_holds(value, v))
        })
        .count();
    held as f64 / want.args.len() as f64
}

/// Whether an argument's value holds the expected one, compared as values. Text: the same once case and
/// spaces are set aside, or every term and figure of the expected value present (a search query worded
/// the agent's own way still holds "battery warranty"; "5 km" holds "5km") with its negation kept ("not
/// refundable" does not hold "refundable"); numbers: the same number, written as a number or as text;
/// objects: every expected key held, in any order; lists: every expected item held by some item; anything
/// else: the same JSON.
fn value_holds(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::String(w), Value::String(g)) => text_holds(w, g),
        (Value::Number(w), other) | (other, Value::Number(w)) => {
            let other = match other {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => ragtester_text::facts::parse_number(s.trim()),
                _ => None,
            };
            w.as_f64().zip(other).is_some_and(|(a, b)| a == b)
        }
        (Value::Object(w), Value::Object(g)) => w
            .iter()
            .all(|(k, v)| g.get(k).is_some_and(|x| value_holds(v, x))),
        (Value::Array(w), Value::Array(g)) => w.iter().all(|v| g.iter().any(|x| value_holds(v, x))),
        _ => want == got,
    }
}

fn text_holds(want: &str, got: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    if norm(want) == norm(got) {
        return true;
    }
    use ragtester_text::facts;
    let (w, g) = (facts::normalise(want), facts::normalise(got));
    if ragtester_text::negated(&w) != ragtester_text::negated(&g) {
        return false;
    }
    let wanted = ragtester_text::terms(&w);
    let present: HashSet<String> = ragtester_text::terms(&g).into_iter().collect();
    let figures = facts::quantities(&w);
    let said = facts::quantities(&g);
    // A figure's own words ("5", "km") are held by its value, in whatever spelling.
    let in_figures: HashSet<String> = figures
        .iter()
        .flat_map(|q| ragtester_text::terms(&q.text))
        .collect();
    !wanted.is_empty()
        && figures.iter().all(|q| q.held_by(&said))
        && wanted
            .iter()
            .all(|t| present.contains(t) || in_figures.contains(t))
}

/// Over matched calls whose expected call names arguments: the mean share of them held.
fn argument_share(
    expected: &[ToolCall],
    called: &[ToolCall],
    pairs: &[(usize, usize)],
) -> Option<f64> {
    let shares: Vec<f64> = pairs
        .iter()
        .filter(|(e, _)| !expected[*e].args.is_empty())
        .map(|(e, c)| args_held(&expected[*e], &called[*c]))
        .collect();
    (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64)
}

/// Whether the matched calls were made in the order their expected calls come.
fn in_expected_order(pairs: &[(usize, usize)]) -> bool {
    pairs.windows(2).all(|w| w[0].1 < w[1].1)
}

/// Calls that repeat an earlier call's name and arguments.
fn redundant(called: &[ToolCall]) -> usize {
    let mut seen = HashSet::new();
    called
        .iter()
        .filter(|c| !seen.insert(c.signature()))
        .count()
}

/// Whether the agent's searches returned a passage that holds the case's answer, and at which rank of all
/// the passages they returned, in call order.
fn searched(case: &TestCase, called: &[ToolCall]) -> (Option<bool>, Option<usize>) {
    let passages: Vec<&String> = called
        .iter()
        .filter(|c| c.is_search())
        .flat_map(|c| &c.passages)
        .collect();
    if passages.is_empty() || case.source_spans.is_empty() {
        return (None, None);
    }
    let markers = crate::markers::answer_markers(case);
    let rank = passages
        .iter()
        .position(|p| crate::markers::share_present(&markers, p) >= crate::markers::HOLDS)
        .map(|i| i + 1);
    (Some(rank.is_some()), rank)
}

/// The first mistake in the calls: an unexpected tool called, a search left out, another expected tool
/// left out, an argument not held, the order broken.
fn mistake(
    expected: &[ToolCall],
    called: &[ToolCall],
    pairs: &[(usize, usize)],
    metrics: &ToolMetrics,
) -> Option<ToolMistake> {
    if expected.is_empty() {
        return None;
    }
    let expected_names: HashSet<&str> = expected.iter().map(|t| t.name.as_str()).collect();
    let found = |kind, detail: String| Some(ToolMistake { kind, detail });
    let names = |calls: &[ToolCall]| {
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    if let Some(stray) = called
        .iter()
        .find(|c| !expected_names.contains(c.name.as_str()))
    {
        return found(
            ToolMistakeKind::WrongTool,
            format!(
                "called `{}`, which the case does not expect (expected: {}; called: {})",
                stray.name,
                names(expected),
                names(called)
            ),
        );
    }
    let missing: Vec<&ToolCall> = (0..expected.len())
        .filter(|e| !pairs.iter().any(|(pe, _)| pe == e))
        .map(|e| &expected[e])
        .collect();
    if let Some(search) = missing.iter().find(|t| t.is_search()) {
        return found(
            ToolMistakeKind::MissingSearch,
            format!(
                "answered without calling `{}` to search the documents (called: {})",
                search.name,
                names(called)
            ),
        );
    }
    if let Some(tool) = missing.first() {
        return found(
            ToolMistakeKind::WrongTool,
            format!("never called `{}` (called: {})", tool.name, names(called)),
        );
    }
    if let Some((e, c)) = pairs
        .iter()
        .find(|(e, c)| args_held(&expected[*e], &called[*c]) < 1.0)
    {
        let (want, got) = (&expected[*e], &called[*c]);
        let (key, value) = want
            .args
            .iter()
            .find(|(k, v)| !got.args.get(*k).is_some_and(|g| value_holds(v, g)))?;
        let given = got
            .args
            .get(key)
            .map_or("nothing".to_string(), |g| g.to_string());
        return found(
            ToolMistakeKind::WrongArgument,
            format!(
                "called `{}` with {key} = {given}, expected {value}",
                want.name
            ),
        );
    }
    if metrics.in_order == Some(false) {
        return found(
            ToolMistakeKind::WrongTool,
            format!(
                "called the tools out of order: {} (expected: {})",
                names(called),
                names(expected)
            ),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{Latency, SourceSpan, Usage};

    fn answered(calls: Option<Vec<ToolCall>>) -> Answer {
        Answer {
            schema_version: ragtester_core::SCHEMA_VERSION,
            case_id: "c".into(),
            config_id: "cfg".into(),
            contexts: Vec::new(),
            answer: "It lasts two years.".into(),
            latency: Latency::default(),
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            error: None,
            trace: None,
            rewritten_query: None,
            truncated_from: None,
            context_cut_from: None,
            tool_calls: calls,
            simulation: None,
            citations: Vec::new(),
        }
    }

    fn expecting(tools: Vec<ToolCall>, ordered: bool) -> TestCase {
        let mut case = ragtester_testkit::case(
            "c",
            "How long is the battery warranty?",
            "The battery warranty lasts two years.",
        );
        case.source_spans = vec![SourceSpan {
            document_id: "d".into(),
            start: 0,
            end: 37,
            page: 1,
            hash: None,
        }];
        case.expected_tools = tools;
        case.tools_in_order = ordered;
        case
    }

    fn search(query: &str) -> ToolCall {
        ToolCall::named("search").with_arg("query", query)
    }

    #[test]
    fn the_right_calls_score_one_and_are_no_mistake() {
        let case = expecting(vec![search("battery warranty")], false);
        let mut call = search("How long is the warranty of the battery?");
        call.passages = vec![
            "Screens are covered for one year.".into(),
            "The battery warranty lasts two years.".into(),
        ];
        let m = tool_metrics(&case, &answered(Some(vec![call]))).unwrap();
        assert_eq!(
            (m.precision, m.recall, m.f1),
            (Some(1.0), Some(1.0), Some(1.0))
        );
        assert_eq!(
            m.argument_match,
            Some(1.0),
            "every expected term is in the query"
        );
        assert_eq!((m.search_hit, m.search_rank), (Some(true), Some(2)));
        assert_eq!(m.mistake, None);
    }

    #[test]
    fn calls_are_paired_for_the_most_arguments_held_not_first_come() {
        // Two searches: the first for the wrong thing, the second right. First-come would pair the
        // expected search with the first and count its argument missed.
        let case = expecting(
            vec![search("battery warranty"), ToolCall::named("search")],
            false,
        );
        let calls = vec![search("screen repair"), search("battery warranty period")];
        let m = tool_metrics(&case, &answered(Some(calls))).unwrap();
        assert_eq!(m.argument_match, Some(1.0));
        assert_eq!(m.f1, Some(1.0));
    }

    #[test]
    fn arguments_compare_as_values() {
        let call = |args: serde_json::Value| ToolCall {
            args: args.as_object().unwrap().clone(),
            ..ToolCall::named("book")
        };
        let want = call(
            serde_json::json!({"filter": {"city": "Oslo", "nights": 3}, "refundable": "not refundable"}),
        );
        let same = call(
            serde_json::json!({"refundable": "Not refundable", "filter": {"nights": "3", "city": "oslo"}}),
        );
        assert_eq!(
            args_held(&want, &same),
            1.0,
            "key order, case and number spelling set aside"
        );
        let flipped = call(
            serde_json::json!({"filter": {"city": "Oslo", "nights": 3}, "refundable": "refundable"}),
        );
        assert_eq!(args_held(&want, &flipped), 0.5, "a negation is kept");
        let distance = ToolCall::named("route").with_arg("distance", "5 km");
        assert_eq!(
            args_held(
                &distance,
                &ToolCall::named("route").with_arg("distance", "5,000 metres")
            ),
            1.0
        );
        assert_eq!(
            args_held(
                &distance,
                &ToolCall::named("route").with_arg("distance", "7 km")
            ),
            0.0
        );
        // A tool span's plain-text input is the argument the expected call names.
        let plain = ToolCall::named("search").with_arg("input", "battery warranty");
        assert_eq!(args_held(&search("battery warranty"), &plain), 1.0);
        assert_eq!(args_held(&search("screen repair"), &plain), 0.0);
    }

    #[test]
    fn a_deep_eval_shaped_expected_call_catches_a_wrong_argument() {
        let line = r#"{"name": "search", "input_parameters": {"query": "battery warranty"}}"#;
        let expected: ToolCall = serde_json::from_str(line).unwrap();
        let case = expecting(vec![expected], false);
        let m = tool_metrics(&case, &answered(Some(vec![search("screen repair")]))).unwrap();
        assert_eq!(m.argument_match, Some(0.0));
        assert!(m.mistake.is_some(), "{m:?}");
    }

    #[test]
    fn each_planted_mistake_is_named() {
        let case = expecting(vec![search("battery warranty")], false);
        let wrong_tool = vec![ToolCall::named("get_weather").with_arg("city", "Oslo")];
        let m = tool_metrics(&case, &answered(Some(wrong_tool))).unwrap();
        assert_eq!(m.mistake.unwrap().kind, ToolMistakeKind::WrongTool);
        assert_eq!(
            (m.precision, m.recall, m.f1),
            (Some(0.0), Some(0.0), Some(0.0))
        );

        let m = tool_metrics(&case, &answered(Some(vec![]))).unwrap();
        let mistake = m.mistake.unwrap();
        assert_eq!(mistake.kind, ToolMistakeKind::MissingSearch);
        assert!(mistake.detail.contains("`search`"), "{}", mistake.detail);

        let m = tool_metrics(&case, &answered(Some(vec![search("screen repair")]))).unwrap();
        let mistake = m.mistake.unwrap();
        assert_eq!(mistake.kind, ToolMistakeKind::WrongArgument);
        assert!(
            mistake.detail.contains("screen repair"),
            "{}",
            mistake.detail
        );
        assert_eq!(m.argument_match, Some(0.0));
        assert_eq!(m.f1, Some(1.0), "the right tool, by name");
    }

    #[test]
    fn order_repeats_and_unobserved_calls() {
        let fetch = ToolCall::named("fetch_page").with_arg("id", 7);
        let case = expecting(vec![search("battery"), fetch.clone()], true);
        let mut page = ToolCall::named("fetch_page");
        page.args.insert("id".into(), Value::String("7".into()));
        let calls = vec![page, search("battery"), search("battery")];
        let m = tool_metrics(&case, &answered(Some(calls))).unwrap();
        assert_eq!(m.in_order, Some(false));
        assert_eq!(m.redundant, 1);
        assert_eq!(m.argument_match, Some(1.0), "\"7\" holds 7");
        assert_eq!(m.mistake.unwrap().kind, ToolMistakeKind::WrongTool);
        assert_eq!(m.precision, Some(2.0 / 3.0));
        // Calls nobody observed are no figures, and a case that expects none with none made is none.
        assert_eq!(tool_metrics(&case, &answered(None)), None);
        let plain = expecting(vec![], false);
        assert_eq!(tool_metrics(&plain, &answered(Some(vec![]))), None);
        let m = tool_metrics(&plain, &answered(Some(vec![search("x")]))).unwrap();
        assert_eq!(
            (m.f1, m.mistake),
            (None, None),
            "nothing expected, nothing held against it"
        );
    }
}
