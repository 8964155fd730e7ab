"""The API's behaviour: zero-copy views, Jacobians against finite differences, batches
against single solves, constraints, the skinning fit, sequences."""
import numpy as np
import pytest

import marionette as mn
from conftest import ROBOTS, data


def test_state_and_positions_are_views_of_the_library():
    m = mn.stickman()
    d = m.data()
    q = d.q
    assert np.shares_memory(q, d.q) and q.flags.writeable
    assert not d.positions.flags.writeable
    pos = d.positions
    before = pos.copy()
    q[0] += 1.0  # the pelvis' x, written through the view
    d.fk()
    assert np.allclose(pos[:, 0], before[:, 0] + 1.0)  # the same memory, updated by fk
    assert d.rotations.shape == (m.njoint, 3, 3)
    quats = d.orientations()
    assert np.allclose(np.linalg.norm(quats, axis=1), 1.0)
    # a view outlives the wrapper's close and the model's
    d.close()
    m.close()
    del d, m
    assert np.allclose(pos[:, 0], before[:, 0] + 1.0)


def test_defaults_are_the_libraries():
    assert mn.ik_defaults()["method"] == "lm" and mn.ik_defaults()["tol_pos"] == 1e-5
    assert mn.ik_defaults()["max_restarts"] == 100
    assert mn.csolve_defaults()["method"] == "lagrange" and mn.csolve_defaults()["tol"] == 1e-4
    assert mn.fit_defaults()["max_iters"] == 50
    assert mn.retarget_defaults()["contact_height"] == 0.12
    assert mn.retarget_defaults()["contact_release_speed"] == 0.3


@pytest.mark.parametrize("path,joint", [(data(ROBOTS[0][0]), "panda_link8"),
                                        ("stickman", "right hand")])
def test_jacobian_against_finite_differences(path, joint):
    m = mn.load(path)
    d = m.data()
    rng = np.random.default_rng(3)
    v0 = rng.uniform(-0.3, 0.3, m.nv)
    d.integrate(v0)
    d.fk()
    point = (0.01, 0.02, 0.03)
    J = d.jacobian(joint, point)
    q0 = d.q.copy()
    p0 = d.point_world(joint, point)
    h = 1e-6
    for k in range(m.nv):
        e = np.zeros(m.nv)
        e[k] = h
        d.q = q0
        d.integrate(e)
        d.fk()
        np.testing.assert_allclose((d.point_world(joint, point) - p0) / h, J[:3, k], atol=1e-5)
    d.q = q0
    d.fk()
    dofs = d.chain_dofs(None, joint)
    np.testing.assert_allclose(d.jacobian_chain(None, joint, point), J[:, dofs], atol=1e-12)
    c, mass = d.com()
    assert mass == pytest.approx(m.total_mass)
    assert d.com_jacobian().shape == (3, m.nv)


@pytest.mark.parametrize("method", mn.METHODS[:6])
def test_batch_equals_single_solves(method):
    rel, base, tip = ROBOTS[0]
    m = mn.load(data(rel))
    d, e = m.data(), m.data()
    rng = np.random.default_rng(1)
    targets = np.column_stack([rng.uniform(0.2, 0.5, 20), rng.uniform(-0.3, 0.3, 20),
                               rng.uniform(0.2, 0.7, 20)])
    ik = mn.IK(m, base, tip, method=method, timeout_ms=0, max_restarts=2)
    seed = d.q.copy()
    b = ik.solve_batch(d, targets)
    assert b.q.shape == (20, m.nq) and b.status.shape == (20,)
    for k, t in enumerate(targets):
        e.q = seed
        r = ik.solve(e, t)
        assert b.status[k] == r.status
        assert np.array_equal(b.q[k], e.q)
    assert b.solved == int(b.met.sum())
    assert np.array_equal(d.q, b.q[-1])
    # follow: each from the previous answer
    d.q = seed
    f = ik.solve_batch(d, targets, follow=True)
    e.q = seed
    for k, t in enumerate(targets):
        ik.solve(e, t)
        assert np.array_equal(f.q[k], e.q)


def test_batch_with_orientations():
    rel, base, tip = ROBOTS[0]
    m = mn.load(data(rel))
    d = m.data()
    probe = m.data()
    rows = []
    rng = np.random.default_rng(2)
    for _ in range(8):
        probe.q = rng.uniform(-0.5, 0.5, m.nq)
        probe.clamp_to_limits()
        probe.fk()
        j = m.joint(tip)
        rows.append(np.concatenate([probe.positions[j], probe.orientations()[j]]))
    ik = mn.IK(m, base, tip, use_orientation=True, timeout_ms=0)
    b = ik.solve_batch(d, np.array(rows))
    assert b.solved >= 7 and b.max_rot_err < 1e-3


