"""Write batches, snapshots and prefixed databases."""

import pytest

# -- WriteBatch ---------------------------------------------------------------


def test_write_batch(db):
    db.put(b"gone", b"x")
    wb = db.write_batch()
    wb.put(b"a", b"1")
    wb.put(b"b", b"2")
    wb.delete(b"gone")
    assert db.get(b"a") is None
    wb.write()
    assert db.get(b"a") == b"1" and db.get(b"b") == b"2" and db.get(b"gone") is None


def test_write_keeps_the_batch(db):
    wb = db.write_batch()
    wb.put(b"a", b"1")
    size = wb.approximate_size()
    wb.write()
    assert wb.approximate_size() == size
    wb.clear()
    assert wb.approximate_size() < size
    db.delete(b"a")
    wb.write()
    assert db.get(b"a") is None


def test_clear_and_approximate_size(db):
    wb = db.write_batch()
    empty = wb.approximate_size()
    assert empty > 0
    wb.put(b"key", b"value")
    assert wb.approximate_size() > empty
    wb.clear()
    assert wb.approximate_size() == empty
    wb.write()
    assert list(db) == []


def test_append(db):
    a = db.write_batch()
    a.put(b"a", b"1")
    b = db.write_batch()
    b.put(b"b", b"2")
    b.delete(b"a")
    a.append(b)
    assert a.approximate_size() > b.approximate_size()
    a.write()
    assert db.get(b"a") is None and db.get(b"b") == b"2"
    with pytest.raises(TypeError):
        a.append(b"not a batch")


def test_context_manager_writes(db):
    with db.write_batch() as wb:
        wb.put(b"a", b"1")
        assert db.get(b"a") is None
    assert db.get(b"a") == b"1"


def test_context_manager_writes_on_error_without_transaction(db):
    with pytest.raises(ZeroDivisionError):
        with db.write_batch() as wb:
            wb.put(b"a", b"1")
            1 / 0
    assert db.get(b"a") == b"1"


def test_transaction_writes_nothing_on_error(db):
    with pytest.raises(ZeroDivisionError):
        with db.write_batch(transaction=True) as wb:
            wb.put(b"a", b"1")
            wb.put(b"b", b"2")
            1 / 0
    assert db.get(b"a") is None and db.get(b"b") is None
    with db.write_batch(transaction=True) as wb:
        wb.put(b"a", b"1")
    assert db.get(b"a") == b"1"


def test_sync_batch(db):
    with db.write_batch(sync=True) as wb:
        wb.put(b"a", b"1")
    assert db.get(b"a") == b"1"
    with pytest.raises(TypeError):
        db.write_batch(True)


def test_batch_type_errors(db):
    wb = db.write_batch()
    with pytest.raises(TypeError):
        wb.put("a", b"1")
    with pytest.raises(TypeError):
        wb.put(b"a", None)
    with pytest.raises(TypeError):
        wb.delete("a")


def test_batch_is_atomic_for_readers(db):
    snap_before = db.snapshot()
    with db.write_batch() as wb:
        for i in range(100):
            wb.put(b"%03d" % i, b"x")
    assert snap_before.get(b"050") is None
    assert len(list(db)) == 100


# -- Snapshot -----------------------------------------------------------------


def test_snapshot_isolation(db):
    db.put(b"a", b"1")
    db.put(b"b", b"2")
    snap = db.snapshot()
    db.put(b"a", b"changed")
    db.delete(b"b")
    db.put(b"c", b"3")
    assert snap.get(b"a") == b"1"
    assert snap.get(b"b") == b"2"
    assert snap.get(b"c") is None
    assert snap.get(b"c", b"dflt") == b"dflt"
    assert snap.get(b"a", verify_checksums=True, fill_cache=False) == b"1"
    assert list(snap.iterator()) == [(b"a", b"1"), (b"b", b"2")]
    assert list(snap.iterator(reverse=True, include_value=False)) == [b"b", b"a"]
    assert list(snap.iterator(start=b"b")) == [(b"b", b"2")]
    assert list(db) == [(b"a", b"changed"), (b"c", b"3")]
    raw = snap.raw_iterator()
    raw.seek_to_last()
    assert raw.item() == (b"b", b"2")
    raw = snap.raw_iterator(verify_checksums=True, fill_cache=False)
    raw.seek(b"a")
    assert raw.value() == b"1"


def test_snapshot_survives_compaction(db):
    for i in range(2000):
        db.put(b"%04d" % i, b"old")
    snap = db.snapshot()
    for i in range(2000):
        db.put(b"%04d" % i, b"new")
    db.compact_range()
    assert snap.get(b"1000") == b"old"
    assert all(v == b"old" for _, v in snap.iterator())
    assert db.get(b"1000") == b"new"


def test_snapshot_release_and_close(db):
    db.put(b"a", b"1")
    snap = db.snapshot()
    snap.release()
    with pytest.raises(RuntimeError):
        snap.get(b"a")
    snap.close()  # again: fine
    snap = db.snapshot()
    snap.close()
    with pytest.raises(RuntimeError):
        snap.get(b"a")


