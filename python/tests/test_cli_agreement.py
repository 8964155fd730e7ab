"""The package gives the command line's answers on the shipped figures: forward kinematics,
IK solves with every method, conversions, sequence sampling and retargeting."""
import json
import os

import numpy as np
import pytest

import marionette as mn
from conftest import ROBOTS, cli, cli_json, data

FIGURES = [r[0] for r in ROBOTS] + [
    "robots/nao/nao.urdf",
    "mocap/cmu_motionbuilder/cmu_02_01_walk.bvh",
    "mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh",
    "mocap/other_skeleton/Boxing_Toes.bvh",
    "skinned/RiggedFigure.glb",
    "skinned/CesiumMan.glb",
]


def fk_cli(path, *extra):
    j = cli_json("fk", path, "--json", *extra)
    return [x["name"] for x in j["joints"]], np.array([x["position"] for x in j["joints"]])


@pytest.mark.parametrize("rel", FIGURES + ["stickman"])
def test_fk_rest_pose(rel):
    path = rel if rel == "stickman" else data(rel)
    names, pos = fk_cli(path)
    with mn.load(path) as m, m.data() as d:
        d.fk()
        assert list(m.joint_names) == names
        np.testing.assert_allclose(d.positions, pos, rtol=0, atol=1e-12)


@pytest.mark.parametrize("rel", [f for f in FIGURES if f.endswith(".bvh")])
def test_fk_motion_frames(rel):
    m, motion = mn.load_motion(data(rel))
    d = m.data()
    assert motion is not None and motion.nframes > 10
    for frame in (0, 7, motion.nframes - 1):
        names, pos = fk_cli(data(rel), "--frame", str(frame))
        d.fk(motion.q[frame])
        np.testing.assert_allclose(d.positions, pos, rtol=0, atol=1e-9)


def test_fk_given_state():
    path = data(ROBOTS[0][0])
    m = mn.load(path)
    d = m.data()
    q = np.linspace(-0.5, 0.5, m.nq)
    _, pos = fk_cli(path, "--q", ",".join(repr(float(v)) for v in q))
    d.fk(q)
    np.testing.assert_allclose(d.positions, pos, rtol=0, atol=1e-12)


def solve_cli(path, base, tip, target, *extra):
    """The JSON of `marionette solve` (printed also when the target is not met: exit 1)."""
    code, out, err = cli("solve", path, "--base", base, "--tip", tip, "--target",
                         ",".join(repr(float(v)) for v in target), "--json", "--timeout-ms",
                         "0", *extra, check=False)
    j = json.loads(out)
    assert code == (0 if j["status"] == "OK" else 1), err
    return j


@pytest.mark.parametrize("rel,base,tip", ROBOTS)
@pytest.mark.parametrize("method", ["lm", "dls", "pinv", "jt", "ccd", "fabrik"])
def test_solve_position(rel, base, tip, method):
    path = data(rel)
    m = mn.load(path)
    d = m.data()
    d.fk()
    # a target the arm reaches: its tip at a bent pose
    probe = m.data()
    probe.q = np.where(np.arange(m.nq) % 2 == 0, 0.4, -0.3)
    probe.clamp_to_limits()
    probe.fk()
    base_i, tip_i = m.joint(base), m.joint(tip)
    R, p = probe.rotations[base_i], probe.positions[base_i]
    target = R.T @ (probe.positions[tip_i] - p)
    j = solve_cli(path, base, tip, target, "--method", method)
    ik = mn.IK(m, base, tip, method=method, timeout_ms=0)
    r = ik.solve(d, target)
    assert r.status.name == j["status"]
    assert r.iterations == j["iterations"] and r.restarts == j["restarts"]
    chain = ik.chain_joints()
    moving = [n for n in chain if m.joint_types[m.joint(n)] != "fixed"]
    assert moving == j["joints"]
    qa = np.array([d.q[m.qadr[m.joint(n)]] for n in moving])
    np.testing.assert_allclose(qa, j["q"], rtol=0, atol=1e-12)


def test_solve_pose_with_orientation_and_seed():
    rel, base, tip = ROBOTS[0]
    path = data(rel)
    m = mn.load(path)
    d = m.data()
    target = (0.45, 0.1, 0.4, 0.0, 1.0, 0.0, 0.0)
    seed = [0.1, -0.2, 0.1, -1.5, 0.0, 1.4, 0.6]
    j = solve_cli(path, base, tip, target, "--seed-q", ",".join(map(str, seed)))
    ik = mn.IK(m, base, tip, use_orientation=True, timeout_ms=0)
    for v, jn in zip(seed, j["joints"]):
        d.q[m.qadr[m.joint(jn)]] = v
    r = ik.solve(d, target[:3], target[3:])
    assert r.status.name == j["status"] == "OK"
    qa = np.array([d.q[m.qadr[m.joint(n)]] for n in j["joints"]])
    np.testing.assert_allclose(qa, j["q"], rtol=0, atol=1e-12)
    assert abs(r.pos_err - j["pos_err"]) <= 1e-6 * max(1.0, j["pos_err"])


