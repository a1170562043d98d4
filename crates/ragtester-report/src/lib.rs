//! Reports: the summary model computed from cases, configurations, answers and verdicts (per configuration,
//! category, generator, language and document origin; the weakest category; failure causes; bad cases), and
//! its renderings: a plain-text table, `summary.json`, a single-file HTML report that opens offline, a CSV of
//! every verdict and JUnit XML.
//!
//! This crate reads records and writes text; it runs no model and knows no terminal (the binary prints).
//!
//! # Map
//!
//! The summary model (per configuration, category, generator, strategy, language and document origin; weakest
//! category; failure causes; bad cases; pass rate with errors counted against it; cells not judged and why;
//! the refusal confusion matrix in `refusals.rs`; latency over live answers with replayed ones counted apart;
//! skipped cells), the gates over it (`gate.rs`: pass rate overall and per category, error rate,
//! over-refusal, hallucination), a text table, `summary.json`, the single-file HTML report (minijinja,
//! auto-escaped; inline SVG charts; no script; the pairwise win rates and, after an audit, the pass rates it
//! corrects — `corrected.rs`, prediction-powered after ARES, neighbours that overlap flagged), a CSV of every
//! verdict and JUnit XML (`csv_junit.rs`, quick-xml), and the comparison of two runs cell by cell (`diff.rs`:
//! regressions, fixes, pass-rate deltas; `reference.rs`: what the retrieval is worth — each configuration
//! against the `oracle` reference of the same model, chunking and history (headroom with a Newcombe interval,
//! failures it fixes), against the whole documents (`full-doc`: pass rate, prompt tokens, latency and cost of
//! each) and the closed book's (`none`) leaky cases; exec gives those three reference points their passages
//! from the case, not an index (the whole documents cut to the model's `context_window()` where it knows
//! one). `paired.rs`: McNemar and a bootstrap interval on the cases two verdict lists share, with the judge
//! crate's statistics, also behind the summary's comparison with the best configuration); the oracle and
//! audit sections when `oracle.json` / `audit.json` exist. `conversations.rs`: conversations as units per
//! configuration (passed whole, referent kept, refusal kept, correction and language switch followed,
//! consistency) and the failed ones with their turns; `diff.rs` also reports conversations that stopped or
//! started passing whole. `diagnosis.rs`: causes × configuration with advice, and findings — dominant causes,
//! embedders' unknown-token and truncation shares (from the run's `embedders.json`), a hybrid retriever below
//! its best part per question language — shared with `bench retrieval`.
//!
//! `console.rs`: the one screen a command prints (best and worst configurations, top causes with advice, the
//! trust line; `table.rs` keeps every table for `report --full`). `repeats.rs`: a configuration answered N
//! times (`run --repeat N`) folded — passes out of N per case, flaky cases, the pass rate under a policy (all,
//! at least k, the mean) that `gate.rs` holds `--fail-under` to. `diff.rs` matches cases by lineage and
//! configurations without their repeat, sets apart the cases the suites differ on (rewritten, retired,
//! new, stale), and calls each cell by its passes k of N before against j of M after — regressed, improved,
//! inconclusive or flaky by Fisher's exact test (`ragtester_judge::stats::fisher_greater`) with Holm's
//! correction across the diff's cells that could reach significance (Tarone's family), a configuration whose
//! pooled passes moved beyond chance having its cells within 5 % called; one run against one run by its plain outcome; a diff of no cell says
//! so first; `diff_runs_paired` compares a configuration of one run as another of the next (`--compare`);
//! `diff_console.rs` prints a diff on one screen (the configurations that moved, regressions and fixes first).
//! `layout.rs`: the HTML report's charts and wide tables laid out to fit 1,280 px — bars as rows with an
//! axis, a wide configuration axis turned into rows or shown by its top entries, lines said once. `markdown.rs`: a run's summary and a diff in Markdown for a pull request,
//! lists halved until the text fits GitHub's comment limit. `tools.rs`: an agent's tool-call figures per
//! configuration (F1, arguments, order, repeated calls, its searches' hit rate, mistakes by kind). `goals.rs`:
//! simulated users per configuration (goals reached, turns to the goal, refusals and language kept, endings);
//! bad cases carry a simulated conversation turn by turn; `bad_groups.rs` shows them in the HTML one card per
//! case, naming every configuration it failed under.

mod axes;
mod bad_groups;
mod cause;
mod claims;
mod console;
mod conversations;
mod corrected;
mod csv_junit;
mod diagnosis;
mod diff;
mod diff_console;
mod gate;
mod glance;
mod goals;
mod html;
mod layout;
mod markdown;
mod paired;
mod percent;
mod reference;
mod refusals;
mod repeats;
mod summary;
mod table;
#[cfg(test)]
mod testdata;
mod tools;

pub use cause::{attribution, failure_cause};
pub use claims::ClaimSummary;
pub use console::{fold, render_summary};
pub use conversations::{ConversationSummary, FailedConversation, Rate, TurnRow};
pub use csv_junit::{render_csv, render_junit, write_csv, write_junit};
pub use diagnosis::{
    CauseRow, Diagnosis, Finding, FusionPair, RetrievalFigures, Severity, describe,
    embedder_findings, fusion_finding,
};
pub use diff::{
    Outcome, RunDiff, RunSide, SuiteChange, SuiteChangeKind, diff_runs, diff_runs_paired,
};
pub use diff_console::render_diff;
pub use gate::{Gates, check_gates, parse_category_gate};
pub use html::render_html;
pub use markdown::{GITHUB_COMMENT_LIMIT, diff_markdown, summary_markdown};
pub use reference::{Headroom, Leaky, LeakyCase};
pub use refusals::RefusalMatrix;
pub use repeats::{FlakyCase, RepeatPolicy, RepeatedConfig, fold_repeats};
pub use summary::{
    Attribution, BadCase, ConfigSummary, ErrorReason, FailureCause, GroupSummary, NotJudged,
    ReportInputs, Summary, is_bad_case, primary_verdicts, summarise,
};
pub use table::{render_audit, render_table};
