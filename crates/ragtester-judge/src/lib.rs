//! Stage 4: the oracle. For every answer, rule metrics (keyword recall in context and answer, hit, MRR,
//! nDCG over source spans, refusal, answer language) and a judge's verdict: the paper's five criteria with
//! its fail rule, and the spec's 1–5 rubric. Pass or fail is computed here from the criteria by the paper's
//! rule, never taken from the judge's say-so.
//!
//! A judge reply that cannot be read after a bounded re-ask is a `judge_error` with the raw reply kept; an
//! answer whose execution failed is an `exec_error`. Neither is ever a pass, a fail or a NaN.
//! Every failed or errored cell gets one primary cause with its evidence (`attribution.rs`).
//! The judge sees the case, the answer and the retrieved text; it never sees a configuration's internals.
//!
//! # Map
//!
//! The modules are grouped by job in folders — `evidence/` (rule metrics and the rules, claims, citations,
//! answer markers, the answer's language, attribution), `models/` (signals, meaning, profiles, fits, graded
//! scores), `people/` (agreement, calibration, audits, the oracle summary and panels, statistics, the
//! labelled benchmark), `llm/` (judges, prompts, reply parsing, pairwise), `agents/` (tools, goals) — and each
//! keeps its path at the crate's root, as named below. A rule that fails an answer its judge passed records
//! itself on the verdict (`overrode_judge`).
//!
//! Rule metrics (keyword recall in context and answer, hit, MRR, nDCG over source spans, refusal, answer
//! language, injection canary) and the rules that bound every judge's verdict (`rules.rs`: criteria that do
//! not apply left out of the mean; the negative-case rule — a refusal of an unanswerable question passes with
//! correctness 5, an answer to it fails; a refusal of an answerable question, a followed injection or an
//! answer in another language fails whatever the judge rated, and so does one that gives a superseded value
//! or hides that the sources disagree — core's `SourceConflict` on the case —, one rated off its question
//! that gives none of the expected answer, and one that copies a sentence of its sources with a figure, a
//! name or a negation changed — `ragtester_text::contradiction`), checked citations
//! (`citations.rs`: each sentence that cites passages by number against the passages it cites; precision and
//! recall in the rule metrics), the judge prompts (`prompts/judge.{en,zh}.j2`, minijinja, overridable from a
//! folder; `prompt.rs` also holds the reply's JSON schema), tolerant parsing with bounded re-asks
//! (`parse.rs`), and the paper's fail rule (mean < 0.5 or faithfulness False) applied here, not taken from
//! the judge. Repeated samples and panels: `panel.rs` (majority or mean consensus), `oracle.rs` (per-judge
//! counts, agreement, intervals → core's `OracleSummary`), `stats.rs` (Cohen's and Fleiss' κ, Wilson and t
//! intervals, McNemar exact, paired bootstrap, Cochran sample size; statrs for quantiles), `audit.rs`
//! (drawing and scoring an audit sample) and `benchmark.rs` (`bench oracle`: answers of known label built
//! from labelled questions, judged through the same path as a run, scored as precision on reported failures,
//! recall and accuracy per language and kind). `attribution.rs`: one primary cause per failed or errored cell
//! (core's `FailureCause` and `Attribution`), with its evidence — errors, the canary, conflicting sources
//! (stale source, conflict hidden), refusal and language rules, then the source spans against the retrieved
//! passages' offsets and ranks (retrieval miss, chunking, ranking), then the citations (misattributed), then
//! the judge's criteria (unfaithful, incomplete, off target); the judge stage stores it on every verdict.
//! `tools.rs`: an agent's tool calls against its case's expected tools (precision, recall and F1 matched by
//! name, arguments held, order, repeated calls, its own searches scored as retrieval); the first mistake —
//! a wrong tool, a missing search, a wrong argument — fails the case by rule and is its cause. `goals.rs`:
//! a simulated user's conversation judged turn by turn (goal reached and at which turn, contradictions of
//! the passages, the user's language kept, refusals kept where the documents cannot meet the goal); a goal
//! not reached fails the case by rule.
//! `graded.rs`: a judge's graded score of one answer (verdict, then criteria and claims as tie-breakers; for
//! the offline judge its closeness to the reference), read by both of the next two. `agreement.rs`: judges
//! against people (`bench oracle --labels`) — a labels file of verdicts, scores or preferences between two
//! answers, precision/recall on failures, Cohen's κ with a bootstrap interval, Pearson and Spearman with
//! Fisher intervals, per language. `pairwise.rs`: which of two answers is better on correctness and
//! completeness — the offline judge's claim-level comparison, an LLM judge asked in both orders. `judges.rs`:
//! the `Judge` trait every judging path goes through (rating an answer, its claim metrics, comparing two
//! answers), with two kinds: `ModelJudge`, any `ChatModel` asked with the judge prompt (reply read, re-asked
//! when unreadable), and the offline judge (`OfflineModel` as a `Judge`), which works its ratings
//! (`ragtester_offline::ratings`), claim judgements (`judge_claims`, every text tokenized once a cell) and
//! comparisons (from the run's verdicts) out directly — what its replies to the prompts would say, which
//! tests hold it to. Which kind a spec names is decided once (`judge_for`); nothing branches on what kind of
//! model a judge wraps. A job of judges that only compute (and lexical or no claims) is CPU work alone:
//! `JudgeJob::run_directly` makes its verdicts on every core (rayon), in the order the one-task path gives
//! them. `pass.rs` is the judging loop over a run's answers, shaped as execution's: batches of
//! 16 × concurrency, each turn with the history its conversation's earlier answers make, fresh verdicts
//! committed to the caller's `VerdictSink` as they are made (resume) and each batch written through it.
//!
//! Scores and profiles: every criterion carries a score in [0, 1] its rating is a threshold on (core's
//! `Criterion::scored`, `Rating::of_score`), every verdict an overall `score` and the `profile` hash that
//! made it. `signals.rs` turns a judged answer into named numbers (the judge's verdict, criteria, rubric and
//! claims; agreement with the reference in terms, negation and figures; refusal; length; grounding in the
//! passages), `meaning.rs` adds semantic ones from an embedder (per answer sentence, its best match among the
//! reference's and the passages' sentences; every text embedded once per process). `profile.rs` holds a judge
//! profile — logistic models per language and pooled, the criteria people scored, the held-out agreement
//! measured for it — read and checked from JSON (the built-in one in `profiles/offline.json`), applied by
//! `Scoring` after each fresh verdict's claims (`JudgeJob::scoring`; a rescored criterion settles pass and
//! fail again, `rules::settle`). `fit.rs`: regularised logistic regression by Newton's method (nalgebra's
//! Cholesky) over verdicts, scores (soft targets) and preferences (Bradley–Terry pairs) in one objective,
//! pulled towards a prior combination with a strength chosen by inner cross-validation, each example weighted
//! (`fit_weighted`), and `fit_across_sets`, which keeps the combination or one signal alone by how well each
//! predicts a label set left out; `calibrate.rs`: every labels file weighing alike, folds by question,
//! held-out judgements, the profile fitted on all labels and its `MeasuredAgreement` (core's `oracle.rs`,
//! which the report states), and `best_signals` (the single signal that follows people best, per figure).
//! Where a model checked the answer's claims, `rate_from_claims` rates faithfulness and completeness from
//! them.
//!
//! A turn of a conversation is judged with its history (`JudgeJob::histories`, shown by the `judge-v4`
//! templates); attribution names `lost_context` for a follow-up that lost its referent and
//! `contradicts_earlier` for an answer contradicting an earlier one (`attribution::contradiction`).