def test_constraint_system_pins_and_drags():
    m = mn.stickman()
    d = m.data()
    d.fk()
    foot = m.joint("left foot")
    pinned = d.positions[foot].copy()
    with mn.ConstraintSystem(d) as cs:
        hf = cs.add_handle(joint="left foot", name="lfoot")
        c = cs.add_constraint("pin", handle=hf, target=pinned, name="stand")
        hh = cs.add_handle(joint="right hand")
        target = d.positions[m.joint("right hand")] + (0.1, 0.25, 0.2)
        cs.drag(hh, target)
        assert cs.find_handle("lfoot") == hf and cs.find_constraint("stand") == c
        for _ in range(10):
            r = cs.solve()
        assert r.status in (mn.Status.OK, mn.Status.UNREACHABLE)
        d.fk()
        assert np.linalg.norm(d.positions[foot] - pinned) < 1e-3
        assert cs.drag_error(hh) < 0.05
        assert cs.residual(c) < 1e-3
        pos, rot = cs.handle_value(hf)
        np.testing.assert_allclose(pos, d.positions[foot], atol=1e-9)
        C = cs.evaluate()
        J = cs.jacobian()
        assert C.shape == (3,) and J.shape == (3, m.nv)
        assert np.abs(J[:, m.dofadr[m.joint("right arm")]]).max() == 0  # arm doesn't move foot
        for method in ("ccd", "dls"):
            assert cs.solve(method=method, max_iters=5).status != mn.Status.ARG


def test_frozen_joint_and_axis_lock():
    m = mn.stickman()
    d = m.data()
    d.fk()
    elbow = m.joint("right elbow")
    q0 = d.q.copy()
    with mn.ConstraintSystem(d) as cs:
        cs.set_joint_scale(0, elbow, 0.0)
        assert cs.joint_scale(0, elbow) == 0.0
        hh = cs.add_handle(joint="right hand")
        hf = cs.add_handle(type="orientation", joint="left foot")
        c = cs.add_constraint("orient", handle=hf, target_rot=d.orientations()[m.joint("left foot")],
                              axis="y")
        cs.drag(hh, d.positions[m.joint("right hand")] + (0.1, 0.2, 0.1))
        for _ in range(5):
            cs.solve()
        assert d.q[m.qadr[elbow]] == q0[m.qadr[elbow]]  # frozen: not moved at all
        assert np.abs(d.q - q0).max() > 1e-3  # the rest of the arm did move
        assert cs.residual(c) < 1e-6
        with pytest.raises(mn.MarionetteError):
            cs.set_joint_scale(0, elbow, -1.0)
        with pytest.raises(mn.MarionetteError):
            cs.add_constraint("orient", handle=hf, axis="w")
        cs.reset_joint_scales()
        assert cs.joint_scale(0, elbow) == 1.0


def test_skinning_fit_recovers_a_pose():
    # a strip of vertices on two bones; the targets are a known pose of the rig
    xs = np.linspace(0, 2, 21)
    rest = np.column_stack([xs, np.zeros_like(xs), np.zeros_like(xs)])
    rest = np.vstack([rest, rest + (0, 0.1, 0), rest + (0, 0, 0.1)])
    with mn.Rig(rest) as rig:
        rig.add_ctrl("a", "bone", pivot=(0, 0, 0), tail=(1, 0, 0))
        rig.add_ctrl("b", "bone", pivot=(1, 0, 0), tail=(2, 0, 0), parent="a", attached=True)
        w = np.clip(rest[:, 0] - 0.5, 0, 1)
        rig.set_weights_dense(np.column_stack([1 - w, w]))
        pose = rig.rest_pose()
        c, s = np.cos(0.4), np.sin(0.4)
        pose[1, :9] = [c, -s, 0, s, c, 0, 0, 0, 1]
        rig.propagate(pose)
        targets = rig.deform(pose)
        with mn.Fitter(rig) as fitter:
            guess = rig.rest_pose()
            r = fitter.fit(guess, targets, max_iters=200)
            assert r.status in (mn.Status.OK, mn.Status.NOCONVERGE)
            assert r.rms < 1e-6
            np.testing.assert_allclose(rig.deform(guess), targets, atol=1e-5)
            assert rig.error(guess, targets)[1] < 1e-5
            # forgotten what the fits before taught it, a fit repeats bit for bit
            again = []
            for _ in range(2):
                fitter.reset()
                g = rig.rest_pose()
                again.append((g, fitter.fit(g, targets, max_iters=200).iterations))
            np.testing.assert_array_equal(again[0][0], again[1][0])
            assert again[0][1] == again[1][1]


