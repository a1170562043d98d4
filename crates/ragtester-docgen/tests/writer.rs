//! The document writer against a real OpenAI-compatible server on loopback with scripted replies: the
//! prompt carries the controls, bad replies are re-asked with the reasons, then reported.

use ragtester_docgen::{DocRequest, DocumentPrompts, write_with_model};
use ragtester_testkit::{Reply, ScriptedServer};

fn model(server: &ScriptedServer) -> ragtester_llm::OpenAiChat {
    ragtester_llm::OpenAiChat::new(
        "writer".into(),
        server.openai_base(),
        None,
        ragtester_llm::http::RetryPolicy::default(),
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
