//! Limits on what a user, a file or a remote service can make ragtester read: every parser of untrusted bytes
//! checks one of these before it spends memory or stack on them. Each limit has a name; an error that a limit
//! raises names it (`limit file_mb = 256 exceeded: …`) and says how to raise it (`--limit NAME=VALUE`).
//!
//! There are no process-wide limits: a front end (the binary from `--limit`, the web server at start) builds
//! one `Limits` and hands it down — the stage context, the registry's HTTP settings, a reader's argument —
//! so a test or a web job runs under its own and one test's small limit never leaks into another.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// Every limit, with the defaults in [`Limits::default`]. Sizes are in the unit their name ends with.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// One HTTP request to the web UI (an upload of several files).
    pub request_mb: u64,
    /// One input file: ingested from disk or uploaded to the web UI.
    pub file_mb: u64,
    /// Entries in a DOCX (zip) archive.
    pub zip_entries: u64,
    /// Bytes a DOCX expands to, all entries together.
    pub zip_expanded_mb: u64,
    /// Expanded bytes per compressed byte of a DOCX, all entries together (zip bombs expand by 1000× and more).
    pub zip_ratio: u64,
    /// Pages of a PDF.
    pub pdf_pages: u64,
    /// Objects in a PDF's cross-reference table.
    pub pdf_objects: u64,
    /// Text a file decodes to (a legacy encoding can triple a file's size in UTF-8).
    pub text_mb: u64,
    /// Nesting of Markdown blocks and HTML elements.
    pub nesting: u64,
    /// Nesting of JSON arrays and objects in a reply, an answer or a record.
    pub json_depth: u64,
    /// One reply body from a model provider, a target service or a target command.
    pub reply_mb: u64,
    /// An answer the system under test wrote; a longer one is cut here and the cut noted on the answer.
    pub answer_kb: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            request_mb: 512,
            file_mb: 256,
            zip_entries: 10_000,
            zip_expanded_mb: 1024,
            zip_ratio: 200,
            pdf_pages: 20_000,
            pdf_objects: 2_000_000,
            text_mb: 512,
            nesting: 256,
            json_depth: 64,
            reply_mb: 64,
            answer_kb: 256,
        }
    }
}

const MIB: u64 = 1024 * 1024;

impl Limits {
    /// Apply `NAME=VALUE` settings, each naming one limit.
    pub fn with_overrides(mut self, settings: &[String]) -> Result<Self> {
        for setting in settings {
            let Some((name, value)) = setting.split_once('=') else {
                bail!("--limit takes NAME=VALUE, got `{setting}`");
            };
            let name = name.trim();
            let value: u64 = value
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("--limit {name}: `{value}` is not a whole number"))?;
            if value == 0 {
                bail!("--limit {name}: a limit of 0 would refuse everything");
            }
            let Some(slot) = self.slot(name) else {
                bail!(
                    "no limit is called `{name}`; the limits are: {}",
                    Self::NAMES.join(", ")
                );
            };
            *slot = value;
        }
        Ok(self)
    }

    /// The names of every limit, as `--limit` and error messages spell them.
    pub const NAMES: [&'static str; 12] = [
        "request_mb",
        "file_mb",
        "zip_entries",
        "zip_expanded_mb",
        "zip_ratio",
        "pdf_pages",
        "pdf_objects",
        "text_mb",
        "nesting",
        "json_depth",
        "reply_mb",
        "answer_kb",
    ];

    fn slot(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "request_mb" => &mut self.request_mb,
            "file_mb" => &mut self.file_mb,
            "zip_entries" => &mut self.zip_entries,
            "zip_expanded_mb" => &mut self.zip_expanded_mb,
            "zip_ratio" => &mut self.zip_ratio,
            "pdf_pages" => &mut self.pdf_pages,
            "pdf_objects" => &mut self.pdf_objects,
            "text_mb" => &mut self.text_mb,
            "nesting" => &mut self.nesting,
            "json_depth" => &mut self.json_depth,
            "reply_mb" => &mut self.reply_mb,
            "answer_kb" => &mut self.answer_kb,
            _ => return None,
        })
    }

    pub fn request_bytes(&self) -> u64 {
        self.request_mb.saturating_mul(MIB)
    }
    pub fn file_bytes(&self) -> u64 {
        self.file_mb.saturating_mul(MIB)
    }
    pub fn zip_expanded_bytes(&self) -> u64 {
        self.zip_expanded_mb.saturating_mul(MIB)
    }
    pub fn text_bytes(&self) -> u64 {
        self.text_mb.saturating_mul(MIB)
    }
    pub fn reply_bytes(&self) -> u64 {
        self.reply_mb.saturating_mul(MIB)
    }
    pub fn answer_bytes(&self) -> u64 {
        self.answer_kb.saturating_mul(1024)
    }

    /// The nesting of JSON arrays and objects in `text`, checked against `json_depth` before a parser
    /// recurses into it. Brackets inside strings do not count.
    /// `what` names the text in the error; it is only formatted when the check fails (records check every
    /// line).
    pub fn check_json_depth(&self, text: &str, what: impl std::fmt::Display) -> Result<()> {
        let depth = json_depth(text.as_bytes());
        if depth > self.json_depth {
            bail!(exceeded(
                "json_depth",
                self.json_depth,
                &format!("{what} nests JSON {depth} levels deep")
            ));
        }
        Ok(())
    }
}

