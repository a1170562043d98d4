//! `generate` as a front end asks for it: a suite written afresh (`generate.rs`), or an earlier suite
//! brought in step with its documents (`suite_update.rs`) when the settings name one.

use crate::context::StageContext;
use crate::generate::{GenerateArgs, SuiteOutcome, SuiteRequest};
use anyhow::Result;

/// Read the documents and write the suite a request asks for.
pub async fn generate_request(
    req: &SuiteRequest<'_>,
    cx: &StageContext<'_>,
) -> Result<SuiteOutcome> {
    let args = GenerateArgs::from_settings(&req.settings, req.concurrency);
    match &req.settings.update {
        Some(earlier) => crate::suite_update::update_request(req, &args, earlier, cx).await,
        None => crate::generate::write_request(req, &args, cx).await,
    }
}