// The crate grouped by job; each module keeps its path at the crate's root (`crate::rules`, `ragtester_judge::
// benchmark`), so callers name what a module does, not where it sits.
mod agents;
mod evidence;
mod llm;
mod models;
pub mod pass;
mod people;

pub use agents::{goals, tools};
pub use evidence::{attribution, citations, claims};
pub(crate) use evidence::{language, markers, rules};
pub(crate) use llm::prompt;
pub use llm::{judges, pairwise, parse};
pub use models::{fit, graded, meaning, profile, signals};
pub(crate) use people::panel;
pub use people::{agreement, audit, benchmark, calibrate, oracle, stats};

pub use judges::{Judge, ModelJudge, judge_for};
pub use panel::{PanelMethod, consensus};

pub use parse::{JudgeReply, parse_judge_reply};
pub use prompt::{JUDGE_PROMPT_VERSION, JudgePrompts};
pub use rules::{OFF_QUESTION_PREFIX, bound_verdict, rule_failure, rule_metrics};

use futures::StreamExt;
use ragtester_core::{
    Answer, ChatModel, ChatRequest, ReplyFormat, TaskHint, TestCase, Verdict, VerdictStatus,
};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many times an unreadable judge reply is asked again before it becomes a judge error.
pub const MAX_REASKS: usize = 1;

