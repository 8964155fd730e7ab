"""Bad input raises MarionetteError with the library's message (file, line, field), or a
clear ARG naming the argument; nothing is changed by a refused call."""
import os

import numpy as np
import pytest

import marionette as mn
from conftest import ROBOTS, data

BVH_OK = """HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Leg
  {
    OFFSET 0 -1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0 1 0 0 0 0 0 0 0
0 1 0 0 0 10 20 0 0
"""

# (format, text, expected status, expected line, a word the field or message holds)
MALFORMED = [
    ("bvh", BVH_OK.replace("OFFSET 0 -1 0\n    CHANNELS", "OFFSET 0 x 0\n    CHANNELS"),
     mn.Status.PARSE, 8, "OFFSET"),
    ("bvh", BVH_OK.replace("CHANNELS 3 Zrotation", "CHANNELS 3 Wrotation"),
     mn.Status.PARSE, 9, "CHANNELS"),
    ("bvh", BVH_OK.replace("Frames: 2", "Frames: -2"), mn.Status.PARSE, 17, "Frames"),
    ("bvh", BVH_OK.replace("0 1 0 0 0 10 20 0 0", "0 1 0 0 0 10 nan 0 0"),
     mn.Status.PARSE, 20, ""),
    ("bvh", "HIERARCHY\nROOT\n", mn.Status.PARSE, 2, "ROOT"),
    ("urdf", "<robot name='r'><link name='a'/><joint name='j' type='revolute'>"
     "<parent link='a'/><child link='b'/></joint></robot>", mn.Status.PARSE, 1, "child"),
    ("urdf", "<robot name='r'><link name='a'>", mn.Status.PARSE, 1, ""),
    # the figure document's messages name the member (no line: a JSON tree)
    ("json", '{"format": "marionette-figure", "version": 1, "joints": [{"name": "a", '
     '"parent": 3, "type": "hinge"}]}', mn.Status.PARSE, 0, "joints[0].parent"),
    ("json", '{"format": "marionette-figure"}', mn.Status.PARSE, 0, "version"),
    ("json", "{", mn.Status.PARSE, 0, "JSON"),
]


@pytest.mark.parametrize("fmt,text,status,line,word", MALFORMED)
def test_malformed_text_raises_with_file_line_field(fmt, text, status, line, word):
    with pytest.raises(mn.MarionetteError) as e:
        mn.from_text(text, fmt, name="bad." + fmt)
    err = e.value
    assert err.status == status, err.message
    assert err.file == "bad." + fmt
    assert err.line == line, err.message
    prefix = f"bad.{fmt}:{line}: " if line else f"bad.{fmt}: "
    assert err.message.startswith(prefix), err.message
    assert word in err.field + err.message
    assert str(err) == err.message


def test_good_text_reads():
    m, motion = mn.from_text(BVH_OK, "bvh")
    assert m.joint_names == ("Hips", "Leg", "Leg_end")
    assert motion.nframes == 2


def test_missing_file_is_io_naming_the_file():
    with pytest.raises(mn.MarionetteError) as e:
        mn.load("/nonexistent/figure.bvh")
    assert e.value.status == mn.Status.IO
    assert "/nonexistent/figure.bvh" in e.value.message


def test_unknown_joint_suggests_close_names():
    m = mn.stickman()
    with pytest.raises(mn.MarionetteError) as e:
        mn.IK(m, "torso", "right hnd")
    assert e.value.status == mn.Status.NOTFOUND
    assert e.value.field == "tip"
    assert "'right hand'" in e.value.message


def test_ik_bad_input_raises_and_leaves_q():
    rel, base, tip = ROBOTS[0]
    m = mn.load(data(rel))
    d = m.data()
    d.q[0] = 0.25
    before = d.q.copy()
    ik = mn.IK(m, base, tip)
    with pytest.raises(mn.MarionetteError) as e:
        ik.solve(d, (np.nan, 0, 0))
    assert e.value.status == mn.Status.ARG and e.value.field == "target_pos"
    assert e.value.message == "ik: target_pos: not finite"
    assert np.array_equal(d.q, before)
    with pytest.raises(mn.MarionetteError) as e:
        mn.IK(m, base, tip, tol_pos=0).solve(d, (0.3, 0, 0.5))
    assert "tol_pos" in e.value.message
    with pytest.raises(mn.MarionetteError) as e:
        mn.IK(m, tip, base)  # tip above base
        mn.IK(m, tip, base).solve(d, (0.3, 0, 0.5))
    assert e.value.status == mn.Status.ARG and "not below" in e.value.message
    with pytest.raises(TypeError, match="unknown option 'tolerance'"):
        mn.IK(m, base, tip, tolerance=1e-3)
    with pytest.raises(mn.MarionetteError, match="options.method: 'newton' is not one of"):
        mn.IK(m, base, tip, method="newton")
    with pytest.raises(mn.MarionetteError, match="options.max_iters: expected an integer"):
        mn.IK(m, base, tip, max_iters=2.5)
    assert np.array_equal(d.q, before)


def test_batch_bad_targets_change_nothing():
    rel, base, tip = ROBOTS[0]
    m = mn.load(data(rel))
    d = m.data()
    before = d.q.copy()
    ik = mn.IK(m, base, tip)
    t = np.tile([0.4, 0.1, 0.5, 1, 0, 0, 0], (5, 1))
    t[3, 1] = np.inf
    with pytest.raises(mn.MarionetteError, match=r"targets\[3\]: position: not finite"):
        ik.solve_batch(d, t)
    assert np.array_equal(d.q, before)
    with pytest.raises(mn.MarionetteError, match=r"expected shape \(N, 3\) or \(N, 7\)"):
        ik.solve_batch(d, np.zeros((4, 5)))
    with pytest.raises(mn.MarionetteError, match=r"targets: expected shape \(N, 3\) or \(N, 7\), got \(7,\)"):
        ik.solve_batch(d, np.zeros(7))
    with pytest.raises(mn.MarionetteError, match="expected real numbers, got dtype complex128"):
        ik.solve_batch(d, np.zeros((2, 3), dtype=complex))
    with pytest.raises(mn.MarionetteError, match="expected real numbers, got dtype <U1"):
        ik.solve_batch(d, [["a", "b", "c"]])


