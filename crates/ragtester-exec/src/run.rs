//! One cell answered: the built-in pipeline (retrieval, an agent's search, generation, a conversation's
//! history mode) or the user's own service; the call slots that bound them; which cells cannot be asked.

use crate::pipeline::{Pipeline, System};
use crate::prompt::{answer_messages, rewrite_messages};
use anyhow::Result;
use ragtester_core::document::locate_context;
use ragtester_core::secrets::{error_text, redact};
use ragtester_core::spend::BudgetExhausted;
use ragtester_core::{
    Answer, ChatRequest, HistoryMode, Message, RetrievedContext, RetrieverKind, SkippedCell,
    TaskHint, TestCase,
};
use ragtester_llm::TargetRequest;
use ragtester_retrieve::Scope;
use ragtester_text::tokens::count_tokens;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// How a cell ended.
pub(crate) enum Cell {
    Answered(Box<Answer>),
    /// A simulated conversation's record after a turn: kept, so a resume continues from it, and not yet
    /// the cell's end.
    Progress(Box<Answer>),
    /// A model call was refused by the budget: nothing is recorded.
    OverBudget,
}

/// Why a case cannot be put fairly to a configuration's system, if it cannot. A negative case is
/// unanswerable within its own document (retrieval is scoped to it, the paper's setting); an external
/// service searches its whole corpus, where another document may answer the question, so a correct answer
/// would be scored as a hallucination — unless the critic checked the whole corpus too.
pub fn skip_reason(pipeline: &Pipeline, case: &TestCase) -> Option<String> {
    let external = matches!(pipeline.system, System::External { .. });
    let scoped = case.expects_refusal()
        && !case.restrict_to.is_empty()
        && case.unanswerable_in_corpus != Some(true);
    (external && scoped).then(|| {
        "a negative case checked as unanswerable within one document only: an external service searches \
         its whole corpus, where another document may answer it"
            .to_string()
    })
}

/// Every cell `execute` leaves unasked, with the reason.
pub fn skipped_cells(pipelines: &[Arc<Pipeline>], cases: &[TestCase]) -> Vec<SkippedCell> {
    pipelines
        .iter()
        .flat_map(|p| cases.iter().map(move |c| (p, c)))
        .filter_map(|(p, c)| {
            Some(SkippedCell {
                reason: skip_reason(p, c)?,
                case_id: c.id.clone(),
                config_id: p.config.id.clone(),
            })
        })
        .collect()
}

/// Our own limits on a cell's work: model calls in flight (`--concurrency`), and retrievals running at once.
/// Retrieval runs on blocking threads; left unbounded, every cell retrieving ahead held a thread of its own,
/// each with its allocator's per-thread memory (about 4 MB): a run at concurrency 64 peaked near 1 GB
/// whatever its size (docs/benchmarks.md). Time a cell waits for either slot is our queueing, counted in
/// `queue_ms`, never in the system's latency.
pub(crate) struct Slots {
    calls: Semaphore,
    retrievals: Semaphore,
    /// The longest answer the sink keeps whole.
    answer_bytes: u64,
}

impl Slots {
    /// A permit of `semaphore`, the wait for it added to the cell's queueing time (ours, never the
    /// system's latency).
    async fn take<'s>(
        semaphore: &'s Semaphore,
        queue_ms: &mut f64,
    ) -> tokio::sync::SemaphorePermit<'s> {
        let waited = Instant::now();
        let permit = semaphore
            .acquire()
            .await
            .expect("the semaphore is never closed");
        *queue_ms += ms(waited);
        permit
    }

    pub(crate) fn new(concurrency: usize, answer_bytes: u64) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        // Retrieval is CPU work, or an HTTP call for remote embedders, rerankers and vector stores: more
        // than the cores, so remote retrieval keeps some concurrency, but not one thread per cell.
        let retrievals = concurrency.clamp(1, (4 * cores).max(16));
        Self {
            calls: Semaphore::new(concurrency.max(1)),
            retrievals: Semaphore::new(retrievals),
            answer_bytes,
        }
    }
}

