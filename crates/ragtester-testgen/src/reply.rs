//! Reading a question writer's reply, and the checks every question passes before anything else: not a
//! yes/no question, not a near-duplicate of one already in the suite.

use ragtester_text::terms;
use serde::Deserialize;
use std::collections::HashSet;

#[derive(Debug, Deserialize)]
pub(crate) struct Reply {
    pub question: String,
    pub answer: String,
    #[serde(default)]
    pub keywords: Vec<String>,
    /// False-premise questions: the claim the question presumes.
    #[serde(default)]
    pub false_claim: Option<String>,
    /// A fill-in-the-blank's reason, when its writer says why the section could only be asked that way.
    #[serde(default)]
    pub cloze_reason: Option<String>,
}

/// The first JSON object in a reply, tolerating code fences and text around it.
pub(crate) fn parse_reply(content: &str) -> Result<Reply, String> {
    let start = content.find('{');
    let end = content.rfind('}');
    let json = match (start, end) {
        (Some(s), Some(e)) if e > s => &content[s..=e],
        _ => return Err(format!("reply holds no JSON object: {}", truncate(content))),
    };
    let reply: Reply = serde_json::from_str(json)
        .map_err(|e| format!("unreadable reply ({e}): {}", truncate(content)))?;
    if reply.question.trim().is_empty() || reply.answer.trim().is_empty() {
        return Err("reply has an empty question or answer".into());
    }
    Ok(reply)
}

fn truncate(s: &str) -> String {
    s.chars().take(200).collect()
}

pub(crate) fn is_yes_no(question: &str) -> bool {
    let q = question.trim().to_lowercase();
    const OPENERS: &[&str] = &[
        "is ", "are ", "does ", "do ", "did ", "can ", "could ", "will ", "would ", "should ",
        "has ", "have ", "was ", "were ",
    ];
    OPENERS.iter().any(|o| q.starts_with(o))
        || q.contains("是否")
        || q.trim_end_matches(['？', '?']).ends_with('吗')
}

/// Whether `text` reads as a question: a question mark, or a question word or particle (a fill-in-the-blank
/// ending on its quoted sentence has one). A statement copied from the section, or one cut off at the
/// reply's length bound, is no question a user asks. An English question word counts only where a
/// question opens (among its first three words: "In which year…"): further in it is a relative pronoun
/// ("…4.5 bar, above which the valve opens"), and the statement would go through — one that gives away its
/// own answer, which a model then "answers" closed book.
pub(crate) fn is_question(text: &str) -> bool {
    let t = text.trim();
    if t.ends_with(['?', '？']) {
        return true;
    }
    const EN: &[&str] = &[
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
    ];
    const ZH: &[&str] = &[
        "什么",
        "多少",
        "哪",
        "谁",
        "几",
        "如何",
        "怎么",
        "怎样",
        "为什么",
        "是否",
        "吗",
        "呢",
    ];
    let lower = t.to_lowercase();
    lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(3)
        .any(|w| EN.contains(&w))
        || ZH.iter().any(|w| t.contains(w))
}

/// Whether `question` shares nine tenths of its terms with one of `earlier`.
pub(crate) fn near_duplicate<'a>(
    question: &str,
    mut earlier: impl Iterator<Item = &'a str>,
) -> bool {
    let new_terms: HashSet<String> = terms(question).into_iter().collect();
    earlier.any(|q| jaccard(&new_terms, &terms(q).into_iter().collect()) >= 0.9)
}

fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    a.intersection(b).count() as f64 / a.union(b).count() as f64
}

/// A fill-in-the-blank question, by any writer: it shows a blank.
pub fn is_cloze(question: &str) -> bool {
    question.contains("___") || question.contains("（ ）") || question.contains("空缺")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_no_question() {
        assert!(is_question("What pressure opens the valve?"));
        assert!(is_question(
            "下面这句话中空缺的数值是多少：“阀门在____巴时打开。”"
        ));
        assert!(is_question("In which year was it built"));
        assert!(!is_question("The Harbor P-200 pump has a "));
        // A relative pronoun is no question word: this statement holds its own answer.
        assert!(!is_question(
            "The Harbor P-200 pump has a maximum pressure of 4.5 bar, above which the relief valve opens."
        ));
        assert!(is_question(
            "What figure fills the blank in: \"The relief valve opens at ____ bar.\""
        ));
        assert!(!is_question("水泵的最大压力为4.5巴。"));
    }

    #[test]
    fn yes_no_detection() {
        assert!(is_yes_no("Is the valve open?"));
        assert!(is_yes_no("保修期是否为两年？"));
        assert!(is_yes_no("这个设备支持吗？"));
        assert!(!is_yes_no("What pressure opens the valve?"));
    }

    #[test]
    fn reply_parsing_tolerates_fences_and_reports_garbage() {
        let r = parse_reply(
            "```json\n{\"question\":\"Q?\",\"answer\":\"A.\",\"keywords\":[\"k\"]}\n```",
        )
        .unwrap();
        assert_eq!(r.question, "Q?");
        assert!(r.false_claim.is_none());
        assert!(parse_reply("no json").unwrap_err().contains("no JSON"));
        assert!(parse_reply("{\"question\":\"\",\"answer\":\"a\"}").is_err());
    }

    #[test]
    fn near_duplicates_are_found_by_shared_terms() {
        let earlier = ["What pressure opens the relief valve?"];
        assert!(near_duplicate(
            "What pressure opens the relief valve",
            earlier.iter().copied()
        ));
        assert!(!near_duplicate(
            "Which grease lubricates the bearings?",
            earlier.iter().copied()
        ));
    }
}
