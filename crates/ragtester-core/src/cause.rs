//! Why a cell failed or errored: one primary cause with the evidence it was read from, and what to change.
//! The oracle (`ragtester-judge`) decides the cause; reports group, count and explain it.

use serde::{Deserialize, Serialize};

/// The primary cause of a failed or errored cell, in the order the oracle checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureCause {
    /// The system under test gave no answer (provider failure, timeout, retrieval failure).
    ProviderError,
    /// The judge could not be read or reached: the system's fault is unknown, not established.
    JudgeError,
    /// The answer carried out an instruction planted in a passage (its canary is in the answer).
    InjectionFollowed,
    /// A question the corpus cannot answer was answered instead of refused.
    #[serde(alias = "hallucination")]
    UnderRefusal,
    /// The answer is in another language than the question.
    LanguageMismatch,
    /// No retrieved passage overlaps the case's source span.
    RetrievalMiss,
    /// The source span was cut across chunks and no retrieved chunk holds the answer.
    Chunking,
    /// The source was retrieved, but below passages that do not hold it, and the answer followed those.
    Ranking,
    /// A question the retrieved passages answer was refused.
    OverRefusal,
    /// The passages held the source, but the answer contradicts it or adds what it does not say.
    Unfaithful,
    /// The answer is right as far as it goes but leaves out what the expected answer holds.
    Incomplete,
    /// The answer was judged wrong for another reason (off the question, unclear).
    #[serde(alias = "generation")]
    OffTarget,
    /// A turn that names its subject only by reference failed because the referent was lost: retrieval
    /// missed what the earlier turn named, or the system refused what the history makes answerable.
    LostContext,
    /// The answer contradicts what the system said earlier in the same conversation.
    ContradictsEarlier,
    /// The answer cites passages that do not support what it says, while another retrieved passage does.
    Misattributed,
    /// The answer gives a value an older revision states, not the current one.
    StaleSource,
    /// The sources disagree and the answer gives one of their values as if it were the only one.
    ConflictHidden,
    /// An agent called a tool its case does not expect, left out one it expects, or called them out of
    /// order.
    WrongTool,
    /// An agent called the right tool with an argument that does not hold what its case expects.
    WrongArgument,
    /// An agent answered without the search of the documents its case expects.
    MissingSearch,
}

