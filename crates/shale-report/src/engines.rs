//! The engines the report compares, how each spends memory, and the
//! capability table: which workloads an engine cannot do, and why.
//!
//! Invariants: `ENGINES` lists every name db_bench's `--engine=` accepts, Shale
//! first, then Shale's option variants; a missing capability always carries
//! the reason printed in its cell.

/// How an engine's memory is configured for the "4 MB" and "128 MB" settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryModel {
    /// A write buffer (memtable) plus a block cache: LevelDB-like LSM trees.
    WriteBufferAndCache,
    /// One page cache for everything: B-trees (and WiredTiger's LSM, whose
    /// chunks live in the same cache).
    SingleCache,
    /// No cache of its own: memory-maps the file and relies on the OS.
    OsPageCache,
}

impl MemoryModel {
    /// Short description for the settings tables.
    pub fn describe(self) -> &'static str {
        match self {
            MemoryModel::WriteBufferAndCache => "write buffer + block cache",
            MemoryModel::SingleCache => "one page cache",
            MemoryModel::OsPageCache => "memory-mapped; OS page cache only",
        }
    }
}

/// Something a workload needs that not every engine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// Atomic write batches.
    Batches,
    /// A compression setting that can be switched off.
    CompressionSwitch,
    /// Blocks compressed with snappy when compression is on
    /// (`--compression=1`).
    SnappyBlocks,
    /// Blocks compressed with zstd or lz4 (`--compression_type=zstd|lz4`).
    ZstdLz4Blocks,
    /// Merge work deferred to background threads (an LSM tree's flushes and
    /// compactions), which a pause between bursts of writes lets catch up.
    DeferredMerges,
}

impl Capability {
    /// Column heading in the capability table.
    pub fn heading(self) -> &'static str {
        match self {
            Capability::Batches => "write batches",
            Capability::CompressionSwitch => "compression switch",
            Capability::SnappyBlocks => "snappy blocks",
            Capability::ZstdLz4Blocks => "zstd and lz4 blocks",
            Capability::DeferredMerges => "background merges",
        }
    }

    /// Every capability, in table order.
    pub const ALL: [Capability; 5] = [
        Capability::Batches,
        Capability::CompressionSwitch,
        Capability::SnappyBlocks,
        Capability::ZstdLz4Blocks,
        Capability::DeferredMerges,
    ];
}

/// One engine db_bench can drive, or Shale with a non-default option (a
/// variant: its own column, run only in the jobs that name it in
/// `Job::variants`).
#[derive(Debug, PartialEq, Eq)]
pub struct Engine {
    /// Column name; also the name passed to `--engine=` unless this is a
    /// variant.
    pub name: &'static str,
    /// A variant's engine and the db_bench flags that make it one.
    pub variant_of: Option<(&'static str, &'static [&'static str])>,
    /// Debian package its library comes from (for `dpkg-query`), if any.
    pub debian_package: Option<&'static str>,
    /// How memory settings map onto it.
    pub memory: MemoryModel,
    /// Missing capabilities, each with the reason shown in the report.
    pub lacks: &'static [(Capability, &'static str)],
    /// What a reader should know when comparing its figures (may be empty).
    pub note: &'static str,
    /// Bar and line colour (RGB).
    pub color: (u8, u8, u8),
}

impl Engine {
    /// Why the engine cannot do something, or `None` when it can.
    pub fn lacks(&self, cap: Capability) -> Option<&'static str> {
        self.lacks
            .iter()
            .find(|(c, _)| *c == cap)
            .map(|(_, why)| *why)
    }

    /// True for the engine under test.
    pub fn is_shale(&self) -> bool {
        self.name == "shale"
    }

    /// Shale or one of its variants: a base of the ratio columns.
    pub fn is_shale_family(&self) -> bool {
        self.is_shale() || self.variant_of.is_some_and(|(e, _)| e == "shale")
    }

    /// The name db_bench's `--engine=` takes.
    pub fn db_bench_engine(&self) -> &'static str {
        self.variant_of.map_or(self.name, |(e, _)| e)
    }

    /// Flags a variant adds to every db_bench command.
    pub fn variant_flags(&self) -> &'static [&'static str] {
        self.variant_of.map_or(&[], |(_, f)| f)
    }
}

/// The value-size threshold of the `shale-blobs` variant: values this large
/// or larger go to blob files.
pub const SHALE_BLOBS_THRESHOLD: &str = "--blob_threshold=4096";

/// The flag of the `shale-split` variant: a memtable flush is cut into
/// several tables where its keys jump.
pub const SHALE_SPLIT_FLUSHES: &str = "--split_flushes=1";

