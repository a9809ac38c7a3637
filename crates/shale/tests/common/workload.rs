//! A deterministic workload for crash and fault tests: puts, deletes and
//! batches, some synchronous, over a small key space, with manual
//! compactions and reopenings, under options small enough that memtables
//! switch, flush and compact often.

use std::path::Path;
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shale::env::FileSystem;
use shale::{BloomFilterPolicy, CompressionType, Db, Error, Options, WriteBatch, WriteOptions};

use super::history::{Update, Write};

/// One step of a workload.
#[derive(Clone, Debug)]
pub enum Step {
    /// A write: one update through `put_with`/`delete_with`, more through a
    /// batch.
    Write {
        /// Its updates.
        write: Write,
        /// Written with `WriteOptions { sync: true, .. }`.
        sync: bool,
    },
    /// `compact_range(begin, end)`.
    Compact {
        /// Lower bound, if any.
        begin: Option<Vec<u8>>,
        /// Upper bound, if any.
        end: Option<Vec<u8>>,
    },
    /// Closes the database and opens it again.
    Reopen,
}

/// Options a workload runs under, besides the file system.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// A short name for messages.
    pub name: &'static str,
    /// `Options::reuse_logs`.
    pub reuse_logs: bool,
    /// `Options::compression`.
    pub compression: CompressionType,
    /// A bloom filter policy.
    pub bloom: bool,
    /// `Options::paranoid_checks`.
    pub paranoid: bool,
    /// `Options::concurrent_memtable_writes`.
    pub concurrent_memtable_writes: bool,
    /// `Options::blob_threshold`.
    pub blob_threshold: Option<usize>,
    /// `Options::split_flushes`.
    pub split_flushes: bool,
    /// Keys in four far-apart ranges ([`stream_key`]) instead of one
    /// ([`key`]), so that flushes hold runs with jumps between them.
    pub streams: bool,
}

/// The option sets the tests run under.
pub const CONFIGS: [Config; 7] = [
    Config {
        name: "default",
        reuse_logs: false,
        compression: CompressionType::Snappy,
        bloom: false,
        paranoid: false,
        concurrent_memtable_writes: false,
        blob_threshold: None,
        split_flushes: false,
        streams: false,
    },
    Config {
        name: "reuse-logs",
        reuse_logs: true,
        compression: CompressionType::Snappy,
        bloom: false,
        paranoid: false,
        concurrent_memtable_writes: false,
        blob_threshold: None,
        split_flushes: false,
        streams: false,
    },
    Config {
        name: "bloom-uncompressed",
        reuse_logs: false,
        compression: CompressionType::None,
        bloom: true,
        paranoid: false,
        concurrent_memtable_writes: false,
        blob_threshold: None,
        split_flushes: false,
        streams: false,
    },
    Config {
        name: "paranoid-reuse",
        reuse_logs: true,
        compression: CompressionType::None,
        bloom: true,
        paranoid: true,
        concurrent_memtable_writes: false,
        blob_threshold: None,
        split_flushes: false,
        streams: false,
    },
    Config {
        name: "concurrent-memtable",
        reuse_logs: false,
        compression: CompressionType::Snappy,
        bloom: true,
        paranoid: false,
        concurrent_memtable_writes: true,
        blob_threshold: None,
        split_flushes: false,
        streams: false,
    },
    Config {
        // Values of 512 bytes and more (about two in three) in blob files;
        // `reuse_logs` asks for what a log with blob pointers must refuse.
        name: "blobs",
        reuse_logs: true,
        compression: CompressionType::Snappy,
        bloom: false,
        paranoid: false,
        concurrent_memtable_writes: false,
        blob_threshold: Some(512),
        split_flushes: false,
        streams: false,
    },
    Config {
        // Keys in four ranges far apart, flushes cut between them.
        name: "split-streams",
        reuse_logs: false,
        compression: CompressionType::Snappy,
        bloom: true,
        paranoid: false,
        concurrent_memtable_writes: false,
        blob_threshold: None,
        split_flushes: true,
        streams: true,
    },
];

impl Config {
    /// The config named `name`.
    pub fn named(name: &str) -> Config {
        *CONFIGS
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no config named {name:?}"))
    }

