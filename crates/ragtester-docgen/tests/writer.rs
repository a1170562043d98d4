//! The document writer against a real OpenAI-compatible server on loopback with scripted replies: the
//! prompt carries the controls, bad replies are re-asked with the reasons, then reported.

use ragtester_docgen::{DocRequest, DocumentPrompts, write_with_model};
use ragtester_testkit::{Reply, ScriptedServer};

fn model(server: &ScriptedServer) -> ragtester_llm::OpenAiChat {
    ragtester_llm::OpenAiChat::new(
        "writer".into(),
        server.openai_base(),
        None,
        ragtester_http::RetryPolicy::default(),
    )
    .unwrap()
}

fn request() -> DocRequest {
    DocRequest {
        topic: Some("ferry terminal".into()),
        sections: vec!["Tickets".into(), "Safety".into()],
        words: 120,
        ..Default::default()
    }
}

const GOOD: &str = "```markdown\n# Kestrel Bay Ferry Terminal\n\n## Tickets\nSingle tickets cost 4 euros and are sold \
at the kiosk from 06:00. Season tickets are sold at the office on the first floor. Children under six travel free \
with an adult.\n\n## Safety\nLife jackets are stored under every seat. The ferry carries at most 180 passengers. \
Crossings stop when the wind exceeds 45 knots, and the harbour master announces the restart.\n```";

#[tokio::test]
async fn a_good_reply_is_unwrapped_and_the_prompt_carries_the_controls() {
    let server = ScriptedServer::start().await;
    server.push(Reply::Content(GOOD.into()));
    let doc = write_with_model(&request(), &model(&server), &DocumentPrompts::default())
        .await
        .unwrap();
    assert_eq!(doc.title, "Kestrel Bay Ferry Terminal");
    assert!(doc.markdown.starts_with("# Kestrel Bay Ferry Terminal\n"));
    assert!(!doc.markdown.contains("```"));
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let user = seen[0].body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("Topic: ferry terminal") && user.contains("Tickets, Safety"),
        "{user}"
    );
}

#[tokio::test]
async fn bad_replies_are_reasked_with_reasons_then_reported() {
    let server = ScriptedServer::start().await;
    server.push(Reply::Content("I cannot write documents.".into()));
    let missing = GOOD.replace("## Safety", "## Rules");
    server.push(Reply::Content(missing));
    server.push(Reply::Content(GOOD.into()));
    let doc = write_with_model(&request(), &model(&server), &DocumentPrompts::default())
        .await
        .unwrap();
    assert!(doc.markdown.contains("## Safety"));
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let second = seen[2].body["messages"].as_array().unwrap();
    let last = second.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.contains("missing") && last.contains("Safety") && !last.contains("Tickets"),
        "{last}"
    );
    assert_eq!(second[second.len() - 2]["role"], "assistant");

    for _ in 0..3 {
        server.push(Reply::Content("no".into()));
    }
    let err = write_with_model(&request(), &model(&server), &DocumentPrompts::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("did not write a usable document") && err.contains("not a Markdown document"),
        "{err}"
    );
}

const OTHER: &str = "# Harrow Vale Water Works\n\n## Treatment\nRaw water from the Harrow reservoir passes sand \
filters rated at 12 cubic metres per hour. Chlorine is dosed at 0.5 milligrams per litre after filtration.\n\n\
## Sampling\nOperators take samples every four hours and send them to the county laboratory on Mondays. \
Turbidity above 1 NTU stops the outlet pumps until the shift engineer signs a release.";

/// `docgen --llm X --count N`: each document's place in the batch and its seed enter the prompt, a batch
/// without a topic draws a different one per document, replies come at a temperature above 0, and a
/// document that repeats an earlier one is re-asked.
#[tokio::test]
async fn a_batch_varies_and_a_repeated_document_is_asked_again() {
    let server = ScriptedServer::start().await;
    server.push(Reply::Content(GOOD.into()));
    server.push(Reply::Content(GOOD.into()));
    server.push(Reply::Content(OTHER.into()));
    let dir = tempfile::tempdir().unwrap();
    let req = DocRequest {
        words: 60,
        seed: 11,
        ..Default::default()
    };
    let docs = ragtester_docgen::generate(
        &req,
        2,
        dir.path(),
        Some(&model(&server)),
        &DocumentPrompts::default(),
        &|_| {},
    )
    .await
    .unwrap();
    let titles: Vec<&str> = docs.iter().map(|d| d.title.as_str()).collect();
    assert_eq!(
        titles,
        ["Kestrel Bay Ferry Terminal", "Harrow Vale Water Works"]
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    let user = |i: usize| {
        seen[i].body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        user(0).contains("document 1 of 2") && user(0).contains("seed 11"),
        "{}",
        user(0)
    );
    assert!(
        user(1).contains("document 2 of 2") && user(1).contains("seed 12"),
        "{}",
        user(1)
    );
    let topic = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("Topic:"))
            .unwrap()
            .to_string()
    };
    assert_ne!(topic(&user(0)), topic(&user(1)));
    assert!(seen[0].body["temperature"].as_f64().unwrap() > 0.0);
    let reasked = seen[2].body["messages"].as_array().unwrap();
    let last = reasked.last().unwrap()["content"].as_str().unwrap();
    assert!(
        last.contains("repeats the earlier document \"Kestrel Bay Ferry Terminal\""),
        "{last}"
    );

    // Still the same document after every re-ask: the batch fails with the reason, naming the document.
    for _ in 0..4 {
        server.push(Reply::Content(GOOD.into()));
    }
    let err = ragtester_docgen::generate(
        &req,
        2,
        dir.path(),
        Some(&model(&server)),
        &DocumentPrompts::default(),
        &|_| {},
    )
    .await
    .unwrap_err();
    let err = format!("{err:#}");
    assert!(
        err.contains("document 2 of 2") && err.contains("repeats"),
        "{err}"
    );
}
