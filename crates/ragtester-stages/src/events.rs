//! What the stages tell a person, as events: the command line renders them on the terminal (a progress
//! bar, `warning:` lines), the web UI keeps them on the job the page polls. No stage prints.

use ragtester_exec::Counts;

/// How much a message matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// One input or cell failed; the stage goes on without it.
    Error,
    /// Something was worked around (a PDF page without text, an odd setting).
    Warning,
    /// Worth knowing (a duplicate document ingested once, a resumed judge).
    Note,
    /// What a stage did (`ingested 8 documents`, `wrote report.html …`).
    Info,
}

impl Level {
    /// A message as one line of a log: `error: …`, `warning: …`, `note: …`, or the text itself.
    pub fn line(self, text: &str) -> String {
        match self {
            Level::Error => format!("error: {text}"),
            Level::Warning => format!("warning: {text}"),
            Level::Note => format!("note: {text}"),
            Level::Info => text.to_string(),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Event {
    /// A stage begins: `ingest`, `generate`, `run`, `judge`, `report`, `docgen`, `audit`.
    Stage(&'static str),
    Message {
        level: Level,
        text: String,
    },
    /// Work done so far, counted in `unit` (cells, verdicts, documents); `reused` names the work taken from
    /// earlier (cached answers, resumed verdicts), counted in `counts.cached`.
    Progress {
        unit: &'static str,
        reused: &'static str,
        counts: Counts,
    },
}

/// Where a stage's events go. Called from the stage's worker tasks, so it must be cheap and thread-safe.
pub trait Events: Send + Sync {
    fn event(&self, event: Event);
}

impl dyn Events + '_ {
    pub fn stage(&self, name: &'static str) {
        self.event(Event::Stage(name));
    }
    pub fn error(&self, text: impl Into<String>) {
        self.message(Level::Error, text);
    }
    pub fn warning(&self, text: impl Into<String>) {
        self.message(Level::Warning, text);
    }
    pub fn note(&self, text: impl Into<String>) {
        self.message(Level::Note, text);
    }
    pub fn info(&self, text: impl Into<String>) {
        self.message(Level::Info, text);
    }
    fn message(&self, level: Level, text: impl Into<String>) {
        self.event(Event::Message {
            level,
            text: text.into(),
        });
    }
    pub fn progress(&self, unit: &'static str, reused: &'static str, counts: Counts) {
        self.event(Event::Progress {
            unit,
            reused,
            counts,
        });
    }
}

/// Drops every event (benchmarks, tests).
pub struct Silent;

impl Events for Silent {
    fn event(&self, _: Event) {}
}

/// Keeps every event, for tests that check what a stage said.
#[derive(Default)]
pub struct Recorded(pub std::sync::Mutex<Vec<Event>>);

impl Events for Recorded {
    fn event(&self, event: Event) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(event);
    }
}

impl Recorded {
    /// The messages said at `level`, in order.
    pub fn messages(&self, level: Level) -> Vec<String> {
        let events = self.0.lock().unwrap_or_else(|p| p.into_inner());
        events
            .iter()
            .filter_map(|e| match e {
                Event::Message { level: l, text } if *l == level => Some(text.clone()),
                _ => None,
            })
            .collect()
    }
}