pub(crate) async fn answer_cell(
    pipeline: &Pipeline,
    case: &TestCase,
    history: &[Message],
    hidden: &Arc<Vec<String>>,
    slots: &Slots,
) -> Cell {
    let mut answer = Answer::blank(&case.id, &pipeline.config.id);
    let over_budget = match &pipeline.system {
        System::BuiltIn {
            chunks,
            retriever,
            model,
        } => built_in(
            &mut answer,
            Lookup {
                case,
                hidden: hidden.clone(),
                top_k: pipeline.config.top_k,
                history: match pipeline.config.history {
                    HistoryMode::None => &[],
                    HistoryMode::Prompt | HistoryMode::Rewrite => history,
                },
                rewrite: pipeline.config.history == HistoryMode::Rewrite,
                reference: Some(pipeline.config.retriever).filter(|r| r.is_reference()),
                agent: pipeline.config.agent,
            },
            chunks,
            retriever.clone(),
            model.as_ref(),
            slots,
        )
        .await
        .is_err(),
        System::External { .. } if !case.injected_documents.is_empty() => {
            answer.error = Some(
                "this case adds a poisoned document to the corpus, which an external service cannot be \
                 given: run it against built-in configurations"
                    .into(),
            );
            false
        }
        System::External {
            target,
            documents,
            tracing,
        } => {
            let outside = Outside {
                target: target.as_ref(),
                documents,
                tracing: tracing.as_deref(),
            };
            outside
                .ask(&mut answer, case, history, &pipeline.config.id, slots)
                .await;
            false
        }
    };
    // The system's time: what it spent retrieving and generating, not what the cell spent queued behind
    // our own call slots.
    answer.latency.total_ms = answer.latency.retrieval_ms + answer.latency.generation_ms;
    // A 10 MB answer is not kept whole: cut at the limit, its full length noted on the record.
    answer.truncate_to(slots.answer_bytes);
    if over_budget {
        Cell::OverBudget
    } else {
        Cell::Answered(Box::new(answer))
    }
}

/// An external service under test, with the corpus its contexts are placed in and its traces' receiver.
struct Outside<'a> {
    target: &'a dyn ragtester_llm::RagTarget,
    documents: &'a [ragtester_core::Document],
    tracing: Option<&'a crate::tracing::Tracing>,
}

impl Outside<'_> {
    /// One call of the service: its session and trace context, its reply placed in the corpus, and the
    /// trace it reports read back after the call's slot is freed.
    async fn ask(
        &self,
        answer: &mut Answer,
        case: &TestCase,
        history: &[Message],
        config_id: &str,
        slots: &Slots,
    ) {
        let call = Slots::take(&slots.calls, &mut answer.latency.queue_ms).await;
        let called = Instant::now();
        let session = case.conversation().map(|conversation| {
            ragtester_core::ids::stable_id("session", &(conversation, config_id))
        });
        let trace = match self.tracing.map(|t| t.begin()) {
            Some(Ok(context)) => Some(context),
            Some(Err(e)) => {
                answer.error = Some(format!("cannot make a trace context: {e:#}"));
                None
            }
            None => None,
        };
        let traceparent = trace.map(|t| t.traceparent());
        let endpoint = self.tracing.map(|t| t.receiver.endpoint());
        let request = TargetRequest {
            query: &case.query,
            history,
            session: session.as_deref(),
            traceparent: traceparent.as_deref(),
            otlp_endpoint: endpoint.as_deref(),
        };
        if answer.error.is_none() {
            external(answer, self.target, self.documents, &request).await;
        }
        answer.latency.generation_ms = ms(called);
        // Waiting for the trace is ours, not the target's: its call slot goes to the next cell.
        drop(call);
        if let (Some(tracing), Some(context)) = (self.tracing, trace) {
            tracing
                .finish(context, answer, self.documents, &case.query)
                .await;
        }
    }
}

async fn external(
    answer: &mut Answer,
    target: &dyn ragtester_llm::RagTarget,
    documents: &[ragtester_core::Document],
    request: &TargetRequest<'_>,
) {
    match target.ask(request).await {
        Ok(reply) => {
            answer.answer = reply.answer;
            answer.contexts = reply
                .contexts
                .iter()
                .enumerate()
                .map(|(i, text)| locate_context(documents, i + 1, text))
                .collect();
            answer.citations = reply.citations;
            answer.tool_calls = reply.tool_calls;
        }
        Err(e) => {
            answer.error =
                Some(redact(&format!("target {} failed: {e:#}", target.name())).into_owned())
        }
    }
}

