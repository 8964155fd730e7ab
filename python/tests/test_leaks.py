"""Nothing leaks across 10,000 create/destroy cycles: Python's own allocations (tracemalloc)
and the C heap the library allocates from (bytes in use: glibc's mallinfo2, or under
AddressSanitizer, whose allocator replaces glibc's, the sanitizer's own count), both
measured after a warm-up so that caches and free lists are already in place."""
import ctypes
import gc
import tracemalloc

import numpy as np

import marionette as mn

CYCLES = 10_000

_libc = ctypes.CDLL("libc.so.6")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


_libc.mallinfo2.restype = _Mallinfo2
try:  # loaded with the sanitizer runtimes (LD_PRELOAD in the sanitized build's ctest)
    _asan_bytes = ctypes.CDLL(None).__sanitizer_get_current_allocated_bytes
    _asan_bytes.restype = ctypes.c_size_t
except AttributeError:
    _asan_bytes = None


def c_heap_in_use():
    if _asan_bytes is not None:
        return _asan_bytes()
    info = _libc.mallinfo2()
    return info.uordblks + info.hblkhd


SKEL = mn.stickman  # the built-in figure: read and compiled by the library each time


def one_cycle(bvh_text):
    m = SKEL()
    with m.data() as d:
        d.fk()
        ik = mn.IK(m, "torso", "right hand", timeout_ms=0, max_iters=5, max_restarts=0)
        ik.solve(d, (0.1, -0.4, 0.2))
        with mn.ConstraintSystem(d) as cs:
            h = cs.add_handle(joint="left foot")
            cs.add_constraint("pin", handle=h, target=d.positions[m.joint("left foot")])
            cs.solve(max_iters=2)
        seq = mn.Sequence(m)
        seq.set_key(0, d.q)
        seq.sample(0)
        seq.close()
    m.close()
    mb, motion = mn.from_text(bvh_text, "bvh")
    mn.to_bvh_text(mb, motion)  # the writers' buffers freed
    mn.to_glb_bytes(mb, motion)
    mb.close()
    try:
        mn.from_text(bvh_text.replace("OFFSET 0 -1 0", "OFFSET 0 x 0", 1), "bvh")
    except mn.MarionetteError:
        pass
    with mn.Rig(np.zeros((4, 3)) + np.arange(4)[:, None]) as rig:
        rig.add_ctrl("a")
        rig.set_weights_dense(np.ones((4, 1)))
        with mn.Fitter(rig) as f:
            f.fit(rig.rest_pose(), rig.deform(rig.rest_pose()), max_iters=2)


def test_no_leak_over_10000_cycles():
    from test_errors import BVH_OK
    for _ in range(200):  # warm-up: caches, free lists, interned strings
        one_cycle(BVH_OK)
    gc.collect()
    tracemalloc.start()
    c0 = c_heap_in_use()
    p0 = tracemalloc.get_traced_memory()[0]
    for _ in range(CYCLES):
        one_cycle(BVH_OK)
    gc.collect()
    p1 = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    c1 = c_heap_in_use()
    # one leaked model or data per cycle would be several MB; allow a few pages of noise
    assert p1 - p0 < 64 * 1024, f"Python allocations grew by {p1 - p0} bytes"
    assert c1 - c0 < 256 * 1024, f"the C heap grew by {c1 - c0} bytes"


def test_the_heap_check_sees_a_leak():
    # the measure can fail: models kept alive over the cycles show up in the C heap
    c0 = c_heap_in_use()
    kept = [SKEL() for _ in range(200)]
    assert c_heap_in_use() - c0 > 200 * 1024
    del kept