def chain_q(m, d, joints):
    """The chain's state numbers in the command line's order (balls as quaternions)."""
    width = {"hinge": 1, "slide": 1, "ball": 4, "free": 7}
    return np.concatenate([d.q[m.qadr[m.joint(n)]:m.qadr[m.joint(n)] +
                               width[m.joint_types[m.joint(n)]]] for n in joints])


@pytest.mark.parametrize("path,base,tip,target,method", [
    (data("mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh"), "LHipJoint", "LeftAnkle",
     (3, -12, 4), "analytic"),
    (data("mocap/cmu_3dsmax/cmu_131_01_start_walk_stop.bvh"), "LHipJoint", "LeftAnkle",
     (3, -12, 4), "fabrik"),
    ("stickman", "torso", "right hand", (0.1, -0.45, 0.2), "ccd"),
    ("stickman", "torso", "right hand", (0.1, -0.45, 0.2), "lm"),
])
def test_solve_figures_with_balls_and_compound_joints(path, base, tip, target, method):
    j = solve_cli(path, base, tip, target, "--method", method)
    m = mn.load(path)
    d = m.data()
    r = mn.ik_solve(d, base, tip, target=target, method=method, timeout_ms=0)
    assert r.status.name == j["status"]
    assert r.iterations == j["iterations"]
    np.testing.assert_allclose(chain_q(m, d, j["joints"]), j["q"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("ext", [".bvh", ".json", ".glb", ".skel"])
def test_convert_writes_the_same_file(ext, tmpdir_clean):
    src = data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh")
    a = os.path.join(tmpdir_clean, "cli" + ext)
    b = os.path.join(tmpdir_clean, "py" + ext)
    cli("convert", src, a)
    mn.convert(src, b)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read()


@pytest.mark.parametrize("src,args,kwargs,ext", [
    ("robots/franka_panda/panda.urdf", [], {}, ".glb"),
    ("robots/franka_panda/panda.urdf", ["--z-up"], {"z_up": True}, ".glb"),
    ("mocap/other_skeleton/Boxing_Toes.bvh", [], {}, ".glb"),
    ("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", ["--scale", "1"], {"scale": 1}, ".glb"),
    ("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh", ["--scale", "0.01"], {"scale": 0.01}, ".glb"),
    ("robots/ur5/ur5_robot.urdf", [], {}, ".bvh"),
    ("robots/ur5/ur5_robot.urdf", ["--z-up"], {"z_up": True}, ".bvh"),
])
def test_convert_glb_axes_and_units_as_the_command_line(src, args, kwargs, ext, tmpdir_clean):
    a = os.path.join(tmpdir_clean, "cli" + ext)
    b = os.path.join(tmpdir_clean, "py" + ext)
    cli("convert", data(src), a, *args)
    mn.convert(data(src), b, **kwargs)
    with open(a, "rb") as fa, open(b, "rb") as fb:
        assert fa.read() == fb.read()


def test_guess_scale():
    m = mn.load(data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"))
    scale, height, units = mn.guess_scale(m)
    assert (scale, units) == (0.056444, "CMU units") and abs(height - 25.22) < 0.01
    assert mn.guess_scale(mn.load(data("robots/franka_panda/panda.urdf")),
                          mn.Z_UP_TO_Y_UP)[2] == "metres"
    with pytest.raises(ValueError, match="z_up: is for a URDF src"):
        mn.convert(data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"), "x.glb", z_up=True)


def test_retarget_matches_the_command_line(tmpdir_clean):
    src = data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh")
    out = os.path.join(tmpdir_clean, "cli.bvh")
    cli("retarget", src, "--to", "stickman", "--out", out)
    m_src, take = mn.load_motion(src)
    dst = mn.stickman()
    with mn.Retargeter(m_src, dst) as rt:
        moved = rt.run(take)
        metrics = rt.measure(moved)
    mine = os.path.join(tmpdir_clean, "py.bvh")
    mn.write_bvh(mine, dst, moved)
    with open(out, "rb") as fa, open(mine, "rb") as fb:
        assert fa.read() == fb.read()
    assert metrics["contacts"] > 0


def test_sequence_sampling_matches_bake(tmpdir_clean):
    take = data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh")
    doc = os.path.join(tmpdir_clean, "walk.json")
    baked = os.path.join(tmpdir_clean, "baked.bvh")
    cli("anim", "import", take, "--out", doc, "--tol", "0.5")
    cli("anim", "bake", doc, "--out", baked, "--plain")
    m, motion = mn.load_motion(take)
    # the command line's import: squad rotations, Catmull-Rom translations
    seq = mn.Sequence(m, fps=1.0 / motion.frame_time, rot="squad", trans="catmull-rom")
    nkeys, err = seq.add_motion(motion, tol=0.5)
    assert 1 < nkeys < motion.nframes / 4 and err <= 0.5
    _, back = mn.load_motion(baked)
    frames = np.arange(seq.start, seq.end + 1)
    q = seq.sample_many(frames)
    assert q.shape == back.q.shape
    d1, d2 = m.data(), m.data()
    for f in range(0, len(frames), 17):
        d1.fk(q[f])
        d2.fk(back.q[f])
        np.testing.assert_allclose(d1.positions, d2.positions, rtol=0, atol=1e-6)
