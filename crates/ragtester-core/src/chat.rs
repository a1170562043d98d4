//! The chat-model trait behind every LLM role: question generator, system under test, judge.
//!
//! A request carries the rendered prompt (what a real model reads) and a typed [`TaskHint`] with the same
//! content as data. Real providers send only the messages; the offline heuristics read the hint, so no
//! deterministic stand-in ever has to parse prose back out of a prompt.

use crate::answer::{RetrievedContext, Usage};
use anyhow::Result;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Self {
            role: Role::System,
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }
}

/// What kind of question a generator is asked to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionKind {
    /// A question answered by the section.
    Answerable,
    /// A question needing the section as a whole (complex passages).
    Complex,
    /// A question on the document's topic that the document does not answer.
    Unanswerable,
    /// A question worded like the section that asks for something it does not say.
    NearMiss,
    /// A question presuming a claim the section contradicts; the answer is the correction.
    FalsePremise,
    /// A question needing every one of several passages (`passages` of the hint).
    MultiPassage,
}

/// What a quality-gate critic is asked about a generated question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CriticCheck {
    /// Do the passages answer the question, and support the expected answer? (Positive cases.)
    Supported,
    /// Does any passage answer the question? (Negative cases: the passages are what the corpus returns.)
    Answered,
    /// Do the passages contradict the question's premise? (False-premise cases.)
    Contradicted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TaskHint {
    /// Write one test question from a section. Reply: `{"question", "answer", "keywords": []}`.
    Question {
        kind: QuestionKind,
        title: String,
        section: String,
        /// Language the question must be written in.
        language: String,
        /// Whole-document text, so an unanswerable question can be checked against it.
        document: String,
        seed: u64,
        /// For multi-passage questions: the passages (from one document or several), each needed.
        passages: Vec<String>,
    },
    /// Check a generated question. Reply: `{"verdict": "yes" | "no", "reason"}`.
    Critic {
        check: CriticCheck,
        question: String,
        expected_answer: String,
        /// The passages to check against (the case's source, or what the corpus returns for the question).
        evidence: Vec<String>,
        /// The false claim, for `Contradicted`.
        premise: Option<String>,
        language: String,
    },
    /// Answer from retrieved contexts only, or refuse.
    Answer {
        query: String,
        contexts: Vec<RetrievedContext>,
        /// The conversation's earlier turns as the configuration passes them on (empty for a single
        /// question or `history none`), so a reader can tell what "it" refers to.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        history: Vec<Message>,
    },
    /// Turn `question` into a follow-up of `previous` that names their shared subject only by a pronoun (or
    /// leaves it out), as a user of a chat assistant asks a second question. Reply: `{"question": string}`,
    /// the question empty when the two share no subject.
    FollowUp {
        previous: String,
        question: String,
        language: String,
    },
    /// Rewrite the last turn of a conversation into a question complete on its own, its referents named
    /// from the history (the earlier user and assistant turns, oldest first). Reply: the question alone.
    Rewrite {
        history: Vec<Message>,
        query: String,
    },
    /// An agent's step before it answers: whether to call its `search` tool over the documents, and with
    /// what query, for the question (after the conversation's earlier turns, oldest first). Reply:
    /// `{"search": bool, "query": string}`.
    SearchCall {
        query: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        history: Vec<Message>,
    },
    /// A simulated user's next message: from the goal, persona and the conversation so far (the user's
    /// messages and the assistant's answers, oldest first, the assistant's last), what the user says
    /// next and why. Reply: `{"move": "clarify" | "insist" | "correct" | "satisfied" | "give_up",
    /// "message": string}`.
    SimulatedUser {
        goal: crate::simulation::Goal,
        /// The documents cannot meet the goal: a correct assistant refuses. (The user is never given the
        /// expected answer: it knows what it wants, not what the documents say.)
        unanswerable: bool,
        language: String,
        transcript: Vec<Message>,
    },
    /// Whether an assistant's answer gives a simulated user what its goal asks for — the fact of
    /// `expected_answer`, stated correctly — beyond what the user said themselves (`user_said`: the
    /// user's messages so far). Reply: `{"settled": bool, "reason": string}`.
    GoalSettled {
        want: String,
        expected_answer: String,
        user_said: String,
        answer: String,
        language: String,
    },
    /// Split a text into short standalone claims. Reply: `{"claims": [string]}`.
    Claims { text: String, language: String },
    /// Whether `reference` supports each claim. Reply: `{"verdicts": ["entailed" | "contradicted" |
    /// "neutral"]}`, one per claim, in order.
    Entailment {
        claims: Vec<String>,
        reference: String,
        language: String,
    },
    /// Judge an answer. Reply: the judge JSON (five criteria and rubric).
    Judge {
        query: String,
        expected_answer: String,
        keywords: Vec<String>,
        answer: String,
        contexts: Vec<String>,
        expects_refusal: bool,
        must_not_contain: Vec<String>,
        /// The false claim the question presumes; refusing or correcting it is right.
        false_premise: Option<String>,
        /// For a turn of a conversation: the earlier turns, oldest first (the user's questions and the
        /// system's answers), which the question may refer to.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        history: Vec<Message>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    pub temperature: f32,
    pub max_tokens: Option<u32>,
    /// Sampling seed, for providers that accept one.
    pub seed: Option<u64>,
    /// What the reply must be: free text, any JSON object, or JSON matching a schema (providers that support
    /// structured output enforce it; the prompt asks for it in words either way).
    pub format: ReplyFormat,
    /// Which of several samples of the same request this is. Replies at temperature > 0 are cached per
    /// sample, so asking for n samples gets n draws, and a rerun gets the same n back.
    pub sample: u32,
    pub hint: Option<TaskHint>,
}

/// The shape a reply must take.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyFormat {
    #[default]
    Text,
    /// Any JSON object.
    Json,
    /// A JSON object matching the schema.
    Schema(OutputSchema),
}

