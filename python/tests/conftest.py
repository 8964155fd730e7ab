"""Fixtures of the package's tests: the command line to compare with, the shipped data and
temporary folders that are removed afterwards (nothing is left behind)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "python"))

import marionette  # noqa: E402

DATA = os.path.join(TOP, "data")
CLI = os.environ.get("MN_CLI") or os.path.join(TOP, "build", "marionette")

ROBOTS = [
    ("robots/franka_panda/panda.urdf", "panda_link0", "panda_link8"),
    ("robots/kuka_iiwa/model.urdf", "lbr_iiwa_link_0", "lbr_iiwa_link_7"),
    ("robots/ur5/ur5_robot.urdf", "base_link", "tool0"),
    ("robots/xarm6/xarm6_robot.urdf", "link_base", "link6"),
]


def data(rel):
    return os.path.join(DATA, rel)


def cli(*args, check=True):
    """Runs the command line; returns (exit status, stdout, stderr)."""
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"marionette {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    return json.loads(cli(*args)[1])


@pytest.fixture
def tmpdir_clean():
    """A private temporary folder, removed with everything in it after the test."""
    d = tempfile.mkdtemp(prefix="mn_py_")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(autouse=True)
def _quiet_reader_warnings():
    # the Panda's URDF has a mimic joint the reader warns about: not what is tested here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", marionette.MarionetteWarning)
        yield


def pytest_sessionstart(session):
    if not os.path.exists(CLI):
        raise pytest.UsageError(f"the command line is missing: {CLI} (build first, or set MN_CLI)")