    /// The options: the smallest write buffer and table size the engine
    /// accepts, small blocks, and `fs`.
    pub fn options(&self, fs: Arc<dyn FileSystem>) -> Options {
        Options {
            create_if_missing: true,
            fs,
            write_buffer_size: 64 << 10,
            max_file_size: 1 << 20,
            block_size: 1 << 10,
            compression: self.compression,
            reuse_logs: self.reuse_logs,
            paranoid_checks: self.paranoid,
            concurrent_memtable_writes: self.concurrent_memtable_writes,
            blob_threshold: self.blob_threshold,
            blob_file_size: 64 << 10,
            split_flushes: self.split_flushes,
            filter_policy: self
                .bloom
                .then(|| Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn shale::FilterPolicy>),
            ..Default::default()
        }
    }
}

/// The key numbered `n`.
pub fn key(n: u32) -> Vec<u8> {
    format!("key{n:05}").into_bytes()
}

/// The key numbered `n` in four ranges a billion apart: `n % 4` picks the
/// range, `n / 4` the key in it.
pub fn stream_key(n: u32) -> Vec<u8> {
    format!(
        "key{:010}",
        u64::from(n % 4) * 1_000_000_000 + u64::from(n / 4)
    )
    .into_bytes()
}

impl Config {
    /// How this config names key `n`: [`key`] or [`stream_key`].
    pub fn key_fn(&self) -> fn(u32) -> Vec<u8> {
        if self.streams {
            stream_key
        } else {
            key
        }
    }
}

/// A value for `key` written by write number `index`, `len` bytes long (at
/// least its prefix): it names the write, so a wrong value says where it
/// came from.
pub fn value(key: &[u8], index: usize, len: usize) -> Vec<u8> {
    let mut v = format!("{}@{index}:", String::from_utf8_lossy(key)).into_bytes();
    let mut x = index as u32 ^ 0x9e37_79b9;
    while v.len() < len {
        // A cheap generator: compressible enough for snappy to matter, not
        // so much that blocks shrink to nothing.
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        v.push(b'a' + ((x >> 16) % 8) as u8);
    }
    v
}

/// `steps` steps from `seed`: about 80% single puts and deletes and 17%
/// batches of 2 to 8 updates (one write in 8 synchronous), 2% compactions
/// and 1% reopenings, over `keys` keys with values of up to 1.5 KB.
pub fn generate(seed: u64, steps: usize, keys: u32) -> Vec<Step> {
    generate_keys(seed, steps, keys, key)
}

/// [`generate`] with keys named by `key`.
pub fn generate_keys(seed: u64, steps: usize, keys: u32, key: fn(u32) -> Vec<u8>) -> Vec<Step> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(steps);
    let mut writes = 0;
    let update = |rng: &mut StdRng, writes: usize| {
        let k = key(rng.gen_range(0..keys));
        if rng.gen_ratio(1, 6) {
            Update {
                key: k,
                value: None,
            }
        } else {
            let len = rng.gen_range(16..1500);
            let value = Some(value(&k, writes, len));
            Update { key: k, value }
        }
    };
    for _ in 0..steps {
        let roll = rng.gen_range(0..100);
        let step = if roll < 80 {
            Step::Write {
                write: vec![update(&mut rng, writes)],
                sync: rng.gen_ratio(1, 8),
            }
        } else if roll < 97 {
            let n = rng.gen_range(2..=8);
            Step::Write {
                write: (0..n).map(|_| update(&mut rng, writes)).collect(),
                sync: rng.gen_ratio(1, 8),
            }
        } else if roll < 99 {
            let (a, b) = (rng.gen_range(0..keys), rng.gen_range(0..keys));
            let bound = |rng: &mut StdRng, n| rng.gen_ratio(2, 3).then(|| key(n));
            Step::Compact {
                begin: bound(&mut rng, a.min(b)),
                end: bound(&mut rng, a.max(b)),
            }
        } else {
            Step::Reopen
        };
        if matches!(step, Step::Write { .. }) {
            writes += 1;
        }
        out.push(step);
    }
    out
}

