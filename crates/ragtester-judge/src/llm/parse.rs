//! Reading a judge's reply the way real models write it. Every balanced JSON object in the reply is tried in
//! turn (code fences, chatter and a second object tolerated); each is read as JSON, then as JSON5 (single
//! quotes, trailing commas, comments); ratings may be True/"true"/"是"/1/…, scores numbers or numeric
//! strings, criteria nested under "criteria" or at the top level. A reply that still does not give all five
//! criteria and the three rubric scores is an error: never a guess.

use ragtester_core::{Criteria, Criterion, Rating, Rubric, RubricScore};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeReply {
    pub criteria: Criteria,
    pub rubric: Rubric,
}

pub fn parse_judge_reply(content: &str) -> Result<JudgeReply, String> {
    check_depth(content, "the judge's reply").map_err(|e| e.to_string())?;
    let objects = json_objects(content);
    if objects.is_empty() {
        return Err("reply holds no complete JSON object".into());
    }
    let mut problems = Vec::new();
    for text in objects {
        let value = match serde_json::from_str::<Value>(text)
            .or_else(|_| json5::from_str::<Value>(text))
            .or_else(|e| json5::from_str::<Value>(&python_literals(text)).map_err(|_| e))
        {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("unreadable object ({e})"));
                continue;
            }
        };
        match reply_from(&value) {
            Ok(r) => return Ok(r),
            Err(e) => problems.push(e),
        }
    }
    Err(format!(
        "judge reply does not match the schema: {}",
        problems.join("; ")
    ))
}

/// Every JSON object in a reply that can be read (strict JSON, then JSON5, then with Python's literals),
/// in order: the tolerant reading every structured reply of the oracle goes through.
pub fn json_values(content: &str) -> Vec<Value> {
    if check_depth(content, "the reply").is_err() {
        return Vec::new();
    }
    json_objects(content)
        .into_iter()
        .filter_map(|text| {
            serde_json::from_str::<Value>(text)
                .or_else(|_| json5::from_str::<Value>(text))
                .or_else(|_| json5::from_str::<Value>(&python_literals(text)))
                .ok()
        })
        .collect()
}

/// The JSON5 reader recurses: a reply nested deeper than the default depth limit is refused before it is read.
/// A model's reply is already cut to the command's reply size where it is received; its nesting is bounded
/// here by the default, which no structured reply comes near, so that the bound guarding the reader's stack
/// is the same in every command and job.
fn check_depth(content: &str, what: &str) -> anyhow::Result<()> {
    ragtester_core::Limits::default().check_json_depth(content, what)
}

/// Python's `True`, `False` and `None` outside strings as JSON's `true`, `false` and `null`: models that
/// think in Python write dicts.
fn python_literals(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quotes = Quotes::default();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "True" => "true",
            "False" => "false",
            "None" => "null",
            other => other,
        });
        word.clear();
    };
    for c in text.chars() {
        if quotes.within(c) {
            out.push(c);
            continue;
        }
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out);
        if c == '"' || c == '\'' {
            quotes.open(c);
        }
        out.push(c);
    }
    flush(&mut word, &mut out);
    out
}

/// Whether a left-to-right scan is inside a quoted string (either quote; backslash escapes).
#[derive(Default)]
struct Quotes {
    open: Option<char>,
    escaped: bool,
}

impl Quotes {
    fn open(&mut self, quote: char) {
        self.open = Some(quote);
    }

    /// Whether `c` belongs to a string (its closing quote included), updating the state.
    fn within(&mut self, c: char) -> bool {
        let Some(quote) = self.open else {
            return false;
        };
        if self.escaped {
            self.escaped = false;
        } else if c == '\\' {
            self.escaped = true;
        } else if c == quote {
            self.open = None;
        }
        true
    }
}

