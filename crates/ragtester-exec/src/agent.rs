//! The built-in agent's step before it answers: its model is offered one tool, `search(query)` over the
//! configuration's retriever, and decides whether to call it and with what query. The call is recorded as
//! the answer's tool call, with the passages the search returned; the answer is then written from them, as
//! the plain pipeline writes it. An agent that decides not to search answers from nothing: a case that
//! expects a search then fails as a missing search.

use ragtester_core::{
    ChatModel, ChatRequest, Message, OutputSchema, ReplyFormat, TaskHint, ToolCall,
};
use ragtester_text::detect_language;
use serde_json::{Value, json};

/// The name of the built-in agent's search tool.
pub const SEARCH_TOOL: &str = "search";

/// What the model decided: the query to search with, or no search.
pub enum Decision {
    Search(String),
    NoSearch,
}

/// The request that asks the model for its decision.
pub fn decision_request(query: &str, history: &[Message]) -> ChatRequest {
    let instructions = if detect_language(query) == "zh" {
        "你是一个通过工具回答文档问题的助手。你有一个工具 search(query)：在文档中检索与 query 相关的段落。\
         回答之前先决定是否调用它：需要文档中的事实时调用，query 写成能找到答案的检索词。\
         只输出 JSON：{\"search\": true 或 false, \"query\": \"检索词\"}。"
    } else {
        "You answer questions about documents with the help of one tool, search(query), which returns \
         the passages of the documents that match the query. Before you answer, decide whether to call it: \
         call it whenever the answer needs a fact from the documents, with a query that will find that \
         fact. Reply with JSON only: {\"search\": true or false, \"query\": \"the search query\"}."
    };
    let mut messages = vec![Message::system(instructions)];
    messages.extend(history.iter().cloned());
    messages.push(Message::user(query));
    let mut request = ChatRequest::new(
        messages,
        TaskHint::SearchCall {
            query: query.to_string(),
            history: history.to_vec(),
        },
    );
    request.format = ReplyFormat::Schema(OutputSchema {
        name: "search_call".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "search": {"type": "boolean"},
                "query": {"type": "string", "maxLength": 400}
            },
            "required": ["search", "query"],
            "additionalProperties": false
        }),
    });
    request
}

/// The model's reply read as a decision; an unreadable one is the cell's error, naming what came back.
pub fn read_decision(reply: &str, model: &dyn ChatModel) -> Result<Decision, String> {
    let unreadable = || {
        format!(
            "the agent's tool call could not be read ({}): {}",
            model.name(),
            reply.chars().take(200).collect::<String>()
        )
    };
    let start = reply.find('{').ok_or_else(unreadable)?;
    let end = reply.rfind('}').ok_or_else(unreadable)?;
    let value: Value = serde_json::from_str(&reply[start..=end]).map_err(|_| unreadable())?;
    let search = value
        .get("search")
        .and_then(Value::as_bool)
        .ok_or_else(unreadable)?;
    let query = value
        .get("query")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    match (search, query.is_empty()) {
        (false, _) => Ok(Decision::NoSearch),
        (true, true) => Err(format!("{}: a search with no query", unreadable())),
        (true, false) => Ok(Decision::Search(query.to_string())),
    }
}

/// The search call as recorded on the answer.
pub fn search_call(query: &str, passages: Vec<String>) -> ToolCall {
    let mut call = ToolCall::named(SEARCH_TOOL).with_arg("query", query);
    call.passages = passages;
    call
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named;

    #[async_trait::async_trait]
    impl ChatModel for Named {
        fn name(&self) -> String {
            "m".into()
        }
        async fn chat(&self, _: &ChatRequest) -> anyhow::Result<ragtester_core::ChatResponse> {
            anyhow::bail!("not asked")
        }
    }

    #[test]
    fn decisions_are_read_and_bad_replies_named() {
        match read_decision(r#"Sure: {"search": true, "query": "warranty"}"#, &Named) {
            Ok(Decision::Search(q)) => assert_eq!(q, "warranty"),
            _ => panic!("a search"),
        }
        assert!(matches!(
            read_decision(r#"{"search": false, "query": ""}"#, &Named),
            Ok(Decision::NoSearch)
        ));
        let e = read_decision("I will search.", &Named).err().unwrap();
        assert!(
            e.contains("could not be read (m)") && e.contains("I will search."),
            "{e}"
        );
        let e = read_decision(r#"{"search": true, "query": " "}"#, &Named)
            .err()
            .unwrap();
        assert!(e.contains("no query"), "{e}");
        let request = decision_request("保修期多长？", &[]);
        assert!(request.messages[0].content.contains("search(query)"));
    }
}
