"""Reading and writing figures and motion (io.h): BVH, URDF, the skeleton text format,
glTF, the figure document and the built-in stick figure."""
from __future__ import annotations

import os
from typing import Optional, Union

import numpy as np
import numpy.typing as npt

from ._base import (Status, _s, arg_error, as_array, check, dptr, emit_warnings, encode,
                    fail, new_error)
from ._ffi import ffi, lib
from .model import Model

#: A file name: a str, bytes or os.PathLike.
PathLike = Union[str, bytes, "os.PathLike[str]"]


class Motion:
    """A sampled motion: q (nframes x nq, one state per row) frame_time seconds apart."""

    def __init__(self, q: npt.ArrayLike, frame_time: float) -> None:
        self.q = as_array(q, (None, None), "motion.q")
        ft = float(frame_time)
        if not (np.isfinite(ft) and ft > 0):
            arg_error("motion.frame_time", "must be finite and > 0")
        self.frame_time = ft

    @property
    def nframes(self):
        return self.q.shape[0]

    def __repr__(self):
        return f"<marionette.Motion {self.q.shape[0]} frames of {self.q.shape[1]} numbers, " \
               f"{self.frame_time:g} s apart>"


def _take(mo):
    """A Motion from an mn_motion (copied; the C one is freed), None when it has no frames."""
    try:
        if mo.nframes <= 0:
            return None
        q = np.frombuffer(ffi.buffer(mo.q, 8 * mo.nframes * mo.nq), dtype=np.float64)
        return Motion(q.reshape(mo.nframes, mo.nq).copy(), mo.frame_time)
    finally:
        lib.mn_motion_free(mo)


def _read(fn, *args, motion=True):
    pm = ffi.new("mn_model**")
    mo = ffi.new("mn_motion*") if motion else None
    w = ffi.new("mn_warnings*")
    err = new_error()
    if motion:
        s = fn(*args, pm, mo, w, err)
    else:
        s = fn(*args, pm, w, err)
    check(s, err)
    emit_warnings(w)
    m = Model(pm[0])
    return m, (_take(mo) if motion else None)


def _path(path):
    return encode(path, "path")


def load(path: PathLike) -> Model:
    """Any figure file (skeleton text, BVH, URDF, glTF, by extension then content), or
    "stickman" for the built-in figure: a Model. load_motion gives its motion too."""
    return load_motion(path)[0]


def load_motion(path: PathLike) -> tuple[Model, Optional[Motion]]:
    """(Model, Motion or None) of any figure file (mn_figure_read): a BVH take's frames, a
    glTF file's first animation; URDF and skeleton files have none."""
    return _read(lib.mn_figure_read, _path(path))


def read_bvh(path: PathLike, scale: float = 1.0) -> tuple[Model, Optional[Motion]]:
    """(Model, Motion or None) of a BVH file; every length multiplied by scale."""
    o = ffi.new("mn_bvh_options*", lib.mn_bvh_default())
    o.scale = float(scale)
    return _read(lib.mn_bvh_read, _path(path), o)


def read_urdf(path: PathLike) -> Model:
    return _read(lib.mn_urdf_read, _path(path), motion=False)[0]


def read_skeleton(path: PathLike) -> Model:
    """A figure in the thesis skeleton text format (docs/skeleton-format.md)."""
    return _read(lib.mn_skel_read, _path(path), motion=False)[0]


def read_figure_document(path: PathLike) -> tuple[Model, Optional[Motion]]:
    """(Model, Motion or None) of a figure document (JSON, docs/figure-document.md)."""
    pm = ffi.new("mn_model**")
    mo = ffi.new("mn_motion*")
    err = new_error()
    check(lib.mn_figure_doc_read(_path(path), pm, mo, err), err)
    return Model(pm[0]), _take(mo)


def from_text(text: Union[str, bytes], format: str, name: str = "<text>",
              scale: float = 1.0) -> Union[Model, tuple[Model, Optional[Motion]]]:
    """A figure from text in memory: format "bvh" (returns (Model, Motion or None)),
    "urdf", "skel" or "json" (a figure document: (Model, Motion or None)). name is used in
    messages."""
    b = encode(text, "text")
    n = encode(name, "name")
    if format == "bvh":
        o = ffi.new("mn_bvh_options*", lib.mn_bvh_default())
        o.scale = float(scale)
        return _read(lib.mn_bvh_read_mem, b, len(b), n, o)
    if format == "urdf":
        return _read(lib.mn_urdf_read_mem, b, len(b), n, motion=False)[0]
    if format in ("skel", "skeleton"):
        return _read(lib.mn_skel_read_mem, b, len(b), n, motion=False)[0]
    if format == "json":
        pm = ffi.new("mn_model**")
        mo = ffi.new("mn_motion*")
        err = new_error()
        check(lib.mn_figure_doc_read_mem(b, len(b), n, pm, mo, err), err)
        return Model(pm[0]), _take(mo)
    arg_error("format", f"{format!r} is not one of bvh, urdf, skel, json")


