"""Iterators (plyvel's `Iterator`) and raw iterators (`RawIterator`)."""

import random

import pytest

KEYS = [b"a", b"b", b"c", b"d", b"e"]


@pytest.fixture
def filled(db):
    for k in KEYS:
        db.put(k, k.upper())
    return db


def keys(it):
    return [k for k, _ in it]


def test_iterate_db(filled):
    assert list(filled) == [(k, k.upper()) for k in KEYS]
    assert list(filled.iterator()) == [(k, k.upper()) for k in KEYS]
    for k, v in filled:
        assert isinstance(k, bytes) and isinstance(v, bytes)


def test_empty_db(db):
    assert list(db) == []
    assert list(db.iterator(reverse=True)) == []
    it = db.iterator()
    with pytest.raises(StopIteration):
        it.prev()


def test_reverse(filled):
    assert keys(filled.iterator(reverse=True)) == KEYS[::-1]


@pytest.mark.parametrize("reverse", [False, True])
def test_start_stop_inclusion(filled, reverse):
    def run(**kw):
        got = list(filled.iterator(reverse=reverse, include_value=False, **kw))
        return got[::-1] if reverse else got

    assert run(start=b"b") == [b"b", b"c", b"d", b"e"]
    assert run(start=b"b", include_start=False) == [b"c", b"d", b"e"]
    assert run(stop=b"d") == [b"a", b"b", b"c"]
    assert run(stop=b"d", include_stop=True) == [b"a", b"b", b"c", b"d"]
    assert run(start=b"b", stop=b"d") == [b"b", b"c"]
    assert run(start=b"b", stop=b"d", include_start=False, include_stop=True) == [b"c", b"d"]
    assert run(start=b"bb", stop=b"cc") == [b"c"]
    assert run(start=b"0", stop=b"z") == KEYS
    assert run(start=b"x") == []
    assert run(stop=b"0") == []
    assert run(start=b"d", stop=b"b") == []


def test_prefix(db):
    for k in [b"a", b"ab", b"abc", b"abd", b"ac", b"b", b"\xff\xff", b"\xff\xff\x01"]:
        db.put(k, b"")
    assert list(db.iterator(prefix=b"ab", include_value=False)) == [b"ab", b"abc", b"abd"]
    assert list(db.iterator(prefix=b"ab", reverse=True, include_value=False)) == [
        b"abd", b"abc", b"ab"]
    assert list(db.iterator(prefix=b"x", include_value=False)) == []
    assert list(db.iterator(prefix=b"\xff\xff", include_value=False)) == [
        b"\xff\xff", b"\xff\xff\x01"]
    assert len(list(db.iterator(prefix=b""))) == 8
    with pytest.raises(TypeError):
        db.iterator(prefix=b"a", start=b"a")
    with pytest.raises(TypeError):
        db.iterator(prefix=b"a", stop=b"b")


def test_include_key_and_value(filled):
    assert list(filled.iterator(include_value=False)) == KEYS
    assert list(filled.iterator(include_key=False)) == [k.upper() for k in KEYS]
    assert list(filled.iterator(include_key=False, include_value=False)) == [None] * 5


def test_read_options_accepted(filled):
    assert keys(filled.iterator(verify_checksums=True, fill_cache=False)) == KEYS


def test_arguments_are_keyword_only(filled):
    with pytest.raises(TypeError):
        filled.iterator(True)
    with pytest.raises(TypeError):
        filled.iterator(start="a")


def test_next_and_prev(filled):
    it = filled.iterator(include_value=False)
    assert next(it) == b"a"
    assert next(it) == b"b"
    assert it.prev() == b"b"
    assert it.prev() == b"a"
    with pytest.raises(StopIteration):
        it.prev()
    assert next(it) == b"a"
    assert list(it) == [b"b", b"c", b"d", b"e"]
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"e"
    assert it.prev() == b"d"
    assert next(it) == b"d"


def test_next_and_prev_reverse(filled):
    it = filled.iterator(reverse=True, include_value=False)
    assert next(it) == b"e"
    assert next(it) == b"d"
    assert it.prev() == b"d"
    assert it.prev() == b"e"
    with pytest.raises(StopIteration):
        it.prev()


def test_prev_in_range(filled):
    it = filled.iterator(start=b"b", stop=b"d", include_value=False)
    assert list(it) == [b"b", b"c"]
    assert it.prev() == b"c"
    assert it.prev() == b"b"
    with pytest.raises(StopIteration):
        it.prev()


def test_seek(filled):
    it = filled.iterator(include_value=False)
    it.seek(b"c")
    assert next(it) == b"c"
    it.seek(b"bb")
    assert next(it) == b"c"
    assert it.prev() == b"c"
    assert it.prev() == b"b"
    it.seek(b"z")
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"e"
    it.seek(b"")
    assert next(it) == b"a"


def test_seek_reverse(filled):
    it = filled.iterator(reverse=True, include_value=False)
    it.seek(b"c")
    assert next(it) == b"b"
    assert it.prev() == b"b"
    assert it.prev() == b"c"
    it.seek(b"cc")
    assert next(it) == b"c"