/// A model call was refused because the budget is spent.
struct OverBudget;

/// What one cell retrieves for: its case, the documents hidden from every other case, how many chunks,
/// and the conversation's earlier turns as the configuration's history mode passes them on.
struct Lookup<'a> {
    case: &'a TestCase,
    hidden: Arc<Vec<String>>,
    top_k: usize,
    history: &'a [Message],
    /// Rewrite the turn from the history before retrieval.
    rewrite: bool,
    /// A reference configuration: passages from the case, not from the retriever.
    reference: Option<RetrieverKind>,
    /// An agent: its model decides whether to search, and with what query, before it answers.
    agent: bool,
}

/// Retrieve, then generate. Errors are recorded on the answer; only a budget refusal returns `Err`.
async fn built_in(
    answer: &mut Answer,
    Lookup {
        case,
        hidden,
        top_k,
        history,
        rewrite,
        reference,
        agent,
    }: Lookup<'_>,
    chunks: &[ragtester_core::Chunk],
    retriever: std::sync::Arc<dyn ragtester_retrieve::Retriever>,
    model: &dyn ragtester_core::ChatModel,
    slots: &Slots,
) -> Result<(), OverBudget> {
    let mut query = case.query.clone();
    if rewrite && !history.is_empty() {
        match rewritten(answer, model, history, &case.query, slots).await? {
            Some(q) => query = q,
            None => return Ok(()),
        }
    }
    answer.contexts = match reference {
        Some(RetrieverKind::FullDoc) => {
            let (contexts, cut_from) = whole_documents(case, chunks, model.context_window());
            answer.context_cut_from = cut_from;
            contexts
        }
        Some(kind) => reference_passages(kind, case, chunks),
        None if agent => {
            let Some(decided) = agent_search(answer, model, &query, history, slots).await? else {
                return Ok(());
            };
            let mut calls = Vec::new();
            let mut contexts = Vec::new();
            if let crate::agent::Decision::Search(search) = decided {
                let asked = Asked {
                    query: &search,
                    case,
                    hidden,
                    top_k,
                };
                contexts = match retrieve(answer, asked, chunks, retriever, slots).await? {
                    Some(contexts) => contexts,
                    None => return Ok(()),
                };
                let passages = contexts.iter().map(|c: &RetrievedContext| c.text.clone());
                calls.push(crate::agent::search_call(&search, passages.collect()));
            }
            answer.tool_calls = Some(calls);
            contexts
        }
        None => {
            let asked = Asked {
                query: &query,
                case,
                hidden,
                top_k,
            };
            match retrieve(answer, asked, chunks, retriever, slots).await? {
                Some(contexts) => contexts,
                None => return Ok(()),
            }
        }
    };
    let request = ChatRequest::new(
        answer_messages(&query, &answer.contexts, history),
        TaskHint::Answer {
            query: query.clone(),
            contexts: answer.contexts.clone(),
            history: history.to_vec(),
        },
    );
    let _call = Slots::take(&slots.calls, &mut answer.latency.queue_ms).await;
    let generation_started = Instant::now();
    match model.chat(&request).await {
        Ok(response) => {
            answer.answer = response.content;
            answer.usage.add(response.usage);
            answer.cached = response.cached;
            answer.cached_at = response.cached_at;
        }
        Err(e) if BudgetExhausted::caused(&e) => return Err(OverBudget),
        Err(e) => {
            answer.error = Some(format!(
                "generation failed ({}): {}",
                model.name(),
                error_text(&e)
            ))
        }
    }
    answer.latency.generation_ms = ms(generation_started);
    Ok(())
}

/// What a cell's retriever is asked: the query (rewritten or as asked), for its case, within the documents
/// the case may see.
struct Asked<'a> {
    query: &'a str,
    case: &'a TestCase,
    hidden: Arc<Vec<String>>,
    top_k: usize,
}

