"""Times shale and plyvel side by side through the same plyvel API.

    python bench.py [-n N] [--modules shale,plyvel] [--value-size 100] [--dir DIR]

For each module, in a fresh database of its own: N random-order puts, N
random-order gets, N puts in batches of 1,000, a forward and a reverse
iteration over the N keys, N random-order puts over them again (an
overwrite), then puts and gets from 2 threads (N/2 each), and last N/100
synchronous puts (`sync=True`, each waiting for the disk) from 1 thread
and from 2 (N/200 each).
One line per measurement, in operations per second. A module that cannot be
imported is reported and skipped (`pip install plyvel` for plyvel).

Build shale in release mode first (`maturin develop --release`): a debug
build is several times slower.
"""

import argparse
import importlib
import os
import random
import shutil
import sys
import tempfile
import threading
import time

BATCH = 1000


def timed(label, n, fn, results):
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    rate = n / elapsed if elapsed > 0 else float("inf")
    results[label] = rate
    return rate


def bench_module(mod, n, value_size, root, only_overwrites=False):
    path = os.path.join(root, mod.__name__)
    shutil.rmtree(path, ignore_errors=True)
    rng = random.Random(301)
    keys = [b"%016d" % i for i in range(n)]
    shuffled = keys[:]
    rng.shuffle(shuffled)
    value = os.urandom(value_size // 2) * 2
    results = {}

    db = mod.DB(path, create_if_missing=True)

    def puts():
        put = db.put
        for k in shuffled:
            put(k, value)

    def gets():
        get = db.get
        for k in shuffled:
            if get(k) is None:
                raise AssertionError("missing key")

    def batch_writes():
        for i in range(0, n, BATCH):
            with db.write_batch() as wb:
                for k in keys[i:i + BATCH]:
                    wb.put(k, value)

    def forward():
        count = 0
        for _ in db.iterator():
            count += 1
        assert count == n, count

    def reverse():
        count = 0
        for _ in db.iterator(reverse=True):
            count += 1
        assert count == n, count

    synced = shuffled[:max(n // 100, 2)]

    def sync_puts():
        put = db.put
        for k in synced:
            put(k, value, sync=True)

    def threaded(op, keys=shuffled):
        def run():
            halves = [keys[0::2], keys[1::2]]

            def work(part):
                f = db.put if op != "get" else db.get
                if op == "put":
                    for k in part:
                        f(k, value)
                elif op == "sync put":
                    for k in part:
                        f(k, value, sync=True)
                else:
                    for k in part:
                        f(k)

            threads = [threading.Thread(target=work, args=(h,)) for h in halves]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return run

    timed("put (random order)", n, puts, results)
    if only_overwrites:
        # The write lines alone: one thread, then two, twice over.
        for round in (1, 2):
            timed("overwrite (random order) #%d" % round, n, puts, results)
            timed("put, 2 threads #%d" % round, n, threaded("put"), results)
        db.close()
        shutil.rmtree(path, ignore_errors=True)
        return results
    timed("get (random order)", n, gets, results)
    timed("put in batches of %d" % BATCH, n, batch_writes, results)
    timed("iterate forward", n, forward, results)
    timed("iterate reverse", n, reverse, results)
    # The same overwrite from one thread, for the two threads' puts to be
    # compared with: both replace every key of a full database.
    timed("overwrite (random order)", n, puts, results)
    timed("put, 2 threads", n, threaded("put"), results)
    timed("get, 2 threads", n, threaded("get"), results)
    timed("sync put", len(synced), sync_puts, results)
    timed("sync put, 2 threads", len(synced), threaded("sync put", synced), results)
    db.close()
    shutil.rmtree(path, ignore_errors=True)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1_000_000, help="number of keys (1,000,000)")
    ap.add_argument("--modules", default="shale,plyvel")
    ap.add_argument("--value-size", type=int, default=100)
    ap.add_argument("--dir", default=None, help="where to make the databases (a temporary directory)")
    ap.add_argument("--overwrites", action="store_true",
                    help="only the puts: fill, then overwrite from 1 thread and 2 threads, twice")
    args = ap.parse_args()

    root = args.dir or tempfile.mkdtemp(prefix="shale-bench-")
    print("N = %d, %d-byte values, 16-byte keys, Python %s" % (
        args.n, args.value_size, sys.version.split()[0]))
    all_results = {}
    for name in args.modules.split(","):
        try:
            mod = importlib.import_module(name)
        except ImportError as e:
            print("%-8s not available (%s)" % (name, e))
            continue
        version = getattr(mod, "__version__", "?")
        print("%-8s %s (LevelDB %s)" % (name, version, getattr(mod, "__leveldb_version__", "?")))
        all_results[name] = bench_module(mod, args.n, args.value_size, root, args.overwrites)
    if not args.dir:
        shutil.rmtree(root, ignore_errors=True)

    names = list(all_results)
    labels = list(next(iter(all_results.values()))) if names else []
    print()
    print("%-26s" % "ops/s" + "".join("%14s" % n for n in names)
          + ("%10s" % "ratio" if len(names) == 2 else ""))
    for label in labels:
        rates = [all_results[n][label] for n in names]
        line = "%-26s" % label + "".join("%14.0f" % r for r in rates)
        if len(rates) == 2:
            line += "%10.2f" % (rates[0] / rates[1])
        print(line)


if __name__ == "__main__":
    main()
