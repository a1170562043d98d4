//! The W3C Trace Context of one call: a fresh trace id and the id of the span ragtester stands for, sent
//! as `traceparent` (HTTP header, or the `TRACEPARENT` environment variable of a command).

use anyhow::{Result, bail};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
}

impl TraceContext {
    /// A new trace, sampled. Ids are random and never all zero (which the standard forbids).
    pub fn new() -> Result<Self> {
        let mut trace_id = [0u8; 16];
        let mut span_id = [0u8; 8];
        loop {
            getrandom::fill(&mut trace_id)?;
            getrandom::fill(&mut span_id)?;
            if trace_id != [0; 16] && span_id != [0; 8] {
                return Ok(Self { trace_id, span_id });
            }
        }
    }

    /// `00-<trace id>-<parent span id>-01`: version 0, sampled.
    pub fn traceparent(&self) -> String {
        format!(
            "00-{}-{}-01",
            hex::encode(self.trace_id),
            hex::encode(self.span_id)
        )
    }

    pub fn trace_id_hex(&self) -> String {
        hex::encode(self.trace_id)
    }

    /// A `traceparent` value read back (version 00 only).
    pub fn parse(traceparent: &str) -> Result<Self> {
        let parts: Vec<&str> = traceparent.trim().split('-').collect();
        let [version, trace, span, _flags] = parts.as_slice() else {
            bail!("not a traceparent: {traceparent}");
        };
        if *version != "00" {
            bail!("traceparent version {version} is not supported");
        }
        let mut out = Self {
            trace_id: [0; 16],
            span_id: [0; 8],
        };
        hex::decode_to_slice(trace, &mut out.trace_id)?;
        hex::decode_to_slice(span, &mut out.span_id)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_is_well_formed_and_reads_back() {
        let c = TraceContext::new().unwrap();
        let header = c.traceparent();
        assert_eq!(header.len(), 55);
        assert!(header.starts_with("00-") && header.ends_with("-01"));
        assert_eq!(TraceContext::parse(&header).unwrap(), c);
        assert_ne!(TraceContext::new().unwrap().trace_id, c.trace_id);
        assert!(TraceContext::parse("01-aa-bb-01").is_err());
    }
}
