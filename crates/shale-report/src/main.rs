//! `shale-report`: runs the benchmark studies through db_bench and writes the
//! report. See `shale-report --help` and the crate README.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let command = args
        .iter()
        .map(|a| shale_report::runner::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let opts = match shale_report::cli::parse_args(args.into_iter().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("shale-report: {e}");
            return ExitCode::from(2);
        }
    };
    if opts.help {
        print!("{}", shale_report::cli::USAGE);
        return ExitCode::SUCCESS;
    }
    let mut stderr = std::io::stderr();
    match shale_report::run(&opts, &command, &mut stderr) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("shale-report: {e}");
            ExitCode::FAILURE
        }
    }
}
