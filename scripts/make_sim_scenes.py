#!/usr/bin/env python3
"""Writes the shipped soft-body scenes of docs/examples/sim (docs/softbody.md): the built-in
tube and jelly (their drives as keyed paths), a gingerbread figure in the plane (its mesh
triangulated here from a union of discs and capsules), and CesiumMan and Fox driven by
their own animations, and CesiumMan driven by a CMU walk (a BVH take retargeted onto it). Run from the top of the tree; the files are committed."""
import json
import math
import os

OUT = os.path.join("docs", "examples", "sim")


def quat_z(a):
    return [round(math.cos(a / 2), 12), 0, 0, round(math.sin(a / 2), 12)]


def chain(n, top, step, axis=1):
    """n bones from top, each step long along the axis (negative: downwards)."""
    bones = []
    for b in range(n):
        h = [0.0, 0.0, 0.0]
        t = [0.0, 0.0, 0.0]
        h[axis] = round(top + b * step, 12)
        t[axis] = round(top + (b + 1) * step, 12)
        c = {"name": f"bone{b}", "kind": "bone", "pivot": h, "tail": t}
        if b:
            c["parent"] = f"bone{b - 1}"
        bones.append(c)
    return bones


def write(name, doc):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def tube():
    # the top bone swung along a circle (0.5 Hz) and rocked: keys every 0.1 s, looped
    keys = []
    for k in range(21):
        t = 0.1 * k
        w = math.pi * t
        keys.append({"t": round(t, 12),
                     "p": [round(0.5 * math.sin(w), 12), 3.0, round(0.5 * (math.cos(w) - 1), 12)],
                     "r": quat_z(0.3 * math.sin(w))})
    write("tube.json", {
        "mesh": {"tube": {"axis": "-y", "length": 3.0, "radius": 0.3, "rings": 25, "segments": 16}},
        "body": {"kind": "lattice", "resolution": 16, "density": 100, "edge_compliance": 1e-7,
                 "damping": 1.0},
        "controllers": chain(4, 3.0, -0.75),
        "weights": {"influences": 2, "falloff": 2},
        "drive": {"paths": {"bone0": {"loop": True, "keys": keys}}},
        "simulation": {"dt": 1 / 60, "frames": 120, "substeps": 5, "gravity": [0, -9.81, 0]},
        "coupling": {"enabled": True, "compliance_driven": 0, "compliance_free": 0},
    })


def jelly():
    keys = []
    for k in range(21):
        t = 0.1 * k
        w = math.pi * t
        keys.append({"t": round(t, 12), "p": [round(0.3 * math.sin(w), 12), 0, 0],
                     "r": quat_z(0.15 * math.sin(w))})
    write("jelly.json", {
        "mesh": {"tube": {"axis": "y", "length": 1.2, "radius": 0.5, "rings": 13, "segments": 16}},
        "body": {"kind": "lattice", "resolution": 10, "density": 1000, "edge_compliance": 1e-6,
                 "damping": 1.0},
        "controllers": chain(3, 0.0, 0.4),
        "drive": {"paths": {"bone0": {"loop": True, "keys": keys}}},
        "simulation": {"dt": 1 / 60, "frames": 120, "substeps": 5, "gravity": [0, -9.81, 0],
                       "ground": 0},
    })


def capsule(p, a, b, r):
    ax, ay = b[0] - a[0], b[1] - a[1]
    L2 = ax * ax + ay * ay
    u = 0 if L2 == 0 else max(0, min(1, ((p[0] - a[0]) * ax + (p[1] - a[1]) * ay) / L2))
    dx, dy = p[0] - (a[0] + u * ax), p[1] - (a[1] + u * ay)
    return dx * dx + dy * dy <= r * r


