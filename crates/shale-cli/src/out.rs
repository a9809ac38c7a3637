//! Standard output and standard error of every command.
//!
//! Commands write their output only through here: `outln!`, or a writer
//! of their own whose errors go through [`output_error`]. Never `print!`:
//! it panics when the reader has gone (`shale stats ./db | head`). When
//! standard output is a pipe whose reader has closed it, the command ends
//! quietly with success, as `ls | head` does for its users; any other write
//! error (a full disk) is an error naming standard output.
//!
//! Restoring SIGPIPE's default action at startup was passed over: it also
//! kills a command that writes to a database on the way, and a full disk
//! would still panic. Rust leaves SIGPIPE ignored, so a write to a closed
//! pipe returns `BrokenPipe` and is handled here.
//!
//! Standard error carries messages only (`errln!`, `err!`): when it
//! is closed they are lost, which is no reason to stop or change a
//! command's exit code. `clippy::print_stdout` and `clippy::print_stderr`
//! are denied in main.rs so that every write comes through here.

use std::fmt;
use std::io::{self, Write};

use crate::open::{CliError, CliResult};

/// An error writing to standard output; a closed pipe ends the command
/// quietly with success (`shale scan ./db | head`).
pub fn output_error(e: io::Error) -> CliError {
    if e.kind() == io::ErrorKind::BrokenPipe {
        CliError::new(0, "")
    } else {
        CliError::error(format!("standard output: {e}"))
    }
}

/// Writes one line to standard output.
pub fn line(args: fmt::Arguments<'_>) -> CliResult<()> {
    io::stdout()
        .lock()
        .write_fmt(format_args!("{args}\n"))
        .map_err(output_error)
}

/// Writes a message to standard error; if it cannot be written there is
/// nowhere left to say so, and the command goes on.
pub fn message(args: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.flush());
}

/// `println!` for command output: a line to standard output, as a
/// `CliResult` (a closed pipe is a quiet end, see [`output_error`]).
macro_rules! outln {
    () => {
        $crate::out::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics: a line to standard error.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::message(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` that never panics.
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::out::message(format_args!($($arg)*))
    };
}
