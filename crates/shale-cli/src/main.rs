//! `shale`: look at, check, repair, load and export Shale and LevelDB
//! databases from the command line.
//!
//! Commands that only read open the database read-only (no lock, nothing
//! written), so they work on a database another process holds open;
//! commands that write take its lock. Exit codes: 0 success, 1 a negative
//! answer (`get` found no key, `check` found damage), 2 bad usage, 3 an
//! error, 4 the database is held by another process.
//!
//! Every write to standard output or error goes through the `out` module,
//! which neither panics on a closed pipe nor hides a failed write.
#![deny(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod out;
mod basic;
mod bytes;
mod inspect_cmd;
mod io_cmd;
mod open;
mod progress;
mod stats;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::open::{CliResult, WriteTuning};
use crate::progress::ProgressMode;

#[derive(Debug, Parser)]
#[command(
    name = "shale",
    version,
    about = "Look at, check, repair, load and export Shale and LevelDB databases",
    long_about = "Look at, check, repair, load and export Shale and LevelDB databases.\n\n\
        Keys and values are text in which \\\\ is a backslash and \\xNN any byte \
        (\\n, \\t, \\r and \\0 too), or hexadecimal with --hex. Commands that only \
        read open the database read-only: no lock, nothing written, so they work \
        while another process has it open.\n\n\
        Exit codes: 0 success; 1 a negative answer (get: no such key; check: \
        damage found); 2 bad usage; 3 an error; 4 the database is held by \
        another process.",
    after_help = "Example:\n  shale put ./db user:1 alice --create\n  shale scan ./db --prefix user:"
)]
struct Cli {
    /// How long commands show progress (on standard error).
    #[arg(long, value_enum, global = true, default_value_t = ProgressMode::Auto)]
    progress: ProgressMode,
    #[command(subcommand)]
    command: Command,
}