def stickman() -> Model:
    """The built-in default figure: the thesis stick figure."""
    err = new_error()
    p = lib.mn_stickman_model(err)
    if p == ffi.NULL:
        check(err.status or Status.NOMEM, err)
    return Model(p)


def _c_motion(model, motion):
    """An mn_motion over the numbers of a Motion (kept alive by the caller)."""
    if motion is None:
        return ffi.NULL, None
    if not isinstance(motion, Motion):
        arg_error("motion", f"expected a marionette.Motion, got {type(motion).__name__}")
    q = as_array(motion.q, (None, model.nq), "motion.q")
    if not np.all(np.isfinite(q)):
        arg_error("motion.q", "not finite")
    mo = ffi.new("mn_motion*")
    mo.nframes, mo.nq, mo.frame_time, mo.q = q.shape[0], model.nq, motion.frame_time, dptr(q)
    return (mo if q.shape[0] > 0 else ffi.NULL), q


def _with_root_rot(o, root_rot):
    r = as_array(root_rot, (4,), "root_rot")
    o.root_rot.w, o.root_rot.x, o.root_rot.y, o.root_rot.z = (float(v) for v in r)
    return o


def _bvh_options(root_rot):
    return _with_root_rot(ffi.new("mn_bvh_write_options*", lib.mn_bvh_write_default()), root_rot)


def _gltf_options(scale, root_rot):
    o = ffi.new("mn_gltf_write_options*", lib.mn_gltf_write_default())
    o.scale = float(scale)
    return _with_root_rot(o, root_rot)


def _written(write, out_type, *args):
    """The bytes a C writer to memory gives: write(*args, out, len, err) with out of type
    out_type (its malloc'd buffer freed here)."""
    buf = ffi.new(out_type)
    n = ffi.new("size_t*")
    err = new_error()
    status = write(*args, buf, n, err)
    try:
        check(status, err)
        return bytes(ffi.buffer(buf[0], n[0]))
    finally:
        if buf[0] != ffi.NULL:
            lib.free(buf[0])


def write_bvh(path: PathLike, model: Model, motion: Optional[Motion] = None, *,
              root_rot: npt.ArrayLike = (1.0, 0.0, 0.0, 0.0)) -> None:
    """Writes a figure and its motion (None: the rest pose) as BVH, atomically
    (mn_bvh_write_ex): the roots turned by root_rot (Z_UP_TO_Y_UP stands a +Z-up figure
    up, as BVH's convention is)."""
    mo, keep = _c_motion(model, motion)
    o = _bvh_options(root_rot)
    err = new_error()
    check(lib.mn_bvh_write_ex(_path(path), model._ptr, mo, o, err), err)
    del keep


def to_bvh_text(model: Model, motion: Optional[Motion] = None, *,
                root_rot: npt.ArrayLike = (1.0, 0.0, 0.0, 0.0)) -> str:
    """The BVH text write_bvh writes, without a file (mn_bvh_write_mem): from_text(text,
    "bvh") reads it back."""
    mo, keep = _c_motion(model, motion)
    text = _written(lib.mn_bvh_write_mem, "char**", model._ptr, mo, _bvh_options(root_rot))
    del keep
    return text.decode("utf-8")


#: -90 degrees about X (w, x, y, z): +Z up becomes glTF's +Y up, (x, y, z) -> (x, z, -y).
Z_UP_TO_Y_UP = (0.5 ** 0.5, -(0.5 ** 0.5), 0.0, 0.0)


def write_gltf(path: PathLike, model: Model, motion: Optional[Motion] = None, *,
               scale: float = 1.0, root_rot: npt.ArrayLike = (1.0, 0.0, 0.0, 0.0)) -> None:
    """Writes a figure and its motion as a glTF 2.0 binary (.glb), atomically
    (mn_gltf_write_ex): every length times scale, the roots turned by root_rot (a unit
    quaternion w, x, y, z; Z_UP_TO_Y_UP stands a +Z-up figure up)."""
    mo, keep = _c_motion(model, motion)
    o = _gltf_options(scale, root_rot)
    err = new_error()
    check(lib.mn_gltf_write_ex(_path(path), model._ptr, mo, ffi.NULL, o, err), err)
    del keep


