"""The license in the package metadata: pyproject.toml's SPDX expression, the METADATA the
in-tree backend (python/_build) writes (PEP 639: License-Expression, License-File), the
LICENSE inside the wheel and the sdist, and the same text as the LICENSE at the top."""
import email.parser
import importlib.util
import json
import os
import tarfile
import tomllib
import zipfile

from conftest import TOP

PY = os.path.join(TOP, "python")


def backend():
    spec = importlib.util.spec_from_file_location(
        "marionette_build", os.path.join(PY, "_build", "marionette_build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def top_license():
    with open(os.path.join(TOP, "LICENSE"), "rb") as f:
        return f.read()


def test_the_license_is_mit_everywhere():
    text = top_license().decode()
    assert text.startswith("MIT License") and "Copyright (c) 2026 the marionette authors" in text
    with open(os.path.join(PY, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    with open(os.path.join(PY, "LICENSE"), "rb") as f:
        assert f.read() == top_license(), "python/LICENSE differs from LICENSE"
    web = os.path.join(TOP, "web")
    with open(os.path.join(web, "package.json")) as f:
        pkg = json.load(f)
    assert pkg["license"] == "MIT" and "LICENSE" in pkg["files"]
    with open(os.path.join(web, "package-lock.json")) as f:
        assert json.load(f)["packages"][""]["license"] == "MIT"
    with open(os.path.join(web, "LICENSE"), "rb") as f:
        assert f.read() == top_license(), "web/LICENSE differs from LICENSE"


def test_wheel_and_sdist_carry_the_license(tmpdir_clean):
    b = backend()
    wheel = os.path.join(tmpdir_clean, b.build_wheel(tmpdir_clean))
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = email.parser.Parser().parsestr(
            z.read("marionette-0.1.0.dist-info/METADATA").decode())
        lic = z.read("marionette-0.1.0.dist-info/licenses/LICENSE")
        record = z.read("marionette-0.1.0.dist-info/RECORD").decode()
    assert meta["Metadata-Version"] == "2.4"
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert lic == top_license()
    assert "marionette-0.1.0.dist-info/licenses/LICENSE,sha256=" in record
    assert "marionette/py.typed" in names
    sdist = os.path.join(tmpdir_clean, b.build_sdist(tmpdir_clean))
    with tarfile.open(sdist) as t:
        assert t.extractfile("marionette-0.1.0/LICENSE").read() == top_license()
        pkg_info = email.parser.Parser().parsestr(
            t.extractfile("marionette-0.1.0/PKG-INFO").read().decode())
        assert "marionette-0.1.0/marionette/py.typed" in t.getnames()
    assert pkg_info["License-Expression"] == "MIT"
    assert pkg_info.get_all("License-File") == ["LICENSE"]
