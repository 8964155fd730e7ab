#!/usr/bin/python3
"""The cost of calling the library from Python: one chain IK solve per call against the same
solve timed inside the library, and a batch of N targets solved in one call.

    python/bench/bench_python.py [--rounds R] [--n N] [--calls C]

Prints key=value lines. Each figure is measured over several rounds and given as
min/median/max, since the machine may be busy. The solve is the Panda's chain
panda_link0 -> panda_link8 to a reachable position (LM, no timeout), each call from the
same seed:
  c_solve_us       the solve alone, by the library's own clock (mn_ik_result.time_us)
  py_solve_us      one IK.solve(data, target) call from Python, seed reset included
  lean_solve_us    one IK.solve_status(data, x, y, z) call (a status, no result object)
  py_overhead_us   py_solve_us - c_solve_us: what calling from Python adds (fastest
                   rounds / median rounds)
  lean_overhead_us the same for the lean call
  batch_us         per target of IK.solve_batch over an (N, 7) array of positions and
                   orientations (poses of random states within limits): one call
  batch_c_solve_us the same targets solved one by one, by the library's own clock
  batch_overhead_us batch_us - batch_c_solve_us
"""
import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import marionette as mn  # noqa: E402

TOP = os.path.dirname(os.path.dirname(HERE))


def rng3(xs):
    xs = sorted(xs)
    return f"{xs[0]:.3f}/{statistics.median(xs):.3f}/{xs[-1]:.3f}"


def over(py, c):
    """What Python adds, from the fastest and from the median rounds (the rounds are not
    paired: a busy moment in one would make a difference of two noisy numbers)."""
    return f"{min(py) - min(c):.3f}/{statistics.median(py) - statistics.median(c):.3f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--n", type=int, default=10000)
    a = ap.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mn.MarionetteWarning)
        m = mn.load(os.path.join(TOP, "data/robots/franka_panda/panda.urdf"))
    d = m.data()
    ik = mn.IK(m, "panda_link0", "panda_link8", timeout_ms=0)
    seed = d.q.copy()
    target = (0.4, 0.2, 0.5)
    r = ik.solve(d, target)
    assert r.ok, r
    # N targets with orientations: tip poses of random states within limits
    rng = np.random.default_rng(7)
    probe = m.data()
    rows = []
    tip = m.joint("panda_link8")
    for _ in range(a.n):
        probe.q = rng.uniform(-1, 1, m.nq)
        probe.clamp_to_limits()
        probe.fk()
        rows.append(np.concatenate([probe.positions[tip], probe.orientations()[tip]]))
    targets = np.array(rows)
    ik7 = mn.IK(m, "panda_link0", "panda_link8", use_orientation=True, timeout_ms=0)
    c_us, py_us, lean_us, batch_us, batch_c_us = [], [], [], [], []
    for _ in range(a.rounds):
        # the solve by the library's own clock
        tot = 0.0
        for _ in range(2000):
            d.q[:] = seed
            tot += ik.solve(d, target).time_us
        c_us.append(tot / 2000)
        t0 = time.perf_counter()
        for _ in range(a.calls):
            d.q[:] = seed
            ik.solve(d, target)
        py_us.append((time.perf_counter() - t0) / a.calls * 1e6)
        t0 = time.perf_counter()
        for _ in range(a.calls):
            d.q[:] = seed
            ik.solve_status(d, 0.4, 0.2, 0.5)
        lean_us.append((time.perf_counter() - t0) / a.calls * 1e6)
        # the batch: N different targets, from the seed, against the same solves one by one
        d.q[:] = seed
        t0 = time.perf_counter()
        b = ik7.solve_batch(d, targets)
        batch_us.append((time.perf_counter() - t0) / a.n * 1e6)
        tot = 0.0
        for k in range(0, a.n, 10):
            d.q[:] = seed
            tot += ik7.solve(d, targets[k, :3], targets[k, 3:]).time_us
        batch_c_us.append(tot / len(range(0, a.n, 10)))
    print("bench=python_ik figure=panda chain=panda_link0..panda_link8 method=lm "
          f"rounds={a.rounds} calls={a.calls} n={a.n} library={mn.library_path}")
    print("# min/median/max over the rounds, microseconds; overheads: from the min / median")
    print(f"c_solve_us={rng3(c_us)}")
    print(f"py_solve_us={rng3(py_us)}")
    print(f"lean_solve_us={rng3(lean_us)}")
    print(f"py_overhead_us={over(py_us, c_us)}")
    print(f"lean_overhead_us={over(lean_us, c_us)}")
    print(f"batch_targets={a.n} batch_solved={b.solved}")
    print(f"batch_c_solve_us={rng3(batch_c_us)}")
    print(f"batch_us={rng3(batch_us)}")
    print(f"batch_overhead_us={over(batch_us, batch_c_us)}")


if __name__ == "__main__":
    main()
