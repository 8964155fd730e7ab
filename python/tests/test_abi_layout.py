"""Every struct that crosses the boundary has the C compiler's size and field offsets (named to run
first: a stale declaration would make later tests crash instead of fail)."""
import os
import subprocess

from conftest import TOP

from marionette._ffi import STRUCTS, ffi


def test_struct_layouts_match_the_compiler(tmpdir_clean):
    lines = ["#include <stddef.h>", "#include <stdio.h>"]
    for h in ("anim.h", "constrain.h", "gltf.h", "ik.h", "io.h", "model.h", "retarget.h",
              "skin.h"):
        lines.append(f"#include <marionette/{h}>")
    lines.append("int main(void) {")
    expected = []
    for s in STRUCTS:
        lines.append(f'    printf("{s} %zu\\n", sizeof({s}));')
        expected.append(f"{s} {ffi.sizeof(s)}")
        for name, _ in ffi.typeof(s).fields:
            lines.append(f'    printf("{s}.{name} %zu\\n", offsetof({s}, {name}));')
            expected.append(f"{s}.{name} {ffi.offsetof(s, name)}")
    lines.append("    return 0;\n}")
    src = os.path.join(tmpdir_clean, "layout.c")
    exe = os.path.join(tmpdir_clean, "layout")
    with open(src, "w") as f:
        f.write("\n".join(lines))
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-I", os.path.join(TOP, "include"), src, "-o", exe], check=True)
    got = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
    assert [g for g in got if g] == expected

