"""The database object: opening, options, single reads and writes,
properties, sizes, compaction, closing, and the module's functions."""

import gc
import os

import pytest

from conftest import MODULE_NAME


# -- opening and options ------------------------------------------------------


def test_open_missing_without_create_if_missing(plyvel, db_path):
    with pytest.raises(plyvel.Error):
        plyvel.DB(db_path)
    assert not os.path.exists(os.path.join(db_path, "CURRENT"))


def test_create_if_missing_then_reopen(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    db.put(b"k", b"v")
    db.close()
    db = plyvel.DB(db_path)
    assert db.get(b"k") == b"v"
    db.close()


def test_error_if_exists(plyvel, db_path):
    plyvel.DB(db_path, create_if_missing=True).close()
    with pytest.raises(plyvel.Error):
        plyvel.DB(db_path, error_if_exists=True)
    plyvel.DB(db_path, error_if_exists=False).close()


def test_second_open_is_an_io_error(plyvel, db):
    with pytest.raises(plyvel.IOError) as info:
        plyvel.DB(db.name)
    assert isinstance(info.value, OSError)
    assert isinstance(info.value, plyvel.Error)


def test_name_as_str_and_bytes(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    assert db.name == db_path
    db.close()
    db = plyvel.DB(db_path.encode(), create_if_missing=True)
    assert db.name == db_path.encode()
    db.close()


def test_name_of_wrong_type(plyvel):
    with pytest.raises(TypeError):
        plyvel.DB(123, create_if_missing=True)


def test_all_options(plyvel, db_path):
    db = plyvel.DB(
        db_path,
        create_if_missing=True,
        error_if_exists=True,
        paranoid_checks=True,
        write_buffer_size=64 * 1024,
        max_open_files=100,
        lru_cache_size=1024 * 1024,
        block_size=1024,
        block_restart_interval=8,
        max_file_size=128 * 1024,
        compression=None,
        bloom_filter_bits=10,
    )
    for i in range(3000):
        db.put(b"key-%06d" % i, b"value-%d" % i * 10)
    db.compact_range()
    for i in range(0, 3000, 7):
        assert db.get(b"key-%06d" % i) == b"value-%d" % i * 10
    assert db.get(b"key-missing") is None
    db.close()


@pytest.mark.parametrize("compression", ["snappy", b"snappy", None])
def test_compression_values(plyvel, db_path, compression):
    db = plyvel.DB(db_path, create_if_missing=True, compression=compression)
    db.put(b"a" * 100, b"b" * 1000)
    db.compact_range()
    assert db.get(b"a" * 100) == b"b" * 1000
    db.close()


def _tables_with_filters(path):
    names = [n for n in os.listdir(path) if n.endswith(".ldb")]
    assert names, os.listdir(path)
    with_filter = 0
    for n in names:
        with open(os.path.join(path, n), "rb") as f:
            with_filter += b"filter.leveldb.BuiltinBloomFilter2" in f.read()
    return with_filter, len(names)


@pytest.mark.shale_only
@pytest.mark.parametrize("bits,filtered", [(None, True), (0, False), (10, True)])
def test_bloom_filter_bits_unset_is_shales_default_filter(plyvel, tmp_path, bits, filtered):
    # Unset, Shale writes its default filter (10 bits per key); 0 writes
    # none, as plyvel's default does.
    path = str(tmp_path / "db")
    kwargs = {} if bits is None else {"bloom_filter_bits": bits}
    db = plyvel.DB(path, create_if_missing=True, **kwargs)
    for i in range(2000):
        db.put(b"key-%06d" % i, b"v" * 50)
    db.compact_range()
    assert db.get(b"key-000007") == b"v" * 50
    db.close()
    with_filter, tables = _tables_with_filters(path)
    assert with_filter == (tables if filtered else 0), (with_filter, tables)


@pytest.mark.shale_only
@pytest.mark.parametrize("compression", ["zstd", b"zstd", "lz4", b"lz4"])
def test_shale_compression_values(plyvel, db_path, compression):
    db = plyvel.DB(db_path, create_if_missing=True, compression=compression)
    for i in range(2000):
        db.put(b"key-%06d" % i, b"value %d; " % i * 8)
    db.compact_range()
    db.close()
    name = compression.decode() if isinstance(compression, bytes) else compression
    tables = [p for p in os.listdir(db_path) if p.endswith(".ldb")]
    assert tables
    if name == "zstd":
        # A table's first data block is at offset 0: a zstd frame.
        for t in tables:
            with open(os.path.join(db_path, t), "rb") as f:
                assert f.read(4) == b"\x28\xb5\x2f\xfd"
    db = plyvel.DB(db_path)
    assert db.get(b"key-001999") == b"value 1999; " * 8
    assert sum(1 for _ in db) == 2000
    db.close()
    with pytest.raises(ValueError):
        plyvel.repair_db(db_path, compression="zlib")
    plyvel.repair_db(db_path, compression=name)
    with plyvel.DB(db_path) as db:
        assert db.get(b"key-000000") == b"value 0; " * 8


def test_compression_errors(plyvel, db_path):
    with pytest.raises(ValueError):
        plyvel.DB(db_path, create_if_missing=True, compression="zlib")
    with pytest.raises(TypeError):
        plyvel.DB(db_path, create_if_missing=True, compression=5)


def test_options_are_keyword_only(plyvel, db_path):
    with pytest.raises(TypeError):
        plyvel.DB(db_path, True)


def test_comparator_arguments(plyvel, db_path):
    with pytest.raises(ValueError):
        plyvel.DB(db_path, create_if_missing=True, comparator=lambda a, b: 0)
    with pytest.raises(ValueError):
        plyvel.DB(db_path, create_if_missing=True, comparator_name=b"x")
    with pytest.raises(TypeError):
        plyvel.DB(db_path, create_if_missing=True, comparator=5, comparator_name=b"x")
    with pytest.raises(TypeError):
        plyvel.DB(db_path, create_if_missing=True, comparator=lambda a, b: 0, comparator_name="x")


def reverse_cmp(a, b):
    # plyvel's comparators return a negative, zero or positive number
    return (a < b) - (a > b)


def test_custom_comparator(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True, comparator=reverse_cmp,
                   comparator_name=b"test.Reverse")
    keys = [b"%03d" % i for i in range(200)]
    for k in keys:
        db.put(k, k)
    db.compact_range()
    assert [k for k, _ in db] == sorted(keys, reverse=True)
    assert list(db.iterator(start=b"150", stop=b"100", include_value=False)) == [
        b"%03d" % i for i in range(150, 100, -1)]
    assert db.get(b"042") == b"042"
    db.close()
    # The comparator's name is stored: another name is refused.
    with pytest.raises(plyvel.Error):
        plyvel.DB(db_path, comparator=reverse_cmp, comparator_name=b"other")
    db = plyvel.DB(db_path, comparator=reverse_cmp, comparator_name=b"test.Reverse")
    assert next(db.iterator(include_value=False)) == b"199"
    db.close()


@pytest.mark.shale_only
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_comparator_raising_does_not_crash(plyvel, db_path):
    # plyvel aborts the process; Shale reports the exception as unraisable
    # and treats the keys as equal.
    def bad(a, b):
        raise ValueError("boom")

    db = plyvel.DB(db_path, create_if_missing=True, comparator=bad, comparator_name=b"bad")
    db.put(b"a", b"1")
    db.put(b"b", b"2")
    db.get(b"a")
    db.close()


# -- get, put, delete ---------------------------------------------------------


def test_put_get_delete(plyvel, db):
    assert db.get(b"k") is None
    db.put(b"k", b"v")
    assert db.get(b"k") == b"v"
    db.put(b"k", b"v2", sync=True)
    assert db.get(b"k") == b"v2"
    db.delete(b"k")
    assert db.get(b"k") is None
    db.delete(b"k", sync=True)  # deleting a missing key is fine
    db.delete(b"never")


def test_get_default_and_read_options(plyvel, db):
    assert db.get(b"x", b"dflt") == b"dflt"
    assert db.get(b"x", default=42) == 42
    db.put(b"x", b"y")
    assert db.get(b"x", b"dflt") == b"y"
    assert db.get(b"x", verify_checksums=True) == b"y"
    assert db.get(b"x", fill_cache=False) == b"y"
    assert db.get(b"x", None, verify_checksums=True, fill_cache=False) == b"y"


def test_empty_and_binary_keys(plyvel, db):
    db.put(b"", b"empty key")
    db.put(b"\x00\xff\x00", b"")
    assert db.get(b"") == b"empty key"
    assert db.get(b"\x00\xff\x00") == b""
    assert isinstance(db.get(b"\x00\xff\x00"), bytes)


def test_large_value(plyvel, db):
    value = os.urandom(3 * 1024 * 1024)
    db.put(b"big", value)
    assert db.get(b"big") == value


def test_str_and_none_are_refused(plyvel, db):
    with pytest.raises(TypeError):
        db.put("k", b"v")
    with pytest.raises(TypeError):
        db.put(b"k", "v")
    with pytest.raises(TypeError):
        db.get("k")
    with pytest.raises(TypeError):
        db.delete("k")
    with pytest.raises(TypeError):
        db.put(b"k", None)
    with pytest.raises(TypeError):
        db.get(None)
    with pytest.raises(TypeError):
        db.put(1, b"v")


def test_bool_arguments_must_be_bool(plyvel, db):
    with pytest.raises(TypeError):
        db.get(b"a", verify_checksums=1)
    with pytest.raises(TypeError):
        db.put(b"a", b"b", True)  # sync is keyword-only


@pytest.mark.shale_only
def test_bytes_like_arguments(plyvel, db):
    db.put(bytearray(b"ba"), memoryview(b"mv"))
    assert db.get(memoryview(b"ba")) == b"mv"
    assert db.get(bytearray(b"ba")) == b"mv"
    db.delete(bytearray(b"ba"))
    assert db.get(b"ba") is None


@pytest.mark.shale_only
def test_in_is_refused(plyvel, db):
    db.put(b"k", b"v")
    with pytest.raises(TypeError):
        b"k" in db  # noqa: B015
    with pytest.raises(TypeError):
        b"k" in db.prefixed_db(b"p")  # noqa: B015


# -- properties, sizes, compaction ---------------------------------------------


def test_get_property(plyvel, db):
    assert db.get_property(b"leveldb.num-files-at-level0") == b"0"
    stats = db.get_property(b"leveldb.stats")
    assert isinstance(stats, bytes)
    assert db.get_property(b"leveldb.sstables") is not None
    assert db.get_property(b"no.such.property") is None
    with pytest.raises(TypeError):
        db.get_property("leveldb.stats")


def test_approximate_sizes_and_compact_range(plyvel, db):
    for i in range(5000):
        db.put(b"%06d" % i, os.urandom(1000))
    db.compact_range(start=b"000000", stop=b"999999")
    db.compact_range()
    db.compact_range(start=b"001000")
    db.compact_range(stop=b"001000")
    whole = db.approximate_size(b"000000", b"999999")
    assert 4_000_000 < whole < 6_000_000
    sizes = db.approximate_sizes((b"000000", b"002500"), (b"002500", b"999999"), (b"a", b"b"))
    assert len(sizes) == 3
    assert sizes[0] > 1_000_000 and sizes[1] > 1_000_000 and sizes[2] == 0
    assert db.approximate_sizes() == []
    with pytest.raises(TypeError):
        db.compact_range(b"a", b"b")  # keyword-only
    with pytest.raises(TypeError):
        db.approximate_size("a", "b")
    with pytest.raises(ValueError):
        db.approximate_sizes((b"a",))


# -- closing -----------------------------------------------------------------


def test_close_and_closed(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    assert not db.closed
    db.close()
    assert db.closed
    db.close()  # twice is fine
    for call in [
        lambda: db.get(b"a"),
        lambda: db.put(b"a", b"b"),
        lambda: db.delete(b"a"),
        lambda: db.write_batch(),
        lambda: db.iterator(),
        lambda: db.raw_iterator(),
        lambda: iter(db),
        lambda: db.snapshot(),
        lambda: db.get_property(b"leveldb.stats"),
        lambda: db.approximate_size(b"a", b"b"),
        lambda: db.approximate_sizes((b"a", b"b")),
        lambda: db.compact_range(),
        lambda: db.prefixed_db(b"p").get(b"a"),
        lambda: db.prefixed_db(b"p").put(b"a", b"b"),
    ]:
        with pytest.raises(RuntimeError):
            call()
    # The directory is free again.
    plyvel.DB(db_path).close()


def test_context_manager_closes(plyvel, db_path):
    with plyvel.DB(db_path, create_if_missing=True) as db:
        db.put(b"a", b"b")
        assert not db.closed
    assert db.closed
    with plyvel.DB(db_path) as db:
        assert db.get(b"a") == b"b"


def test_children_closed_with_the_db(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    db.put(b"a", b"1")
    it = db.iterator()
    raw = db.raw_iterator()
    snap = db.snapshot()
    batch = db.write_batch()
    db.close()
    with pytest.raises(RuntimeError):
        next(it)
    with pytest.raises(RuntimeError):
        it.seek_to_start()
    with pytest.raises(RuntimeError):
        raw.seek_to_first()
    with pytest.raises(RuntimeError):
        raw.valid()
    with pytest.raises(RuntimeError):
        snap.get(b"a")
    with pytest.raises(RuntimeError):
        snap.iterator()
    with pytest.raises(RuntimeError):
        batch.put(b"a", b"b")
    with pytest.raises(RuntimeError):
        batch.write()
    snap.close()
    it.close()
    raw.close()


def test_children_keep_the_db_alive(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    for k in [b"a", b"b", b"c"]:
        db.put(k, k)
    it = db.iterator(include_value=False)
    snap = db.snapshot()
    del db
    gc.collect()
    assert list(it) == [b"a", b"b", b"c"]
    assert snap.get(b"b") == b"b"
    del it, snap
    gc.collect()
    plyvel.DB(db_path).close()


def test_unreferenced_db_is_closed(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    db.put(b"a", b"b")
    del db
    gc.collect()
    with plyvel.DB(db_path) as db:
        assert db.get(b"a") == b"b"


# -- module functions and attributes ------------------------------------------


def test_destroy_db(plyvel, db_path):
    with plyvel.DB(db_path, create_if_missing=True) as db:
        db.put(b"a", b"b")
    plyvel.destroy_db(db_path)
    assert not os.path.exists(os.path.join(db_path, "CURRENT"))
    with pytest.raises(plyvel.Error):
        plyvel.DB(db_path)
    plyvel.destroy_db(db_path)  # nothing left: fine


def test_destroy_open_db_fails(plyvel, db):
    with pytest.raises(plyvel.IOError):
        plyvel.destroy_db(db.name)


def test_repair_db(plyvel, db_path):
    with plyvel.DB(db_path, create_if_missing=True) as db:
        for i in range(1000):
            db.put(b"%04d" % i, b"v%d" % i)
        db.compact_range()
        db.put(b"late", b"in the log")
    for name in os.listdir(db_path):
        if name.startswith("MANIFEST-") or name == "CURRENT":
            os.unlink(os.path.join(db_path, name))
    with pytest.raises(plyvel.Error):
        plyvel.DB(db_path)
    plyvel.repair_db(db_path)
    with plyvel.DB(db_path) as db:
        assert db.get(b"0500") == b"v500"
        assert db.get(b"late") == b"in the log"
        assert len(list(db)) == 1001


def test_repair_db_arguments(plyvel, db_path):
    with plyvel.DB(db_path, create_if_missing=True) as db:
        db.put(b"a", b"b")
    plyvel.repair_db(
        db_path, paranoid_checks=True, write_buffer_size=1 << 20, max_open_files=50,
        lru_cache_size=1 << 20, block_size=4096, block_restart_interval=16,
        max_file_size=1 << 20, compression=None, bloom_filter_bits=10)
    with pytest.raises(ValueError):
        plyvel.repair_db(db_path, compression="zlib")
    with pytest.raises(TypeError):
        plyvel.repair_db(db_path, True)
    with plyvel.DB(db_path) as db:
        assert db.get(b"a") == b"b"


def test_exception_hierarchy(plyvel):
    assert issubclass(plyvel.Error, Exception)
    assert issubclass(plyvel.IOError, plyvel.Error)
    assert issubclass(plyvel.IOError, IOError)
    assert issubclass(plyvel.CorruptionError, plyvel.Error)
    assert not issubclass(plyvel.CorruptionError, IOError)
    assert issubclass(plyvel.IteratorInvalidError, plyvel.Error)


def test_versions(plyvel):
    assert isinstance(plyvel.__version__, str) and plyvel.__version__
    major, minor = plyvel.__leveldb_version__.split(".")[:2]
    assert int(major) == 1 and int(minor) >= 20


def test_corruption_error(plyvel, db_path):
    with plyvel.DB(db_path, create_if_missing=True, compression=None) as db:
        for i in range(2000):
            db.put(b"%05d" % i, b"x" * 100)
        db.compact_range()
    tables = [n for n in os.listdir(db_path) if n.endswith((".ldb", ".sst"))]
    assert tables
    path = os.path.join(db_path, tables[0])
    with open(path, "r+b") as f:
        f.seek(100)
        f.write(b"\xde\xad\xbe\xef" * 4)
    with plyvel.DB(db_path) as db:
        with pytest.raises(plyvel.CorruptionError):
            db.get(b"00001", verify_checksums=True)
        with pytest.raises(plyvel.CorruptionError):
            list(db.iterator(verify_checksums=True))


@pytest.mark.skipif(MODULE_NAME != "shale", reason="Shale's own typing files")
def test_typing_files(plyvel):
    here = os.path.dirname(plyvel.__file__)
    assert os.path.exists(os.path.join(here, "py.typed"))
    assert os.path.exists(os.path.join(here, "__init__.pyi"))
