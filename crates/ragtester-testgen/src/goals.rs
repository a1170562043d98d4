//! Simulated users' goals, written from a suite's own questions: each goal is a question a user wants
//! answered (its case's expected answer and source spans settle it), the details the user gives when asked
//! (what it already knows — the product or thing the question names — never the fact it seeks), a persona
//! the user model plays, and a turn budget. Per document, answerable
//! questions first and, where the document has one, a question it cannot answer — where a correct system
//! keeps refusing however the user pushes.

use ragtester_core::ids::stable_id;
use ragtester_core::{Category, Goal, Strategy, TestCase};

const PERSONAS_EN: &[&str] = &[
    "a new user of the product, brief and a little impatient",
    "a careful reader who wants the exact figure",
    "a support agent answering a customer's question",
];
const PERSONAS_ZH: &[&str] = &[
    "刚开始使用产品的新用户，说话简短，有点着急",
    "想要确切数字的细心读者",
    "替客户查询问题的客服人员",
];

/// Up to `per_document` goals for each document of `cases`, each a case of its own (strategy
/// `simulated`) beside the question it was written from.
pub fn goals(cases: &[TestCase], per_document: usize, max_turns: u32) -> Vec<TestCase> {
    if per_document == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut documents: Vec<&str> = cases.iter().map(|c| c.document_id.as_str()).collect();
    documents.dedup();
    documents.sort_unstable();
    documents.dedup();
    for document in documents {
        let own = |c: &&TestCase| {
            c.document_id == document
                && c.turn.is_none()
                && c.goal.is_none()
                && c.injected_documents.is_empty()
                && c.must_not_contain.is_empty()
                && c.stale.is_none()
        };
        let answerable = cases
            .iter()
            .filter(own)
            .filter(|c| matches!(c.category, Category::Core | Category::DetailNumeric))
            .filter(|c| !c.source_spans.is_empty());
        let unanswerable = cases
            .iter()
            .filter(own)
            .find(|c| c.strategy == Strategy::NegativeInvented);
        let room = if unanswerable.is_some() && per_document > 1 {
            per_document - 1
        } else {
            per_document
        };
        let picked: Vec<&TestCase> = answerable
            .take(room)
            .chain(unanswerable.filter(|_| per_document > 1))
            .collect();
        for (i, case) in picked.into_iter().enumerate() {
            out.push(goal_case(case, i, max_turns));
        }
    }
    out
}

fn goal_case(case: &TestCase, i: usize, max_turns: u32) -> TestCase {
    let personas = if case.language == "zh" {
        PERSONAS_ZH
    } else {
        PERSONAS_EN
    };
    TestCase {
        id: stable_id("goal", &(&case.id, max_turns)),
        strategy: Strategy::Simulated,
        lineage: None,
        goal: Some(Goal {
            want: case.query.clone(),
            persona: personas[i % personas.len()].to_string(),
            max_turns,
            details: known_details(case),
        }),
        ..case.clone()
    }
}

/// What a user asking `case.query` knows: the keywords its own question names (the product, the part),
/// never one only the expected answer holds — a user who could say "4.5 bar" would not be asking.
fn known_details(case: &TestCase) -> Vec<String> {
    let question = case.query.to_lowercase();
    case.keywords
        .iter()
        .filter(|k| question.contains(&k.to_lowercase()))
        .take(2)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_document_gets_answerable_goals_and_one_it_cannot_answer() {
        let mut cases = Vec::new();
        for (i, category) in [Category::Core, Category::DetailNumeric, Category::Inference]
            .iter()
            .enumerate()
        {
            let mut c = ragtester_testkit::case(
                &format!("c{i}"),
                "How long is the warranty?",
                "Two years.",
            );
            c.category = *category;
            c.source_spans = vec![ragtester_core::SourceSpan {
                document_id: "d".into(),
                start: 0,
                end: 5,
                page: 1,
                hash: None,
            }];
            c.query = "How long is the warranty of the X2?".into();
            c.keywords = vec!["X2".into(), "two years".into()];
            cases.push(c);
        }
        let mut negative =
            ragtester_testkit::case("n", "Who designed the logo?", "The documents do not say.");
        negative.category = Category::Negative;
        negative.strategy = Strategy::NegativeInvented;
        cases.push(negative);
        let goals = goals(&cases, 3, 4);
        assert_eq!(goals.len(), 3);
        assert!(goals.iter().all(|g| g.strategy == Strategy::Simulated));
        assert_eq!(goals.iter().filter(|g| g.expects_refusal()).count(), 1);
        let goal = goals[0].goal.as_ref().unwrap();
        assert_eq!(
            (goal.max_turns, goal.details.as_slice()),
            (4, &["X2".to_string()][..])
        );
        assert_ne!(goals[0].id, cases[0].id);
        assert!(super::goals(&cases, 0, 4).is_empty());
    }
}