/// The retriever's passages for a cell, its time counted as retrieval; None when retrieval failed (the
/// error is on the answer); Err only for a budget refusal.
async fn retrieve(
    answer: &mut Answer,
    Asked {
        query,
        case,
        hidden,
        top_k,
    }: Asked<'_>,
    chunks: &[ragtester_core::Chunk],
    retriever: std::sync::Arc<dyn ragtester_retrieve::Retriever>,
    slots: &Slots,
) -> Result<Option<Vec<RetrievedContext>>, OverBudget> {
    let slot = Slots::take(&slots.retrievals, &mut answer.latency.queue_ms).await;
    let started = Instant::now();
    // Retrieval may run a model on the CPU (a query embedding, a cross-encoder): off the async workers.
    let (asked, restrict_to) = (query.to_string(), case.restrict_to.clone());
    let retrieved = tokio::task::spawn_blocking(move || {
        let scope = Scope {
            documents: &restrict_to,
            hidden: &hidden,
        };
        retriever.retrieve(&asked, top_k, scope)
    })
    .await
    .unwrap_or_else(|e| Err(anyhow::anyhow!("the retrieval task failed: {e}")));
    drop(slot);
    let hits = match retrieved {
        Ok(h) => h,
        // An LLM reranker's call may be the one the budget refuses.
        Err(e) if BudgetExhausted::caused(&e) => return Err(OverBudget),
        Err(e) => {
            answer.error = Some(format!("retrieval failed: {}", error_text(&e)));
            return Ok(None);
        }
    };
    answer.latency.retrieval_ms += ms(started);
    let contexts = hits
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let chunk = &chunks[h.chunk];
            RetrievedContext {
                rank: i + 1,
                score: h.score,
                chunk_id: chunk.id.clone(),
                document_id: chunk.document_id.clone(),
                start: chunk.start,
                end: chunk.end,
                text: chunk.text.clone(),
            }
        })
        .collect();
    Ok(Some(contexts))
}

/// A reference configuration's passages: the chunks that hold the case's source spans, in document order
/// (perfect retrieval), or none at all (closed book). A case with no source (a negative) gets none either
/// way.
fn reference_passages(
    kind: RetrieverKind,
    case: &TestCase,
    chunks: &[ragtester_core::Chunk],
) -> Vec<RetrievedContext> {
    if kind != RetrieverKind::Oracle {
        return Vec::new();
    }
    let holds = |c: &ragtester_core::Chunk| {
        case.source_spans
            .iter()
            .any(|s| s.document_id == c.document_id && s.start < c.end && c.start < s.end)
    };
    chunks
        .iter()
        .filter(|c| holds(c))
        .enumerate()
        .map(|(i, chunk)| RetrievedContext {
            rank: i + 1,
            score: 1.0,
            chunk_id: chunk.id.clone(),
            document_id: chunk.document_id.clone(),
            start: chunk.start,
            end: chunk.end,
            text: chunk.text.clone(),
        })
        .collect()
}

/// Tokens of a window kept for the prompt's frame (instructions, question, history) and the answer.
const FRAME_AND_ANSWER_TOKENS: usize = 768;

/// The `full-doc` reference point's passages: every chunk of the case's documents (those its source spans
/// are in, else the one it was written from), in document order and without the chunker's overlap, so
/// the model reads each document once, whole. Cut at a chunk boundary to the model's window where it is
/// known, returning the tokens the documents held before the cut. Tokens are counted with cl100k, which a
/// model's own tokenizer may exceed (Chinese especially), so a quarter of the window is left spare.
fn whole_documents(
    case: &TestCase,
    chunks: &[ragtester_core::Chunk],
    window: Option<usize>,
) -> (Vec<RetrievedContext>, Option<u64>) {
    let mut documents: Vec<&str> = Vec::new();
    for span in &case.source_spans {
        if !documents.contains(&span.document_id.as_str()) {
            documents.push(&span.document_id);
        }
    }
    if documents.is_empty() && !case.document_id.is_empty() {
        documents.push(&case.document_id);
    }
    let mut contexts = Vec::new();
    for document in documents {
        let mut own: Vec<&ragtester_core::Chunk> = chunks
            .iter()
            .filter(|c| c.document_id == document)
            .collect();
        own.sort_by_key(|c| (c.start, c.end));
        let mut covered = 0;
        for chunk in own {
            if chunk.end <= covered {
                continue;
            }
            // The part after the previous chunk, where the chunk's text maps onto its range char for char.
            let length = chunk.text.chars().count();
            let text = if chunk.start < covered && length == chunk.end - chunk.start {
                chunk.text.chars().skip(covered - chunk.start).collect()
            } else {
                chunk.text.clone()
            };
            let start = chunk.start.max(covered);
            covered = chunk.end;
            contexts.push(RetrievedContext {
                rank: contexts.len() + 1,
                score: 1.0,
                chunk_id: chunk.id.clone(),
                document_id: chunk.document_id.clone(),
                start,
                end: chunk.end,
                text,
            });
        }
    }
    let Some(window) = window else {
        return (contexts, None);
    };
    let budget = window.saturating_sub(FRAME_AND_ANSWER_TOKENS) * 3 / 4;
    let tokens: Vec<usize> = contexts.iter().map(|c| count_tokens(&c.text)).collect();
    let total: usize = tokens.iter().sum();
    if total <= budget {
        return (contexts, None);
    }
    let mut used = 0;
    let kept = tokens
        .iter()
        .take_while(|t| {
            used += **t;
            used <= budget
        })
        .count();
    contexts.truncate(kept);
    (contexts, Some(total as u64))
}

