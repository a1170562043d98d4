//! Pairwise verdicts: which of two answers to one question is better, on correctness and on completeness.
//! People compare two answers more reliably than they score one, and so do LLM judges — if each pair is
//! asked in both orders, so the judge's lean towards the first (or second) answer cancels out.
//!
//! The offline judge takes part with its own comparison: each answer's claims checked against the reference
//! (claim precision for correctness, claim recall for completeness), its verdict and criteria breaking ties —
//! order-free by construction.

use crate::graded::offline_score;
use ragtester_core::{
    ChatModel, ChatRequest, Message, OutputSchema, ReplyFormat, Role, TestCase, Verdict,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// Differences closer than this are a tie.
const TIE: f64 = 0.05;

/// One pair's comparison: each figure in [-1, 1], positive when the first answer is better, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairVerdict {
    pub correctness: f64,
    pub completeness: f64,
    pub overall: f64,
    /// An LLM judge's reason for each order it was asked in, or what the offline comparison measured.
    pub reason: String,
}

/// Who won a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Winner {
    First,
    Second,
    Tie,
}

impl PairVerdict {
    /// A pair decided outright: one answer came back and the other is an error.
    pub fn decided(first_wins: bool) -> Self {
        let side = if first_wins { 1.0 } else { -1.0 };
        Self {
            correctness: side,
            completeness: side,
            overall: side,
            reason: format!(
                "{}'s cell is an error: the answer that came back wins",
                if first_wins { "B" } else { "A" }
            ),
        }
    }

    pub fn winner(&self) -> Winner {
        Winner::of(self.overall)
    }

    /// Who won on correctness and on completeness.
    pub fn criteria_winners(&self) -> (Winner, Winner) {
        (Winner::of(self.correctness), Winner::of(self.completeness))
    }
}

impl Winner {
    /// The side a figure in [-1, 1] favours; closer to 0 than [`TIE`] is a tie.
    fn of(figure: f64) -> Self {
        if figure > TIE {
            Winner::First
        } else if figure < -TIE {
            Winner::Second
        } else {
            Winner::Tie
        }
    }
}

/// The offline judge's comparison of two judged answers to one case (`reference` its expected answer); None
/// if either verdict is an error.
pub fn offline_compare(
    reference: &str,
    (a, va): (&str, &Verdict),
    (b, vb): (&str, &Verdict),
) -> Option<PairVerdict> {
    // Verdicts a profile scored are compared by their calibrated scores (in [0, 1]); older ones by the
    // offline judge's graded opinion (in [0, 3]).
    let (sa, sb, scale, of) = match (va.score, vb.score) {
        (Some(sa), Some(sb)) => (sa, sb, 1.0, "calibrated scores"),
        _ => (
            offline_score(reference, a, va)?,
            offline_score(reference, b, vb)?,
            3.0,
            "offline scores",
        ),
    };
    let claim = |v: &Verdict, f: fn(&ragtester_core::verdict::ClaimMetrics) -> Option<f64>| {
        v.claims.as_ref().and_then(f).unwrap_or(0.0)
    };
    let precision = |v: &Verdict| claim(v, |c| c.claim_precision);
    let recall = |v: &Verdict| claim(v, |c| c.claim_recall);
    Some(PairVerdict {
        correctness: precision(va) - precision(vb),
        completeness: recall(va) - recall(vb),
        overall: (sa - sb) / scale,
        reason: format!(
            "claims against the reference: A precision {:.2}, recall {:.2}; B precision {:.2}, recall {:.2}; \
             {of} A {sa:.2}, B {sb:.2} of {scale}",
            precision(va),
            recall(va),
            precision(vb),
            recall(vb)
        ),
    })
}

/// The verdict schema of a pairwise comparison.
fn schema() -> OutputSchema {
    let choice = json!({ "type": "string", "enum": ["A", "B", "tie"] });
    OutputSchema {
        name: "pairwise_verdict".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "correctness": choice,
                "completeness": choice,
                "reason": { "type": "string", "maxLength": 300 }
            },
            "required": ["correctness", "completeness", "reason"],
            "additionalProperties": false
        }),
    }
}