/// Selects keys: `--from` (inclusive), `--to` (exclusive), `--prefix`.
#[derive(Debug, Clone, clap::Args)]
struct KeyRange {
    /// The first key to include.
    #[arg(long)]
    from: Option<String>,
    /// The first key past the range (not included).
    #[arg(long)]
    to: Option<String>,
    /// Only keys starting with this.
    #[arg(long)]
    prefix: Option<String>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the value of a key
    #[command(after_help = "Example:\n  shale get ./db user:1\n  shale get ./db --hex 00ff")]
    Get {
        /// The database directory.
        db: PathBuf,
        key: String,
        /// The key is hexadecimal, and the value is printed in hexadecimal.
        #[arg(long)]
        hex: bool,
        /// Print the value's bytes exactly, with no newline.
        #[arg(long, conflicts_with = "hex")]
        raw: bool,
    },
    /// Set a key to a value
    #[command(
        after_help = "Example:\n  shale put ./db user:1 alice --create\n  shale put ./db 'bin\\x00key' 'v\\xff'"
    )]
    Put {
        db: PathBuf,
        key: String,
        value: String,
        /// The key and value are hexadecimal.
        #[arg(long)]
        hex: bool,
        /// Create the database if it does not exist.
        #[arg(long)]
        create: bool,
        /// Make the write durable (fdatasync) before returning.
        #[arg(long)]
        sync: bool,
        #[command(flatten)]
        tune: WriteTuning,
    },
    /// Remove a key
    #[command(after_help = "Example:\n  shale delete ./db user:1")]
    Delete {
        db: PathBuf,
        key: String,
        /// The key is hexadecimal.
        #[arg(long)]
        hex: bool,
        /// Make the write durable (fdatasync) before returning.
        #[arg(long)]
        sync: bool,
    },
    /// Print the entries of a range of keys, in order
    #[command(
        after_help = "Example:\n  shale scan ./db --prefix user: --limit 10\n  shale scan ./db --from a --to m --reverse --format json"
    )]
    Scan {
        db: PathBuf,
        #[command(flatten)]
        range: KeyRange,
        /// Last key first.
        #[arg(long)]
        reverse: bool,
        /// At most this many entries.
        #[arg(long)]
        limit: Option<u64>,
        /// Print keys only.
        #[arg(long)]
        keys_only: bool,
        /// text: key TAB value, escaped; hex: the same in hexadecimal;
        /// json: one JSON object a line.
        #[arg(long, value_enum, default_value_t = basic::ScanFormat::Text)]
        format: basic::ScanFormat,
        /// --from, --to and --prefix are hexadecimal.
        #[arg(long)]
        hex: bool,
    },
    /// Count the keys of a range
    #[command(after_help = "Example:\n  shale count ./db --prefix user:")]
    Count {
        db: PathBuf,
        #[command(flatten)]
        range: KeyRange,
        /// --from, --to and --prefix are hexadecimal.
        #[arg(long)]
        hex: bool,
    },
    /// Levels, files, sizes, counts and sequence numbers
    #[command(after_help = "Example:\n  shale stats ./db\n  shale stats ./db --json --fast")]
    Stats {
        db: PathBuf,
        /// One JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Skip reading every table and entry: no counts, compression
        /// ratio or oldest sequence.
        #[arg(long)]
        fast: bool,
    },
    /// Decode one file: a log, a table, a MANIFEST or CURRENT
    #[command(
        after_help = "Example:\n  shale dump ./db/000005.ldb\n  shale dump ./db/MANIFEST-000002 --format json"
    )]
    Dump {
        file: PathBuf,
        /// Print only the structure of a table or log, not its entries.
        #[arg(long)]
        no_entries: bool,
        /// text for people, json for programs (one object a line).
        #[arg(long, value_enum, default_value_t = inspect_cmd::DumpFormat::Text)]
        format: inspect_cmd::DumpFormat,
    },
    /// Verify every checksum and the key order of every table; change nothing
    #[command(after_help = "Example:\n  shale check ./db && echo sound")]
    Check {
        db: PathBuf,
        /// A JSON report instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compact a range of keys, or everything
    #[command(after_help = "Example:\n  shale compact ./db\n  shale compact ./db --from a --to m")]
    Compact {
        db: PathBuf,
        /// The first key of the range (default: the first key).
        #[arg(long)]
        from: Option<String>,
        /// The last key of the range, included (default: the last key).
        #[arg(long)]
        to: Option<String>,
        /// --from and --to are hexadecimal.
        #[arg(long)]
        hex: bool,
        #[command(flatten)]
        tune: WriteTuning,
    },
    /// Rebuild a damaged database from its tables and logs
    #[command(after_help = "Example:\n  shale repair ./db")]
    Repair { db: PathBuf },
    /// Delete a database and its files
    #[command(after_help = "Example:\n  shale destroy ./db --yes")]
    Destroy {
        db: PathBuf,
        /// Do not ask.
        #[arg(long, short)]
        yes: bool,
    },
    /// Load entries from JSON lines, CSV or a key-value stream
    ///
    /// Input sorted by key (as `export` writes it) goes straight into table
    /// files, installed all at once at the end, skipping the log, the
    /// memtable and the compactions that would move it down. From the first
    /// key that is not after the one before it, what came before is
    /// installed and the rest goes through write batches (later records
    /// still win over earlier ones).
    #[command(
        after_help = "Example:\n  shale load ./db --input data.jsonl --create\n  shale export ./old --format kv | shale load ./new --create --format kv   # sorted: straight into tables"
    )]
    Load {
        db: PathBuf,
        /// The input file; standard input if absent or `-`.
        #[arg(long, short)]
        input: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = io_cmd::DataFormat::Jsonl)]
        format: io_cmd::DataFormat,
        /// Create the database if it does not exist.
        #[arg(long)]
        create: bool,
        /// Approximate bytes of one write batch, once the input turns out
        /// not to be sorted.
        #[arg(long, default_value_t = 1 << 20)]
        batch_bytes: usize,
        /// Write every record through write batches (the log and the
        /// memtable, as puts do), even sorted input.
        #[arg(long)]
        no_bulk: bool,
        /// Threads that write the tables of sorted input (default: the
        /// machine's cores, at most 4; 1 writes them on the reading thread).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
        threads: Option<u16>,
        #[command(flatten)]
        tune: WriteTuning,
    },
    /// Write entries as JSON lines, CSV or a key-value stream
    #[command(
        after_help = "Example:\n  shale export ./db --output data.jsonl\n  shale export ./db --prefix user: --format csv"
    )]
    Export {
        db: PathBuf,
        /// The output file; standard output if absent or `-`.
        #[arg(long, short)]
        output: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = io_cmd::DataFormat::Jsonl)]
        format: io_cmd::DataFormat,
        #[command(flatten)]
        range: KeyRange,
        /// --from, --to and --prefix are hexadecimal.
        #[arg(long)]
        hex: bool,
    },
}