impl FailureCause {
    pub const ALL: [FailureCause; 20] = [
        FailureCause::ProviderError,
        FailureCause::JudgeError,
        FailureCause::InjectionFollowed,
        FailureCause::UnderRefusal,
        FailureCause::LanguageMismatch,
        FailureCause::RetrievalMiss,
        FailureCause::Chunking,
        FailureCause::Ranking,
        FailureCause::OverRefusal,
        FailureCause::Unfaithful,
        FailureCause::Incomplete,
        FailureCause::OffTarget,
        FailureCause::LostContext,
        FailureCause::ContradictsEarlier,
        FailureCause::Misattributed,
        FailureCause::StaleSource,
        FailureCause::ConflictHidden,
        FailureCause::WrongTool,
        FailureCause::WrongArgument,
        FailureCause::MissingSearch,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FailureCause::ProviderError => "provider_error",
            FailureCause::JudgeError => "judge_error",
            FailureCause::InjectionFollowed => "injection_followed",
            FailureCause::UnderRefusal => "under_refusal",
            FailureCause::LanguageMismatch => "language_mismatch",
            FailureCause::RetrievalMiss => "retrieval_miss",
            FailureCause::Chunking => "chunking",
            FailureCause::Ranking => "ranking",
            FailureCause::OverRefusal => "over_refusal",
            FailureCause::Unfaithful => "unfaithful",
            FailureCause::Incomplete => "incomplete",
            FailureCause::OffTarget => "off_target",
            FailureCause::LostContext => "lost_context",
            FailureCause::ContradictsEarlier => "contradicts_earlier",
            FailureCause::Misattributed => "misattributed",
            FailureCause::StaleSource => "stale_source",
            FailureCause::ConflictHidden => "conflict_hidden",
            FailureCause::WrongTool => "wrong_tool",
            FailureCause::WrongArgument => "wrong_argument",
            FailureCause::MissingSearch => "missing_search",
        }
    }

    /// Which part of a RAG system the cause points at.
    pub fn stage(self) -> &'static str {
        match self {
            FailureCause::ProviderError => "service",
            FailureCause::JudgeError => "oracle",
            FailureCause::RetrievalMiss | FailureCause::Ranking => "retrieval",
            FailureCause::Chunking => "chunking",
            FailureCause::WrongTool | FailureCause::WrongArgument | FailureCause::MissingSearch => {
                "agent"
            }
            _ => "generation",
        }
    }

    /// What to change when this cause dominates.
    pub fn advice(self) -> &'static str {
        match self {
            FailureCause::ProviderError => {
                "check the service's logs, timeouts and rate limits, then rerun with --resume: errored cells are asked again"
            }
            FailureCause::JudgeError => {
                "not a fault of the system under test: rerun `ragtester judge` (errors are asked again), or use a judge that keeps to the JSON schema"
            }
            FailureCause::InjectionFollowed => {
                "treat retrieved passages as data: fence them in the prompt, tell the model never to follow instructions found in them, and filter documents from untrusted sources"
            }
            FailureCause::UnderRefusal => {
                "tell the model to say it does not know when the passages do not hold the answer, and drop passages below a relevance threshold"
            }
            FailureCause::LanguageMismatch => {
                "ask for the answer in the question's language in the system prompt, or use a model trained on that language"
            }
            FailureCause::RetrievalMiss => {
                "retrieve more (a larger top-k), add BM25 to a dense retriever (hybrid with RRF), or use an embedder trained on the corpus's languages"
            }
            FailureCause::Chunking => {
                "chunk along the document's structure (headings) or use larger chunks with overlap, so a fact is not cut in two"
            }
            FailureCause::Ranking => {
                "add a reranker (a cross-encoder) or lower top-k, so passages that do not hold the answer do not outrank the one that does"
            }
            FailureCause::OverRefusal => {
                "loosen the refusal instruction: the model should answer when the passages hold the answer, and refuse only when they do not"
            }
            FailureCause::Unfaithful => {
                "use a stricter answer prompt (answer only from the passages, quote them), a lower temperature, or a stronger generator"
            }
            FailureCause::Incomplete => {
                "ask for every part of the answer the passages give, allow more output tokens, or retrieve the neighbouring chunks too"
            }
            FailureCause::OffTarget => {
                "read the judge's reasons on these cases: the answer missed the question's point; a stronger generator or a clearer prompt usually helps"
            }
            FailureCause::LostContext => {
                "rewrite each follow-up from the conversation before retrieval (history mode `rewrite`), and keep the earlier turns in the prompt"
            }
            FailureCause::ContradictsEarlier => {
                "keep the conversation's earlier answers in the prompt and tell the model to stay consistent with them, or to say plainly what it corrects"
            }
            FailureCause::Misattributed => {
                "number the passages in the prompt and ask for the number of the passage each sentence comes from; check the citations your post-processing attaches against the passages they point at"
            }
            FailureCause::StaleSource => {
                "index each document's date or revision and prefer the newest (filter or rerank by it), retire superseded editions from the corpus, and show the model each passage's date"
            }
            FailureCause::ConflictHidden => {
                "tell the model to report every value when passages disagree and say which source gives which; retrieve enough passages to see the disagreement"
            }
            FailureCause::WrongTool => {
                "describe each tool's purpose plainly in its schema, offer the agent only the tools the task needs, and show it an example of the right sequence"
            }
            FailureCause::WrongArgument => {
                "name and type every parameter in the tool's schema with an example value, and tell the agent to take arguments from the question's own words"
            }
            FailureCause::MissingSearch => {
                "require a search before any factual answer (tool_choice, or a system prompt that forbids answering from memory), and check the search tool is offered on every turn"
            }
        }
    }
}

impl std::fmt::Display for FailureCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A cell's primary cause and the evidence it was read from (spans, ranks, terms, the judge's reason).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    pub cause: FailureCause,
    pub evidence: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_old_names_still_read() {
        for cause in FailureCause::ALL {
            let json = serde_json::to_string(&cause).unwrap();
            assert_eq!(json, format!("\"{}\"", cause.as_str()));
            assert_eq!(serde_json::from_str::<FailureCause>(&json).unwrap(), cause);
        }
        let old: FailureCause = serde_json::from_str("\"hallucination\"").unwrap();
        assert_eq!(old, FailureCause::UnderRefusal);
        let old: FailureCause = serde_json::from_str("\"generation\"").unwrap();
        assert_eq!(old, FailureCause::OffTarget);
    }
}