def gingerbread():
    parts = [((0, 1.62), (0, 1.62), 0.3),      # head
             ((0, 0.75), (0, 1.2), 0.38),      # body
             ((0, 1.15), (-0.8, 1.35), 0.14),  # arms
             ((0, 1.15), (0.8, 1.35), 0.14),
             ((-0.15, 0.7), (-0.32, 0.12), 0.16),  # legs
             ((0.15, 0.7), (0.32, 0.12), 0.16)]
    h = 0.05
    nx, ny = 44, 44
    x0, y0 = -1.1, -0.05

    def inside(i, j):
        p = (x0 + i * h, y0 + j * h)
        return any(capsule(p, a, b, r) for a, b, r in parts)

    ids, verts, tris = {}, [], []

    def vid(i, j):
        if (i, j) not in ids:
            ids[(i, j)] = len(verts)
            verts.append((round(x0 + i * h, 9), round(y0 + j * h, 9)))
        return ids[(i, j)]

    for i in range(nx):
        for j in range(ny):
            a, b, c, d = (i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1)
            for t in ((a, b, d), (a, d, c)):
                if all(inside(*v) for v in t):
                    tris.append([vid(*v) for v in t])
    with open(os.path.join(OUT, "gingerbread.obj"), "w") as f:
        f.write("# a gingerbread figure in the plane (scripts/make_sim_scenes.py)\n")
        for x, y in verts:
            f.write(f"v {x} {y} 0\n")
        for t in tris:
            f.write("f %d %d %d\n" % (t[0] + 1, t[1] + 1, t[2] + 1))
    wave = []
    for k in range(9):
        t = 0.25 * k
        a = 0.6 * math.sin(2 * math.pi * t / 2)
        wave.append({"t": round(t, 12), "p": [round(0.8 + 0.2 * math.sin(a), 12),
                                              round(1.35 + 0.35 * math.sin(2 * math.pi * t / 2), 12)],
                     "angle": round(a, 12)})
    write("gingerbread.json", {
        "mesh": "gingerbread.obj",
        "body": {"kind": "plane", "density": 100, "edge_compliance": 1e-5, "damping": 1.0},
        "controllers": [
            {"name": "torso", "pivot": [0, 0.95]},
            {"name": "head", "pivot": [0, 1.62]},
            {"name": "left_hand", "pivot": [-0.8, 1.35]},
            {"name": "right_hand", "pivot": [0.8, 1.35]},
            {"name": "left_foot", "pivot": [-0.32, 0.12]},
            {"name": "right_foot", "pivot": [0.32, 0.12]}],
        "weights": {"influences": 3, "falloff": 3},
        "drive": {"paths": {
            "left_foot": {"keys": [{"t": 0}]},
            "right_foot": {"keys": [{"t": 0}]},
            "right_hand": {"loop": True, "keys": wave}}},
        "simulation": {"dt": 1 / 60, "frames": 240, "substeps": 5, "gravity": [0, -9.81, 0],
                       "ground": 0},
    })


def characters():
    write("cesiumman.json", {
        "mesh": "../../../data/skinned/CesiumMan.glb",
        "body": {"kind": "lattice", "resolution": 24, "density": 1000, "edge_compliance": 1e-4,
                 "damping": 2.0},
        "driven": ["joint0", "joint1", "joint2", "joint3", "joint5", "joint6", "joint7", "joint8",
                   "joint11", "joint12", "joint13", "joint14", "joint15", "joint16", "joint17",
                   "joint18"],
        "drive": {"animation": 0, "loop": True},
        "simulation": {"dt": 1 / 60, "frames": 240, "substeps": 5, "gravity": [0, -9.81, 0]},
    })
    write("cesiumman_take.json", {
        "mesh": "../../../data/skinned/CesiumMan.glb",
        "body": {"kind": "lattice", "resolution": 24, "density": 1000, "edge_compliance": 1e-4,
                 "damping": 2.0},
        "driven": ["joint0", "joint1", "joint2", "joint3", "joint5", "joint6", "joint7", "joint8",
                   "joint11", "joint12", "joint13", "joint14", "joint15", "joint16", "joint17",
                   "joint18"],
        "drive": {"take": "../../../data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh"},
        "simulation": {"dt": 1 / 60, "frames": 240, "substeps": 5, "gravity": [0, -9.81, 0]},
    })
    write("fox.json", {
        "mesh": "../../../data/skinned/Fox.glb",
        "body": {"kind": "lattice", "resolution": 14, "density": 0.001, "edge_compliance": 1e-4,
                 "damping": 2.0},
        "driven": ["b_Hip_01", "b_Spine01_02", "b_Spine02_03", "b_Neck_04",
                   "b_Head_05", "b_RightUpperArm_06", "b_RightForeArm_07", "b_RightHand_08",
                   "b_LeftUpperArm_09", "b_LeftForeArm_010", "b_LeftHand_011", "b_LeftLeg01_015",
                   "b_LeftLeg02_016", "b_LeftFoot01_017", "b_LeftFoot02_018", "b_RightLeg01_019",
                   "b_RightLeg02_020", "b_RightFoot01_021", "b_RightFoot02_022"],
        "drive": {"animation": "Walk", "loop": True},
        "simulation": {"dt": 1 / 60, "frames": 240, "substeps": 5, "gravity": [0, -981, 0]},
    })


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    tube()
    jelly()
    gingerbread()
    characters()
