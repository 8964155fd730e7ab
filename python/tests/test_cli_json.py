"""Every command takes --json and prints one JSON document on stdout in one style (no
spaces; numbers in the shortest form that reads back): the commands that write JSON
themselves (fk, info, solve, fit, pose), and the ones whose
key=value lines or text the command line turns into JSON (retarget, sim, anim, demo,
convert, bench), with the same values and exit status as without --json. The editor, a
server, prints its start line as one JSON object (tests/editor/test_editor_server.c)."""
import json
import os
import re

import pytest

from conftest import cli, data, TOP

PANDA = data("robots/franka_panda/panda.urdf")
WALK = data("mocap/cmu_motionbuilder/cmu_02_01_walk.bvh")
CROUCH = os.path.join(TOP, "docs", "examples", "crouch_sequence.json")


def kv(text):
    return dict(tok.split("=", 1) for line in text.split("\n") for tok in line.split())


def commands(tmp):
    return [
        ["fk", PANDA],
        ["info", WALK],
        ["solve", PANDA, "--base", "panda_link0", "--tip", "panda_link8", "--target",
         "0.4,0.2,0.5", "--timeout-ms", "0"],
        ["pose", data("skinned/Fox.glb"), "--scene",
         os.path.join(TOP, "docs", "examples", "fox_sniff.json"), "--out",
         os.path.join(tmp, "sniff.bvh")],
        ["retarget", WALK, "--to", "stickman", "--out", os.path.join(tmp, "r.bvh")],
        ["sim", "--frames", "2", "--out", os.path.join(tmp, "sim")],
        ["anim", "bake", CROUCH, "--out", os.path.join(tmp, "c.bvh")],
        ["anim", "info", CROUCH],
        ["demo"],
        ["convert", "stickman", os.path.join(tmp, "s.bvh")],
        ["bench", "linalg"],
        ["fit", "--rig", data("meshseq/cylinder/cylinder.obj"), "--frames",
         data("meshseq/cylinder/poses-1/cylinder-1.obj"),
         data("meshseq/cylinder/poses-1/cylinder-2.obj")],
    ]


def test_every_command_prints_json(tmpdir_clean):
    seen = set()
    for args in commands(tmpdir_clean):
        rc, out, err = cli(*args, "--json", check=False)
        assert rc == 0, (args, err)
        doc = json.loads(out)  # one document
        # one line, no spaces outside the strings
        assert out.count("\n") == 1 and out.endswith("\n"), args
        bare = re.sub(r'"(\\.|[^"\\])*"', '""', out)
        assert " " not in bare, (args, bare[:200])
        seen.add(args[0])
        if args[0] in ("retarget", "sim") or args[:2] == ["anim", "bake"]:
            # the same values as the key=value lines, numbers as numbers
            _, text, _ = cli(*args)
            ref = kv(text)
            assert set(doc) == set(ref), args
            for k, v in ref.items():
                if re.search(r"(_us|_ns|us_per_step)$", k):
                    assert isinstance(doc[k], (int, float)), (args, k)  # a time: varies
                    continue
                try:
                    assert doc[k] == float(v), (args, k)
                except ValueError:
                    assert doc[k] == v, (args, k)
        if args[0] == "demo" or args[:2] == ["anim", "info"]:
            _, text, _ = cli(*args)
            def untimed(lines):
                return [re.sub(r"[0-9.]+ us\b", "T us", ln) for ln in lines]
            assert untimed(doc["lines"]) == untimed(text.rstrip("\n").split("\n"))
        if args[0] == "convert":
            assert doc == {}
        if args[0] == "fit":
            assert len(doc["frames"]) == 2 and doc["vertices"] == 420
        if args[0] == "bench":
            assert isinstance(doc["svd_6x7_ns"], (int, float))
    assert seen >= {"fk", "info", "solve", "pose", "retarget", "sim", "anim", "demo",
                    "convert", "bench", "fit"}


def test_json_keeps_the_exit_status_and_stderr(tmpdir_clean):
    rc, out, err = cli("retarget", os.path.join(tmpdir_clean, "nope.bvh"), "--to", "stickman",
                       "--out", os.path.join(tmpdir_clean, "x.bvh"), "--json", check=False)
    assert rc == 1 and "nope.bvh" in err
    assert json.loads(out) == {}
    rc, out, err = cli("convert", "--help", "--json", check=False)
    assert rc == 0 and out.startswith("usage: marionette convert")


def test_repeated_keys_become_rows():
    rc, out, _ = cli("bench", "fk", PANDA, "--reps", "2", "--json", check=False)
    assert rc == 0
    _, text, _ = cli("bench", "fk", PANDA, "--reps", "2")
    lines = [ln for ln in text.split("\n") if ln]
    doc = json.loads(out)
    keys = [tok.split("=")[0] for ln in lines for tok in ln.split()]
    if len(keys) == len(set(keys)):
        assert isinstance(doc, dict) and set(doc) == set(keys)
    else:
        assert isinstance(doc, list) and len(doc) == len(lines)