/// Judge every answer with every judge, `samples` times each (sample indices 0…samples−1, which reach the
/// provider's cache key above temperature 0). Verdicts come back in answer order, then judge, then sample.
pub async fn judge_all(
    cases: &[TestCase],
    answers: &[Answer],
    judges: &[Arc<dyn Judge>],
    samples: u32,
    concurrency: usize,
    prompts: &JudgePrompts,
) -> Vec<Verdict> {
    let job = JudgeJob {
        cases,
        answers,
        judges,
        samples,
        concurrency,
        prompts,
        claims: None,
        histories: None,
        scoring: None,
    };
    job.run(&[], &|_, _, _| {}).await
}

/// Everything one judging pass covers.
pub struct JudgeJob<'a> {
    pub cases: &'a [TestCase],
    pub answers: &'a [Answer],
    pub judges: &'a [Arc<dyn Judge>],
    pub samples: u32,
    pub concurrency: usize,
    pub prompts: &'a JudgePrompts,
    /// The model that splits and checks claims (`claims.rs`), once per answer on the first judge's first
    /// sample; None for no claim metrics.
    pub claims: Option<&'a dyn Judge>,
    /// For turns of conversations: the earlier turns each was asked after (keyed by case and
    /// configuration), shown to the judge.
    pub histories: Option<&'a Histories>,
    /// The profile that scores verdicts (and the model of meaning it reads); None leaves each verdict the
    /// judge's own uncalibrated score.
    pub scoring: Option<&'a Scoring>,
}

/// How verdicts get their overall score: a judge profile, and the model of meaning its semantic signals
/// need.
pub struct Scoring {
    pub profile: profile::JudgeProfile,
    pub meaning: Option<meaning::Meaning>,
}

impl Scoring {
    /// The built-in profile of the offline judge, lexical signals alone.
    pub fn builtin() -> Self {
        Self {
            profile: profile::JudgeProfile::builtin(),
            meaning: None,
        }
    }

    /// Score a fresh verdict: by the profile where it is the profile's judge's (criteria it models
    /// rescored, pass and fail settled again), by the judge's own graded opinion otherwise.
    pub fn score(&self, case: &TestCase, answer: &Answer, verdict: &mut Verdict) {
        if verdict.status != VerdictStatus::Ok {
            return;
        }
        if verdict.judge != self.profile.judge {
            verdict.score = profile::unprofiled_score(verdict);
            return;
        }
        let signals = signals::measure(case, answer, verdict, self.meaning.as_ref());
        if self.profile.apply(&case.language, &signals, verdict) {
            rules::settle(case, verdict);
        }
    }
}

/// A conversation's earlier turns (questions and the system's answers, oldest first) per (case id,
/// configuration id) of a later turn.
pub type Histories = std::collections::HashMap<(String, String), Vec<ragtester_core::Message>>;

