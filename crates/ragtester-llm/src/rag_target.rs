//! External targets: the user's own RAG service as the system under test, over HTTP or as a command.
//! Both return an answer and, when the service exposes them, the contexts it retrieved.

use anyhow::{Context, Result, anyhow, bail};
use ragtester_core::Message;
use ragtester_core::config::{CommandInput, TargetKind, TargetSettings};
use ragtester_core::limits::exceeded;
use ragtester_core::secrets::redact;
use ragtester_core::{Citation, Limits, ToolCall};
use ragtester_http::{HttpClient, HttpSettings};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

#[derive(Debug, Clone, PartialEq)]
pub struct TargetReply {
    pub answer: String,
    pub contexts: Vec<String>,
    /// The citations the reply gives in a field of its own (`citations_pointer`).
    pub citations: Vec<Citation>,
    /// The tools the service reports it called (`tool_calls_pointer`); None when none is set.
    pub tool_calls: Option<Vec<ToolCall>>,
}

/// One question put to a target: the query, and for a turn of a conversation, the turns before it (the
/// questions and the target's own answers, oldest first) and the session they belong to.
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetRequest<'a> {
    pub query: &'a str,
    pub history: &'a [Message],
    /// One id per conversation and configuration, for a service that keeps the history itself.
    pub session: Option<&'a str>,
    /// The W3C trace context of this call, when the target's traces are received.
    pub traceparent: Option<&'a str>,
    /// Where a command's OpenTelemetry exporter sends its spans (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub otlp_endpoint: Option<&'a str>,
}

impl<'a> TargetRequest<'a> {
    /// A question on its own.
    pub fn single(query: &'a str) -> Self {
        Self {
            query,
            ..Self::default()
        }
    }

    /// The history and the query as OpenAI-style chat messages (`{"role", "content"}`), the query last.
    pub fn messages(&self) -> Value {
        let mut messages: Vec<Value> = self
            .history
            .iter()
            .map(|m| serde_json::json!({ "role": m.role, "content": m.content }))
            .collect();
        messages.push(serde_json::json!({ "role": "user", "content": self.query }));
        Value::Array(messages)
    }
}

#[async_trait::async_trait]
pub trait RagTarget: Send + Sync {
    fn name(&self) -> String;
    async fn ask(&self, request: &TargetRequest<'_>) -> Result<TargetReply>;
}

/// The service a target's settings name, its replies read under `http`'s limits (and its HTTP requests
/// retried under its policy).
pub fn target_for(settings: &TargetSettings, http: &HttpSettings) -> Result<Arc<dyn RagTarget>> {
    settings.validate()?;
    Ok(match settings.kind {
        TargetKind::Http => Arc::new(HttpTarget::new(settings.clone(), http)?),
        TargetKind::Command => Arc::new(CommandTarget {
            settings: settings.clone(),
            limits: http.replies,
        }),
        TargetKind::Function => crate::functions::registered(&settings.name)?,
        TargetKind::Imported => unreachable!("validate refuses imported targets"),
    })
}

/// Replace `${VAR}` with the environment's value; a missing variable is an error naming it.
pub fn interpolate_env(text: &str) -> Result<String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| anyhow!("unclosed `${{` in `{text}`"))?;
        let name = &after[..end];
        let value = ragtester_core::settings::variable(name)
            .ok_or_else(|| anyhow!("environment variable {name} is not set"))?;
        // What a `${VAR}` stands for is a key or token as often as not: never shown again.
        ragtester_core::secrets::remember(&value);
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The request body: the template with `{{query}}` replaced by the JSON-escaped query (inside a string),
/// `{{session}}` by the conversation's session id (inside a string; empty for a single question) and
/// `{{messages}}` by the history and the query as a JSON array of chat messages (a value of its own).
pub fn render_body(template: &str, request: &TargetRequest<'_>) -> Result<String> {
    let inside_string = |text: &str| -> Result<String> {
        let escaped = serde_json::to_string(text)?;
        Ok(escaped[1..escaped.len() - 1].to_string())
    };
    let body = template
        .replace("{{query}}", &inside_string(request.query)?)
        .replace(
            "{{session}}",
            &inside_string(request.session.unwrap_or(""))?,
        )
        .replace("{{messages}}", &request.messages().to_string());
    serde_json::from_str::<Value>(&body)
        .with_context(|| format!("the body template does not give valid JSON: {body}"))?;
    Ok(body)
}