def test_sequence_keys_and_constrained_inbetweens():
    m = mn.stickman()
    d = m.data()
    seq = mn.Sequence(m, fps=24)
    q0 = m.q0
    q1 = q0.copy()
    q1[m.qadr[m.joint("right knee")]] = 1.2
    q1[1] += 0.1  # pelvis up
    assert seq.set_key(0, q0) == 0 and seq.set_key(10, q1) == 1
    assert seq.key_count == 2 and seq.start == 0 and seq.end == 10
    np.testing.assert_allclose(seq.sample(10), q1, atol=1e-12)
    mid = seq.sample(5)
    knee = m.qadr[m.joint("right knee")]
    assert mid[knee] == pytest.approx((q0[knee] + 1.2) / 2)  # a lone hinge: linear
    assert seq.sample_many([0, 5, 10]).shape == (3, m.nq)
    h = seq.add_handle(joint="left foot")
    seq.add_constraint("pin", handle=h, start=0, end=10, lock=True)
    with seq.solver(d) as sv:
        d.fk(q0)
        foot0 = d.positions[m.joint("left foot")].copy()
        for f in range(11):
            r = sv.solve_frame(f)
            assert r.status == mn.Status.OK
            assert np.linalg.norm(d.positions[m.joint("left foot")] - foot0) < 1e-3


def test_write_and_read_back(tmpdir_clean):
    import os
    m, motion = mn.load_motion(data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"))
    for ext, reader in ((".bvh", mn.load_motion), (".json", mn.read_figure_document),
                        (".glb", mn.load_motion)):
        p = os.path.join(tmpdir_clean, "w" + ext)
        {".bvh": mn.write_bvh, ".json": mn.write_figure_document, ".glb": mn.write_gltf}[ext](
            p, m, motion)
        m2, mo2 = reader(p)
        assert mo2.nframes == motion.nframes
        d1, d2 = m.data(), m2.data()
        d1.fk(motion.q[40])
        d2.fk(mo2.q[40])
        np.testing.assert_allclose(d1.positions[:len(d2.positions)], d2.positions, atol=1e-4)


def test_writers_to_memory_give_the_files_bytes(tmpdir_clean):
    import os
    m, motion = mn.load_motion(data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"))
    short = mn.Motion(motion.q[:30], motion.frame_time)
    rot = mn.Z_UP_TO_Y_UP
    text = mn.to_bvh_text(m, short, root_rot=rot)
    p = os.path.join(tmpdir_clean, "w.bvh")
    mn.write_bvh(p, m, short, root_rot=rot)
    with open(p, encoding="utf-8") as f:
        assert text == f.read()
    m2, mo2 = mn.from_text(text, "bvh")
    assert mo2.nframes == 30 and m2.nq == m.nq
    glb = mn.to_glb_bytes(m, short, scale=0.01)
    p = os.path.join(tmpdir_clean, "w.glb")
    mn.write_gltf(p, m, short, scale=0.01)
    with open(p, "rb") as f:
        assert glb == f.read()
    assert glb[:4] == b"glTF"
    # the rest pose alone, and the writers' own refusals, as the file writers give them
    assert mn.to_bvh_text(m).count("\n") > 10
    with pytest.raises(mn.MarionetteError, match="root_rot"):
        mn.to_glb_bytes(m, short, root_rot=(2.0, 0.0, 0.0, 0.0))
    with pytest.raises(mn.MarionetteError, match="root_rot"):
        mn.to_bvh_text(m, short, root_rot=(0.0, 0.0, 0.0, 0.0))


def test_ik_mode_distance_is_no_farther_than_speed():
    rel, base, tip = ROBOTS[0]
    m = mn.load(data(rel))
    assert mn.ik_defaults()["mode"] == "speed"
    rng = np.random.default_rng(3)
    targets = np.column_stack([rng.uniform(0.2, 0.5, 6), rng.uniform(-0.3, 0.3, 6),
                               rng.uniform(0.2, 0.7, 6)])
    fast = mn.IK(m, base, tip, timeout_ms=0)
    near = mn.IK(m, base, tip, timeout_ms=0, mode="distance", max_restarts=30)
    d = m.data()
    seed = d.q.copy()
    for t in targets:
        d.q = seed
        assert fast.solve(d, t).ok
        a = np.linalg.norm(d.q - seed)
        d.q = seed
        assert near.solve(d, t).ok
        assert np.linalg.norm(d.q - seed) <= a + 1e-12
    with pytest.raises(Exception):
        mn.IK(m, base, tip, mode="closest")
