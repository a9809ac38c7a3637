"""Shale: an embedded, ordered key-value store that reads and writes
LevelDB's on-disk format, with the API of plyvel::

    import shale as plyvel

    db = plyvel.DB("/tmp/db", create_if_missing=True)
    db.put(b"key", b"value")
    assert db.get(b"key") == b"value"
    db.close()
"""

import builtins as _builtins


class Error(Exception):
    """An error reported by the database engine."""


class IOError(Error, _builtins.IOError):  # noqa: A001 (plyvel's name)
    """An I/O error (also an ``OSError``)."""


class CorruptionError(Error):
    """Damaged or unreadable data."""


class IteratorInvalidError(Error):
    """A ``RawIterator`` used while not positioned on an entry."""


for _cls in (Error, IOError, CorruptionError, IteratorInvalidError):
    _cls.__module__ = "shale"
del _cls

from ._shale import (  # noqa: E402
    DB,
    Iterator,
    PrefixedDB,
    RawIterator,
    Snapshot,
    WriteBatch,
    __leveldb_version__,
    __version__,
    destroy_db,
    repair_db,
)

__all__ = [
    "DB",
    "PrefixedDB",
    "Snapshot",
    "WriteBatch",
    "Iterator",
    "RawIterator",
    "Error",
    "IOError",
    "CorruptionError",
    "IteratorInvalidError",
    "destroy_db",
    "repair_db",
    "__version__",
    "__leveldb_version__",
]
