//! Progress of long commands: a bar with rate and time left on a terminal,
//! plain lines every few seconds or nothing otherwise.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::bytes::human_bytes;

/// How progress is shown (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressMode {
    /// A bar when standard error is a terminal, nothing otherwise.
    Auto,
    /// Always a bar.
    Bar,
    /// A plain line every five seconds.
    Plain,
    /// Nothing.
    None,
}

/// What the counter counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Items,
}

pub struct Progress {
    bar: Option<ProgressBar>,
    plain: Option<Plain>,
}

struct Plain {
    label: String,
    unit: Unit,
    total: Option<u64>,
    position: u64,
    started: Instant,
    last: Instant,
}

const PLAIN_EVERY: Duration = Duration::from_secs(5);

impl Progress {
    pub fn new(mode: ProgressMode, label: &str, total: Option<u64>, unit: Unit) -> Progress {
        let mode = match mode {
            ProgressMode::Auto if std::io::stderr().is_terminal() => ProgressMode::Bar,
            ProgressMode::Auto => ProgressMode::None,
            m => m,
        };
        match mode {
            ProgressMode::Bar => {
                let bar = match total {
                    Some(t) => ProgressBar::new(t),
                    None => ProgressBar::new_spinner(),
                };
                bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(5));
                let counter = match unit {
                    Unit::Bytes => "{bytes}/{total_bytes} ({bytes_per_sec}, {eta} left)",
                    Unit::Items => "{human_pos}/{human_len} ({per_sec}, {eta} left)",
                };
                let template = match total {
                    Some(_) => format!("{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {counter}"),
                    None => match unit {
                        Unit::Bytes => {
                            "{prefix} {spinner} [{elapsed_precise}] {bytes} ({bytes_per_sec})"
                                .to_string()
                        }
                        Unit::Items => {
                            "{prefix} {spinner} [{elapsed_precise}] {human_pos} ({per_sec})"
                                .to_string()
                        }
                    },
                };
                if let Ok(style) = ProgressStyle::with_template(&template) {
                    bar.set_style(style);
                }
                bar.set_prefix(label.to_string());
                bar.enable_steady_tick(Duration::from_millis(200));
                Progress {
                    bar: Some(bar),
                    plain: None,
                }
            }
            ProgressMode::Plain => {
                let now = Instant::now();
                Progress {
                    bar: None,
                    plain: Some(Plain {
                        label: label.to_string(),
                        unit,
                        total,
                        position: 0,
                        started: now,
                        last: now,
                    }),
                }
            }
            _ => Progress {
                bar: None,
                plain: None,
            },
        }
    }

    pub fn inc(&mut self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
        }
        if let Some(p) = &mut self.plain {
            p.position += n;
            p.maybe_print();
        }
    }

    pub fn set_position(&mut self, pos: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(pos);
        }
        if let Some(p) = &mut self.plain {
            p.position = pos;
            p.maybe_print();
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        if let Some(p) = self.plain.take() {
            if p.started.elapsed() >= PLAIN_EVERY {
                p.print();
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Plain {
    fn maybe_print(&mut self) {
        let now = Instant::now();
        if now.duration_since(self.last) >= PLAIN_EVERY {
            self.last = now;
            self.print();
        }
    }

    fn print(&self) {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        let rate = self.position as f64 / secs;
        let show = |n: u64| match self.unit {
            Unit::Bytes => human_bytes(n),
            Unit::Items => n.to_string(),
        };
        let mut line = format!("{}: {}", self.label, show(self.position));
        if let Some(total) = self.total {
            line.push_str(&format!(" of {}", show(total)));
            if rate > 0.0 && total > self.position {
                let left = (total - self.position) as f64 / rate;
                line.push_str(&format!(", {left:.0}s left"));
            }
        }
        line.push_str(&format!(", {}/s", show(rate as u64)));
        errln!("{line}");
    }
}
