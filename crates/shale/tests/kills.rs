//! Real kills: a process killed with SIGKILL at any moment loses no write it
//! acknowledged, synchronous or not (the operating system keeps what the
//! process handed it), and leaves a database that opens holding a prefix of
//! its writes.
//!
//! The parent runs this test binary again as a child (the environment
//! variable `SHALE_KILL_CHILD_DIR` set). The child opens a database on the
//! real file system (`PosixFs`) and writes a deterministic history: write
//! `i` (a put, a delete or a batch, one in 50 synchronous; its values name
//! `i`) is a function of the seed and `i` (every other child writes with
//! `concurrent_memtable_writes`, and two children in three with value
//! separation: values of 400 bytes or more, about half, go to blob
//! files). After each write returns it
//! prints `ack i` and flushes. The parent kills it (`Child::kill`, SIGKILL)
//! either 0-3 ms after it starts opening the database (so during open and
//! recovery) or a random number of acknowledged writes in (during writes,
//! memtable switches, flushes and compactions: the write buffer is 64 KB),
//! then checks a copy of the directory: it opens, and holds the model
//! after the first `p` writes, where `p` is the number of acknowledged writes
//! or one more (the write in flight). The next child resumes the history at
//! `p` on the directory as the killed child left it, so it recovers from the
//! kill itself.
//!
//! `kills_sample` (in `cargo test`) kills 50 children; the long version
//! kills 1,000 and prints the count:
//!
//! ```text
//! cargo test -p shale --release --test kills -- --ignored --nocapture
//! ```
//!
//! A failure names the seed and round; `SHALE_KILL_SEED=<seed>` reruns the
//! same rounds (the kills land where timing puts them, so not always at the
//! same write).

mod common;

use std::io::{BufRead, BufReader, Read, Write as _};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::history::{apply, check_prefix, contents, Contents, Update, Write};
use common::workload::{key, value, write};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale::{Db, Options};

const CHILD_DIR_ENV: &str = "SHALE_KILL_CHILD_DIR";
const CHILD_SEED_ENV: &str = "SHALE_KILL_CHILD_SEED";
const CHILD_START_ENV: &str = "SHALE_KILL_CHILD_START";
const CHILD_REUSE_ENV: &str = "SHALE_KILL_CHILD_REUSE_LOGS";
const CHILD_CONCURRENT_ENV: &str = "SHALE_KILL_CHILD_CONCURRENT_MEMTABLE_WRITES";
const CHILD_BLOBS_ENV: &str = "SHALE_KILL_CHILD_BLOBS";
/// The blob threshold of the children that separate values.
const BLOB_THRESHOLD: usize = 400;
const SEED_ENV: &str = "SHALE_KILL_SEED";
/// The test whose body the child runs.
const CHILD_TEST: &str = "kills_sample";
/// Keys the history writes.
const KEYS: u32 = 1000;

/// Write `i` of the history of `seed`, and whether it is synchronous.
fn history(seed: u64, i: u64) -> (Write, bool) {
    let mut rng = StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let updates = if rng.gen_ratio(1, 5) {
        rng.gen_range(2..=6)
    } else {
        1
    };
    let write = (0..updates)
        .map(|_| {
            let k = key(rng.gen_range(0..KEYS));
            let value =
                (!rng.gen_ratio(1, 8)).then(|| value(&k, i as usize, rng.gen_range(16..800)));
            Update { key: k, value }
        })
        .collect();
    (write, i.is_multiple_of(50))
}

/// The options of a child; the same without the modes for the checks.
#[derive(Clone, Copy, Debug, Default)]
struct Modes {
    reuse_logs: bool,
    concurrent_memtable_writes: bool,
    blobs: bool,
}

fn options(m: Modes) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 1 << 20,
        reuse_logs: m.reuse_logs,
        concurrent_memtable_writes: m.concurrent_memtable_writes,
        blob_threshold: m.blobs.then_some(BLOB_THRESHOLD),
        ..Default::default()
    }
}

fn env_u64(name: &str) -> u64 {
    let v = std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    v.parse().unwrap_or_else(|e| panic!("{name}={v}: {e}"))
}

/// The child: opens the database and writes the history from
/// `CHILD_START_ENV` on, reporting each acknowledged write, until killed.
fn child(dir: &Path) -> ! {
    let seed = env_u64(CHILD_SEED_ENV);
    let start = env_u64(CHILD_START_ENV);
    let modes = Modes {
        reuse_logs: env_u64(CHILD_REUSE_ENV) == 1,
        concurrent_memtable_writes: env_u64(CHILD_CONCURRENT_ENV) == 1,
        blobs: env_u64(CHILD_BLOBS_ENV) == 1,
    };
    let mut out = std::io::stdout().lock();
    let mut say = |line: String| {
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    say("opening".to_string());
    let db = match Db::open(dir, options(modes)) {
        Ok(db) => db,
        Err(e) => {
            say(format!("error: open: {e}"));
            std::process::exit(1);
        }
    };
    for i in start.. {
        let (w, sync) = history(seed, i);
        if let Err(e) = write(&db, &w, sync) {
            say(format!("error: write {i}: {e}"));
            std::process::exit(1);
        }
        say(format!("ack {i}"));
        if i % 1000 == 500 {
            if let Err(e) = db.compact_range(None, None) {
                say(format!("error: compact_range after write {i}: {e}"));
                std::process::exit(1);
            }
        }
    }
    unreachable!()
}

/// When to kill a child.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// This many microseconds after it says it is opening the database.
    Opening(u64),
    /// This many microseconds after it acknowledges this many writes.
    Acked(u64, u64),
}

