#!/usr/bin/python3
"""Converts a folder of BVH takes with Dask over a local cluster of worker processes,
through the marionette package: the same files `marionette convert IN OUT` writes.

    python/examples/dask_convert.py IN_DIR OUT_DIR [--ext .json|.glb|.bvh|.skel]
                                    [--workers N] [--compare 1,2,all]

Each take is one task (read the BVH, write OUT_DIR/<name><ext> atomically); a file that
fails is reported with the library's message and the others go on. The exit status is 1
when any failed. --compare runs the whole job once per worker count and prints the rate of
each as key=value lines (files_per_s).
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def convert_one(src, dst):
    """One task, run in a worker process: (src, None) on success, (src, message) on failure."""
    import warnings

    import marionette as mn
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mn.MarionetteWarning)
            mn.convert(src, dst)
        return src, None
    except mn.MarionetteError as e:
        return src, e.message


def run(files, out_dir, ext, workers):
    import tempfile

    from dask.distributed import Client, LocalCluster
    # the workers' scratch space in a folder of our own, removed afterwards
    with tempfile.TemporaryDirectory(prefix="mn_dask_") as scratch, \
            LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                         dashboard_address=None, silence_logs=40,
                         local_directory=scratch) as cluster, \
            Client(cluster) as client:
        client.run(lambda: __import__("marionette"))  # load the library before the clock
        t0 = time.perf_counter()
        futures = [client.submit(convert_one, f,
                                 os.path.join(out_dir, os.path.splitext(os.path.basename(f))[0]
                                              + ext), pure=False) for f in files]
        results = client.gather(futures)
        return results, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("in_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--ext", default=".json", choices=[".json", ".glb", ".bvh", ".skel"])
    ap.add_argument("--workers", default="all")
    ap.add_argument("--compare", default=None, help="worker counts, e.g. 1,2,all")
    a = ap.parse_args()
    files = sorted(os.path.join(a.in_dir, f) for f in os.listdir(a.in_dir)
                   if f.lower().endswith(".bvh"))
    os.makedirs(a.out_dir, exist_ok=True)
    ncpu = os.cpu_count() or 1
    counts = [(ncpu if w == "all" else int(w)) for w in
              (a.compare.split(",") if a.compare else [a.workers])]
    failed = []
    for w in counts:
        results, secs = run(files, a.out_dir, a.ext, w)
        failed = [(f, msg) for f, msg in results if msg]
        print(f"workers={w} files={len(files)} failed={len(failed)} seconds={secs:.3f} "
              f"files_per_s={len(files) / secs:.1f}")
    for f, msg in failed:
        print(f"failed: {f}: {msg}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