def test_array_checks():
    m = mn.stickman()
    d = m.data()
    with pytest.raises(mn.MarionetteError, match=r"q: expected shape \(37,\), got \(36,\)"):
        d.q = np.zeros(36)
    with pytest.raises(mn.MarionetteError, match="v: expected real numbers"):
        d.integrate(np.array(["x"] * 36))
    with pytest.raises(mn.MarionetteError, match=r"out: expected a writable C-contiguous float64"):
        d.jacobian("right hand", out=np.zeros((6, 36), dtype=np.float32))
    with pytest.raises(mn.MarionetteError, match="point: not finite"):
        d.jacobian("right hand", point=(0, np.nan, 0))
    with pytest.raises(mn.MarionetteError, match=r"joint 99 out of range \[0, 31\)"):
        d.jacobian(99)


def test_closed_objects_refuse():
    m = mn.stickman()
    with m.data() as d:
        q = d.q
    with pytest.raises(ValueError, match="data is closed"):
        d.fk()
    q[0] = 1.0  # the view kept the memory alive: still valid
    m.close()
    with pytest.raises(ValueError, match="model is closed"):
        m.data()


def test_constraint_errors():
    m = mn.stickman()
    d = m.data()
    with mn.ConstraintSystem([d], max_handles=2) as cs:
        h = cs.add_handle(joint="right hand")
        with pytest.raises(mn.MarionetteError) as e:
            cs.add_constraint("plane", handle=h, dir=(0, 0, 0))
        assert e.value.status == mn.Status.ARG and e.value.field == "normal"
        assert "degenerate normal" in e.value.message
        with pytest.raises(mn.MarionetteError, match="constraint.type: 'glue' is not one of"):
            cs.add_constraint("glue", handle=h)
        with pytest.raises(mn.MarionetteError, match="handle.joint: no joint named 'tail'"):
            cs.add_handle(joint="tail")
        cs.add_handle(joint="left hand")
        with pytest.raises(mn.MarionetteError) as e:
            cs.add_handle(joint="head")
        assert e.value.status in (mn.Status.ARG, mn.Status.NOMEM)
        with pytest.raises(TypeError, match="unknown option 'tolerance'"):
            cs.solve(tolerance=1)


def test_write_to_a_missing_folder_leaves_nothing(tmpdir_clean):
    m = mn.stickman()
    out = os.path.join(tmpdir_clean, "no", "such", "out.bvh")
    with pytest.raises(mn.MarionetteError) as e:
        mn.write_bvh(out, m)
    assert e.value.status == mn.Status.IO
    assert os.listdir(tmpdir_clean) == []


def test_motion_of_the_wrong_width_is_refused(tmpdir_clean):
    m = mn.stickman()
    with pytest.raises(mn.MarionetteError, match=r"motion.q: expected shape \(N, 37\)"):
        mn.write_bvh(os.path.join(tmpdir_clean, "x.bvh"), m, mn.Motion(np.zeros((3, 5)), 0.1))
    assert os.listdir(tmpdir_clean) == []


def test_out_arrays_are_checked_before_anything_is_written():
    """Sequence.sample(out=), Retargeter.frame(out=) and Data.jacobian(out=) write into out
    only when it is a writable C-contiguous float64 array of exactly the answer's shape:
    a 2-element array (once a heap overrun), float32 (a crash), int8 (silent overflow), a
    read-only buffer (once written), a strided view are refused, and out is left as it was."""
    m = mn.stickman()
    seq = mn.Sequence(m)
    seq.set_key(0, m.data().q)
    seq.set_key(10, m.data().q)
    src, take = mn.load_motion(data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"))
    rt = mn.Retargeter(src, m)
    rt.set_take(take)
    d = m.data()
    d.fk()
    calls = [lambda out: seq.sample(5, out=out), lambda out: rt.frame(3, out=out)[0],
             lambda out: d.jacobian("right hand", out=out)]
    shapes = [(m.nq,), (m.nq,), (6, m.nv)]
    for call, shape in zip(calls, shapes):
        n = int(np.prod(shape))
        ro = np.zeros(shape)
        ro.flags.writeable = False
        wide = np.zeros((shape[0], 2 * n // shape[0]))[:, ::2] if len(shape) == 2 else np.zeros(2 * n)[::2]
        for bad, kind in [(np.zeros(2), ValueError), (np.zeros(shape, dtype=np.float32), TypeError),
                          (np.zeros(shape, dtype=np.int8), TypeError), (bytes(8 * n), TypeError),
                          (bytearray(8 * n), TypeError), ([0.0] * n, TypeError), (ro, ValueError),
                          (wide, ValueError), (np.zeros(shape, dtype=">f8"), TypeError)]:
            before = bad.copy() if hasattr(bad, "copy") else bytes(bad)
            with pytest.raises(kind, match="out: expected a writable C-contiguous float64") as e:
                call(bad)
            assert isinstance(e.value, mn.MarionetteError) and e.value.status == mn.Status.ARG
            after = bad if hasattr(bad, "copy") else bytes(bad)
            assert np.array_equal(np.asarray(after), np.asarray(before))
        good = np.full(shape, np.nan)
        assert call(good) is good and np.all(np.isfinite(good))
    rt.close()
    seq.close()
