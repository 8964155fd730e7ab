"""`pip install ./python` offline into a fresh environment, and the three ways the package
finds the library: MARIONETTE_LIBRARY, the soname through the loader's path, and none."""
import os
import shutil
import subprocess
import sys

from conftest import TOP

from marionette._ffi import library_path

PROBE = "import marionette as mn; print(mn.library_path); print(mn.__file__); " \
        "m = mn.stickman(); print(m.njoint)"


def run(py, env, cwd):
    return subprocess.run([py, "-c", PROBE], env=env, cwd=cwd, capture_output=True, text=True)


def test_pip_install_offline_and_find_the_library(tmpdir_clean):
    venv = os.path.join(tmpdir_clean, "venv")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                   check=True)
    py = os.path.join(venv, "bin", "python")
    env = dict(os.environ, PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               TMPDIR=tmpdir_clean, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    # a copy of python/ (the checkout is not to be touched by a test); --no-index: nothing
    # comes from a package index, the build backend included (python/_build)
    src = os.path.join(tmpdir_clean, "python")
    shutil.copytree(os.path.join(TOP, "python"), src,
                    ignore=shutil.ignore_patterns("tests", "bench", "__pycache__"))
    p = subprocess.run([py, "-m", "pip", "install", "--no-index", src], env=env, cwd=tmpdir_clean, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Successfully installed marionette-0.1.0" in p.stdout
    lib = os.path.abspath(library_path)
    # 1. the environment variable
    e1 = dict(env, MARIONETTE_LIBRARY=lib)
    e1.pop("LD_LIBRARY_PATH", None)
    r = run(py, e1, tmpdir_clean)
    assert r.returncode == 0, r.stderr
    path, file, njoint = r.stdout.split()
    assert path == lib and file.startswith(venv) and njoint == "31"
    # 2. the soname, found by the dynamic loader
    e2 = dict(env, LD_LIBRARY_PATH=os.path.dirname(lib))
    e2.pop("MARIONETTE_LIBRARY", None)
    r = run(py, e2, tmpdir_clean)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == "libmarionette.so.0"
    # 3. none: an installed package is not in a checkout, so it says what to do
    e3 = dict(env)
    for k in ("MARIONETTE_LIBRARY", "LD_LIBRARY_PATH"):
        e3.pop(k, None)
    r = run(py, e3, tmpdir_clean)
    if r.returncode == 0:  # the library is installed system-wide on this machine
        assert r.stdout.split()[0] == "libmarionette.so.0"
    else:
        assert "libmarionette.so.0 not found (set MARIONETTE_LIBRARY" in r.stderr
    # a wrong MARIONETTE_LIBRARY is an error, never silently replaced by another library
    r = run(py, dict(env, MARIONETTE_LIBRARY=os.path.join(tmpdir_clean, "nope.so")),
            tmpdir_clean)
    assert r.returncode != 0 and "nope.so" in r.stderr


def test_build_tree_fallback_from_a_checkout():
    env = dict(os.environ, PYTHONPATH=os.path.join(TOP, "python"), PYTHONDONTWRITEBYTECODE="1")
    for k in ("MARIONETTE_LIBRARY", "LD_LIBRARY_PATH"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    first = r.stdout.split()[0]
    # the soname when installed system-wide; else the checkout's own build tree
    assert first == "libmarionette.so.0" or first.startswith(os.path.join(TOP, "build"))
