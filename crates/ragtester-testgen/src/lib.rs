//! Stage 2: test suites. Splits each document into sections (paragraph ends, a token cap), chooses sections
//! (each classified first: only prose, and for some kinds code or tables, may feed a case), chooses sections
//! by the paper's strategies (Flesch-ranked complex passages, two kinds of negatives, coverage of unused
//! regions; plus cross-lingual and injection cases) or by the plain baseline, asks a chat model to write one
//! question per chosen section, and locates each expected answer in the source to record its span. `interop`
//! reads and writes test sets in RAGAS and DeepEval shapes.
//!
//! This crate knows documents and chat models; it knows nothing of retrieval, matrices or judging.
//!
//! # Map
//!
//! Section split, the paper's strategies (Flesch-ranked complex sections, negatives invented and from another
//! document, coverage of unused sections) and the kinds beyond the paper (near-miss and false-premise
//! negatives, cross-lingual, injection, multi-passage and multi-document inference, poisoned documents), and
//! the baseline (random sections): `sections.rs` splits and scores sections and `section_class.rs` classifies
//! each (prose, contents, index, references, page furniture, front matter, headings, code, table of numbers —
//! from signals that survive PDF extraction) before it may feed a case; `plan.rs` chooses the slots (under
//! `options.rs`, the generation settings), `writer/` fills each from the sections whose class suits it, prose
//! first, keeping fill-in-the-blank replies as the last resort (`across.rs`: questions from another document
//! or needing two passages), `quality.rs` measures every suite's question quality (prose-anchored, cloze,
//! near-duplicates, length, bare answers), `reply.rs` reads replies (re-asked once when unreadable; a
//! document is given up after three unreadable questions in a row) and rejects yes/no questions and
//! near-duplicates, `locate.rs` places expected answers in one or several sections to make spans, `poison.rs`
//! plants an instruction in a copy of a passage. `critic.rs` is the quality gate: a critic model (through
//! `ChatModel`) checks each question against its source, or against what a `Corpus` (a trait the stages back
//! with BM25) returns for a negative — from its own document (the case's scope), then from the whole corpus
//! (recorded as `unanswerable_in_corpus`, which decides whether an external service is asked it). Prompts in
//! English and Chinese (`prompts/question.{en,zh}.j2`, `prompts/critic.{en,zh}.j2`, overridable, versioned).
//! Per-document reports record the sections by class (and each one that is not prose, with why), coverage of
//! the sections that can hold a question, critic rejections and every shortfall.
//!
//! `interop.rs` reads and writes RAGAS (`user_input`, `reference`, `reference_contexts`, …) and DeepEval
//! (`input`, `expected_output`, `context`, …) datasets as JSONL or CSV (`shape.rs`: the shapes and their
//! field names, plain rows with chat messages the third); imported reference contexts are located in the
//! corpus (core's `document::find_text`, shared with external targets) to become spans. `answered.rs` reads
//! answered records — RAGAS, DeepEval or plain JSON lines, each bad row named with its place — into one
//! system's cases and answers, retrieved passages placed by core's `TextLocator`; an exported row's
//! `ragtester` metadata restores its case and passage places exactly. `logged.rs` reads a row's conversation
//! in the three shapes tools write (OpenAI `messages`, RAGAS multi-turn `user_input`, DeepEval `turns`) into
//! its judged turn and the history before it, and a row's place in a conversation kept one row a turn;
//! `answered.rs` makes such a turn a case of kind `logged` carrying that history (core's `Turn::history`) and
//! the row's id (`row_id`), conversations in turn order. `conversation_rows.rs` writes an answered turn back
//! in each shape with its history (the log's, or the configuration's own answers to the earlier turns); a
//! shape whose library loads one kind of sample a dataset (RAGAS, DeepEval) has its turns written to a file
//! of their own beside the single questions (`interop::conversations_file`).
//!
//! `writer/conversation.rs` writes conversations of one document (follow-up, topic switch and back,
//! correction, refusal pressed again, language switch, comparison of two figures — its expected answer worked
//! out from the two located answers) from the sections the generator prefers, each turn checked as a single
//! question is; a follow-up is the writer model's rewriting of a second question (`TaskHint::FollowUp`,
//! prompts in both languages), kept only when it refers back.
//!
//! `fair.rs` trims the strategies' and the baseline's cases so each document has as many cases from each,
//! conversation turns counted (the side with more gives up its last single questions first, whole
//! conversations only where that is not enough), noting what was left out.
//!
//! `update/` updates an earlier suite against the documents as they are now (`generate --update`):
//! `text_map.rs` compares a document's earlier and new text (lines by patience, changed passages by chars,
//! with `similar`; a mostly changed passage is a replacement, not an edit), `fates.rs` matches each earlier
//! document to its new version and follows each span (the same text moved, its words changed, gone, stale),
//! and `mod.rs` keeps, rewrites (the writer held to the changed text, under the case's strategy and
//! generator, carrying its lineage), retires or marks stale each case or whole conversation, asks about new
//! text and documents, and reports every change with its reason.
//!
//! `goals.rs`: simulated users' goals written from the suite's own questions (answerable ones per document
//! and one it cannot answer), each with a persona, the details the user gives when asked and a turn budget.
//! `tool_rows.rs`: tool calls in the libraries' fields both ways — DeepEval's `expected_tools` /
//! `tools_called`, RAGAS's `reference_tool_calls` and an AI message's `tool_calls` answered by tool
//! messages (an agent's answer becomes a RAGAS multi-turn sample) — a search's passages as its output.
//!
//! `planted.rs` turns the facts `ragtester docgen` planted (listed in the `docgen.json` beside the documents)
//! into cases whose spans are the stating sentences, found in the ingested text.

pub mod answered;
mod conversation_rows;
mod critic;
pub mod fair;
pub mod goals;
pub mod interop;
mod locate;
pub mod logged;
mod options;
mod plan;
mod planted;
mod poison;
mod prompt;
mod quality;
mod reply;
mod rng;
mod row_meta;
pub mod section_class;
mod sections;
mod shape;
pub mod tool_rows;
pub mod update;
mod writer;

pub use critic::{CRITIC_PROMPT_VERSION, Corpus, CriticPrompts, QualityGate};
pub use options::GenerationOptions;
pub use plan::{DocumentReport, GenerationReport, NotProse, generate};
pub use planted::{PLANTED_VERSION, planted_cases};
pub use prompt::{PROMPT_VERSION, QuestionPrompts};
pub use quality::SuiteQuality;
pub use sections::{Section, sections_of};
