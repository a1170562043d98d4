//! A user's own RAG service as a matrix row: an HTTP endpoint or a command, and how its reply is read.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// How a command target receives the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommandInput {
    #[default]
    Stdin,
    Argument,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetKind {
    Http,
    Command,
    /// Answers another tool or a log wrote, read by `import --answers` from the file `url` names: never
    /// asked, only judged.
    Imported,
    /// A function of the process that hosts the engine (a Python callable given to `ragtester.run`),
    /// registered under the target's name for the length of that call: its reply is read through the
    /// same pointers as a service's JSON.
    Function,
}

/// The user's own RAG service as the system under test (`[[target]]` in the project file).
///
/// `http`: `url`, `method` (POST), `headers`, and a JSON `body` template in which `{{query}}` becomes the query
/// (JSON-escaped); `${VAR}` in the URL and headers is read from the environment. `command`: `command` as
/// program and arguments, the query on stdin or as the last argument, JSON on stdout. Both: JSON pointers
/// (RFC 6901) to the answer and, optionally, to the returned contexts (an array of strings, or of objects
/// whose text `context_text_pointer` names), and to the reply's own citations (`citations_pointer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSettings {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: TargetKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Written to run files with the values of credential headers redacted, unless they are `${VAR}`
    /// templates: a key typed into the project file never reaches a record.
    #[serde(
        default,
        skip_serializing_if = "std::collections::BTreeMap::is_empty",
        serialize_with = "headers_redacted"
    )]
    pub headers: std::collections::BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub input: CommandInput,
    pub answer_pointer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contexts_pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_text_pointer: Option<String>,
    /// The reply's own citations: an array whose items are passage numbers (1-based, in the returned
    /// contexts' order), arrays of them, or objects whose numbers `citation_ranks_pointer` names (a number
    /// or an array) and whose cited part of the answer `citation_text_pointer` names (optional: without it a
    /// citation stands for the whole answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations_pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_ranks_pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citation_text_pointer: Option<String>,
    /// The tools the service called on the way to its answer: an array of calls in OpenAI's shape
    /// (`{"function": {"name", "arguments"}}`), RAGAS's (`{"name", "args"}`) or DeepEval's (`{"name",
    /// "input_parameters"}`). A reply without the field made no call; a field of another shape is the
    /// case's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls_pointer: Option<String>,
    #[serde(default = "default_target_timeout")]
    pub timeout_s: f64,
    /// For a service that keeps a conversation's history itself: the header that carries the session id,
    /// one per conversation and configuration (`X-Session-Id`). Either way the body template may hold
    /// `{{messages}}` (the history as chat messages) and `{{session}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_header: Option<String>,
    /// Receive the service's OpenTelemetry traces (OTLP/HTTP on `[run] trace_port`): every call carries
    /// a W3C `traceparent` (a command gets `TRACEPARENT` and `OTEL_EXPORTER_OTLP_ENDPOINT`), and the
    /// retrieval and generation steps its spans report are read onto the answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub traces: bool,
}

/// A header whose value is a credential: `Authorization`, cookies, anything naming a key, token or secret.
pub fn is_credential_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "authorization",
        "cookie",
        "key",
        "token",
        "secret",
        "password",
    ]
    .iter()
    .any(|word| name.contains(word))
}

fn headers_redacted<S: serde::Serializer>(
    headers: &std::collections::BTreeMap<String, String>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = serializer.serialize_map(Some(headers.len()))?;
    for (name, value) in headers {
        let templated = value.contains("${");
        if is_credential_header(name) && !templated {
            map.serialize_entry(name, crate::secrets::REDACTED)?;
        } else {
            map.serialize_entry(name, value)?;
        }
    }
    map.end()
}

fn default_target_timeout() -> f64 {
    60.0
}

impl TargetSettings {
    /// The system whose answers `import --answers` read from `file`.
    pub fn imported(name: &str, file: &str) -> Self {
        Self {
            name: name.to_string(),
            kind: TargetKind::Imported,
            url: Some(file.to_string()),
            method: None,
            headers: Default::default(),
            body: None,
            command: None,
            input: CommandInput::default(),
            answer_pointer: String::new(),
            contexts_pointer: None,
            context_text_pointer: None,
            citations_pointer: None,
            citation_ranks_pointer: None,
            citation_text_pointer: None,
            tool_calls_pointer: None,
            timeout_s: default_target_timeout(),
            session_header: None,
            traces: false,
        }
    }

    /// A function of the host process (`type = "function"`), whose reply comes as JSON in one shape:
    /// `answer`, `contexts` (objects with `text`), `citations` (objects with `ranks` and optional `text`)
    /// and, when it reports them, `tool_calls`.
    pub fn function(name: &str, timeout_s: f64) -> Self {
        Self {
            kind: TargetKind::Function,
            url: None,
            answer_pointer: "/answer".into(),
            contexts_pointer: Some("/contexts".into()),
            context_text_pointer: Some("/text".into()),
            citations_pointer: Some("/citations".into()),
            citation_ranks_pointer: Some("/ranks".into()),
            citation_text_pointer: Some("/text".into()),
            tool_calls_pointer: Some("/tool_calls".into()),
            timeout_s,
            ..Self::imported(name, "")
        }
    }

    pub fn validate(&self) -> Result<()> {
        let name = &self.name;
        if name.trim().is_empty() {
            bail!("a target needs a name");
        }
        match self.kind {
            TargetKind::Http => {
                let url = self.url.as_deref().unwrap_or("");
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    bail!(
                        "target `{name}`: type http needs a url starting with http:// or https://"
                    );
                }
                if self.command.is_some() {
                    bail!("target `{name}`: `command` belongs to type command");
                }
            }
            TargetKind::Command => {
                if self.command.as_ref().is_none_or(|c| c.is_empty()) {
                    bail!(
                        "target `{name}`: type command needs `command = [\"program\", \"arg\", ...]`"
                    );
                }
                if self.url.is_some() || self.body.is_some() {
                    bail!("target `{name}`: `url` and `body` belong to type http");
                }
            }
            TargetKind::Function => {
                if self.url.is_some() || self.body.is_some() || self.command.is_some() {
                    bail!(
                        "target `{name}`: type function is a function of the calling program; \
                         `url`, `body` and `command` belong to types http and command"
                    );
                }
            }
            TargetKind::Imported => {
                bail!(
                    "target `{name}`: its answers were imported; a target of type imported cannot be asked"
                )
            }
        }
        for p in [
            Some(&self.answer_pointer),
            self.contexts_pointer.as_ref(),
            self.context_text_pointer.as_ref(),
            self.citations_pointer.as_ref(),
            self.citation_ranks_pointer.as_ref(),
            self.citation_text_pointer.as_ref(),
            self.tool_calls_pointer.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if !p.is_empty() && !p.starts_with('/') {
                bail!("target `{name}`: JSON pointer `{p}` must be empty or start with /");
            }
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0) {
            bail!("target `{name}`: timeout_s must be positive");
        }
        Ok(())
    }
}