/// Answer and contexts out of a reply, by the target's JSON pointers.
pub fn extract(settings: &TargetSettings, reply: &Value) -> Result<TargetReply> {
    let answer = match reply.pointer(&settings.answer_pointer) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => bail!(
            "reply has nothing at answer_pointer `{}`: {}",
            settings.answer_pointer,
            reply.to_string().chars().take(300).collect::<String>()
        ),
        Some(other) => other.to_string(),
    };
    let mut contexts = Vec::new();
    if let Some(pointer) = &settings.contexts_pointer {
        let items = reply
            .pointer(pointer)
            .and_then(Value::as_array)
            .ok_or_else(|| anyhow!("reply has no array at contexts_pointer `{pointer}`"))?;
        for item in items {
            let text = match (item, &settings.context_text_pointer) {
                (Value::String(s), _) => s.clone(),
                (other, Some(p)) => other
                    .pointer(p)
                    .and_then(Value::as_str)
                    .ok_or_else(|| anyhow!("a context has no text at context_text_pointer `{p}`"))?
                    .to_string(),
                (other, None) => bail!("contexts are objects ({other}); set context_text_pointer"),
            };
            contexts.push(text);
        }
    }
    let citations = match &settings.citations_pointer {
        Some(pointer) => citations(settings, pointer, reply)?,
        None => Vec::new(),
    };
    let tool_calls = match &settings.tool_calls_pointer {
        Some(pointer) => Some(
            ToolCall::list_from_json(reply.pointer(pointer).unwrap_or(&Value::Null))
                .with_context(|| format!("the reply's tool_calls_pointer `{pointer}`"))?,
        ),
        None => None,
    };
    Ok(TargetReply {
        answer,
        contexts,
        citations,
        tool_calls,
    })
}

/// The reply's own citations at `pointer` (see `TargetSettings::citations_pointer`). A reply without the
/// field cites nothing; a field of the wrong shape is an error naming it, never a silent empty list.
fn citations(settings: &TargetSettings, pointer: &str, reply: &Value) -> Result<Vec<Citation>> {
    let items = match reply.pointer(pointer) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(other) => bail!("reply has no array at citations_pointer `{pointer}`: {other}"),
    };
    let ranks_of = |value: &Value| -> Result<Vec<usize>> {
        let numbers = match value {
            Value::Array(list) => list.iter().collect(),
            single => vec![single],
        };
        numbers
            .into_iter()
            .map(
                |n| match n.as_u64().or_else(|| n.as_str()?.trim().parse().ok()) {
                    Some(rank) if rank > 0 => Ok(rank as usize),
                    _ => bail!("a citation's passage number is not a number from 1 up: {n}"),
                },
            )
            .collect()
    };
    items
        .iter()
        .map(|item| match (item, &settings.citation_ranks_pointer) {
            (Value::Object(_), Some(p)) => {
                let ranks = item.pointer(p).ok_or_else(|| {
                    anyhow!("a citation has nothing at citation_ranks_pointer `{p}`")
                })?;
                let text = settings
                    .citation_text_pointer
                    .as_ref()
                    .and_then(|t| item.pointer(t))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                Ok(Citation {
                    ranks: ranks_of(ranks)?,
                    text,
                })
            }
            (Value::Object(_), None) => {
                bail!("citations are objects ({item}); set citation_ranks_pointer")
            }
            (other, _) => Ok(Citation {
                ranks: ranks_of(other)?,
                text: None,
            }),
        })
        .collect()
}