/// The flag of the `shale-bulk` variant: a sequential load into a fresh
/// database from one thread goes through Shale's bulk loader, where
/// WiredTiger takes a bulk cursor.
pub const SHALE_BULK_LOAD: &str = "--bulk_load=1";

/// What db_bench's WiredTiger engines cannot do: db_bench loads
/// WiredTiger's snappy extension and no other compressor.
const WIREDTIGER_LACKS: &[(Capability, &str)] = &[(
    Capability::ZstdLz4Blocks,
    "db_bench loads WiredTiger's snappy compressor only",
)];

/// Why a B-tree gains nothing from a pause between bursts of writes.
const NO_DEFERRED_MERGES: (Capability, &str) = (
    Capability::DeferredMerges,
    "a B-tree defers no merge work that a pause lets catch up",
);

/// Every engine, Shale first, in column order.
pub const ENGINES: [Engine; 11] = [
    Engine {
        variant_of: None,
        name: "shale",
        debian_package: None,
        memory: MemoryModel::WriteBufferAndCache,
        lacks: &[],
        note: "",
        color: (0xd9, 0x5f, 0x02),
    },
    Engine {
        name: "shale-blobs",
        variant_of: Some(("shale", &[SHALE_BLOBS_THRESHOLD])),
        debian_package: None,
        memory: MemoryModel::WriteBufferAndCache,
        lacks: &[],
        note: "Shale with value separation (`Options::blob_threshold` 4096): values of 4 KB or more are written once, to blob files; runs in the sections that ask for it (large values)",
        color: (0xa6, 0x36, 0x03),
    },
    Engine {
        name: "shale-split",
        variant_of: Some(("shale", &[SHALE_SPLIT_FLUSHES])),
        debian_package: None,
        memory: MemoryModel::WriteBufferAndCache,
        lacks: &[],
        note: "Shale with `Options::split_flushes`: a flush is cut into several tables where its keys jump (one per writer's key range); runs in the sections that ask for it (4-thread sequential puts)",
        color: (0xfd, 0x8d, 0x3c),
    },
    Engine {
        name: "shale-bulk",
        variant_of: Some(("shale", &[SHALE_BULK_LOAD])),
        debian_package: None,
        memory: MemoryModel::WriteBufferAndCache,
        lacks: &[],
        note: "Shale with db_bench's `--bulk_load=1`: a sequential load into a fresh database from one thread (fillseq, fillbatch, putseq; asynchronous writes) goes through `Db::bulk_loader`, straight into tables, where WiredTiger takes a bulk cursor; every other line as Shale; runs in the sections that ask for it (sequential loads)",
        color: (0x8c, 0x2d, 0x04),
    },
    Engine {
        variant_of: None,
        name: "leveldb",
        debian_package: Some("libleveldb-dev"),
        memory: MemoryModel::WriteBufferAndCache,
        lacks: &[(
            Capability::ZstdLz4Blocks,
            "LevelDB 1.23 has no zstd or lz4 blocks (none and snappy only)",
        )],
        note: "",
        color: (0x02, 0x55, 0xdf),
    },
    Engine {
        variant_of: None,
        name: "rocksdb",
        debian_package: Some("librocksdb-dev"),
        memory: MemoryModel::WriteBufferAndCache,
        lacks: &[],
        note: "LevelDB's sizes (write buffer, files, level sizes); other options at RocksDB's defaults",
        color: (0x6a, 0x3d, 0x9a),
    },
    Engine {
        variant_of: None,
        name: "sqlite3",
        debian_package: Some("libsqlite3-dev"),
        memory: MemoryModel::SingleCache,
        lacks: &[
            (
                Capability::CompressionSwitch,
                "SQLite3 never compresses (the seed repeats its baseline)",
            ),
            (Capability::SnappyBlocks, "SQLite3 never compresses"),
            (Capability::ZstdLz4Blocks, "SQLite3 never compresses"),
            NO_DEFERRED_MERGES,
        ],
        note: "one connection (WAL, exclusive locking); several threads take turns on it",
        color: (0x7a, 0xb0, 0x2c),
    },
    Engine {
        variant_of: None,
        name: "kyoto-treedb",
        debian_package: Some("libkyotocabinet-dev"),
        memory: MemoryModel::SingleCache,
        lacks: &[
            (
                Capability::Batches,
                "Kyoto TreeDB has no batch writes (omitted in the seed too)",
            ),
            (
                Capability::SnappyBlocks,
                "Kyoto TreeDB compresses with LZO (--kyoto_zcomp), not snappy",
            ),
            (
                Capability::ZstdLz4Blocks,
                "Kyoto Cabinet has no zstd or lz4 compressor",
            ),
            NO_DEFERRED_MERGES,
        ],
        note: "",
        color: (0xdf, 0x55, 0x55),
    },
    Engine {
        variant_of: None,
        name: "wiredtiger-lsm",
        debian_package: Some("libwiredtiger-dev"),
        memory: MemoryModel::SingleCache,
        lacks: WIREDTIGER_LACKS,
        note: "write-ahead log on; its preallocated 100 MB log files count in the space figures; LSM chunks shrink to fit caches under 64 MB",
        color: (0x1b, 0x9e, 0x77),
    },
    Engine {
        variant_of: None,
        name: "wiredtiger-btree",
        debian_package: Some("libwiredtiger-dev"),
        memory: MemoryModel::SingleCache,
        lacks: &[WIREDTIGER_LACKS[0], NO_DEFERRED_MERGES],
        note: "write-ahead log on; its preallocated 100 MB log files count in the space figures",
        color: (0xe7, 0x29, 0x8a),
    },
    Engine {
        variant_of: None,
        name: "lmdb",
        debian_package: Some("liblmdb-dev"),
        memory: MemoryModel::OsPageCache,
        lacks: &[
            (
                Capability::CompressionSwitch,
                "LMDB never compresses; nothing to switch off",
            ),
            (Capability::SnappyBlocks, "LMDB never compresses"),
            (Capability::ZstdLz4Blocks, "LMDB never compresses"),
            NO_DEFERRED_MERGES,
        ],
        note: "one writer at a time (LMDB's write lock)",
        color: (0x66, 0x66, 0x66),
    },
];