def to_glb_bytes(model: Model, motion: Optional[Motion] = None, *, scale: float = 1.0,
                 root_rot: npt.ArrayLike = (1.0, 0.0, 0.0, 0.0)) -> bytes:
    """The glTF 2.0 binary write_gltf writes, without a file (mn_gltf_write_mem)."""
    mo, keep = _c_motion(model, motion)
    glb = _written(lib.mn_gltf_write_mem, "unsigned char**", model._ptr, mo, ffi.NULL,
                   _gltf_options(scale, root_rot))
    del keep
    return glb


def guess_scale(model: Model, root_rot: npt.ArrayLike = (1.0, 0.0, 0.0, 0.0)
                ) -> tuple[float, float, str]:
    """(scale to metres, height, unit name) of a figure whose file has no unit (BVH), from
    its height at rest (mn_gltf_guess_scale; the editor's table)."""
    r = as_array(root_rot, (4,), "root_rot")
    q = ffi.new("mn_quat*")
    q.w, q.x, q.y, q.z = (float(v) for v in r)
    h = ffi.new("double*")
    units = ffi.new("char**")
    s = lib.mn_gltf_guess_scale(model._ptr, q[0], h, ffi.cast("const char**", units))
    return float(s), float(h[0]), _s(units[0])


def write_figure_document(path: PathLike, model: Model,
                          motion: Optional[Motion] = None) -> None:
    mo, keep = _c_motion(model, motion)
    err = new_error()
    check(lib.mn_figure_doc_write(_path(path), model._ptr, mo, ffi.NULL, err), err)
    del keep


def write_skeleton(path: PathLike, model: Model) -> None:
    err = new_error()
    check(lib.mn_skel_write(_path(path), model._ptr, err), err)


def convert(src: PathLike, dst: PathLike, *, scale: Optional[float] = None,
            z_up: bool = False) -> None:
    """Converts a figure file as `marionette convert SRC DST` does, by DST's extension:
    .bvh (figure and every frame), .skel (the figure), .glb (figure and motion) or .json
    (the figure document, with a glTF file's skin). A .glb is in glTF's axes and unit: a
    URDF turned to +Y up (z_up=True keeps +Z up; a .bvh too), a BVH's lengths scaled to
    metres by its height (guess_scale) unless scale is given (scale=1 keeps the file's
    lengths).
    Warnings go to the warnings module."""
    d = os.fspath(dst if not isinstance(dst, bytes) else dst.decode()).lower()
    kind = lib.mn_file_kind_of(_path(src))
    if scale is not None and not d.endswith(".glb") and kind != lib.MN_FILE_BVH:
        arg_error("scale", "is for a .glb dst or a BVH src")
    if z_up and (not d.endswith((".glb", ".bvh")) or kind != lib.MN_FILE_URDF):
        arg_error("z_up", "is for a URDF src and a .glb or .bvh dst")
    if d.endswith(".json") and scale is None:
        w = ffi.new("mn_warnings*")
        err = new_error()
        check(lib.mn_figure_doc_convert(_path(src), _path(dst), w, err), err)
        emit_warnings(w)
        return
    if not d.endswith((".bvh", ".skel", ".scr", ".glb", ".json")):
        arg_error("dst", "must end in .bvh, .skel, .glb or .json")
    if kind == lib.MN_FILE_BVH and scale is not None and not d.endswith(".glb"):
        model, motion = read_bvh(src, scale)  # the lengths scaled as read: any output
    else:
        model, motion = load_motion(src)
    rot = Z_UP_TO_Y_UP if kind == lib.MN_FILE_URDF and not z_up else (1.0, 0, 0, 0)
    with model:
        if d.endswith(".bvh"):
            write_bvh(dst, model, motion, root_rot=rot)
        elif d.endswith(".glb"):
            if scale is None:
                scale = guess_scale(model, rot)[0] if kind == lib.MN_FILE_BVH else 1.0
            write_gltf(dst, model, motion, scale=scale, root_rot=rot)
        elif d.endswith(".json"):
            write_figure_document(dst, model, motion)
        else:
            write_skeleton(dst, model)
