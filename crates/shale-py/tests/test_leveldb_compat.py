"""Databases written by LevelDB itself (Debian's libleveldb, through its C
API and ctypes) read from Python, and the other way round."""

import ctypes
import ctypes.util
import os
import random

import pytest


def load_leveldb():
    names = ["libleveldb.so.1d", "libleveldb.so.1", "libleveldb.so"]
    found = ctypes.util.find_library("leveldb")
    if found:
        names.insert(0, found)
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


LIB = load_leveldb()
pytestmark = pytest.mark.skipif(
    LIB is None and not os.environ.get("CI"),
    reason="libleveldb is not installed (scripts/setup.sh installs it)",
)

if LIB is not None:
    P = ctypes.c_void_p
    ERR = ctypes.POINTER(ctypes.c_char_p)
    for name, res, args in [
        ("leveldb_options_create", P, []),
        ("leveldb_options_destroy", None, [P]),
        ("leveldb_options_set_create_if_missing", None, [P, ctypes.c_ubyte]),
        ("leveldb_options_set_compression", None, [P, ctypes.c_int]),
        ("leveldb_options_set_write_buffer_size", None, [P, ctypes.c_size_t]),
        ("leveldb_options_set_filter_policy", None, [P, P]),
        ("leveldb_filterpolicy_create_bloom", P, [ctypes.c_int]),
        ("leveldb_filterpolicy_destroy", None, [P]),
        ("leveldb_open", P, [P, ctypes.c_char_p, ERR]),
        ("leveldb_close", None, [P]),
        ("leveldb_writeoptions_create", P, []),
        ("leveldb_writeoptions_destroy", None, [P]),
        ("leveldb_readoptions_create", P, []),
        ("leveldb_readoptions_destroy", None, [P]),
        ("leveldb_put", None, [P, P, ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.c_char_p, ctypes.c_size_t, ERR]),
        ("leveldb_delete", None, [P, P, ctypes.c_char_p, ctypes.c_size_t, ERR]),
        ("leveldb_compact_range", None, [P, ctypes.c_char_p, ctypes.c_size_t,
                                         ctypes.c_char_p, ctypes.c_size_t]),
        ("leveldb_create_iterator", P, [P, P]),
        ("leveldb_iter_destroy", None, [P]),
        ("leveldb_iter_seek_to_first", None, [P]),
        ("leveldb_iter_valid", ctypes.c_ubyte, [P]),
        ("leveldb_iter_next", None, [P]),
        ("leveldb_iter_key", P, [P, ctypes.POINTER(ctypes.c_size_t)]),
        ("leveldb_iter_value", P, [P, ctypes.POINTER(ctypes.c_size_t)]),
        ("leveldb_free", None, [P]),
    ]:
        fn = getattr(LIB, name)
        fn.restype = res
        fn.argtypes = args


def check(err):
    if err.value is not None:
        message = err.value.decode()
        LIB.leveldb_free(ctypes.cast(err, ctypes.POINTER(P)).contents)
        raise RuntimeError(message)


class LevelDB:
    """The little of LevelDB's C API these tests need."""

    def __init__(self, path, compression=1, bloom=False):
        self.options = LIB.leveldb_options_create()
        LIB.leveldb_options_set_create_if_missing(self.options, 1)
        LIB.leveldb_options_set_compression(self.options, compression)
        LIB.leveldb_options_set_write_buffer_size(self.options, 64 * 1024)
        self.policy = None
        if bloom:
            self.policy = LIB.leveldb_filterpolicy_create_bloom(10)
            LIB.leveldb_options_set_filter_policy(self.options, self.policy)
        err = ctypes.c_char_p()
        self.db = LIB.leveldb_open(self.options, path.encode(), ctypes.byref(err))
        check(err)
        self.wopts = LIB.leveldb_writeoptions_create()
        self.ropts = LIB.leveldb_readoptions_create()

    def put(self, k, v):
        err = ctypes.c_char_p()
        LIB.leveldb_put(self.db, self.wopts, k, len(k), v, len(v), ctypes.byref(err))
        check(err)

    def delete(self, k):
        err = ctypes.c_char_p()
        LIB.leveldb_delete(self.db, self.wopts, k, len(k), ctypes.byref(err))
        check(err)

    def compact(self):
        LIB.leveldb_compact_range(self.db, None, 0, None, 0)

    def items(self):
        it = LIB.leveldb_create_iterator(self.db, self.ropts)
        out = []
        LIB.leveldb_iter_seek_to_first(it)
        n = ctypes.c_size_t()
        while LIB.leveldb_iter_valid(it):
            k = ctypes.string_at(LIB.leveldb_iter_key(it, ctypes.byref(n)), n.value)
            v = ctypes.string_at(LIB.leveldb_iter_value(it, ctypes.byref(n)), n.value)
            out.append((k, v))
            LIB.leveldb_iter_next(it)
        LIB.leveldb_iter_destroy(it)
        return out

    def close(self):
        LIB.leveldb_close(self.db)
        LIB.leveldb_writeoptions_destroy(self.wopts)
        LIB.leveldb_readoptions_destroy(self.ropts)
        LIB.leveldb_options_destroy(self.options)
        if self.policy is not None:
            LIB.leveldb_filterpolicy_destroy(self.policy)


def model_data(seed, n=3000):
    rng = random.Random(seed)
    data = {}
    for i in range(n):
        k = b"key-%05d" % rng.randrange(n * 2)
        data[k] = os.urandom(rng.randrange(1, 300))
    return data


@pytest.mark.parametrize("compression,bloom", [(1, False), (0, True)])
def test_leveldb_written_db_read_by_python(plyvel, db_path, compression, bloom):
    data = model_data(1)
    ldb = LevelDB(db_path, compression=compression, bloom=bloom)
    for k, v in data.items():
        ldb.put(k, v)
    deleted = sorted(data)[::7]
    for k in deleted:
        ldb.delete(k)
        del data[k]
    ldb.compact()  # tables in several levels, plus a fresh log below
    ldb.put(b"in-the-log", b"only in the write-ahead log")
    data[b"in-the-log"] = b"only in the write-ahead log"
    ldb.close()
    assert [n for n in os.listdir(db_path) if n.endswith(".ldb")]

    db = plyvel.DB(db_path, bloom_filter_bits=10 if bloom else 0)
    want = sorted(data.items())
    assert list(db) == want
    assert list(db.iterator(reverse=True)) == want[::-1]
    for k in list(data)[:500]:
        assert db.get(k, verify_checksums=True) == data[k]
    for k in deleted[:100]:
        assert db.get(k) is None
    db.close()


def test_python_written_db_read_by_leveldb(plyvel, db_path):
    data = model_data(2)
    db = plyvel.DB(db_path, create_if_missing=True, write_buffer_size=64 * 1024)
    with db.write_batch() as wb:
        for k, v in list(data.items())[:1000]:
            wb.put(k, v)
    for k, v in list(data.items())[1000:]:
        db.put(k, v)
    db.compact_range()
    db.put(b"zz-last", b"log only")
    data[b"zz-last"] = b"log only"
    db.close()

    ldb = LevelDB(db_path)
    assert ldb.items() == sorted(data.items())
    ldb.close()
