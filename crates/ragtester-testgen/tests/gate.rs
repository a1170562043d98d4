//! The quality gate with a real critic on loopback (scripted OpenAI-compatible replies) and the offline
//! writer: a question the critic turns down is replaced from the next section, a critic that turns down
//! everything is a reported shortfall, and negatives are checked against what the corpus returns.

use ragtester_core::{Category, Document, DocumentFormat, Generator};
use ragtester_offline::OfflineModel;
use ragtester_testgen::{Corpus, CriticPrompts, GenerationOptions, QualityGate, generate};
use ragtester_testkit::{Reply, ScriptedServer};

/// Every paragraph of the named documents: enough for a critic to read in a test.
struct Paragraphs(Vec<Document>);

impl Corpus for Paragraphs {
    fn passages(
        &self,
        _query: &str,
        k: usize,
        documents: &[String],
    ) -> anyhow::Result<Vec<String>> {
        Ok(self
            .0
            .iter()
            .filter(|d| documents.is_empty() || documents.contains(&d.id))
            .flat_map(|d| d.text.split("\n\n").map(str::to_string).collect::<Vec<_>>())
            .take(k)
            .collect())
    }
}

fn doc() -> Document {
    Document::new(
        "pump.md".into(),
        DocumentFormat::Markdown,
        "Pump manual".into(),
        "The relief valve of the harbour pump opens at 4.5 bar and closes again at 3.8 bar.\n\n\
         The impeller of the harbour pump is cast from marine bronze and balanced before assembly.\n\n\
         Bearings of the harbour pump are greased with lithium soap every ninety operating days."
            .into(),
        None,
    )
}

fn options(n_test: usize) -> GenerationOptions {
    GenerationOptions {
        generator: Generator::Ragtester,
        n_test,
        n_complex: Some(1),
        conversations: 0,
        section_tokens: 24,
        seed: 1,
        concurrency: 1,
        prompts: Default::default(),
    }
}

fn critic(server: &ScriptedServer) -> ragtester_llm::OpenAiChat {
    ragtester_llm::OpenAiChat::new(
        "critic".into(),
        server.openai_base(),
        None,
        ragtester_http::RetryPolicy::default(),
    )
    .unwrap()
}

/// Generate `n_test` cases with the offline writer and the server as the critic.
async fn checked(server: &ScriptedServer, n_test: usize) -> ragtester_testgen::GenerationReport {
    let (critic, corpus) = (critic(server), Paragraphs(vec![doc()]));
    let gate = QualityGate {
        critic: &critic,
        corpus: &corpus,
        prompts: CriticPrompts::default(),
    };
    generate(&[doc()], &options(n_test), &OfflineModel, Some(&gate), None)
        .await
        .unwrap()
}

fn verdict(yes: bool, reason: &str) -> Reply {
    Reply::Content(
        serde_json::json!({ "verdict": if yes { "yes" } else { "no" }, "reason": reason })
            .to_string(),
    )
}

#[tokio::test]
async fn a_question_the_critic_turns_down_is_replaced_from_the_next_section() {
    let server = ScriptedServer::start().await;
    server.push(verdict(
        false,
        "the passage never states the closing pressure",
    ));
    server.push(verdict(true, "sentence 1 states it"));
    let report = checked(&server, 1).await;
    let d = &report.documents[0];
    assert_eq!((d.produced, d.rejected_by_critic), (1, 1), "{:?}", d.notes);
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("critic: the source does not support it (the passage never states")),
        "{:?}",
        d.notes
    );
    assert_eq!(report.cases[0].critic.as_deref(), Some("openai:critic"));
    // The critic read the question, its expected answer and the source passage, and was asked for a schema.
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let asked = seen[0].body["messages"].to_string();
    assert!(
        asked.contains("Do the passages answer the question"),
        "{asked}"
    );
    assert!(
        asked.contains("Expected answer:") && asked.contains("Passage 1:"),
        "{asked}"
    );
    assert_eq!(
        seen[0].body["response_format"]["json_schema"]["name"],
        "question_check"
    );
    // The accepted case comes from another section than the rejected one.
    let first = seen[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let second = seen[1].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(first, second);
}

#[tokio::test]
async fn a_critic_that_turns_everything_down_is_a_reported_shortfall() {
    let server = ScriptedServer::start().await;
    for _ in 0..3 {
        server.push(verdict(false, "not supported"));
    }
    let report = checked(&server, 1).await;
    let d = &report.documents[0];
    assert!(report.cases.is_empty());
    assert_eq!(
        (d.requested, d.produced, d.rejected_by_critic),
        (1, 0, 3),
        "{:#?}",
        d.notes
    );
    assert!(d.notes[0].starts_with("shortfall: 0 of 1"), "{:?}", d.notes);
    assert_eq!(
        d.notes
            .iter()
            .filter(|n| n.contains("critic: the source does not support it"))
            .count(),
        3
    );
}

#[tokio::test]
async fn an_unreadable_critic_is_asked_again_then_reported() {
    let server = ScriptedServer::start().await;
    // Prose, which is no verdict: for each of the three sections, the check and its re-ask.
    for _ in 0..6 {
        server.push(Reply::Content("I think the question is fine.".into()));
    }
    let report = checked(&server, 1).await;
    let d = &report.documents[0];
    assert_eq!(d.produced, 0);
    assert_eq!(
        d.rejected_by_critic, 0,
        "an unreadable critic is no rejection"
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("critic reply unreadable after one re-ask")),
        "{:?}",
        d.notes
    );
    let seen = server.seen();
    let reask = seen[1].body["messages"].as_array().unwrap();
    assert!(
        reask.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("could not be read")
    );
}

#[tokio::test]
async fn a_negative_the_corpus_answers_is_turned_down() {
    let server = ScriptedServer::start().await;
    server.push(verdict(true, "supported")); // the complex case
    server.push(verdict(true, "passage 2 answers it")); // the first negative: answered, so rejected
    server.push(verdict(false, "no passage mentions it")); // the next one passes
    // Then the same question against the whole corpus: another document answers it, so the case stays a
    // scoped negative but is marked as answerable corpus-wide (an external service is not asked it).
    server.push(verdict(true, "another document answers it"));
    let report = checked(&server, 2).await;
    let d = &report.documents[0];
    assert_eq!((d.produced, d.rejected_by_critic), (2, 1), "{:?}", d.notes);
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("critic: the corpus answers it (passage 2 answers it)"))
    );
    let negative = report
        .cases
        .iter()
        .find(|c| c.category == Category::Negative)
        .unwrap();
    assert!(ragtester_text::is_refusal(&negative.expected_answer));
    assert_eq!(negative.unanswerable_in_corpus, Some(false));
    let seen = server.seen();
    assert_eq!(
        seen.len(),
        4,
        "the corpus-wide check is one more critic call"
    );
    let asked = seen[1].body["messages"].to_string();
    assert!(
        asked.contains("Does any of the passages answer the question"),
        "{asked}"
    );
    assert!(
        asked.contains("marine bronze"),
        "the corpus passages are shown: {asked}"
    );
}
