//! `db_bench`: runs LevelDB db_bench's workloads against one engine.
//!
//! Exit codes: 0 on success (also when the engine is not in this build: a
//! one-line reason is printed), 1 when a benchmark fails, 2 for bad flags.

use std::io::Write;
use std::process::ExitCode;

use shale_bench::flags::{self, FlagError};
use shale_bench::runner::{self, Outcome};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flags = match flags::parse(&args) {
        Ok(f) => f,
        Err(FlagError::Help) => {
            print!("{}", flags::usage());
            return ExitCode::SUCCESS;
        }
        Err(FlagError::Invalid(msg)) => {
            eprintln!("db_bench: {msg}");
            eprintln!("(run with --help for the list of flags)");
            return ExitCode::from(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match runner::run(&flags, &mut out) {
        Ok(Outcome::Ran) | Ok(Outcome::Skipped(_)) => {
            let _ = out.flush();
            ExitCode::SUCCESS
        }
        Err(e) => {
            let _ = out.flush();
            eprintln!("db_bench: {e}");
            ExitCode::from(1)
        }
    }
}