def test_seek_within_range(filled):
    it = filled.iterator(start=b"b", stop=b"d", include_value=False)
    it.seek(b"a")
    assert next(it) == b"b"
    it.seek(b"e")
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"c"


@pytest.mark.shale_only
def test_seek_to_an_excluded_start(filled):
    # plyvel returns the excluded start key here; Shale keeps to the range.
    it = filled.iterator(start=b"b", include_start=False, include_value=False)
    it.seek(b"b")
    assert next(it) == b"c"


def test_seek_to_start_and_stop(filled):
    it = filled.iterator(include_value=False)
    assert list(it) == KEYS
    it.seek_to_start()
    assert next(it) == b"a"
    it.seek_to_stop()
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"e"
    it = filled.iterator(start=b"b", stop=b"d", include_value=False)
    it.seek_to_stop()
    assert it.prev() == b"c"
    it.seek_to_start()
    assert next(it) == b"b"


def test_seek_to_start_and_stop_reverse(filled):
    # The start and the stop are the range's, whatever the direction.
    it = filled.iterator(reverse=True, include_value=False)
    it.seek_to_start()
    with pytest.raises(StopIteration):
        next(it)
    assert it.prev() == b"a"
    it.seek_to_stop()
    assert next(it) == b"e"


def test_iterator_is_a_snapshot_of_its_start(filled):
    it = filled.iterator(include_value=False)
    filled.put(b"c2", b"new")
    filled.delete(b"d")
    assert list(it) == KEYS
    assert keys(filled.iterator()) == [b"a", b"b", b"c", b"c2", b"e"]


def test_close_and_context_manager(filled):
    it = filled.iterator()
    it.close()
    it.close()
    with pytest.raises(RuntimeError):
        next(it)
    for call in (it.prev, it.seek_to_start, it.seek_to_stop, lambda: it.seek(b"a")):
        with pytest.raises(RuntimeError):
            call()
    with filled.iterator() as it:
        assert next(it) == (b"a", b"A")
    with pytest.raises(RuntimeError):
        next(it)


@pytest.mark.parametrize("seed", range(4))
def test_against_a_model(plyvel, db_path, seed):
    rng = random.Random(seed)
    db = plyvel.DB(db_path, create_if_missing=True, write_buffer_size=16 * 1024,
                   block_size=256, max_file_size=32 * 1024)
    model = {}
    for _ in range(4000):
        k = b"%04d" % rng.randrange(2000)
        if rng.random() < 0.2:
            db.delete(k)
            model.pop(k, None)
        else:
            v = b"%d" % rng.randrange(10**9)
            db.put(k, v)
            model[k] = v
    if seed % 2:
        db.compact_range()
    ordered = sorted(model.items())
    assert list(db) == ordered
    assert list(db.iterator(reverse=True)) == ordered[::-1]
    for _ in range(100):
        start = b"%04d" % rng.randrange(2100) if rng.random() < 0.8 else None
        stop = b"%04d" % rng.randrange(2100) if rng.random() < 0.8 else None
        inc_start, inc_stop, reverse = (rng.random() < 0.5 for _ in range(3))
        want = [
            kv for kv in ordered
            if (start is None or kv[0] > start or (inc_start and kv[0] == start))
            and (stop is None or kv[0] < stop or (inc_stop and kv[0] == stop))
        ]
        it = db.iterator(start=start, stop=stop, include_start=inc_start,
                         include_stop=inc_stop, reverse=reverse)
        got = list(it)
        assert got == (want[::-1] if reverse else want)
        # Walk back over everything from the end.
        back = []
        while True:
            try:
                back.append(it.prev())
            except StopIteration:
                break
        assert back == (want if reverse else want[::-1])
    db.close()


# -- RawIterator -----------------------------------------------------------------


def test_raw_iterator(plyvel, filled):
    it = filled.raw_iterator()
    assert not it.valid()
    it.seek_to_first()
    assert it.valid()
    assert it.key() == b"a" and it.value() == b"A" and it.item() == (b"a", b"A")
    it.next()
    assert it.key() == b"b"
    it.prev()
    assert it.key() == b"a"
    it.prev()
    assert not it.valid()
    it.seek_to_last()
    assert it.key() == b"e"
    it.next()
    assert not it.valid()
    it.seek(b"bb")
    assert it.key() == b"c"
    it.seek(b"z")
    assert not it.valid()
    seen = []
    it.seek_to_first()
    while it.valid():
        seen.append(it.key())
        it.next()
    assert seen == KEYS
    with pytest.raises(TypeError):
        it.seek("a")


def test_raw_iterator_invalid(plyvel, filled):
    it = filled.raw_iterator(verify_checksums=True, fill_cache=False)
    for call in (it.next, it.prev, it.key, it.value, it.item):
        with pytest.raises(plyvel.IteratorInvalidError):
            call()


def test_raw_iterator_close(plyvel, filled):
    with filled.raw_iterator() as it:
        it.seek_to_first()
        assert it.valid()
    with pytest.raises(RuntimeError):
        it.valid()
    it = filled.raw_iterator()
    it.close()
    it.close()
    for call in (it.valid, it.seek_to_first, it.seek_to_last, it.next, it.key):
        with pytest.raises(RuntimeError):
            call()