struct HttpTarget {
    settings: TargetSettings,
    url: String,
    method: reqwest::Method,
    headers: Vec<(String, String)>,
    http: HttpClient,
}

impl HttpTarget {
    fn new(settings: TargetSettings, http: &HttpSettings) -> Result<Self> {
        let name = settings.name.clone();
        let ctx = || format!("target `{name}`");
        let url = interpolate_env(settings.url.as_deref().unwrap_or_default()).with_context(ctx)?;
        let method = reqwest::Method::from_bytes(
            settings
                .method
                .as_deref()
                .unwrap_or("POST")
                .to_uppercase()
                .as_bytes(),
        )
        .with_context(ctx)?;
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        for (k, v) in &settings.headers {
            let value = interpolate_env(v).with_context(ctx)?;
            if ragtester_core::config::is_credential_header(k) {
                ragtester_core::secrets::remember(&value);
                if let Some((_scheme, credential)) = value.split_once(' ') {
                    ragtester_core::secrets::remember(credential);
                }
            }
            headers.push((k.clone(), value));
        }
        let mut policy = http.policy.clone();
        policy.timeout = Duration::from_secs_f64(settings.timeout_s);
        Ok(Self {
            url,
            method,
            headers,
            http: HttpClient::new(policy)?.reading_under(http.replies),
            settings,
        })
    }
}

#[async_trait::async_trait]
impl RagTarget for HttpTarget {
    fn name(&self) -> String {
        self.settings.name.clone()
    }

    async fn ask(&self, request: &TargetRequest<'_>) -> Result<TargetReply> {
        let template = self
            .settings
            .body
            .as_deref()
            .unwrap_or(r#"{"query": "{{query}}"}"#);
        let body = render_body(template, request)?;
        let mut headers = self.headers.clone();
        if let (Some(name), Some(session)) = (&self.settings.session_header, request.session) {
            headers.push((name.clone(), session.to_string()));
        }
        if let Some(traceparent) = request.traceparent {
            headers.push(("traceparent".into(), traceparent.to_string()));
        }
        let reply = self
            .http
            .send_json(self.method.clone(), &self.url, &headers, Some(body))
            .await?;
        extract(&self.settings, &reply)
    }
}

/// The longest value one environment variable may hold on Linux (`MAX_ARG_STRLEN`, 128 KiB, the name and
/// its `=` included), less room for them.
const ENV_VALUE_BYTES: usize = 128 * 1024 - 64;

/// A conversation's messages for a command: always as a file (`RAGTESTER_MESSAGES_FILE`, removed when the
/// call ends), and as `RAGTESTER_MESSAGES` too while they fit in an environment variable. A longer history
/// leaves the variable unset, with a warning, rather than failing the cell with "Argument list too long".
fn pass_messages(
    command: &mut tokio::process::Command,
    request: &TargetRequest<'_>,
) -> Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let messages = request.messages().to_string();
    let mut file = tempfile::Builder::new()
        .prefix("ragtester-messages-")
        .suffix(".json")
        .tempfile()
        .context("cannot write the conversation's messages for the command")?;
    file.write_all(messages.as_bytes())
        .and_then(|()| file.flush())
        .context("cannot write the conversation's messages for the command")?;
    command.env("RAGTESTER_MESSAGES_FILE", file.path());
    if messages.len() <= ENV_VALUE_BYTES {
        command.env("RAGTESTER_MESSAGES", messages);
    } else {
        command.env_remove("RAGTESTER_MESSAGES");
        tracing::warn!(
            "the conversation's messages ({} KiB) are more than an environment variable holds: \
             RAGTESTER_MESSAGES is left unset; read RAGTESTER_MESSAGES_FILE",
            messages.len() / 1024
        );
    }
    Ok(file)
}

struct CommandTarget {
    settings: TargetSettings,
    /// How much of the command's output is read (`reply_mb`).
    limits: Limits,
}

#[async_trait::async_trait]
impl RagTarget for CommandTarget {
    fn name(&self) -> String {
        self.settings.name.clone()
    }

