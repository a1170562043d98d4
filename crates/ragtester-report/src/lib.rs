//! Reports: the summary model computed from cases, configurations, answers and verdicts (per configuration,
//! category, generator, language and document origin; the weakest category; failure causes; bad cases), and
//! its renderings: a plain-text table, `summary.json`, a single-file HTML report that opens offline, a CSV of
//! every verdict and JUnit XML.
//!
//! This crate reads records and writes text; it runs no model and knows no terminal (the binary prints).

mod axes;
mod cause;
mod claims;
mod conversations;
mod corrected;
mod csv_junit;
mod diagnosis;
mod diff;
mod gate;
mod glance;
mod html;
mod paired;
mod reference;
mod refusals;
mod summary;
mod table;
#[cfg(test)]
mod testdata;

pub use cause::{attribution, failure_cause};
pub use claims::ClaimSummary;
pub use conversations::{ConversationSummary, FailedConversation, Rate, TurnRow};
pub use csv_junit::{render_csv, render_junit, write_csv, write_junit};
pub use diagnosis::{
    CauseRow, Diagnosis, Finding, FusionPair, RetrievalFigures, Severity, describe,
    embedder_findings, fusion_finding,
};
pub use diff::{RunDiff, diff_runs, render_diff};
pub use gate::{Gates, check_gates, parse_category_gate};
pub use html::render_html;
pub use reference::{Headroom, Leaky, LeakyCase};
pub use refusals::RefusalMatrix;
pub use summary::{
    Attribution, BadCase, ConfigSummary, ErrorReason, FailureCause, GroupSummary, NotJudged,
    ReportInputs, Summary, is_bad_case, primary_verdicts, summarise,
};
pub use table::{render_audit, render_table};