/// A JSON schema for structured output, written to the strict subset OpenAI accepts (every property
/// required, no additional properties), which other servers accept too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A short identifier (`judge_verdict`), which some servers require.
    pub name: String,
    pub schema: serde_json::Value,
}

impl ReplyFormat {
    pub fn is_json(&self) -> bool {
        !matches!(self, ReplyFormat::Text)
    }
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>, hint: TaskHint) -> Self {
        Self {
            messages,
            temperature: 0.0,
            max_tokens: None,
            seed: None,
            format: ReplyFormat::Text,
            sample: 0,
            hint: Some(hint),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatResponse {
    pub content: String,
    pub usage: Usage,
    /// Served from the response cache rather than by the model.
    pub cached: bool,
    /// For a cached reply: when the model produced it (seconds since the Unix epoch), if the cache knows.
    pub cached_at: Option<u64>,
    /// What the provider did beyond answering, for the record the reply ends up in (asked again with
    /// more room after the reply stopped at the token limit).
    pub notes: Vec<String>,
}

/// A persistent store of model replies, keyed by everything that determines a reply.
pub trait ResponseCache: Send + Sync {
    fn get(&self, key: &str) -> Result<Option<ChatResponse>>;
    fn put(&self, key: &str, response: &ChatResponse) -> Result<()>;
}

#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// The model spec as the user wrote it (`offline`, `openai:gpt-4o-mini`).
    fn name(&self) -> String;
    /// What the model's replies depend on beyond the request: the spec, where it is served (an HTTP
    /// provider's base URL) and, where known, the model's own identity (a local file's digest). Cached
    /// replies are keyed on it and run manifests record it, so another server or another file behind the
    /// same name is never mistaken for this one.
    fn identity(&self) -> String {
        self.name()
    }
    /// Whether its replies are worth keeping in the response cache: a model that works a reply out in
    /// microseconds from the request alone (the offline heuristics) is not.
    fn cacheable(&self) -> bool {
        true
    }
    /// Tokens the model reads and writes in one call at most, where it is known (a local file says so; a
    /// server does not).
    fn context_window(&self) -> Option<usize> {
        None
    }
    async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse>;
}
