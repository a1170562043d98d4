//! The pipeline's events on the terminal: messages on stderr (`error:`, `warning:`, `note:` or plain), and
//! progress as a bar with rate and ETA on a terminal, or a line every tenth in a log; no progress with
//! `--quiet`.

use indicatif::{ProgressBar, ProgressStyle};
use ragtester_stages::front::Counts;
use ragtester_stages::{Event, Events, Level};
use std::io::IsTerminal;
use std::sync::Mutex;

pub struct Terminal {
    quiet: bool,
    tty: bool,
    /// The bar being drawn, and the unit it counts.
    bar: Mutex<Option<(&'static str, ProgressBar)>>,
}

impl Terminal {
    pub fn new(quiet: bool) -> Self {
        Self {
            quiet,
            tty: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    fn progress(&self, unit: &'static str, reused: &'static str, c: &Counts) {
        if self.quiet {
            return;
        }
        if !self.tty {
            let step = (c.total / 10).max(1);
            if c.done.is_multiple_of(step) || c.done == c.total {
                eprintln!("  {}", counted(unit, reused, c));
            }
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
        let line = level.line(text);
        let slot = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        match slot.as_ref() {
            // Above the bar, which is drawn again below.
            Some((_, bar)) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

/// `12/40 cells, 1 errors, 3 cached`, or `2/5 documents` for work that reuses nothing.
fn counted(unit: &str, reused: &str, c: &Counts) -> String {
    if reused.is_empty() {
        format!("{}/{} {unit}", c.done, c.total)
    } else {
        format!(
            "{}/{} {unit}, {} errors, {} {reused}",
            c.done, c.total, c.errors, c.cached
        )
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
