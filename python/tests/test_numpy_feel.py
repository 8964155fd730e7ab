"""What a numpy user expects (as pinocchio, ikpy and pytorch_kinematics do): fk(q) returns
a copy unless a view is asked for, fk_many(Q) computes a whole motion (N x joints x 3), the
package is typed (annotations and py.typed), a missing file is a FileNotFoundError and bad
input a ValueError (both still MarionetteErrors), and solve_batch of one target says which
shapes it takes."""
import errno
import os
import typing

import numpy as np
import pytest

import marionette as mn
from conftest import data

WALK = data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh")
PANDA = data("robots/franka_panda/panda.urdf")


def test_fk_returns_a_copy_by_default_and_a_view_on_request():
    m, motion = mn.load_motion(WALK)
    d = m.data()
    frames = [d.fk(q) for q in motion.q[:20]]
    # one pose per frame, not twenty references to the last
    assert not np.allclose(frames[0], frames[19])
    for f, q in zip(frames, motion.q[:20]):
        d.fk(q)
        np.testing.assert_array_equal(f, d.positions)
    v = d.fk(motion.q[3], copy=False)
    assert not v.flags.writeable and np.shares_memory(v, d.positions)
    before = v.copy()
    d.fk(motion.q[60])
    assert not np.array_equal(v, before)  # the view follows the state
    c = d.fk(motion.q[3])
    assert c.flags.writeable and not np.shares_memory(c, d.positions)


def test_fk_many_is_fk_of_every_row_and_leaves_the_state():
    m, motion = mn.load_motion(WALK)
    d = m.data()
    d.q = motion.q[5]
    d.fk()
    q_before, p_before = d.q.copy(), d.positions.copy()
    P = d.fk_many(motion.q)
    assert P.shape == (motion.nframes, m.njoint, 3)
    for i in (0, 1, motion.nframes // 2, motion.nframes - 1):
        np.testing.assert_array_equal(P[i], d.fk(motion.q[i]))
    d.q = q_before
    d.fk()
    np.testing.assert_array_equal(d.positions, p_before)
    # the state after fk_many is the one before it
    d2 = m.data()
    d2.q = motion.q[5]
    d2.fk()
    d2.fk_many(motion.q[:10])
    np.testing.assert_array_equal(d2.q, motion.q[5])
    np.testing.assert_array_equal(d2.positions, p_before)
    assert d.fk_many(np.empty((0, m.nq))).shape == (0, m.njoint, 3)
    with pytest.raises(ValueError, match=rf"Q: expected shape \(N, {m.nq}\), got \({m.nq},\)"):
        d.fk_many(motion.q[0])
    bad = motion.q[:3].copy()
    bad[1, 2] = np.nan
    with pytest.raises(mn.MarionetteError, match="Q: not finite"):
        d.fk_many(bad)
    np.testing.assert_array_equal(d2.q, motion.q[5])


def test_the_package_is_typed():
    pkg = os.path.dirname(mn.__file__)
    assert os.path.exists(os.path.join(pkg, "py.typed"))
    hints = typing.get_type_hints(mn.Data.fk)
    assert hints["return"] is np.ndarray and hints["copy"] is bool
    assert typing.get_type_hints(mn.Data.fk_many)["return"] is np.ndarray
    assert typing.get_type_hints(mn.load)["return"] is mn.Model
    assert typing.get_type_hints(mn.Model.data)["return"] is mn.Data
    assert typing.get_type_hints(mn.IK.solve)["return"] is mn.IKResult
    assert typing.get_type_hints(mn.IK.solve_batch)["return"] is mn.IKBatchResult


def test_a_missing_file_is_file_not_found(tmpdir_clean):
    missing = os.path.join(tmpdir_clean, "nope.urdf")
    for call in (mn.load, mn.read_urdf, mn.read_skeleton, mn.read_figure_document,
                 lambda p: mn.read_bvh(p.replace(".urdf", ".bvh"))):
        with pytest.raises(FileNotFoundError) as e:
            call(missing)
        err = e.value
        assert isinstance(err, OSError) and isinstance(err, mn.MarionetteError)
        assert err.errno == errno.ENOENT and err.status == mn.Status.IO
        assert err.filename == err.file and err.file.startswith(tmpdir_clean)
        assert "No such file or directory" in str(err) and str(err) == err.message
    # a folder is no file: an OSError, not FileNotFoundError
    with pytest.raises(OSError) as e:
        mn.load(tmpdir_clean)
    assert not isinstance(e.value, FileNotFoundError)
    assert isinstance(e.value, mn.MarionetteError) and e.value.errno == errno.EIO


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError) as e:
        mn.from_text("HIERARCHY\nROOT\n", "bvh", name="bad.bvh")
    assert isinstance(e.value, mn.MarionetteError) and e.value.status == mn.Status.PARSE
    assert e.value.file == "bad.bvh" and e.value.line == 2
    m = mn.load(PANDA)
    with pytest.raises(ValueError, match="no joint named 'nope'"):
        m.joint("nope")
    with pytest.raises(ValueError) as e:
        m.data().q = [1, 2]
    assert isinstance(e.value, mn.MarionetteError) and e.value.field == "q"
    assert mn.MarionetteValueError.__mro__.index(mn.MarionetteError) < \
        mn.MarionetteValueError.__mro__.index(ValueError)


def test_solve_batch_of_one_target_names_the_shapes():
    m = mn.load(PANDA)
    d = m.data()
    ik = mn.IK(m, base="panda_link0", tip="panda_link8")
    with pytest.raises(ValueError, match=r"targets: expected shape \(N, 3\) or \(N, 7\), got \(3,\)"):
        ik.solve_batch(d, np.array([0.4, 0.2, 0.5]))
    with pytest.raises(ValueError, match=r"\(N, 3\) or \(N, 7\), got \(2, 4\)"):
        ik.solve_batch(d, np.zeros((2, 4)))
    r = ik.solve_batch(d, [[0.4, 0.2, 0.5]])
    assert r.q.shape == (1, m.nq)
