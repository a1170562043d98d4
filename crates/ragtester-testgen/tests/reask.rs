//! The question writer against a real OpenAI-compatible server on loopback with scripted replies: an
//! unreadable reply is asked again with what was wrong, and a slot that stays unreadable is reported, never
//! silently dropped.

use ragtester_core::{Document, DocumentFormat, Generator};
use ragtester_testgen::{GenerationOptions, generate};
use ragtester_testkit::{Reply, ScriptedServer};

/// A readable question about the document whose answer is found in it.
const GOOD_REPLY: &str = r#"{"question": "At what pressure does the relief valve of the harbour pump open?", "answer": "The relief valve of the harbour pump opens at 4.5 bar", "keywords": ["4.5 bar"]}"#;

fn doc() -> Document {
    Document::new(
        "pump.md".into(),
        DocumentFormat::Markdown,
        "Pump manual".into(),
        "The relief valve of the harbour pump opens at 4.5 bar and closes again at 3.8 bar.".into(),
        None,
    )
}

fn options() -> GenerationOptions {
    GenerationOptions {
        generator: Generator::Baseline,
        n_test: 1,
        n_complex: None,
        conversations: 0,
        section_tokens: 96,
        seed: 1,
        concurrency: 1,
        prompts: Default::default(),
    }
}

fn model(server: &ScriptedServer) -> ragtester_llm::OpenAiChat {
    ragtester_llm::OpenAiChat::new(
        "writer".into(),
        server.openai_base(),
        None,
        ragtester_http::RetryPolicy::default(),
    )
    .unwrap()
}

#[tokio::test]
async fn an_unreadable_reply_is_asked_again_with_the_reason() {
    let server = ScriptedServer::start().await;
    server.push(Reply::Content(
        "Sure! The question is about the valve.".into(),
    ));
    server.push(Reply::Content(GOOD_REPLY.into()));
    let report = generate(&[doc()], &options(), &model(&server), None, None)
        .await
        .unwrap();
    assert_eq!(report.cases.len(), 1, "{:?}", report.documents[0].notes);
    let case = &report.cases[0];
    assert_eq!(case.keywords, ["4.5 bar"]);
    assert_eq!(
        case.source_spans.len(),
        1,
        "the answer is located in the source"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    // The first request carries the section text and the rules; the second the bad reply and the reason.
    let first = seen[0].body["messages"].to_string();
    assert!(
        first.contains("opens at 4.5 bar") && first.contains("yes or no"),
        "{first}"
    );
    let second = seen[1].body["messages"].as_array().unwrap();
    assert_eq!(second[second.len() - 2]["role"], "assistant");
    let reason = second.last().unwrap()["content"].as_str().unwrap();
    assert!(
        reason.contains("could not be read") && reason.contains("no JSON object"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_reply_that_stays_unreadable_is_a_reported_shortfall() {
    let server = ScriptedServer::start().await;
    // The baseline would draw the document's one section eight times, then try it once more, each asked and
    // re-asked; a writer whose replies stay unreadable is given up after three questions (six calls).
    for _ in 0..18 {
        server.push(Reply::Content("no".into()));
    }
    let report = generate(&[doc()], &options(), &model(&server), None, None)
        .await
        .unwrap();
    assert!(report.cases.is_empty());
    let d = &report.documents[0];
    assert_eq!((d.requested, d.produced), (1, 0));
    assert!(
        d.notes.iter().any(|n| n.contains("after one re-ask")),
        "{:?}",
        d.notes
    );
    assert_eq!(server.seen().len(), 6);
    assert!(
        d.notes[0].starts_with(
            "shortfall: 0 of 1 cases produced (stopped: the question writer's replies were \
             unreadable for 3 questions in a row"
        ),
        "{:?}",
        d.notes
    );
    assert_eq!(d.halted, None, "not a budget stop");
}

/// One readable reply between unreadable ones starts the count again: only replies unreadable question after
/// question give a document up.
#[tokio::test]
async fn a_readable_reply_resets_the_count_of_unreadable_ones() {
    let server = ScriptedServer::start().await;
    let yes_no = r#"{"question": "Does the relief valve open at 4.5 bar?", "answer": "yes", "keywords": []}"#;
    for reply in ["no", "no", "no", "no", yes_no, "no", "no", "no", "no"] {
        server.push(Reply::Content(reply.into()));
    }
    server.push(Reply::Content(GOOD_REPLY.into()));
    let report = generate(&[doc()], &options(), &model(&server), None, None)
        .await
        .unwrap();
    // Two unreadable questions, a readable (rejected yes/no) one, two more unreadable ones, then a case.
    assert_eq!(report.cases.len(), 1, "{:?}", report.documents[0].notes);
    assert_eq!(server.seen().len(), 10);
}