/// An agent's decision whether to search, and with what query. Its time counts as retrieval (it prepares
/// the query) and its tokens as the cell's. An unreadable or failed decision is the cell's error (Ok(None));
/// a budget refusal, Err.
async fn agent_search(
    answer: &mut Answer,
    model: &dyn ragtester_core::ChatModel,
    query: &str,
    history: &[Message],
    slots: &Slots,
) -> Result<Option<crate::agent::Decision>, OverBudget> {
    let request = crate::agent::decision_request(query, history);
    let _call = Slots::take(&slots.calls, &mut answer.latency.queue_ms).await;
    let started = Instant::now();
    let reply = model.chat(&request).await;
    answer.latency.retrieval_ms += ms(started);
    match reply {
        Ok(response) => {
            answer.usage.add(response.usage);
            match crate::agent::read_decision(&response.content, model) {
                Ok(decision) => Ok(Some(decision)),
                Err(e) => {
                    answer.error = Some(e);
                    Ok(None)
                }
            }
        }
        Err(e) if BudgetExhausted::caused(&e) => Err(OverBudget),
        Err(e) => {
            answer.error = Some(format!(
                "the agent's search decision failed ({}): {}",
                model.name(),
                error_text(&e)
            ));
            Ok(None)
        }
    }
}

/// The `rewrite` history mode's first step: the system's own model rewrites the turn to stand alone from the
/// history. Its time counts as retrieval (it is the query's preparation) and its tokens as the cell's; the
/// rewritten query is recorded. A failed rewrite is the cell's error (Ok(None)); a budget refusal, Err.
async fn rewritten(
    answer: &mut Answer,
    model: &dyn ragtester_core::ChatModel,
    history: &[Message],
    query: &str,
    slots: &Slots,
) -> Result<Option<String>, OverBudget> {
    let request = ChatRequest::new(
        rewrite_messages(history, query),
        TaskHint::Rewrite {
            history: history.to_vec(),
            query: query.to_string(),
        },
    );
    let _call = Slots::take(&slots.calls, &mut answer.latency.queue_ms).await;
    let started = Instant::now();
    let reply = model.chat(&request).await;
    answer.latency.retrieval_ms += ms(started);
    match reply {
        Ok(response) => {
            answer.usage = response.usage;
            let text = response.content.trim().to_string();
            // A model that answers instead of rewriting, or says nothing, leaves the turn as asked.
            let query = if text.is_empty() {
                query.to_string()
            } else {
                text
            };
            answer.rewritten_query = Some(query.clone());
            Ok(Some(query))
        }
        Err(e) if BudgetExhausted::caused(&e) => Err(OverBudget),
        Err(e) => {
            answer.error = Some(format!(
                "query rewriting failed ({}): {}",
                model.name(),
                error_text(&e)
            ));
            Ok(None)
        }
    }
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{Document, DocumentFormat};

    struct Silent;

    #[async_trait::async_trait]
    impl ragtester_llm::RagTarget for Silent {
        fn name(&self) -> String {
            "silent".into()
        }
        async fn ask(&self, _: &TargetRequest<'_>) -> Result<ragtester_llm::TargetReply> {
            anyhow::bail!("never asked in this test")
        }
    }

    #[test]
    fn scoped_negatives_are_put_to_an_external_service_only_when_cleared_corpus_wide() {
        let config = ragtester_core::Configuration::new(
            "offline".into(),
            "none".into(),
            ragtester_core::RetrieverKind::Bm25,
            3,
            Default::default(),
            Default::default(),
        );
        let external = Pipeline {
            config,
            system: System::External {
                target: Arc::new(Silent),
                documents: Arc::new(Vec::new()),
                tracing: None,
            },
        };
        let mut negative = TestCase {
            category: ragtester_core::Category::Negative,
            strategy: ragtester_core::Strategy::NegativeInvented,
            restrict_to: vec!["d".into()],
            ..ragtester_testkit::case("n", "q?", "x")
        };
        assert!(
            skip_reason(&external, &negative).is_some(),
            "unchecked: skipped"
        );
        negative.unanswerable_in_corpus = Some(false);
        assert!(
            skip_reason(&external, &negative).is_some(),
            "answered elsewhere: skipped"
        );
        negative.unanswerable_in_corpus = Some(true);
        assert!(
            skip_reason(&external, &negative).is_none(),
            "cleared corpus-wide: asked"
        );
        negative.unanswerable_in_corpus = None;
        negative.restrict_to.clear();
        assert!(
            skip_reason(&external, &negative).is_none(),
            "a corpus-wide negative: asked"
        );
    }

    #[test]
    fn contexts_are_located_despite_whitespace() {
        let doc = Document::new(
            "d".into(),
            DocumentFormat::Text,
            "d".into(),
            "Intro.\n\nThe valve opens\nat 4.5 bar. End.".into(),
            None,
        );
        let c = locate_context(
            std::slice::from_ref(&doc),
            1,
            "The valve  opens at 4.5 bar.",
        );
        assert_eq!(c.document_id, doc.id);
        assert_eq!(doc.slice(c.start, c.end), "The valve opens\nat 4.5 bar.");
        assert_eq!(locate_context(&[doc], 2, "elsewhere").document_id, "");
    }
}

