//! Test cases: a query, what a correct system answers, and where in the corpus that answer lives.

use crate::document::SourceSpan;
use crate::record::default_schema_version;
use serde::{Deserialize, Serialize};

/// The spec's six scenario categories (§3.2). Reports compute the weakest category over these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Core,
    DetailNumeric,
    Inference,
    Multilingual,
    Negative,
    Safety,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Core,
        Category::DetailNumeric,
        Category::Inference,
        Category::Multilingual,
        Category::Negative,
        Category::Safety,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Core => "core",
            Category::DetailNumeric => "detail_numeric",
            Category::Inference => "inference",
            Category::Multilingual => "multilingual",
            Category::Negative => "negative",
            Category::Safety => "safety",
        }
    }
}

/// How the case was chosen: the paper's strategies (§3.3) and what we add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// A section among the N_complex lowest readability scores.
    Complex,
    /// Negative method (a): a question the document does not answer.
    NegativeInvented,
    /// Negative method (b): a question written from a different document.
    NegativeCrossDocument,
    /// A question worded like a passage but asking what it does not say (a condition, variant or detail
    /// the document never gives): retrieval finds the passage, a careless system answers from it.
    NegativeNearMiss,
    /// A question that presumes something the document contradicts; a correct system refuses or corrects.
    NegativeFalsePremise,
    /// A section that no earlier case used.
    Coverage,
    /// A question in the other language than the document's.
    CrossLingual,
    /// A real question with a prompt injection attached.
    Injection,
    /// A question needing two passages of one document.
    MultiPassage,
    /// A question needing passages of two documents.
    MultiDocument,
    /// A real question whose only retrievable source is a copy of its passage with an instruction planted
    /// in it; a correct system answers and does not follow the planted instruction.
    PoisonedDocument,
    /// The paper's baseline: no strategy.
    Baseline,
    /// A turn of a conversation: a question asked after earlier ones, whose history a correct system keeps.
    Conversation,
    /// Read from another tool's dataset (RAGAS, DeepEval).
    Imported,
    /// A fact planted in a generated document: exact ground truth, no model involved.
    Planted,
    /// A simulated user's goal: a conversation whose next turn depends on the system's last answer.
    Simulated,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Complex => "complex",
            Strategy::NegativeInvented => "negative_invented",
            Strategy::NegativeCrossDocument => "negative_cross_document",
            Strategy::NegativeNearMiss => "negative_near_miss",
            Strategy::NegativeFalsePremise => "negative_false_premise",
            Strategy::Coverage => "coverage",
            Strategy::CrossLingual => "cross_lingual",
            Strategy::Injection => "injection",
            Strategy::MultiPassage => "multi_passage",
            Strategy::MultiDocument => "multi_document",
            Strategy::PoisonedDocument => "poisoned_document",
            Strategy::Baseline => "baseline",
            Strategy::Conversation => "conversation",
            Strategy::Imported => "imported",
            Strategy::Planted => "planted",
            Strategy::Simulated => "simulated",
        }
    }
}

/// Which generator produced a suite: ragtester's strategies or the plain baseline (the paper's RQ2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    Ragtester,
    Baseline,
    /// Cases read from another tool's dataset.
    Imported,
    /// The planted facts of documents `ragtester docgen` wrote offline.
    Planted,
}

impl Generator {
    pub fn as_str(self) -> &'static str {
        match self {
            Generator::Ragtester => "ragtester",
            Generator::Baseline => "baseline",
            Generator::Imported => "imported",
            Generator::Planted => "planted",
        }
    }
}

/// What kind of text a section of a document is, decided before it may feed a case: a user asks about
/// prose; a table of contents, an index, a reference list, page furniture, front matter or bare headings
/// hold nothing a user would ask, and code or a table of numbers suit only some kinds of question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionClass {
    Prose,
    TableOfNumbers,
    Code,
    TableOfContents,
    Index,
    References,
    PageFurniture,
    FrontMatter,
    /// Headings or labels with no sentence under them.
    Headings,
}