fn run(cli: Cli) -> CliResult<i32> {
    let progress = cli.progress;
    match cli.command {
        Command::Get { db, key, hex, raw } => basic::get(&db, &key, hex, raw),
        Command::Put {
            db,
            key,
            value,
            hex,
            create,
            sync,
            tune,
        } => basic::put(&db, &key, &value, hex, create, sync, &tune),
        Command::Delete { db, key, hex, sync } => basic::delete(&db, &key, hex, sync),
        Command::Scan {
            db,
            range,
            reverse,
            limit,
            keys_only,
            format,
            hex,
        } => basic::scan(&db, &range.resolve(hex)?, reverse, limit, keys_only, format),
        Command::Count { db, range, hex } => basic::count(&db, &range.resolve(hex)?, progress),
        Command::Stats { db, json, fast } => stats::stats(&db, json, fast, progress),
        Command::Dump {
            file,
            no_entries,
            format,
        } => inspect_cmd::dump(&file, !no_entries, format),
        Command::Check { db, json } => inspect_cmd::check(&db, json, progress),
        Command::Compact {
            db,
            from,
            to,
            hex,
            tune,
        } => basic::compact(&db, from.as_deref(), to.as_deref(), hex, &tune),
        Command::Repair { db } => inspect_cmd::repair(&db, progress),
        Command::Destroy { db, yes } => basic::destroy(&db, yes),
        Command::Load {
            db,
            input,
            format,
            create,
            batch_bytes,
            no_bulk,
            threads,
            tune,
        } => io_cmd::load(
            &db,
            input.as_deref(),
            format,
            create,
            batch_bytes,
            (!no_bulk).then_some(threads.map(usize::from)),
            &tune,
            progress,
        ),
        Command::Export {
            db,
            output,
            format,
            range,
            hex,
        } => io_cmd::export(
            &db,
            output.as_deref(),
            format,
            &range.resolve(hex)?,
            progress,
        ),
    }
}

impl KeyRange {
    /// The byte bounds the options select.
    fn resolve(&self, hex: bool) -> CliResult<basic::Bounds> {
        let enc = bytes::Encoding::from_hex_flag(hex);
        let parse = |what: &str, s: &Option<String>| -> CliResult<Option<Vec<u8>>> {
            s.as_deref()
                .map(|s| enc.decode(what, s).map_err(open::CliError::usage))
                .transpose()
        };
        let mut start = parse("--from", &self.from)?;
        let mut end = parse("--to", &self.to)?;
        if let Some(p) = parse("--prefix", &self.prefix)? {
            if start.as_ref().is_none_or(|s| *s < p) {
                start = Some(p.clone());
            }
            if let Some(succ) = bytes::prefix_successor(&p) {
                if end.as_ref().is_none_or(|e| *e > succ) {
                    end = Some(succ);
                }
            }
        }
        Ok(basic::Bounds { start, end })
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A closed pipe (`shale scan | head`) ends the command quietly: see
    // `out::output_error`.
    match run(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            if !e.message.is_empty() {
                errln!("shale: {}", e.message);
            }
            ExitCode::from(e.code as u8)
        }
    }
}
