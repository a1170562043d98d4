//! The pipeline's events on the terminal: messages on stderr (`error:`, `warning:`, `note:` or plain),
//! folded to the terminal's width and each said once, and progress as a bar with rate and ETA — on a
//! terminal only (a log gets the stages' own summary lines); no progress with `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};
use ragtester_stages::front::Counts;
use ragtester_stages::{Event, Events, Level};
use std::io::IsTerminal;
use std::sync::Mutex;

pub struct Terminal {
    quiet: bool,
    tty: bool,
    /// Lines are folded at this many characters.
    width: usize,
    /// The bar being drawn, and the unit it counts.
    bar: Mutex<Option<(&'static str, ProgressBar)>>,
    /// What was said already: a stage that says the same again (each stage of `demo` ingests the same
    /// documents) says it once.
    said: Mutex<std::collections::HashSet<String>>,
}

/// The terminal's width: `COLUMNS` where the shell sets it, else 100.
pub fn width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c >= 40)
        .unwrap_or(100)
}

impl Terminal {
    pub fn new(quiet: bool, width: usize) -> Self {
        Self {
            quiet,
            tty: std::io::stderr().is_terminal(),
            width,
            bar: Mutex::new(None),
            said: Mutex::new(Default::default()),
        }
    }

    fn progress(&self, unit: &'static str, reused: &'static str, c: &Counts) {
        if self.quiet || !self.tty {
            return;
        }
        let mut slot = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        if slot.as_ref().is_none_or(|(u, _)| *u != unit) {
            let bar = ProgressBar::new(c.total as u64);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {unit} · {{per_sec}} · ETA {{eta}} · {{msg}}"
                ))
                .expect("valid progress template"),
            );
            *slot = Some((unit, bar));
        }
        let (_, bar) = slot.as_ref().expect("set above");
        bar.set_length(c.total as u64);
        bar.set_position(c.done as u64);
        if !reused.is_empty() {
            bar.set_message(format!("{} errors · {} {reused}", c.errors, c.cached));
        }
        if c.done == c.total {
            bar.finish();
            *slot = None;
        }
    }

    fn say(&self, level: Level, text: &str) {
        let line = ragtester_stages::front::fold(&level.line(text), self.width);
        let new = (self.said.lock().unwrap_or_else(|p| p.into_inner())).insert(line.clone());
        if !new {
            return;
        }
        let slot = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            // Above the bar, which is drawn again below.
            Some((_, bar)) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

impl Events for Terminal {
    fn event(&self, event: Event) {
        match event {
            Event::Stage(_) => {}
            Event::Message { level, text } => self.say(level, &text),
            Event::Progress {
                unit,
                reused,
                counts,
            } => self.progress(unit, reused, &counts),
        }
    }
}