/// What a killed child did.
struct Killed {
    /// One past the last write it acknowledged (its start if none).
    acked: u64,
    /// What it printed (its last lines) and wrote on stderr, for messages.
    output: String,
}

/// Runs a child on `dir` from write `start` and kills it at `at`.
fn run_child(dir: &Path, seed: u64, start: u64, modes: Modes, at: KillAt) -> Killed {
    let mut child: Child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, dir)
        .env(CHILD_SEED_ENV, seed.to_string())
        .env(CHILD_START_ENV, start.to_string())
        .env(CHILD_REUSE_ENV, u64::from(modes.reuse_logs).to_string())
        .env(
            CHILD_CONCURRENT_ENV,
            u64::from(modes.concurrent_memtable_writes).to_string(),
        )
        .env(CHILD_BLOBS_ENV, u64::from(modes.blobs).to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });

    let mut acked = start;
    let mut last_lines = Vec::new();
    let mut note = |line: &str, acked: &mut u64| {
        if let Some(i) = line.strip_prefix("ack ") {
            *acked = i.parse::<u64>().unwrap() + 1;
        }
        if last_lines.len() == 5 {
            last_lines.remove(0);
        }
        last_lines.push(line.to_string());
    };
    // Reads lines until the kill is due (or the child's output ends).
    let mut opening = false;
    while let Ok(line) = rx.recv() {
        note(&line, &mut acked);
        // (The test harness may print its own text before it on the line.)
        opening |= line.ends_with("opening");
        let (due, delay) = match at {
            KillAt::Opening(us) => (opening, us),
            KillAt::Acked(n, us) => (acked >= start + n, us),
        };
        if due {
            std::thread::sleep(Duration::from_micros(delay));
            break;
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    reader.join().unwrap();
    // Lines printed before the kill are still in the pipe.
    while let Ok(line) = rx.try_recv() {
        note(&line, &mut acked);
    }
    let output = format!(
        "its last lines: {last_lines:?}; its stderr: {}",
        err_reader.join().unwrap().trim_end()
    );
    assert_eq!(
        status.signal(),
        Some(9),
        "the child ended by itself ({status}), not by the kill; {output}"
    );
    Killed { acked, output }
}

/// Copies the files of `from` into a new directory `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// Kills `rounds` children writing one database, checking it after each.
fn kill_rounds(rounds: u32, default_seed: u64) {
    let seed = std::env::var(SEED_ENV).map_or(default_seed, |s| s.parse().unwrap());
    let mut rng = StdRng::seed_from_u64(seed);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // The model after the first `start` writes, which the database holds.
    let mut model = Contents::new();
    let mut start = 0;
    let mut kills_in_open = 0;
    // Blob files found by the checks (so that the blob children were
    // killed with values in blob files).
    let mut blob_files_seen = 0;
    for round in 0..rounds {
        let at = if rng.gen_ratio(1, 4) {
            kills_in_open += 1;
            KillAt::Opening(rng.gen_range(0..3000))
        } else {
            KillAt::Acked(rng.gen_range(0..1500), rng.gen_range(0..2000))
        };
        let modes = Modes {
            reuse_logs: rng.gen_ratio(1, 3),
            // Every other child with concurrent memtable writes.
            concurrent_memtable_writes: round % 2 == 1,
            // Two in three with value separation.
            blobs: round % 3 != 0,
        };
        let killed = run_child(&dir, seed, start, modes, at);

        let context = format!(
            "seed {seed} ({SEED_ENV}={seed} reruns), round {round}: a child started at write \
             {start} ({modes:?}), was killed at {at:?} having acknowledged writes \
             up to {}; {}",
            killed.acked, killed.output
        );
        // Check a copy, so that the next child recovers from the kill itself.
        let check = tmp.path().join(format!("check{round}"));
        copy_dir(&dir, &check);
        blob_files_seen += std::fs::read_dir(&check)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".blob")
            })
            .count();
        let db = Db::open(&check, options(Modes::default()))
            .unwrap_or_else(|e| panic!("{context}\nthe database does not open: {e}"));
        let found = contents(&db).unwrap_or_else(|e| panic!("{context}\nreading: {e}"));
        drop(db);
        std::fs::remove_dir_all(&check).unwrap();
        // The acknowledged writes and perhaps the one in flight.
        let writes: Vec<Write> = (start..=killed.acked).map(|i| history(seed, i).0).collect();
        let min = (killed.acked - start) as usize;
        let p =
            check_prefix(&model, &writes, min, &found).unwrap_or_else(|e| panic!("{context}\n{e}"));
        for w in &writes[..p] {
            apply(&mut model, w);
        }
        start += p as u64;
    }
    println!(
        "{rounds} kills ({kills_in_open} while opening), {start} writes, {blob_files_seen} blob \
         files seen by the checks (seed {seed})"
    );
    assert!(blob_files_seen > 0, "no check found a blob file");
}

#[test]
fn kills_sample() {
    if let Some(dir) = std::env::var_os(CHILD_DIR_ENV) {
        child(Path::new(&dir));
    }
    kill_rounds(50, 1);
}

#[test]
#[ignore = "long: 1,000 kills; see the file header"]
fn kills_all() {
    kill_rounds(1000, 2);
}
