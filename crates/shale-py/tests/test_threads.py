"""Threads: the GIL is released during calls into the engine, and
concurrent use from several threads is safe."""

import sys
import threading
import time

import pytest


def progress_while(work):
    """How many times the main thread gets to run while `work` runs in
    another thread, with the interpreter's own switching made so rare that
    only a call releasing the GIL lets the main thread in."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(100)
    try:
        t = threading.Thread(target=work)
        count = 0
        t.start()
        while t.is_alive():
            count += 1
            time.sleep(0)
        t.join()
    finally:
        sys.setswitchinterval(old)
    return count


@pytest.fixture
def big(db):
    with db.write_batch() as wb:
        for i in range(20000):
            wb.put(b"%06d" % i, b"v" * 50)
    return db


@pytest.mark.shale_only  # plyvel keeps the GIL in get()
@pytest.mark.parametrize("what", ["get", "put", "iterate", "raw", "batch", "snapshot_get"])
def test_calls_release_the_gil(big, what):
    db = big
    snap = db.snapshot()

    def work():
        if what == "get":
            for i in range(3000):
                db.get(b"%06d" % i)
        elif what == "put":
            for i in range(300):
                db.put(b"%06d" % i, b"w", sync=True)
        elif what == "iterate":
            for _ in db:
                pass
        elif what == "raw":
            it = db.raw_iterator()
            it.seek_to_first()
            while it.valid():
                it.next()
        elif what == "batch":
            for i in range(300):
                with db.write_batch(sync=True) as wb:
                    wb.put(b"%06d" % i, b"b")
        elif what == "snapshot_get":
            for i in range(3000):
                snap.get(b"%06d" % i)

    # Holding the GIL throughout would leave the main thread 1 or 2 turns.
    assert progress_while(work) > 10


@pytest.mark.shale_only
def test_writes_that_must_wait_release_the_gil(plyvel, db_path):
    # Each value fills the 64 KB write buffer: every put after the first
    # must switch the memtable, and may wait for the flush of the last one.
    db = plyvel.DB(db_path, create_if_missing=True, write_buffer_size=64 * 1024)
    value = b"x" * (100 * 1024)

    def work():
        for i in range(200):
            db.put(b"%04d" % i, value)

    assert progress_while(work) > 10
    assert db.get(b"0199") == value
    db.close()


@pytest.mark.shale_only
def test_writes_that_need_not_wait_keep_the_gil(db):
    # A put that is not synced and finds room takes about a microsecond:
    # releasing the GIL for it would cost more than it saves.
    def work():
        for i in range(3000):
            db.put(b"%06d" % i, b"w")

    assert progress_while(work) < 10
    assert db.get(b"002999") == b"w"


def test_compaction_releases_the_gil(big):
    assert progress_while(big.compact_range) > 1


def test_concurrent_writers_and_readers(db):
    errors = []

    def writer(t):
        try:
            for i in range(2000):
                db.put(b"t%d-%05d" % (t, i), b"%d" % i)
                if i % 100 == 0:
                    with db.write_batch() as wb:
                        wb.put(b"batch-%d-%d" % (t, i), b"x")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def reader():
        try:
            for _ in range(20):
                keys = [k for k, _ in db]
                assert keys == sorted(keys)
                with db.snapshot() as s:
                    n = sum(1 for _ in s.iterator())
                    assert n == sum(1 for _ in s.iterator(reverse=True))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(3)]
    threads += [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for t in range(3):
        assert db.get(b"t%d-01999" % t) == b"1999"
    assert len(list(db.iterator(prefix=b"batch-"))) == 60


def test_close_while_other_threads_use_the_db(plyvel, db_path):
    db = plyvel.DB(db_path, create_if_missing=True)
    for i in range(1000):
        db.put(b"%04d" % i, b"v")
    stop = threading.Event()
    outcomes = []

    def user():
        it = db.iterator()
        try:
            while not stop.is_set():
                db.get(b"0500")
                db.put(b"x", b"y")
                next(it, None)
        except RuntimeError:
            outcomes.append("closed")

    threads = [threading.Thread(target=user) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.1)
    db.close()
    stop.set()
    for t in threads:
        t.join()
    assert outcomes == ["closed"] * 3
    plyvel.DB(db_path).close()


def test_python_comparator_with_threads(plyvel, db_path):
    # The engine's background thread calls the comparator while Python
    # threads write: neither may deadlock on the GIL.
    db = plyvel.DB(db_path, create_if_missing=True, write_buffer_size=16 * 1024,
                   comparator=lambda a, b: (a > b) - (a < b), comparator_name=b"test.Bytewise")

    def writer(t):
        for i in range(1500):
            db.put(b"%d-%05d" % (t, i), b"v" * 20)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    db.compact_range()
    keys = [k for k, _ in db]
    assert keys == sorted(keys) and len(keys) == 3000
    db.close()