#[cfg(test)]
mod conversation_tests {
    use super::*;
    use crate::drive::{execute, remember_turn};
    use crate::sink::AnswerSink;
    use ragtester_core::{
        ChatModel, ChatResponse, ChunkingSettings, Configuration, ConversationKind, Document,
        DocumentFormat, RetrieverKind, Turn, TurnStep,
    };
    use ragtester_core::{Latency, Usage};
    use std::sync::Mutex;

    /// Answers `A:<query>`, rewrites to `standalone: <query>` (or fails to, when `fail_rewrites`), and
    /// keeps every answer request it was sent.
    #[derive(Default)]
    struct Recording {
        asked: Mutex<Vec<ChatRequest>>,
        fail_rewrites: bool,
    }

    #[async_trait::async_trait]
    impl ChatModel for Recording {
        fn name(&self) -> String {
            "recording".into()
        }
        async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse> {
            let content = match &request.hint {
                Some(TaskHint::Rewrite { .. }) if self.fail_rewrites => {
                    anyhow::bail!("503 from the rewriting model")
                }
                Some(TaskHint::Rewrite { query, .. }) => format!("standalone: {query}"),
                Some(TaskHint::Answer { query, .. }) => {
                    self.asked.lock().unwrap().push(request.clone());
                    format!("A:{query}")
                }
                _ => anyhow::bail!("not asked in this test"),
            };
            Ok(ChatResponse {
                content,
                usage: Usage::default(),
                cached: false,
                cached_at: None,
                notes: Vec::new(),
            })
        }
    }

    fn case(id: &str, query: &str, turn: Option<usize>) -> TestCase {
        let mut case = TestCase {
            strategy: ragtester_core::Strategy::Conversation,
            ..ragtester_testkit::case(id, query, "x")
        };
        case.turn = turn.map(|index| Turn {
            conversation: "c1".into(),
            index,
            of: 3,
            kind: ConversationKind::FollowUp,
            step: if index == 1 {
                TurnStep::Opening
            } else {
                TurnStep::FollowUp
            },
            standalone: None,
            history: Vec::new(),
        });
        case
    }