def test_snapshot_context_manager(db):
    db.put(b"a", b"1")
    with db.snapshot() as snap:
        db.put(b"a", b"2")
        assert snap.get(b"a") == b"1"
    with pytest.raises(RuntimeError):
        snap.get(b"a")


def test_snapshot_type_errors(db):
    snap = db.snapshot()
    with pytest.raises(TypeError):
        snap.get("a")
    with pytest.raises(TypeError):
        snap.iterator(prefix=b"a", start=b"b")


# -- PrefixedDB ---------------------------------------------------------------


@pytest.fixture
def pdb(db):
    db.put(b"a", b"outside")
    db.put(b"p", b"prefix itself")
    db.put(b"p-1", b"one")
    db.put(b"p-2", b"two")
    db.put(b"p-3", b"three")
    db.put(b"q", b"outside")
    return db.prefixed_db(b"p-")


def test_prefixed_attributes(db, pdb):
    assert pdb.db is db
    assert pdb.prefix == b"p-"
    nested = pdb.prefixed_db(b"x")
    assert nested.prefix == b"p-x"
    assert nested.db is db
    assert "PrefixedDB" in repr(pdb)


def test_prefixed_get_put_delete(db, pdb):
    assert pdb.get(b"1") == b"one"
    assert pdb.get(b"a") is None
    assert pdb.get(b"zz", b"dflt") == b"dflt"
    assert pdb.get(b"1", verify_checksums=True, fill_cache=False) == b"one"
    pdb.put(b"4", b"four")
    assert db.get(b"p-4") == b"four"
    pdb.put(b"5", b"five", sync=True)
    pdb.delete(b"1")
    pdb.delete(b"5", sync=True)
    assert db.get(b"p-1") is None and db.get(b"p-5") is None
    with pytest.raises(TypeError):
        pdb.get("1")


def test_prefixed_iteration(pdb):
    assert list(pdb) == [(b"1", b"one"), (b"2", b"two"), (b"3", b"three")]
    assert list(pdb.iterator(reverse=True, include_value=False)) == [b"3", b"2", b"1"]
    assert list(pdb.iterator(start=b"2", include_value=False)) == [b"2", b"3"]
    assert list(pdb.iterator(stop=b"2", include_value=False)) == [b"1"]
    assert list(pdb.iterator(stop=b"2", include_stop=True, include_value=False)) == [b"1", b"2"]
    assert list(pdb.iterator(start=b"1", include_start=False, include_key=False)) == [
        b"two", b"three"]
    assert list(pdb.iterator(prefix=b"2", include_value=False)) == [b"2"]
    it = pdb.iterator(include_value=False)
    it.seek(b"2")
    assert next(it) == b"2"
    assert it.prev() == b"2"
    assert it.prev() == b"1"
    with pytest.raises(StopIteration):
        it.prev()
    it.seek_to_stop()
    assert it.prev() == b"3"
    it = pdb.iterator(include_value=False)
    it.seek(b"9")
    with pytest.raises(StopIteration):
        next(it)
    it.seek(b"")
    assert next(it) == b"1"


def test_prefixed_write_batch(db, pdb):
    with pdb.write_batch() as wb:
        wb.put(b"x", b"X")
        wb.delete(b"1")
    assert db.get(b"p-x") == b"X" and db.get(b"p-1") is None
    with pytest.raises(ValueError):
        with pdb.write_batch(transaction=True, sync=True) as wb:
            wb.put(b"y", b"Y")
            raise ValueError
    assert db.get(b"p-y") is None


def test_prefixed_snapshot(db, pdb):
    snap = pdb.snapshot()
    pdb.put(b"1", b"changed")
    assert snap.get(b"1") == b"one"
    assert list(snap.iterator(include_value=False)) == [b"1", b"2", b"3"]
    # As plyvel's, its raw iterator sees the whole database.
    raw = snap.raw_iterator()
    raw.seek_to_first()
    assert raw.key() == b"a"
    raw.seek(b"p-2")
    assert raw.item() == (b"p-2", b"two")
    snap.close()


def test_nested_prefixed(db, pdb):
    inner = pdb.prefixed_db(b"in/")
    inner.put(b"k", b"v")
    assert db.get(b"p-in/k") == b"v"
    assert list(inner) == [(b"k", b"v")]
    assert (b"in/k", b"v") in list(pdb)


def test_prefix_of_0xff_bytes(db):
    pdb = db.prefixed_db(b"\xff\xff")
    pdb.put(b"a", b"1")
    pdb.put(b"\xff", b"2")
    db.put(b"\xfe", b"outside")
    assert list(pdb) == [(b"a", b"1"), (b"\xff", b"2")]
    assert list(pdb.iterator(reverse=True, include_value=False)) == [b"\xff", b"a"]