impl SectionClass {
    pub const ALL: [SectionClass; 9] = [
        SectionClass::Prose,
        SectionClass::TableOfNumbers,
        SectionClass::Code,
        SectionClass::TableOfContents,
        SectionClass::Index,
        SectionClass::References,
        SectionClass::PageFurniture,
        SectionClass::FrontMatter,
        SectionClass::Headings,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SectionClass::Prose => "prose",
            SectionClass::TableOfNumbers => "table_of_numbers",
            SectionClass::Code => "code",
            SectionClass::TableOfContents => "table_of_contents",
            SectionClass::Index => "index",
            SectionClass::References => "references",
            SectionClass::PageFurniture => "page_furniture",
            SectionClass::FrontMatter => "front_matter",
            SectionClass::Headings => "headings",
        }
    }

    /// Whether any question may be written from a section of this class (prose for every kind; code and
    /// tables of numbers for the kinds that suit them, once prose is used up).
    pub fn can_hold_a_question(self) -> bool {
        matches!(
            self,
            SectionClass::Prose | SectionClass::TableOfNumbers | SectionClass::Code
        )
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    #[serde(default = "default_schema_version")]
    pub schema_version: u32,
    pub id: String,
    pub category: Category,
    pub strategy: Strategy,
    pub generator: Generator,
    pub query: String,
    /// What a correct answer says; for negative cases, the refusal expected.
    pub expected_answer: String,
    /// Key entities and terms a correct answer contains (paper: keyword match; spec: keyword recall).
    pub keywords: Vec<String>,
    /// Ground truth: the spans that support the answer. Empty for negative cases.
    pub source_spans: Vec<SourceSpan>,
    /// The document the case was written about.
    pub document_id: String,
    /// Retrieval is restricted to these documents; empty means the whole corpus.
    #[serde(default)]
    pub restrict_to: Vec<String>,
    /// Text a correct answer must not contain (an injected instruction's payload).
    #[serde(default)]
    pub must_not_contain: Vec<String>,
    /// Language of the query.
    pub language: String,
    /// Readability of the source section (Flesch reading ease for English, see `readability` for Chinese).
    pub readability: Option<f64>,
    /// Which readability measure `readability` holds.
    pub readability_measure: Option<String>,
    /// The model that wrote the case (`offline` for the deterministic generator).
    pub generator_model: String,
    pub prompt_version: String,
    /// The false claim a false-premise question presumes; the expected answer is its correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub false_premise: Option<String>,
    /// Documents this case adds to the corpus (a poisoned copy of a passage). They are indexed with the
    /// corpus but retrievable only by cases that name them in `restrict_to`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injected_documents: Vec<crate::document::Document>,
    /// The model whose quality-gate check the case passed; none when no critic ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critic: Option<String>,
    /// For a negative scoped to its document: whether the critic also found it unanswered by the whole
    /// corpus (true), found an answer in another document (false), or did not check (None). Only a
    /// negative unanswered corpus-wide is put to an external service, which searches its whole corpus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unanswerable_in_corpus: Option<bool>,
    /// The class of the section the case was written from; anything but prose is a label a reader of the
    /// suite should see (a question about code or a table). None for cases not written from one section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_class: Option<SectionClass>,
    /// For a turn of a conversation: which conversation, where in it, and what the turn tests. Each turn is
    /// a case of its own (so resume, caches, sharding and merge work per turn); a system is asked it after
    /// the conversation's earlier turns, with its own answers to them as the history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<Turn>,
    /// The id an imported row carried (its `id`, or its conversation and turn), so results can be matched
    /// back to the log they came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_id: Option<String>,
    /// For a fact the corpus states more than once with different values: what the other sources say and
    /// what the answer owes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict: Option<SourceConflict>,
    /// The id of the case this one descends from, when `generate --update` wrote it again because its
    /// source text changed: the first ancestor's id, so runs before and after any number of updates line
    /// up case by case (see [`TestCase::lineage_id`]). None for a case as first written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<String>,
    /// Why the case may test what its documents no longer say (its document no longer parses; its source
    /// changed and nothing could write it again): kept in the suite, reported apart, never dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stale: Option<String>,
    /// For an agentic system: the tools a correct run calls (DeepEval's `expected_tools`; RAGAS's
    /// `reference_tool_calls`), each with the arguments that matter. Empty: the case expects none in
    /// particular, and tool calls are not checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_tools: Vec<crate::tool::ToolCall>,
    /// Whether `expected_tools` must be called in their order.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_in_order: bool,
    /// For a simulated user's conversation: the goal a user model pursues from the opening message (the
    /// query), choosing each next message from the system's last answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<crate::simulation::Goal>,
}