impl JudgeJob<'_> {
    /// How many verdicts the job makes.
    pub fn len(&self) -> usize {
        self.answers.len() * self.judges.len() * self.samples.max(1) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Judge every (answer, judge, sample) that `done` does not already hold; `made` is called with each
    /// verdict the moment it exists, whether it is new (to commit it) or taken from `done`, and the number
    /// of verdicts so far. Returns every verdict, `done`'s included, in answer, judge, sample order.
    pub async fn run(
        &self,
        done: &[Verdict],
        made: &(dyn Fn(&Verdict, bool, usize) + Sync),
    ) -> Vec<Verdict> {
        let counted = AtomicUsize::new(0);
        futures::stream::iter(self.plan(done))
            .map(|item| self.verdict(item, made, &counted))
            .buffered(self.concurrency.max(1))
            .collect()
            .await
    }

    /// Whether every verdict of this job is worked out in this process, without a model call: heuristic
    /// judges, and lexical or no claim metrics. Such a job is CPU work alone, which
    /// [`JudgeJob::run_directly`] spreads over the cores.
    pub fn runs_directly(&self) -> bool {
        self.judges.iter().all(|j| j.in_process()) && self.claims.is_none_or(|c| c.in_process())
    }

    /// [`JudgeJob::run`] for a job that [`JudgeJob::runs_directly`]: the same verdicts in the same order,
    /// made on every core (rayon's pool). Blocks the calling thread until the last one is made.
    pub fn run_directly(
        &self,
        done: &[Verdict],
        made: &(dyn Fn(&Verdict, bool, usize) + Sync),
    ) -> Vec<Verdict> {
        assert!(
            self.runs_directly(),
            "a job that calls models runs through `run`"
        );
        let counted = AtomicUsize::new(0);
        self.plan(done)
            .into_par_iter()
            // Never pending: a heuristic judge and the lexical claim checker only compute.
            .map(|item| futures::executor::block_on(self.verdict(item, made, &counted)))
            .collect()
    }

    /// Every (answer, judge, sample) of the job in answer, judge, sample order, with its case and the
    /// verdict `done` already holds for it.
    fn plan<'j>(&'j self, done: &[Verdict]) -> Vec<Planned<'j>> {
        let key = |case: &str, config: &str, judge: &str, sample: u32| {
            (
                case.to_string(),
                config.to_string(),
                judge.to_string(),
                sample,
            )
        };
        let earlier: HashMap<_, &Verdict> = done
            .iter()
            .map(|v| (key(&v.case_id, &v.config_id, &v.judge, v.sample), v))
            .collect();
        let by_id: HashMap<&str, &TestCase> =
            self.cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let mut plan = Vec::with_capacity(self.len());
        for answer in self.answers {
            let case = by_id.get(answer.case_id.as_str()).copied();
            for (judge_index, judge) in self.judges.iter().enumerate() {
                let name = judge.name();
                for sample in 0..self.samples.max(1) {
                    let before = earlier
                        .get(&key(&answer.case_id, &answer.config_id, &name, sample))
                        .map(|v| (*v).clone());
                    plan.push(Planned {
                        case,
                        answer,
                        judge_index,
                        judge,
                        sample,
                        before,
                    });
                }
            }
        }
        plan
    }

    /// One planned verdict: the one `done` held, or a new one (with claim metrics on the first judge's
    /// first sample); `made` hears of it either way.
    async fn verdict(
        &self,
        item: Planned<'_>,
        made: &(dyn Fn(&Verdict, bool, usize) + Sync),
        counted: &AtomicUsize,
    ) -> Verdict {
        let fresh = item.before.is_none();
        let verdict = match item.before {
            Some(v) => v,
            None => {
                let (case, answer) = (item.case, item.answer);
                let history = self
                    .histories
                    .and_then(|h| h.get(&(answer.case_id.clone(), answer.config_id.clone())))
                    .map_or(&[][..], Vec::as_slice);
                let mut v = judge_sample(
                    case,
                    answer,
                    item.judge.as_ref(),
                    (item.sample, self.prompts),
                    history,
                )
                .await;
                if let (Some(model), Some(case), 0, 0) =
                    (self.claims, case, item.judge_index, item.sample)
                {
                    v.claims = claims::claim_metrics(model, case, answer).await;
                    if rate_from_claims(&mut v) {
                        rules::settle(case, &mut v);
                    }
                }
                match (self.scoring, case) {
                    (Some(scoring), Some(case)) => scoring.score(case, answer, &mut v),
                    _ => v.score = profile::unprofiled_score(&v),
                }
                v
            }
        };
        let n = counted.fetch_add(1, Ordering::Relaxed) + 1;
        made(&verdict, fresh, n);
        verdict
    }
}

/// Faithfulness and completeness rated from the claims a model checked, where it checked them: the share of
/// the answer's claims its passages support, and of the expected answer's claims it states, are stronger
/// evidence than one rating of the whole answer (on long answers people rated, claim-level faithfulness
/// follows them where the holistic criterion does not). The judge's own rating stays in the reason. Lexical
/// claims (sentences and shared terms) are no stronger than the ratings they would replace, and leave them
/// be. Returns whether a criterion changed, so the caller settles pass and fail again.
pub(crate) fn rate_from_claims(verdict: &mut Verdict) -> bool {
    let (Some(claims), Some(criteria)) = (verdict.claims.as_ref(), verdict.criteria.as_mut())
    else {
        return false;
    };
    if verdict.status != VerdictStatus::Ok || claims.method == "lexical" || claims.error.is_some() {
        return false;
    }
    let mut changed = false;
    let mut rate =
        |criterion: &mut ragtester_core::Criterion, share: Option<f64>, of: &str, n: usize| {
            let Some(share) = share.filter(|s| s.is_finite()) else {
                return;
            };
            let own = format!("{:?}: {}", criterion.rating, criterion.reason);
            *criterion = ragtester_core::Criterion::scored(
                share.clamp(0.0, 1.0),
                format!(
                    "{:.0}% of {n} {of} (claim-level; the judge's own rating: {own})",
                    share * 100.0
                ),
            );
            changed = true;
        };
    rate(
        &mut criteria.faithfulness,
        claims.faithfulness,
        "answer claims supported by the passages",
        claims.answer_claims,
    );
    rate(
        &mut criteria.completeness,
        claims.claim_recall,
        "expected claims the answer states",
        claims.expected_claims,
    );
    changed
}

