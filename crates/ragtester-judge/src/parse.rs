//! Reading a judge's reply: the first JSON object in it (code fences and surrounding chatter tolerated),
//! with the five criteria and the rubric.

use ragtester_core::{Criteria, Rubric};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeReply {
    pub criteria: Criteria,
    pub rubric: Rubric,
}

pub fn parse_judge_reply(content: &str) -> Result<JudgeReply, String> {
    let start = content.find('{').ok_or("reply holds no JSON object")?;
    let end = content
        .rfind('}')
        .filter(|e| *e > start)
        .ok_or("reply holds no complete JSON object")?;
    let reply: JudgeReply = serde_json::from_str(&content[start..=end])
        .map_err(|e| format!("judge reply does not match the schema: {e}"))?;
    for (name, s) in [
        ("correctness", &reply.rubric.correctness),
        ("completeness", &reply.rubric.completeness),
        ("honesty", &reply.rubric.honesty),
    ] {
        if !(1..=5).contains(&s.score) {
            return Err(format!("rubric {name} score {} is outside 1–5", s.score));
        }
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"criteria":{"faithfulness":{"rating":"True","reason":"r"},"relevance":{"rating":"Partially","reason":"r"},"completeness":{"rating":"True","reason":"r"},"clarity":{"rating":"True","reason":"r"},"keyword_match":{"rating":"False","reason":"r"}},"rubric":{"correctness":{"score":4,"reason":"r"},"completeness":{"score":3,"reason":"r"},"honesty":{"score":5,"reason":"r"}}}"#;

    #[test]
    fn parses_fenced_and_chatty_replies() {
        let r = parse_judge_reply(&format!(
            "Sure! Here it is:\n```json\n{GOOD}\n```\nHope it helps."
        ))
        .unwrap();
        // (1 + 0.5 + 1 + 1 + 0) / 5 = 0.7.
        assert!((r.criteria.mean() - 0.7).abs() < 1e-12);
        assert!(r.criteria.passes());
    }

    #[test]
    fn rejects_garbage_and_out_of_range() {
        assert!(parse_judge_reply("I think it's fine").is_err());
        assert!(parse_judge_reply(&GOOD[..GOOD.len() - 20]).is_err());
        assert!(
            parse_judge_reply(&GOOD.replace("\"score\":4", "\"score\":9"))
                .unwrap_err()
                .contains("outside")
        );
        assert!(parse_judge_reply(&GOOD.replace("faithfulness", "faith")).is_err());
    }
}