fn messages(case: &TestCase, first: &str, second: &str) -> Vec<Message> {
    let zh = case.language == "zh";
    let system = if zh {
        "你是检索增强问答系统的评审。比较同一问题的两个回答：正确性（与参考答案一致、没有错误陈述）和完整性（涵盖参考答案的要点）。只输出 JSON：{\"correctness\": \"A\"|\"B\"|\"tie\", \"completeness\": \"A\"|\"B\"|\"tie\", \"reason\": \"一句话\"}。不要因为回答的位置或长度而偏向它。"
    } else {
        "You judge a retrieval-augmented QA system. Compare two answers to the same question on correctness (agrees with the reference, states nothing false) and completeness (covers the reference's points). Reply with JSON only: {\"correctness\": \"A\"|\"B\"|\"tie\", \"completeness\": \"A\"|\"B\"|\"tie\", \"reason\": \"one sentence\"}. Do not favour an answer for its position or its length."
    };
    let user = if zh {
        format!(
            "问题：{}\n参考答案：{}\n\n回答 A：{first}\n\n回答 B：{second}",
            case.query, case.expected_answer
        )
    } else {
        format!(
            "Question: {}\nReference answer: {}\n\nAnswer A: {first}\n\nAnswer B: {second}",
            case.query, case.expected_answer
        )
    };
    vec![
        Message {
            role: Role::System,
            content: system.into(),
        },
        Message {
            role: Role::User,
            content: user,
        },
    ]
}

#[derive(Deserialize)]
struct Reply {
    correctness: String,
    completeness: String,
    #[serde(default)]
    reason: String,
}

fn side(choice: &str) -> Result<f64, String> {
    match choice.trim().to_ascii_lowercase().as_str() {
        "a" => Ok(1.0),
        "b" => Ok(-1.0),
        "tie" => Ok(0.0),
        other => Err(format!("`{other}` is not A, B or tie")),
    }
}

async fn ask(
    judge: &dyn ChatModel,
    case: &TestCase,
    first: &str,
    second: &str,
) -> Result<(f64, f64, String), String> {
    let request = ChatRequest {
        messages: messages(case, first, second),
        temperature: 0.0,
        max_tokens: None,
        seed: None,
        format: ReplyFormat::Schema(schema()),
        sample: 0,
        hint: None,
    };
    let reply = judge
        .chat(&request)
        .await
        .map_err(|e| ragtester_core::secrets::error_text(&e))?;
    let reply: Reply = crate::parse::json_values(&reply.content)
        .into_iter()
        .find_map(|v| serde_json::from_value(v).ok())
        .ok_or_else(|| format!("no pairwise verdict in the reply: {}", reply.content))?;
    Ok((
        side(&reply.correctness)?,
        side(&reply.completeness)?,
        reply.reason,
    ))
}

/// An LLM judge's comparison, asked in both orders: each figure is the mean of the two answers (the second
/// order's flipped), so a judge that always picks the first position ends at a tie.
pub async fn llm_compare(
    judge: &dyn ChatModel,
    case: &TestCase,
    a: &str,
    b: &str,
) -> Result<PairVerdict, String> {
    let (c1, k1, r1) = ask(judge, case, a, b).await?;
    let (c2, k2, r2) = ask(judge, case, b, a).await?;
    let correctness = (c1 - c2) / 2.0;
    let completeness = (k1 - k2) / 2.0;
    Ok(PairVerdict {
        correctness,
        completeness,
        overall: (correctness + completeness) / 2.0,
        // In the second order the judge's "A" is our B: said so, so its reason reads right.
        reason: format!("A shown first: {r1} | B shown first (A and B swapped): {r2}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_orders_cancel_a_position_bias() {
        struct AlwaysFirst;
        #[async_trait::async_trait]
        impl ChatModel for AlwaysFirst {
            fn name(&self) -> String {
                "first".into()
            }
            async fn chat(&self, _: &ChatRequest) -> anyhow::Result<ragtester_core::ChatResponse> {
                Ok(ragtester_core::ChatResponse {
                    content: r#"{"correctness": "A", "completeness": "A", "reason": "first"}"#
                        .into(),
                    ..Default::default()
                })
            }
        }
        let case = ragtester_testkit::case("c", "q", "a");
        let verdict =
            futures::executor::block_on(llm_compare(&AlwaysFirst, &case, "x", "y")).unwrap();
        assert_eq!(verdict.winner(), Winner::Tie);
        assert_eq!(verdict.overall, 0.0);
        assert_eq!(verdict.criteria_winners(), (Winner::Tie, Winner::Tie));
        assert!(
            verdict.reason.contains("A shown first: first"),
            "{}",
            verdict.reason
        );
    }
}
