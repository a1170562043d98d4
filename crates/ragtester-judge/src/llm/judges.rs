//! What judges an answer. Two kinds: a language model asked with the judge prompt, its JSON reply read
//! and re-asked when unreadable ([`ModelJudge`], over any [`ChatModel`]); and the offline judge, which works
//! its verdict out from the answer's lexical signals in this process (`OfflineModel` as a [`Judge`]). The
//! judging loop, the claim metrics, pairwise comparison and the label benches all go through this trait,
//! so each judge is judged by itself: which one a spec names is decided once, where the spec is read.

use crate::pairwise::PairVerdict;
use anyhow::Result;
use ragtester_core::{
    Answer, ChatModel, ClaimMetrics, Criteria, Message, ModelSpec, Rubric, TestCase, Verdict,
};
use ragtester_offline::OfflineModel;
use std::sync::Arc;

/// A judge's ratings of one answer, before the rules bound them.
pub struct Rated {
    pub criteria: Criteria,
    pub rubric: Rubric,
    /// What the model's provider said about the call (a structured-output fallback, say).
    pub notes: Vec<String>,
}

/// One answer to rate: its case, the conversation's earlier turns, which sample, and the prompts.
pub struct Task<'a> {
    pub case: &'a TestCase,
    pub answer: &'a Answer,
    pub history: &'a [Message],
    pub sample: u32,
    pub prompts: &'a crate::JudgePrompts,
}

#[async_trait::async_trait]
pub trait Judge: Send + Sync {
    /// The spec verdicts record as their judge.
    fn name(&self) -> String;

    /// What its verdicts depend on beyond the request (a model's endpoint or file digest): a judging
    /// session is named by it, so another model behind the same spec starts afresh.
    fn identity(&self) -> String {
        self.name()
    }

    /// Whether it only computes (no model call): a job of such judges runs on every core at once.
    fn in_process(&self) -> bool;

    /// The criteria and rubric of an answer; why none could be had otherwise (raw replies included).
    async fn rate(&self, task: &Task<'_>) -> Result<Rated, String>;

    /// The claim metrics of an answer (`claims.rs`), as this judge splits and checks claims.
    async fn claims(&self, case: &TestCase, answer: &Answer) -> Result<ClaimMetrics>;

    /// How claim metrics it measures are labelled (`lexical`, or the model's spec).
    fn claims_method(&self) -> String;

    /// Which of two answers to one case is better (neither an error), with each one's verdict of this
    /// run where the comparison reads them.
    async fn compare(
        &self,
        case: &TestCase,
        a: (&Answer, Option<&Verdict>),
        b: (&Answer, Option<&Verdict>),
    ) -> Result<PairVerdict, String>;

    /// How its comparisons are made (`claims`: from the verdicts; `both orders`: a model asked twice).
    fn compare_method(&self) -> &'static str;

    /// Whether [`Judge::compare`] reads the verdicts a run already has.
    fn compares_verdicts(&self) -> bool;

    /// Whether `answer` met a simulated user's goal (`want`), stating the case's expected answer beyond
    /// what the user said (`user_said`), and why; None where this judge leaves that to the comparison of
    /// facts (`goals.rs`), as the offline judge does.
    async fn settles(
        &self,
        _case: &TestCase,
        _want: &str,
        _user_said: &str,
        _answer: &str,
    ) -> Option<Result<(bool, String), String>> {
        None
    }

    /// Whether it compares the two answers of a labelled preference by asking (a model) rather than by
    /// their verdicts' scores.
    fn asks_preferences(&self) -> bool {
        !self.compares_verdicts()
    }
}

/// The judge a spec names — the one place a spec becomes a judge: `offline` works its verdicts out in this
/// process; any other spec is the model `model` builds, asked with the judge prompt.
pub fn judge_for(
    spec: &str,
    model: impl FnOnce() -> Result<Arc<dyn ChatModel>>,
) -> Result<Arc<dyn Judge>> {
    Ok(match ModelSpec::parse(spec)? {
        ModelSpec::Offline => Arc::new(OfflineModel),
        _ => Arc::new(ModelJudge::new(model()?)),
    })
}

/// A language model as a judge.
pub struct ModelJudge {
    model: Arc<dyn ChatModel>,
}

impl ModelJudge {
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        Self { model }
    }

    /// A judge of a model a test or a caller owns outright.
    pub fn of(model: impl ChatModel + 'static) -> Self {
        Self::new(Arc::new(model))
    }
}

#[async_trait::async_trait]
impl Judge for ModelJudge {
    fn name(&self) -> String {
        self.model.name()
    }

    fn identity(&self) -> String {
        self.model.identity()
    }

    fn in_process(&self) -> bool {
        false
    }

    async fn rate(&self, task: &Task<'_>) -> Result<Rated, String> {
        crate::ask_model(self.model.as_ref(), task).await
    }

    async fn claims(&self, case: &TestCase, answer: &Answer) -> Result<ClaimMetrics> {
        crate::claims::measure(self.model.as_ref(), case, answer).await
    }

    fn claims_method(&self) -> String {
        self.model.name()
    }

    async fn compare(
        &self,
        case: &TestCase,
        (a, _): (&Answer, Option<&Verdict>),
        (b, _): (&Answer, Option<&Verdict>),
    ) -> Result<PairVerdict, String> {
        crate::pairwise::llm_compare(self.model.as_ref(), case, &a.answer, &b.answer).await
    }

    fn compare_method(&self) -> &'static str {
        "both orders"
    }

    async fn settles(
        &self,
        case: &TestCase,
        want: &str,
        user_said: &str,
        answer: &str,
    ) -> Option<Result<(bool, String), String>> {
        Some(crate::goals::ask_settled(self.model.as_ref(), case, want, user_said, answer).await)
    }

    fn compares_verdicts(&self) -> bool {
        false
    }
}

/// The offline judge: ratings from the typed task alone (what its JSON reply to the prompt would say,
/// without rendering a prompt, a schema or a reply), lexical claim checks, and comparisons of the run's
/// verdicts.
#[async_trait::async_trait]
impl Judge for OfflineModel {
    fn name(&self) -> String {
        ChatModel::name(self)
    }

    fn in_process(&self) -> bool {
        true
    }

    async fn rate(&self, task: &Task<'_>) -> Result<Rated, String> {
        let contexts = task
            .answer
            .contexts
            .iter()
            .map(|c| c.text.clone())
            .collect();
        let hint = crate::judge_hint(task.case, task.answer, contexts, task.history);
        ragtester_offline::ratings(&hint)
            .map(|(criteria, rubric)| Rated {
                criteria,
                rubric,
                notes: Vec::new(),
            })
            .map_err(|e| format!("{e:#}"))
    }

    async fn claims(&self, case: &TestCase, answer: &Answer) -> Result<ClaimMetrics> {
        Ok(crate::claims::lexical(case, answer))
    }

    fn claims_method(&self) -> String {
        "lexical".into()
    }

    async fn compare(
        &self,
        case: &TestCase,
        (a, va): (&Answer, Option<&Verdict>),
        (b, vb): (&Answer, Option<&Verdict>),
    ) -> Result<PairVerdict, String> {
        match (va, vb) {
            (Some(va), Some(vb)) => crate::pairwise::offline_compare(
                &case.expected_answer,
                (&a.answer, va),
                (&b.answer, vb),
            )
            .ok_or_else(|| "a verdict of the pair is an error".to_string()),
            _ => Err("the pair is not judged yet: run `ragtester judge` first".into()),
        }
    }

    fn compare_method(&self) -> &'static str {
        "claims"
    }

    fn compares_verdicts(&self) -> bool {
        true
    }
}