/// A text file another tool wrote (a dataset, answered records), read whole only when it fits `file_mb`:
/// a file over the limit is an error naming it and the limit, before any of it is held in memory.
pub fn read_text_file(path: &std::path::Path, limits: &Limits) -> Result<String> {
    use anyhow::Context;
    use std::io::Read;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = String::new();
    file.take(limits.file_bytes().saturating_add(1))
        .read_to_string(&mut text)
        .with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
    if text.len() as u64 > limits.file_bytes() {
        bail!(exceeded(
            "file_mb",
            limits.file_mb,
            &format!("{} is larger", path.display())
        ));
    }
    Ok(text)
}

/// The message every limit raises: which limit, its value, what went over it, how to raise it.
pub fn exceeded(name: &str, value: u64, what: &str) -> String {
    format!("limit {name} = {value} exceeded: {what} (raise it with --limit {name}=N)")
}

/// The deepest nesting of `[`/`{` in JSON text, strings skipped. Linear, no allocation: it runs before a
/// recursive parser, which is what it protects.
pub fn json_depth(bytes: &[u8]) -> u64 {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0u64, 0u64, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// `text` cut to at most `max_bytes` at a char boundary; `None` when it fits.
pub fn truncate_to(text: &str, max_bytes: usize) -> Option<&str> {
    if text.len() <= max_bytes {
        return None;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(&text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_over_file_mb_is_refused_before_it_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.jsonl");
        std::fs::write(&path, vec![b'a'; 1024 * 1024 + 1]).unwrap();
        let small = Limits::default()
            .with_overrides(&["file_mb=1".to_string()])
            .unwrap();
        let err = read_text_file(&path, &small).unwrap_err().to_string();
        assert!(
            err.contains("limit file_mb = 1") && err.contains("rows.jsonl"),
            "{err}"
        );
        assert_eq!(
            read_text_file(&path, &Limits::default()).unwrap().len(),
            1024 * 1024 + 1
        );
    }

    #[test]
    fn overrides_name_the_limit_and_refuse_unknown_names() {
        let l = Limits::default()
            .with_overrides(&["zip_entries=5".into(), " file_mb = 1 ".into()])
            .unwrap();
        assert_eq!((l.zip_entries, l.file_mb), (5, 1));
        let e = Limits::default()
            .with_overrides(&["zip_entry=5".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("zip_entry") && e.contains("zip_entries"), "{e}");
        assert!(
            Limits::default()
                .with_overrides(&["nesting=0".into()])
                .is_err()
        );
        assert!(
            Limits::default()
                .with_overrides(&["nesting".into()])
                .is_err()
        );
        // Every listed name is settable.
        for name in Limits::NAMES {
            Limits::default()
                .with_overrides(&[format!("{name}=7")])
                .unwrap();
        }
    }

    #[test]
    fn json_depth_skips_strings_and_escapes() {
        assert_eq!(json_depth(br#"{"a": [1, {"b": "]]]{{{"}]}"#), 3);
        assert_eq!(json_depth(br#"["\"[[[", []]"#), 2);
        assert_eq!(json_depth(b"42"), 0);
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let e = Limits::default()
            .check_json_depth(&deep, "the reply")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("json_depth = 64") && e.contains("100000 levels"),
            "{e}"
        );
    }

    #[test]
    fn truncation_keeps_whole_chars() {
        assert_eq!(truncate_to("abc", 5), None);
        assert_eq!(truncate_to("héllo", 2), Some("h"));
        assert_eq!(truncate_to("中文字", 4), Some("中"));
    }
}