    async fn ask(&self, request: &TargetRequest<'_>) -> Result<TargetReply> {
        let query = request.query;
        let argv = self.settings.command.as_deref().unwrap_or_default();
        let (program, args) = argv.split_first().ok_or_else(|| anyhow!("empty command"))?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(args)
            .kill_on_drop(true)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .env("RAGTESTER_SESSION", request.session.unwrap_or(""));
        // A conversation's turn: the history and query as chat messages, and the session, for a command
        // that keeps no state of its own between calls. The file lives until the command has finished.
        let _messages = pass_messages(&mut command, request)?;
        // OpenTelemetry's standard variables: an SDK-instrumented command joins the call's trace and exports
        // to the run's receiver without being configured.
        if let Some(traceparent) = request.traceparent {
            command.env("TRACEPARENT", traceparent);
        }
        if let Some(endpoint) = request.otlp_endpoint {
            command
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
                .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
                .env("OTEL_TRACES_EXPORTER", "otlp");
        }
        match self.settings.input {
            CommandInput::Argument => {
                command.arg(query).stdin(std::process::Stdio::null());
            }
            CommandInput::Stdin => {
                command.stdin(std::process::Stdio::piped());
            }
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start `{program}`"))?;
        if let Some(mut stdin) = child.stdin.take() {
            match stdin.write_all(query.as_bytes()).await {
                // A command that exits without reading its input closes the pipe first: its exit status
                // and stderr, reported below, say more than the broken pipe does.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                other => other.context("cannot write the query to the command")?,
            }
        }
        let timeout = Duration::from_secs_f64(self.settings.timeout_s);
        let limits = &self.limits;
        let (status, stdout, stderr) =
            tokio::time::timeout(timeout, bounded_output(child, limits.reply_bytes()))
                .await
                .map_err(|_| {
                    anyhow!(
                        "`{program}` did not finish within {:.0} s",
                        timeout.as_secs_f64()
                    )
                })??;
        let Some(stdout) = stdout else {
            bail!(exceeded(
                "reply_mb",
                limits.reply_mb,
                &format!("`{program}` printed more")
            ));
        };
        // A command may print its environment: what it says is shown with secrets redacted.
        let snippet = |bytes: &[u8]| -> String {
            redact(
                &String::from_utf8_lossy(bytes)
                    .chars()
                    .take(300)
                    .collect::<String>(),
            )
            .into_owned()
        };
        if !status.success() {
            bail!("`{program}` exited with {status}: {}", snippet(&stderr));
        }
        let text = String::from_utf8_lossy(&stdout);
        limits.check_json_depth(&text, format_args!("`{program}`'s reply"))?;
        let reply: Value = serde_json::from_str(text.trim())
            .with_context(|| format!("`{program}` did not print JSON: {}", snippet(&stdout)))?;
        extract(&self.settings, &reply)
    }
}

/// Wait for a command, keeping at most `max` bytes of its output (`None` past that: the command is killed
/// when the child is dropped) and the first 64 KiB of its errors.
async fn bounded_output(
    mut child: tokio::process::Child,
    max: u64,
) -> Result<(std::process::ExitStatus, Option<Vec<u8>>, Vec<u8>)> {
    use tokio::io::AsyncReadExt;
    let mut stdout = child
        .stdout
        .take()
        .context("the command's output is not piped")?;
    let stderr = child
        .stderr
        .take()
        .context("the command's errors are not piped")?;
    // Errors are read beside the output, so a command that fills its error pipe never stalls.
    let errors = tokio::spawn(async move {
        let mut kept = Vec::new();
        let mut stderr = stderr;
        let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut kept).await;
        let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
        kept
    });
    let mut out = Vec::new();
    (&mut stdout)
        .take(max + 1)
        .read_to_end(&mut out)
        .await
        .context("cannot read the command's output")?;
    if out.len() as u64 > max {
        // The rest is not wanted: stop the command rather than wait for it to finish writing.
        let _ = child.kill().await;
        let status = child.wait().await.context("cannot wait for the command")?;
        return Ok((status, None, Vec::new()));
    }
    let status = child.wait().await.context("cannot wait for the command")?;
    Ok((status, Some(out), errors.await.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(kind: TargetKind) -> TargetSettings {
        TargetSettings {
            name: "t".into(),
            kind,
            url: None,
            method: None,
            headers: Default::default(),
            body: None,
            command: None,
            input: CommandInput::Stdin,
            answer_pointer: "/data/answer".into(),
            contexts_pointer: Some("/data/docs".into()),
            context_text_pointer: Some("/text".into()),
            citations_pointer: None,
            citation_ranks_pointer: None,
            citation_text_pointer: None,
            tool_calls_pointer: None,
            timeout_s: 5.0,
            session_header: None,
            traces: false,
        }
    }

    #[test]
    fn body_escapes_the_query() {
        let body = render_body(
            r#"{"q": "{{query}}", "k": 3}"#,
            &TargetRequest::single("say \"hi\"\n"),
        )
        .unwrap();
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["q"], "say \"hi\"\n");
        assert!(render_body(r#"{"q": {{query}}}"#, &TargetRequest::single("x")).is_err());
    }

    #[test]
    fn env_interpolation() {
        // SAFETY: this test owns the variable name; no other test reads or writes it.
        unsafe { std::env::set_var("RAGTESTER_TEST_TOKEN", "abc") };
        assert_eq!(
            interpolate_env("Bearer ${RAGTESTER_TEST_TOKEN}!").unwrap(),
            "Bearer abc!"
        );
        assert!(
            interpolate_env("${RAGTESTER_SURELY_UNSET}")
                .unwrap_err()
                .to_string()
                .contains("RAGTESTER_SURELY_UNSET")
        );
    }

    #[test]
    fn extraction_by_pointers() {
        let reply =
            serde_json::json!({"data": {"answer": "42", "docs": [{"text": "a"}, {"text": "b"}]}});
        let r = extract(&settings(TargetKind::Http), &reply).unwrap();
        assert_eq!(
            r,
            TargetReply {
                answer: "42".into(),
                contexts: vec!["a".into(), "b".into()],
                citations: Vec::new(),
                tool_calls: None,
            }
        );
        let err = extract(&settings(TargetKind::Http), &serde_json::json!({"x": 1})).unwrap_err();
        assert!(err.to_string().contains("/data/answer"));
    }

    #[test]
    fn tool_calls_by_pointer_none_made_and_a_malformed_field_named() {
        let mut s = settings(TargetKind::Http);
        s.tool_calls_pointer = Some("/data/tool_calls".into());
        let reply = serde_json::json!({"data": {"answer": "42", "docs": [], "tool_calls": [
            {"type": "function", "function": {"name": "search", "arguments": "{\"query\": \"x\"}"}}
        ]}});
        let calls = extract(&s, &reply).unwrap().tool_calls.unwrap();
        assert_eq!(calls[0].name, "search");
        assert_eq!(calls[0].args["query"], "x");
        let none = serde_json::json!({"data": {"answer": "42", "docs": []}});
        assert_eq!(extract(&s, &none).unwrap().tool_calls, Some(vec![]));
        let bad = serde_json::json!({"data": {"answer": "42", "docs": [], "tool_calls": [{"function": {}}]}});
        let err = format!("{:#}", extract(&s, &bad).unwrap_err());
        assert!(
            err.contains("tool_calls_pointer `/data/tool_calls`"),
            "{err}"
        );
        assert!(err.contains("has no name"), "{err}");
    }

    #[test]
    fn citations_by_pointers_in_each_shape() {
        let mut s = settings(TargetKind::Http);
        s.citations_pointer = Some("/data/citations".into());
        let reply = |citations: Value| serde_json::json!({"data": {"answer": "a", "docs": [], "citations": citations}});
        // Plain numbers, a list per citation, and a number written as a string.
        let plain = extract(&s, &reply(serde_json::json!([2, [1, 3], "4"]))).unwrap();
        let ranks: Vec<Vec<usize>> = plain.citations.iter().map(|c| c.ranks.clone()).collect();
        assert_eq!(ranks, vec![vec![2], vec![1, 3], vec![4]]);
        assert!(plain.citations.iter().all(|c| c.text.is_none()));
        // Objects: the numbers and the cited part of the answer by their own pointers.
        s.citation_ranks_pointer = Some("/document_ids".into());
        s.citation_text_pointer = Some("/text".into());
        let spans = extract(
            &s,
            &reply(serde_json::json!([{"text": "opens at 4.5 bar", "document_ids": [2]}])),
        )
        .unwrap();
        assert_eq!(
            spans.citations,
            vec![Citation {
                ranks: vec![2],
                text: Some("opens at 4.5 bar".into())
            }]
        );
        // No field: no citation. A field of the wrong shape, or a number that is none: an error naming it.
        let none = extract(
            &s,
            &serde_json::json!({"data": {"answer": "a", "docs": []}}),
        )
        .unwrap();
        assert!(none.citations.is_empty());
        let err = extract(&s, &reply(serde_json::json!({"a": 1}))).unwrap_err();
        assert!(err.to_string().contains("citations_pointer"), "{err}");
        let err = extract(&s, &reply(serde_json::json!([{"document_ids": [0]}]))).unwrap_err();
        assert!(err.to_string().contains("from 1 up"), "{err}");
        s.citation_ranks_pointer = None;
        let err = extract(&s, &reply(serde_json::json!([{"document_ids": [1]}]))).unwrap_err();
        assert!(err.to_string().contains("citation_ranks_pointer"), "{err}");
    }

    #[tokio::test]
    async fn command_target_reads_stdin_and_prints_json() {
        let mut s = settings(TargetKind::Command);
        s.command = Some(vec![
            "sh".into(),
            "-c".into(),
            r#"read q; printf '{"data": {"answer": "got %s", "docs": ["ctx"]}}' "$q""#.into(),
        ]);
        let target = target_for(&s, &Default::default()).unwrap();
        let reply = target.ask(&TargetRequest::single("hello")).await.unwrap();
        assert_eq!(reply.answer, "got hello");
        assert_eq!(reply.contexts, vec!["ctx".to_string()]);
        s.command = Some(vec![
            "sh".into(),
            "-c".into(),
            "echo oops >&2; exit 3".into(),
        ]);
        let err = target_for(&s, &Default::default())
            .unwrap()
            .ask(&TargetRequest::single("x"))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("exit status: 3") && err.contains("oops"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn a_long_history_reaches_a_command_as_a_file() {
        let mut s = settings(TargetKind::Command);
        // The file's size, and whether the variable was set (its length, or "unset").
        s.command = Some(vec![
            "sh".into(),
            "-c".into(),
            r#"read q; n=$(wc -c < "$RAGTESTER_MESSAGES_FILE"); v=${RAGTESTER_MESSAGES:-unset}; [ "$v" = unset ] || v=${#v}; printf '{"data": {"answer": "%s %s", "docs": []}}' "$n" "$v""#.into(),
        ]);
        let target = target_for(&s, &Default::default()).unwrap();
        let short = [Message::user("How long is the trail?")];
        let mut request = TargetRequest::single("And the climb?");
        request.history = &short;
        let reply = target.ask(&request).await.unwrap();
        let (file, variable) = reply.answer.split_once(' ').unwrap();
        assert_eq!(
            file, variable,
            "a short history is in both: {}",
            reply.answer
        );
        // 200 KiB of history: more than one environment variable holds (the cell failed with "Argument
        // list too long" before); the file carries all of it.
        let long = [Message::user("步道".repeat(35_000))];
        request.history = &long;
        let reply = target.ask(&request).await.unwrap();
        let (file, variable) = reply.answer.split_once(' ').unwrap();
        assert!(file.parse::<usize>().unwrap() > 200_000, "{}", reply.answer);
        assert_eq!(variable, "unset");
    }
}
