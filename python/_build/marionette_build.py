"""The package's build backend (PEP 517, in the tree: pyproject.toml's backend-path), so that
`pip install ./python` needs nothing from a package index: the package is pure Python over
libmarionette.so.0, and a wheel of it is a zip of its modules with the metadata of
PEP 427/PEP 566. Its name, version, license and dependencies are read from pyproject.toml;
the license files (PEP 639: License-Expression, License-File) go into the wheel's
.dist-info/licenses and the sdist's top."""
import base64
import hashlib
import os
import tarfile
import tomllib
import zipfile

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project():
    with open(os.path.join(_HERE, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def _metadata(p):
    lines = ["Metadata-Version: 2.4", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    if "license" in p:
        lines.append(f"License-Expression: {p['license']}")
    lines += [f"License-File: {f}" for f in p.get("license-files", [])]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    readme = os.path.join(_HERE, p.get("readme", "README.md"))
    text = open(readme, encoding="utf-8").read() if os.path.exists(readme) else ""
    return "\n".join(lines + ["Description-Content-Type: text/markdown", "", text])


def _modules():
    pkg = os.path.join(_HERE, "marionette")
    # py.typed (PEP 561): the package's annotations are for type checkers to read
    return sorted(f"marionette/{n}" for n in os.listdir(pkg)
                  if n.endswith(".py") or n == "py.typed")


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    info = f"{dist}.dist-info"
    files = [(m, open(os.path.join(_HERE, m), "rb").read()) for m in _modules()]
    files += [(f"{info}/licenses/{f}", open(os.path.join(_HERE, f), "rb").read())
              for f in p.get("license-files", [])]
    files += [(f"{info}/METADATA", _metadata(p).encode()),
              (f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: marionette_build\n"
                                b"Root-Is-Purelib: true\nTag: py3-none-any\n"),
              (f"{info}/top_level.txt", b"marionette\n")]
    record = []
    name = f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(path, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{path},sha256={digest},{len(data)}")
        record.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    dist = f"{p['name']}-{p['version']}"
    name = f"{dist}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as t:
        for rel in (["pyproject.toml", "README.md", "_build/marionette_build.py"] +
                    p.get("license-files", []) + _modules()):
            t.add(os.path.join(_HERE, rel), arcname=f"{dist}/{rel}")
        info = tarfile.TarInfo(f"{dist}/PKG-INFO")
        data = _metadata(p).encode()
        info.size = len(data)
        import io
        t.addfile(info, io.BytesIO(data))
    return name
