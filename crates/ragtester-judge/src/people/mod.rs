//! People and calibration: judges against people's labels (agreement), calibration of a profile on them,
//! audits of reported failures, the oracle's summary of judges and panels, the statistics they share, and
//! the labelled benchmark (`bench oracle`).

pub mod agreement;
pub mod audit;
pub mod benchmark;
pub mod calibrate;
pub mod oracle;
pub(crate) mod panel;
pub mod stats;