/// Looks an engine up by its `--engine=` name.
pub fn engine(name: &str) -> Option<&'static Engine> {
    ENGINES.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shale_comes_first_and_names_are_unique() {
        assert!(ENGINES[0].is_shale());
        for (i, a) in ENGINES.iter().enumerate() {
            for b in &ENGINES[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.color, b.color, "{} and {}", a.name, b.name);
            }
        }
    }

    #[test]
    fn shales_option_variants_follow_it_with_their_flags() {
        let variants: Vec<&Engine> = ENGINES
            .iter()
            .skip(1)
            .take_while(|e| e.variant_of.is_some())
            .collect();
        let names: Vec<&str> = variants.iter().map(|e| e.name).collect();
        assert_eq!(names, ["shale-blobs", "shale-split", "shale-bulk"]);
        assert!(ENGINES[1 + variants.len()..]
            .iter()
            .all(|e| e.variant_of.is_none()));
        for e in &variants {
            assert_eq!(e.db_bench_engine(), "shale");
            assert!(e.is_shale_family() && !e.is_shale());
            assert!(!e.variant_flags().is_empty(), "{}", e.name);
            assert_eq!(e.memory, ENGINES[0].memory);
            assert!(e.note.contains("runs in the sections that ask for it"));
        }
        assert_eq!(
            engine("shale-blobs").unwrap().variant_flags(),
            [SHALE_BLOBS_THRESHOLD]
        );
        assert_eq!(
            engine("shale-split").unwrap().variant_flags(),
            ["--split_flushes=1"]
        );
        assert_eq!(
            engine("shale-bulk").unwrap().variant_flags(),
            ["--bulk_load=1"]
        );
        assert!(ENGINES[0].variant_flags().is_empty());
    }

    #[test]
    fn capability_gaps_from_the_seeds() {
        let kyoto = engine("kyoto-treedb").unwrap();
        assert!(kyoto.lacks(Capability::Batches).is_some());
        assert!(engine("lmdb")
            .unwrap()
            .lacks(Capability::CompressionSwitch)
            .is_some());
        assert_eq!(engine("shale").unwrap().lacks(Capability::Batches), None);
        // Block types: zstd and lz4 for Shale and RocksDB only.
        for e in &ENGINES {
            let zstd = e.lacks(Capability::ZstdLz4Blocks).is_none();
            assert_eq!(
                zstd,
                [
                    "shale",
                    "shale-blobs",
                    "shale-split",
                    "shale-bulk",
                    "rocksdb"
                ]
                .contains(&e.name),
                "{}",
                e.name
            );
            let snappy = e.lacks(Capability::SnappyBlocks).is_none();
            assert_eq!(
                snappy,
                !["sqlite3", "kyoto-treedb", "lmdb"].contains(&e.name),
                "{}",
                e.name
            );
        }
        // A reason fits in a table cell (longer ones become numbered notes,
        // and the cells of a capability gap must name it).
        for e in &ENGINES {
            for (_, why) in e.lacks {
                assert!(
                    why.chars().count() <= crate::markdown::MAX_CELL_REASON,
                    "{}: {why}",
                    e.name
                );
            }
        }
        assert_eq!(engine("nope"), None);
    }
}