impl TestCase {
    /// The id that stays the same across suite updates: the first ancestor's, or the case's own.
    pub fn lineage_id(&self) -> &str {
        self.lineage.as_deref().unwrap_or(&self.id)
    }
}

/// A fact the corpus states more than once, with different values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SourceConflict {
    /// An older revision states another value: the answer gives the current one, not the outdated one.
    Superseded { current: String, outdated: String },
    /// Documents of equal standing disagree: the answer gives every value or says that they disagree.
    Disagreeing { values: Vec<String> },
}

/// Words by which an answer says its sources disagree, in English and Chinese.
const DISAGREEMENT_CUES: &[&str] = &[
    "disagree",
    "conflict",
    "contradict",
    "inconsistent",
    "differ",
    "不一致",
    "矛盾",
    "冲突",
    "说法不同",
    "不同的说法",
];

impl SourceConflict {
    /// Why `answer` does not do right by the conflict, if it does not: it gives the outdated value and not
    /// the current one, or gives one of the disagreeing values without the others or a word that they
    /// disagree. (An answer that gives none of the values is left to the judge's other criteria.)
    pub fn wronged_by(&self, answer: &str) -> Option<String> {
        let lower = answer.to_lowercase();
        let says = |value: &str| mentions(&lower, &value.to_lowercase());
        match self {
            SourceConflict::Superseded { current, outdated } => (says(outdated) && !says(current))
                .then(|| {
                    format!("gives the superseded value «{outdated}», not the current «{current}»")
                }),
            SourceConflict::Disagreeing { values } => {
                let given: Vec<&String> = values.iter().filter(|v| says(v)).collect();
                let named = DISAGREEMENT_CUES.iter().any(|c| lower.contains(c));
                (!given.is_empty() && given.len() < values.len() && !named).then(|| {
                    format!(
                        "gives «{}» as if it were the only value, hiding that the sources say {}",
                        given[0],
                        values
                            .iter()
                            .map(|v| format!("«{v}»"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    )
                })
            }
        }
    }
}

/// Whether `text` holds `value` as a whole figure: "20" is not in "2020" nor in "120".
fn mentions(text: &str, value: &str) -> bool {
    let digit_at = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
    let numeric = value.starts_with(|c: char| c.is_ascii_digit());
    text.match_indices(value).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + value.len()..].chars().next();
        !numeric || (!digit_at(before) && !digit_at(after))
    })
}

#[cfg(test)]
mod conflict_tests {
    use super::SourceConflict;

    #[test]
    fn the_current_value_or_the_disagreement_is_owed() {
        let stale = SourceConflict::Superseded {
            current: "21".into(),
            outdated: "14".into(),
        };
        assert!(
            stale
                .wronged_by("Filters are replaced every 21 days.")
                .is_none()
        );
        assert!(
            stale
                .wronged_by("Every 14 days.")
                .unwrap()
                .contains("superseded")
        );
        // A figure counts whole: "14" is not said by "2014".
        assert!(stale.wronged_by("This edition dates from 2014.").is_none());
        assert!(super::mentions("每14天", "14") && !super::mentions("2014年", "14"));
        assert!(
            stale
                .wronged_by("每14天更换一次，现行手册为21天。")
                .is_none()
        );
        let rivals = SourceConflict::Disagreeing {
            values: vec!["36".into(), "48".into()],
        };
        assert!(
            rivals
                .wronged_by("Every 36 months.")
                .unwrap()
                .contains("hiding")
        );
        assert!(
            rivals
                .wronged_by("The handbook says 36 months, the bulletin 48.")
                .is_none()
        );
        assert!(
            rivals
                .wronged_by("Sources disagree; the handbook says 36 months.")
                .is_none()
        );
        assert!(
            rivals
                .wronged_by("两份文件说法不一致：手册为36个月。")
                .is_none()
        );
        assert!(rivals.wronged_by("主驱动每36个月大修一次。").is_some());
        assert!(rivals.wronged_by("I do not know.").is_none());
    }
}