/// One verdict a job will make or take from what was done before.
struct Planned<'j> {
    case: Option<&'j TestCase>,
    answer: &'j Answer,
    judge_index: usize,
    judge: &'j Arc<dyn Judge>,
    sample: u32,
    before: Option<Verdict>,
}

pub async fn judge_one(case: Option<&TestCase>, answer: &Answer, judge: &dyn Judge) -> Verdict {
    judge_sample(case, answer, judge, (0, &JudgePrompts::default()), &[]).await
}

/// A verdict on `answer` with nothing decided yet.
fn unjudged(answer: &Answer, judge: String, sample: u32) -> Verdict {
    blank_verdict(&answer.case_id, &answer.config_id, judge, sample)
}

/// A verdict on one cell by one judge's sample, with nothing decided or measured.
pub(crate) fn blank_verdict(case_id: &str, config_id: &str, judge: String, sample: u32) -> Verdict {
    Verdict {
        sample,
        schema_version: ragtester_core::SCHEMA_VERSION,
        case_id: case_id.to_string(),
        config_id: config_id.to_string(),
        judge,
        status: VerdictStatus::Ok,
        criteria: None,
        criteria_mean: None,
        rubric: None,
        metrics: Default::default(),
        passed: None,
        error: None,
        notes: Vec::new(),
        rule_failure: None,
        overrode_judge: None,
        claims: None,
        attribution: None,
        score: None,
        profile: None,
        row_id: None,
    }
}

/// The typed task the offline judge reads.
pub(crate) fn judge_hint(
    case: &TestCase,
    answer: &Answer,
    contexts: Vec<String>,
    history: &[ragtester_core::Message],
) -> TaskHint {
    TaskHint::Judge {
        query: case.query.clone(),
        expected_answer: case.expected_answer.clone(),
        keywords: case.keywords.clone(),
        answer: answer.answer.clone(),
        contexts,
        expects_refusal: case.expects_refusal(),
        must_not_contain: case.must_not_contain.clone(),
        false_premise: case.false_premise.clone(),
        history: history.to_vec(),
    }
}

/// What a judge is asked about one answer: the prompt, the typed hint, and the verdict's schema.
fn judge_request(
    case: &TestCase,
    answer: &Answer,
    prompts: &JudgePrompts,
    sample: u32,
    history: &[ragtester_core::Message],
) -> ChatRequest {
    let contexts: Vec<String> = answer.contexts.iter().map(|c| c.text.clone()).collect();
    let messages = prompts.messages(case, &answer.answer, &contexts, history);
    let mut request = ChatRequest::new(messages, judge_hint(case, answer, contexts, history));
    request.format = ReplyFormat::Schema(prompt::judge_schema());
    request.sample = sample;
    request
}