/// The first call of a run that failed.
#[derive(Debug)]
pub struct Failure {
    /// The index of the step (`None` for the first open).
    pub step: Option<usize>,
    /// What the call was, e.g. "write 12 (sync)".
    pub call: String,
    /// Its error.
    pub error: Error,
}

/// A write a run attempted.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// Its updates.
    pub write: Write,
    /// Written with `sync`.
    pub sync: bool,
    /// The run's clock (e.g. the file system's operation count) when the
    /// call began.
    pub started: u64,
    /// The clock when the call returned success; `None` if it failed.
    pub finished: Option<u64>,
}

/// What a run did.
pub struct Outcome {
    /// The writes attempted, in order (the last may have failed).
    pub attempts: Vec<Attempt>,
    /// The call that failed, which ended the run.
    pub failure: Option<Failure>,
    /// The database, if open at the end.
    pub db: Option<Db>,
}

impl Outcome {
    /// The writes attempted.
    pub fn writes(&self) -> Vec<Write> {
        self.attempts.iter().map(|a| a.write.clone()).collect()
    }

    /// How many writes were acknowledged (a prefix of the attempts).
    pub fn acked(&self) -> usize {
        self.attempts
            .iter()
            .filter(|a| a.finished.is_some())
            .count()
    }

    /// How many writes had begun when the clock read `t`.
    pub fn started_before(&self, t: u64) -> usize {
        self.attempts.iter().filter(|a| a.started < t).count()
    }

    /// How many writes must survive a crash when the clock read `t`: all up
    /// to the last one acknowledged with `sync` by then.
    pub fn durable_before(&self, t: u64) -> usize {
        self.attempts
            .iter()
            .rposition(|a| a.sync && a.finished.is_some_and(|f| f < t))
            .map_or(0, |i| i + 1)
    }
}

/// Applies `write` to `db`.
pub fn write(db: &Db, write: &Write, sync: bool) -> shale::Result<()> {
    let opts = WriteOptions {
        sync,
        ..Default::default()
    };
    match write.as_slice() {
        [Update {
            key,
            value: Some(v),
        }] => db.put_with(&opts, key, v),
        [Update { key, value: None }] => db.delete_with(&opts, key),
        updates => {
            let mut batch = WriteBatch::new();
            for u in updates {
                match &u.value {
                    Some(v) => batch.put(&u.key, v)?,
                    None => batch.delete(&u.key)?,
                }
            }
            db.write(&opts, &batch)
        }
    }
}

/// Opens the database in `dir` and runs `steps` until one fails. `clock`
/// dates the writes: with a `FaultFs`'s operation count, a write whose call
/// `finished` at `f` made every operation it needed before operation `f + 1`.
pub fn run(steps: &[Step], dir: &Path, options: &Options, clock: &dyn Fn() -> u64) -> Outcome {
    let mut out = Outcome {
        attempts: Vec::new(),
        failure: None,
        db: None,
    };
    let mut db = match Db::open(dir, options.clone()) {
        Ok(db) => db,
        Err(error) => {
            out.failure = Some(Failure {
                step: None,
                call: "open".to_string(),
                error,
            });
            return out;
        }
    };
    for (i, step) in steps.iter().enumerate() {
        let (call, result) = match step {
            Step::Write { write: w, sync } => {
                let started = clock();
                let result = write(&db, w, *sync);
                out.attempts.push(Attempt {
                    write: w.clone(),
                    sync: *sync,
                    started,
                    finished: result.is_ok().then(clock),
                });
                let kind = if *sync { "sync" } else { "async" };
                (format!("write {} ({kind})", out.attempts.len() - 1), result)
            }
            Step::Compact { begin, end } => (
                "compact_range".to_string(),
                db.compact_range(begin.as_deref(), end.as_deref()),
            ),
            Step::Reopen => {
                drop(db);
                match Db::open(dir, options.clone()) {
                    Ok(reopened) => {
                        db = reopened;
                        continue;
                    }
                    Err(error) => {
                        out.failure = Some(Failure {
                            step: Some(i),
                            call: "reopen".to_string(),
                            error,
                        });
                        return out;
                    }
                }
            }
        };
        if let Err(error) = result {
            out.failure = Some(Failure {
                step: Some(i),
                call,
                error,
            });
            break;
        }
    }
    out.db = Some(db);
    out
}