    fn pipelines(model: Arc<Recording>) -> Vec<Arc<Pipeline>> {
        let doc = Document::new(
            "d".into(),
            DocumentFormat::Text,
            "d".into(),
            "The pump moves 40 litres a minute. It is serviced every spring.".into(),
            None,
        );
        let chunks =
            Arc::new(ragtester_ingest::chunk_document(&doc, &ChunkingSettings::default()).unwrap());
        let retriever = Arc::new(ragtester_retrieve::Bm25Index::build(&chunks).unwrap());
        [HistoryMode::None, HistoryMode::Prompt, HistoryMode::Rewrite]
            .into_iter()
            .map(|history| {
                let config = Configuration::new(
                    "recording".into(),
                    "none".into(),
                    RetrieverKind::Bm25,
                    1,
                    ChunkingSettings::default(),
                    Default::default(),
                )
                .with_history(history);
                Arc::new(Pipeline {
                    config,
                    system: System::BuiltIn {
                        chunks: chunks.clone(),
                        retriever: retriever.clone(),
                        model: model.clone(),
                    },
                })
            })
            .collect()
    }

    /// What each answer request of `config` was sent, by query: the history messages between the
    /// instruction and the question.
    fn histories(model: &Recording) -> Vec<(String, Vec<String>)> {
        model
            .asked
            .lock()
            .unwrap()
            .iter()
            .map(|r| {
                let Some(TaskHint::Answer { query, .. }) = &r.hint else {
                    unreachable!()
                };
                let n = r.messages.len();
                let history = r.messages[1..n - 1]
                    .iter()
                    .map(|m| m.content.clone())
                    .collect();
                (query.clone(), history)
            })
            .collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn turns_are_asked_in_order_with_the_history_each_mode_gives() {
        let store = crate::sink::InMemory::default();
        let model = Arc::new(Recording::default());
        let pipelines = pipelines(model.clone());
        let cases = vec![
            case("t3", "And when is it serviced?", Some(3)),
            case("single", "How fast is the pump?", None),
            case("t1", "How fast is the pump?", Some(1)),
            case("t2", "How much does it move?", Some(2)),
        ];
        let counts = execute(&pipelines, &cases, &store, 8, None, None, &|_| {})
            .await
            .unwrap();
        assert_eq!((counts.done, counts.errors), (12, 0));
        let asked = histories(&model);
        // No history: every turn alone.
        let alone = |q: &str| asked.iter().any(|(query, h)| query == q && h.is_empty());
        assert!(alone("And when is it serviced?"));
        // In the prompt: the third turn after the first two and the system's answers to them, in order.
        assert!(asked.iter().any(|(q, h)| q == "And when is it serviced?"
            && h == &[
                "How fast is the pump?",
                "A:How fast is the pump?",
                "How much does it move?",
                "A:How much does it move?"
            ]));
        // Rewritten: retrieval and the prompt see the rewritten turn, which the answer records.
        let rewritten = store
            .answer("t3", &pipelines[2].config.id)
            .unwrap()
            .unwrap();
        assert_eq!(
            rewritten.rewritten_query.as_deref(),
            Some("standalone: And when is it serviced?")
        );
        assert_eq!(rewritten.answer, "A:standalone: And when is it serviced?");
        assert!(
            store
                .answer("t1", &pipelines[2].config.id)
                .unwrap()
                .unwrap()
                .rewritten_query
                .is_none(),
            "an opening turn has nothing to be rewritten from"
        );
        assert!(
            store
                .answer("single", &pipelines[1].config.id)
                .unwrap()
                .unwrap()
                .rewritten_query
                .is_none()
        );
    }

    /// A rewrite that fails is the turn's recorded error (never a pass, never an answer to the raw turn);
    /// the next turn is still asked, with the failed turn's question and no answer in its history.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_rewrite_is_the_turn_s_error() {
        let store = crate::sink::InMemory::default();
        let model = Arc::new(Recording {
            fail_rewrites: true,
            ..Default::default()
        });
        let pipelines = vec![pipelines(model.clone())[2].clone()];
        let cases = vec![
            case("t1", "How fast is the pump?", Some(1)),
            case("t2", "How much does it move?", Some(2)),
            case("t3", "And when is it serviced?", Some(3)),
        ];
        let counts = execute(&pipelines, &cases, &store, 2, None, None, &|_| {})
            .await
            .unwrap();
        assert_eq!((counts.done, counts.errors), (3, 2));
        let second = store
            .answer("t2", &pipelines[0].config.id)
            .unwrap()
            .unwrap();
        assert!(second.answer.is_empty());
        assert!(
            second
                .error
                .as_deref()
                .unwrap()
                .contains("query rewriting failed"),
            "{:?}",
            second.error
        );
        assert!(
            store
                .answer("t1", &pipelines[0].config.id)
                .unwrap()
                .unwrap()
                .error
                .is_none()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_resumed_conversation_continues_from_the_stored_turns() {
        let store = crate::sink::InMemory::default();
        let model = Arc::new(Recording::default());
        let pipelines = vec![pipelines(model.clone())[1].clone()];
        let cases = vec![
            case("t1", "How fast is the pump?", Some(1)),
            case("t2", "How much does it move?", Some(2)),
            case("t3", "And when is it serviced?", Some(3)),
        ];
        // A run killed after its first turn: that answer is in the store.
        let mut first = Answer {
            schema_version: ragtester_core::SCHEMA_VERSION,
            case_id: "t1".into(),
            config_id: pipelines[0].config.id.clone(),
            contexts: Vec::new(),
            answer: "40 litres a minute (stored)".into(),
            latency: Latency::default(),
            usage: Usage::default(),
            cached: false,
            cached_at: None,
            error: None,
            rewritten_query: None,
            truncated_from: None,
            context_cut_from: None,
            tool_calls: None,
            simulation: None,
            citations: Vec::new(),
            trace: None,
        };
        store.put_answer(&first).unwrap();
        let counts = execute(&pipelines, &cases, &store, 4, None, None, &|_| {})
            .await
            .unwrap();
        assert_eq!(counts.done, 2, "only the unanswered turns run");
        let asked = histories(&model);
        assert_eq!(asked[0].0, "How much does it move?");
        assert_eq!(
            asked[0].1,
            ["How fast is the pump?", "40 litres a minute (stored)"]
        );
        assert_eq!(asked[1].1.len(), 4);
        // A turn that failed is history without an answer.
        first.error = Some("timeout".into());
        let mut history = Vec::new();
        remember_turn(&mut history, &cases[0], &first);
        assert_eq!(history.len(), 1);
    }
}

#[cfg(test)]
mod whole_document_tests {
    use super::*;
    use ragtester_core::{Chunk, SourceSpan};

    fn chunk(document: &str, start: usize, text: &str) -> Chunk {
        Chunk {
            id: format!("{document}-{start}"),
            document_id: document.into(),
            start,
            end: start + text.chars().count(),
            text: text.into(),
        }
    }

    #[test]
    fn the_whole_documents_are_read_once_in_order_and_cut_to_the_window() {
        // Two documents chunked with an overlap of two chars, listed out of order.
        let chunks = [
            chunk("b", 0, "other document"),
            chunk("a", 4, "efghij"),
            chunk("a", 0, "abcdef"),
            chunk("c", 0, "not this case's"),
        ];
        let mut case = ragtester_testkit::case("q", "Which letters?", "e to j");
        case.document_id = "a".into();
        case.source_spans = ["a", "b"]
            .map(|d| SourceSpan {
                document_id: d.into(),
                start: 0,
                end: 2,
                page: 1,
                hash: None,
            })
            .to_vec();
        let (contexts, cut) = whole_documents(&case, &chunks, None);
        let texts: Vec<&str> = contexts.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, ["abcdef", "ghij", "other document"]);
        assert_eq!((contexts[1].start, contexts[1].end), (6, 10));
        assert_eq!(cut, None);
        // A negative with no source reads the document it was written from.
        case.source_spans.clear();
        let (contexts, _) = whole_documents(&case, &chunks, None);
        assert_eq!(contexts.len(), 2);
        // A window too small for both documents keeps the chunks that fit and says how much there was.
        let long: Vec<Chunk> = (0..40)
            .map(|i| chunk("a", i * 100, &"word ".repeat(20)))
            .collect();
        let (contexts, cut) = whole_documents(&case, &long, Some(FRAME_AND_ANSWER_TOKENS + 400));
        let total: usize = long.iter().map(|c| count_tokens(&c.text)).sum();
        assert_eq!(cut, Some(total as u64));
        let kept: usize = contexts.iter().map(|c| count_tokens(&c.text)).sum();
        assert!(kept <= 300 && !contexts.is_empty(), "{kept}");
    }
}