/// One sample of one judge's verdict on one answer.
pub async fn judge_sample(
    case: Option<&TestCase>,
    answer: &Answer,
    judge: &dyn Judge,
    (sample, prompts): (u32, &JudgePrompts),
    history: &[ragtester_core::Message],
) -> Verdict {
    let mut verdict = unjudged(answer, judge.name(), sample);
    let Some(case) = case else {
        verdict.status = VerdictStatus::JudgeError;
        verdict.error = Some(format!(
            "answer refers to case {} which is not in the suite",
            answer.case_id
        ));
        return verdict;
    };
    verdict.metrics = rule_metrics(case, answer);
    verdict.row_id = case.row_id.clone();
    if let Some(error) = &answer.error {
        verdict.status = VerdictStatus::ExecError;
        verdict.error = Some(error.clone());
        return verdict;
    }
    if answer
        .simulation
        .as_ref()
        .is_some_and(|s| s.ended.is_none())
    {
        verdict.status = VerdictStatus::ExecError;
        verdict.error = Some(
            "the simulated conversation was cut off (a spent budget or a killed run): run again with \
             --resume to finish it"
                .into(),
        );
        return verdict;
    }
    // A model named as judge decides which answer met a simulated user's goal; the rules then read it.
    match goals::settled_by_judge(judge, case, answer).await {
        Ok(Some(settling)) => {
            verdict.metrics.goal = goals::goal_metrics_settled(case, answer, Some(&settling));
        }
        Ok(None) => {}
        Err(why) => {
            verdict.status = VerdictStatus::JudgeError;
            verdict.error = Some(format!("deciding the simulated user's goal: {why}"));
            return verdict;
        }
    }
    let task = judges::Task {
        case,
        answer,
        history,
        sample,
        prompts,
    };
    match judge.rate(&task).await {
        Ok(rated) => {
            verdict.criteria = Some(rated.criteria);
            verdict.rubric = Some(rated.rubric);
            verdict.notes.extend(rated.notes);
            bound_verdict(case, &mut verdict);
        }
        Err(why) => {
            verdict.status = VerdictStatus::JudgeError;
            verdict.error = Some(why);
        }
    }
    verdict
}

/// A model's ratings: the judge prompt with the verdict's schema, its reply read, an unreadable one asked
/// again with what was wrong with it.
pub(crate) async fn ask_model(
    model: &dyn ChatModel,
    task: &judges::Task<'_>,
) -> Result<judges::Rated, String> {
    let (case, answer) = (task.case, task.answer);
    let mut request = judge_request(case, answer, task.prompts, task.sample, task.history);
    let mut problems = Vec::new();
    for _attempt in 0..=MAX_REASKS {
        match model.chat(&request).await {
            Err(e) => problems.push(format!(
                "judge call failed: {}",
                ragtester_core::secrets::error_text(&e)
            )),
            Ok(response) => match parse_judge_reply(&response.content) {
                Ok(reply) => {
                    return Ok(judges::Rated {
                        criteria: reply.criteria,
                        rubric: reply.rubric,
                        notes: response.notes.clone(),
                    });
                }
                Err(e) => {
                    // Ask again with the reply and what was wrong with it: a different request, so neither
                    // the cache nor a deterministic model hands back the same unreadable text.
                    request.messages.push(ragtester_core::Message {
                        role: ragtester_core::Role::Assistant,
                        content: response.content.clone(),
                    });
                    request
                        .messages
                        .push(prompt::reask_message(&e, case.language == "zh"));
                    problems.push(format!("{e}; raw reply: {}", response.content));
                }
            },
        }
    }
    Err(problems.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtester_core::{ClaimMetrics, Criteria, Criterion, Rating};

    fn rated(method: &str) -> Verdict {
        let mut v = blank_verdict("c", "k", "openai:judge".into(), 0);
        let fine = || Criterion::rated(Rating::True, "fine");
        v.criteria = Some(Criteria {
            faithfulness: fine(),
            relevance: fine(),
            completeness: fine(),
            clarity: fine(),
            keyword_match: fine(),
        });
        v.claims = Some(ClaimMetrics {
            method: method.into(),
            answer_claims: 4,
            expected_claims: 2,
            faithfulness: Some(0.25),
            claim_recall: Some(0.5),
            ..Default::default()
        });
        v
    }

    #[test]
    fn claims_a_model_checked_rate_faithfulness_and_completeness() {
        let mut v = rated("openai:judge");
        assert!(rate_from_claims(&mut v));
        let c = v.criteria.as_ref().unwrap();
        assert_eq!(c.faithfulness.rating, Rating::False, "{:?}", c.faithfulness);
        assert!(c.faithfulness.reason.contains("25% of 4 answer claims"));
        assert!(
            c.faithfulness
                .reason
                .contains("the judge's own rating: True")
        );
        assert_eq!(c.completeness.rating, Rating::Partially);
        assert_eq!(c.relevance.rating, Rating::True);
        // Lexical claims, or claims that could not be checked, leave the judge's ratings be.
        let mut lexical = rated("lexical");
        assert!(!rate_from_claims(&mut lexical));
        let mut failed = rated("openai:judge");
        failed.claims.as_mut().unwrap().error = Some("unreadable".into());
        assert!(!rate_from_claims(&mut failed));
        assert_eq!(failed.criteria.unwrap().faithfulness.rating, Rating::True);
    }
}