/// Top-level balanced `{…}` spans, skipping braces inside strings.
fn json_objects(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let mut quotes = Quotes::default();
    for (i, c) in text.char_indices() {
        if quotes.within(c) {
            continue;
        }
        match c {
            '"' | '\'' if depth > 0 => quotes.open(c),
            '{' => {
                if depth == 0 {
                    start = i;
                }
                depth += 1;
            }
            '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    out.push(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    out
}

fn field<'a>(object: &'a Value, names: &[&str]) -> Option<&'a Value> {
    let map = object.as_object()?;
    names.iter().find_map(|n| {
        map.iter()
            .find(|(k, _)| k.to_lowercase().replace([' ', '-'], "_") == *n)
            .map(|(_, v)| v)
    })
}

pub fn rating_of(v: &Value) -> Option<Rating> {
    match v {
        Value::Bool(true) => Some(Rating::True),
        Value::Bool(false) => Some(Rating::False),
        Value::Number(n) => match n.as_f64()? {
            x if (x - 1.0).abs() < 1e-9 => Some(Rating::True),
            x if (x - 0.5).abs() < 1e-9 => Some(Rating::Partially),
            x if x.abs() < 1e-9 => Some(Rating::False),
            _ => None,
        },
        Value::String(s) => {
            let s = s.trim().trim_end_matches(['.', '。']).to_lowercase();
            match s.as_str() {
                "true" | "yes" | "pass" | "passed" | "是" | "对" | "正确" | "真" | "1" => {
                    Some(Rating::True)
                }
                "partially" | "partial" | "partly" | "部分" | "部分正确" | "部分符合" | "0.5" => {
                    Some(Rating::Partially)
                }
                "false" | "no" | "fail" | "failed" | "否" | "错" | "错误" | "假" | "0" => {
                    Some(Rating::False)
                }
                "notapplicable" | "not applicable" | "n/a" | "na" | "none" | "不适用" | "无" => {
                    Some(Rating::NotApplicable)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn reason_of(v: &Value) -> String {
    field(v, &["reason", "explanation", "rationale", "理由", "原因"])
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn criterion(container: &Value, names: &[&str]) -> Result<Criterion, String> {
    let v = field(container, names).ok_or_else(|| format!("no `{}` criterion", names[0]))?;
    let rating_value = if v.is_object() {
        field(v, &["rating", "value", "verdict", "result", "score"])
    } else {
        Some(v)
    };
    let rating = rating_value.and_then(rating_of).ok_or_else(|| {
        format!(
            "criterion `{}` has no readable True/Partially/False/NotApplicable rating: {v}",
            names[0]
        )
    })?;
    let mut criterion = Criterion::rated(rating, reason_of(v));
    // A graded score in [0, 1] given beside the rating (the offline judge's reply carries one) is kept;
    // a score on another scale is not this criterion's score.
    if let Some(score) = rating_value
        .is_some_and(|r| !r.is_number())
        .then(|| field(v, &["score"]).and_then(Value::as_f64))
        .flatten()
        .filter(|s| (0.0..=1.0).contains(s))
        && rating != Rating::NotApplicable
    {
        criterion.score = Some(score);
    }
    Ok(criterion)
}

fn score(container: &Value, name: &str) -> Result<RubricScore, String> {
    let v = field(container, &[name]).ok_or_else(|| format!("no `{name}` score in the rubric"))?;
    let raw = if v.is_object() {
        field(v, &["score", "value", "rating"])
    } else {
        Some(v)
    };
    let number = raw
        .and_then(|s| {
            s.as_f64()
                .or_else(|| s.as_str().and_then(|t| t.trim().parse::<f64>().ok()))
        })
        .ok_or_else(|| format!("rubric `{name}` has no numeric score: {v}"))?;
    if number.fract() != 0.0 || !(1.0..=5.0).contains(&number) {
        return Err(format!("rubric {name} score {number} is outside 1–5"));
    }
    Ok(RubricScore {
        score: number as u8,
        reason: reason_of(v),
    })
}

fn reply_from(v: &Value) -> Result<JudgeReply, String> {
    let criteria = field(v, &["criteria"]).unwrap_or(v);
    let rubric = field(v, &["rubric"]).ok_or("no `rubric`")?;
    Ok(JudgeReply {
        criteria: Criteria {
            faithfulness: criterion(criteria, &["faithfulness", "faithful", "忠实度"])?,
            relevance: criterion(criteria, &["relevance", "relevancy", "相关性"])?,
            completeness: criterion(criteria, &["completeness", "完整性"])?,
            clarity: criterion(criteria, &["clarity", "清晰度"])?,
            keyword_match: criterion(
                criteria,
                &["keyword_match", "keywordmatch", "keywords", "关键词匹配"],
            )?,
        },
        rubric: Rubric {
            correctness: score(rubric, "correctness")?,
            completeness: score(rubric, "completeness")?,
            honesty: score(rubric, "honesty")?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"criteria":{"faithfulness":{"rating":"True","reason":"r"},"relevance":{"rating":"Partially","reason":"r"},"completeness":{"rating":"True","reason":"r"},"clarity":{"rating":"True","reason":"r"},"keyword_match":{"rating":"False","reason":"r"}},"rubric":{"correctness":{"score":4,"reason":"r"},"completeness":{"score":3,"reason":"r"},"honesty":{"score":5,"reason":"r"}}}"#;

    fn mean(reply: &str) -> f64 {
        parse_judge_reply(reply)
            .unwrap_or_else(|e| panic!("{e}: {reply}"))
            .criteria
            .mean()
    }

    #[test]
    fn a_reply_nested_past_json_depth_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}{GOOD}{}", "[".repeat(500_000), "]".repeat(500_000));
        let error = parse_judge_reply(&deep).unwrap_err();
        assert!(error.contains("limit json_depth = 64 exceeded"), "{error}");
        assert!(json_values(&deep).is_empty());
        // Within the limit the same verdict is still found.
        let shallow = format!("[[{GOOD}]]");
        assert_eq!(mean(&shallow), mean(GOOD));
    }

    #[test]
    fn recoverable_replies_parse_to_the_same_verdict() {
        let cases = [
            GOOD.to_string(),
            format!("Sure! Here it is:\n```json\n{GOOD}\n```\nHope it helps."),
            GOOD.replace('"', "'"),
            GOOD.replace("}}}", "},}}").replace("\"r\"}", "\"r\",}"),
            GOOD.replace("\"True\"", "true")
                .replace("\"False\"", "false")
                .replace("\"Partially\"", "0.5"),
            GOOD.replace("\"True\"", "\"是\"")
                .replace("\"False\"", "\"否\"")
                .replace("\"Partially\"", "\"部分\""),
            GOOD.replace("\"score\":4", "\"score\":\"4\""),
            format!("{GOOD}\n{{\"note\": \"second object\"}}"),
            format!("{{\"thinking\": \"let me see {{braces}}\"}} {GOOD}"),
            GOOD.replace("\"keyword_match\"", "\"Keyword Match\""),
            GOOD.replace("\"True\"", "True")
                .replace("\"False\"", "False")
                .replace(
                    "\"reason\":\"r\"",
                    "\"reason\":\"True to the text, None invented\"",
                ),
            GOOD.replacen("{\"criteria\":{", "{", 1)
                .replacen("}},\"rubric\"", "},\"rubric\"", 1),
        ];
        for reply in &cases {
            // (1 + 0.5 + 1 + 1 + 0) / 5 = 0.7.
            assert!((mean(reply) - 0.7).abs() < 1e-12, "{reply}");
        }
    }

    #[test]
    fn unrecoverable_replies_are_errors() {
        for reply in [
            "I think it's fine".to_string(),
            GOOD[..GOOD.len() - 20].to_string(),
            GOOD.replace("\"score\":4", "\"score\":9"),
            GOOD.replace("faithfulness", "accuracy"),
            GOOD.replace("\"True\"", "\"maybe\""),
            GOOD.replace("rubric", "grades"),
            GOOD.replace("\"score\":4", "\"score\":3.5"),
        ] {
            assert!(parse_judge_reply(&reply).is_err(), "{reply}");
        }
        assert!(
            parse_judge_reply(&GOOD.replace("\"score\":4", "\"score\":9"))
                .unwrap_err()
                .contains("outside")
        );
    }
}
