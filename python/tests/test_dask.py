"""The corpus example (python/examples/dask_convert.py): a folder of BVH takes converted by
Dask workers in separate processes through the package gives the command line's files, a
bad take is reported with its message and the others go on."""
import glob
import os
import shutil
import subprocess

import pytest

from conftest import DATA, TOP, cli

from marionette._ffi import library_path


@pytest.mark.parametrize("ext", [".bvh", ".json"])
def test_dask_convert_matches_the_command_line(ext, tmpdir_clean):
    src = os.path.join(tmpdir_clean, "takes")
    os.makedirs(src)
    takes = sorted(glob.glob(os.path.join(DATA, "mocap", "*", "*.bvh")))
    assert len(takes) >= 5
    for t in takes:
        shutil.copy(t, src)
    with open(os.path.join(src, "broken.bvh"), "w") as f:
        f.write("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 zero 0\n")
    out = os.path.join(tmpdir_clean, "out")
    env = dict(os.environ, MARIONETTE_LIBRARY=os.path.abspath(library_path),
               PYTHONDONTWRITEBYTECODE="1", TMPDIR=tmpdir_clean)
    p = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "python", "examples",
                                                          "dask_convert.py"),
                        src, out, "--ext", ext, "--compare", "1,2"], env=env,
                       capture_output=True, text=True, timeout=600, cwd=tmpdir_clean)
    assert p.returncode == 1, p.stderr  # one take failed
    lines = p.stdout.strip().split("\n")
    assert [ln.split()[0] for ln in lines] == ["workers=1", "workers=2"]
    for ln in lines:
        kv = dict(x.split("=") for x in ln.split())
        assert kv["files"] == str(len(takes) + 1) and kv["failed"] == "1"
        assert float(kv["files_per_s"]) > 0
    assert "broken.bvh:4: OFFSET" in p.stderr
    ref = os.path.join(tmpdir_clean, "ref")
    os.makedirs(ref)
    for t in takes:
        name = os.path.splitext(os.path.basename(t))[0] + ext
        cli("convert", t, os.path.join(ref, name))
        with open(os.path.join(ref, name), "rb") as a, open(os.path.join(out, name), "rb") as b:
            assert a.read() == b.read(), name
    assert sorted(os.listdir(out)) == sorted(os.listdir(ref))  # nothing for the broken take