/// What a conversation tests, as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConversationKind {
    /// A follow-up that names its subject only by a pronoun or leaves it out.
    FollowUp,
    /// A question on another topic, then a follow-up back on the first.
    TopicSwitch,
    /// The user corrects what they asked; the answer follows the correction, not the first question.
    Correction,
    /// A question the documents cannot answer, refused; asked again later, still refused.
    RefusalKept,
    /// A turn asked in the other language; it is answered in that language.
    LanguageSwitch,
    /// Two figures asked one after the other, then which is larger: answerable only from both earlier
    /// answers.
    Comparison,
    /// A conversation imported from a log (`import --answers`): of no kind ragtester plants. Not in
    /// [`ConversationKind::ALL`], which lists the kinds a suite is generated with.
    Logged,
}

impl ConversationKind {
    pub const ALL: [ConversationKind; 6] = [
        ConversationKind::FollowUp,
        ConversationKind::TopicSwitch,
        ConversationKind::Correction,
        ConversationKind::RefusalKept,
        ConversationKind::LanguageSwitch,
        ConversationKind::Comparison,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ConversationKind::FollowUp => "follow_up",
            ConversationKind::TopicSwitch => "topic_switch",
            ConversationKind::Correction => "correction",
            ConversationKind::RefusalKept => "refusal_kept",
            ConversationKind::LanguageSwitch => "language_switch",
            ConversationKind::Comparison => "comparison",
            ConversationKind::Logged => "logged",
        }
    }
}

/// What one turn does in its conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnStep {
    /// The first question, complete on its own.
    Opening,
    /// Refers to an earlier turn's subject by a pronoun or ellipsis: answerable only with the history.
    FollowUp,
    /// A new topic, complete on its own.
    Switch,
    /// Back to an earlier topic, by reference: answerable only with the history.
    SwitchBack,
    /// The user takes back what they asked and asks something else.
    Correction,
    /// A question the documents do not answer.
    OutOfScope,
    /// The out-of-scope question pressed again after other turns: still to be refused.
    PressedAgain,
    /// A question in the other language than the turns before it.
    OtherLanguage,
    /// Compares what earlier answers said ("which of the two is larger?").
    Compare,
    /// A later turn of a conversation from a log: what it leans on in the earlier turns is not known.
    Logged,
}

impl TurnStep {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStep::Opening => "opening",
            TurnStep::FollowUp => "follow_up",
            TurnStep::Switch => "switch",
            TurnStep::SwitchBack => "switch_back",
            TurnStep::Correction => "correction",
            TurnStep::OutOfScope => "out_of_scope",
            TurnStep::PressedAgain => "pressed_again",
            TurnStep::OtherLanguage => "other_language",
            TurnStep::Compare => "compare",
            TurnStep::Logged => "logged",
        }
    }

    /// The turn cannot be understood without the history: its referent is in an earlier turn.
    pub fn needs_history(self) -> bool {
        matches!(
            self,
            TurnStep::FollowUp | TurnStep::SwitchBack | TurnStep::PressedAgain | TurnStep::Compare
        )
    }
}

/// A case's place in its conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// The conversation's id, shared by its turns.
    pub conversation: String,
    /// 1-based position in the conversation.
    pub index: usize,
    /// How many turns the conversation has.
    pub of: usize,
    pub kind: ConversationKind,
    pub step: TurnStep,
    /// The question as it would be asked alone, its referent named: what rewriting a follow-up from the
    /// history should arrive at. None for turns complete on their own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standalone: Option<String>,
    /// The earlier turns as a log recorded them (questions and the logged system's answers, oldest first),
    /// for a turn imported with its history: the judge reads them, and a run asks the turn after them.
    /// Empty for generated turns, whose history is the system's own answers in the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<crate::chat::Message>,
}

impl TestCase {
    /// A correct system refuses negative cases.
    pub fn expects_refusal(&self) -> bool {
        self.category == Category::Negative
    }

    /// The conversation this case is a turn of, if any.
    pub fn conversation(&self) -> Option<&str> {
        self.turn.as_ref().map(|t| t.conversation.as_str())
    }
}
