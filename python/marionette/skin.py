"""Linear blend skinning and the skinning fit (skin.h; seed lbs-inverse-kinematics.md):
a rig of vertices and controllers, poses as (nctrl, 12) arrays (a rotation matrix's nine
numbers row by row, then the position: the layout of mn_xform), and a fitter."""
import numpy as np

from ._base import (Closable, Owner, Status, _s, apply_options, arg_error, as_array, check,
                    dptr, encode, fail, new_error, options_dict, vec3)
from ._ffi import ffi, lib
from .model import Model

CTRL_KINDS = ("point", "bone", "cage")


def fit_defaults():
    return options_dict(lib.mn_fit_default())


def _xf(pose):
    return ffi.cast("mn_xform*", pose.ctypes.data)


class FitResult:
    """mn_fit_result: status, ok, iterations, energy, rms, max_err, message."""
    __slots__ = ("status", "iterations", "energy", "rms", "max_err", "message")

    def __init__(self, r):
        self.status = Status(r.status)
        self.iterations, self.energy, self.rms, self.max_err = \
            r.iterations, r.energy, r.rms, r.max_err
        self.message = _s(r.message)

    @property
    def ok(self):
        return self.status == Status.OK

    def __repr__(self):
        return f"FitResult(status={self.status.name}, iterations={self.iterations}, " \
               f"rms={self.rms:.3g})"


class Rig(Closable):
    """Rest positions (nverts x dim, dim 2 or 3), masses (None: all 1), controllers and
    weights."""
    _what = "rig"

    def __init__(self, rest, mass=None):
        r = as_array(rest, (None, None), "rest")
        if r.shape[1] not in (2, 3):
            arg_error("rest", f"expected shape (N, 2) or (N, 3), got {r.shape}")
        m = ffi.NULL
        if mass is not None:
            ma = as_array(mass, (r.shape[0],), "mass")
            m = dptr(ma)
        err = new_error()
        p = lib.mn_rig_create(r.shape[1], r.shape[0], dptr(r), m, err)
        if p == ffi.NULL:
            check(err.status or Status.NOMEM, err)
        self._h = Owner(p, lib.mn_rig_destroy)
        self.dim, self.nverts = r.shape[1], r.shape[0]

    @property
    def nctrl(self):
        return self._ptr.nctrl

    @property
    def ctrl_names(self):
        p = self._ptr
        return tuple(_s(p.ctrl_name[i]) for i in range(p.nctrl))

    def add_ctrl(self, name, kind="point", pivot=(0, 0, 0), tail=(0, 0, 0), parent=-1,
                 attached=False):
        """A controller; returns its index. parent: an index or name (-1: none)."""
        c = ffi.new("mn_ctrl_def*", lib.mn_ctrl_default())
        nm = ffi.new("char[]", encode(name, "ctrl.name"))
        c.name = nm
        if kind not in CTRL_KINDS:
            arg_error("ctrl.kind", f"{kind!r} is not one of {', '.join(CTRL_KINDS)}")
        c.kind = CTRL_KINDS.index(kind)
        c.pivot = vec3(pivot, "ctrl.pivot")
        c.tail = vec3(tail, "ctrl.tail")
        if isinstance(parent, str):
            pi = lib.mn_rig_find_ctrl(self._ptr, encode(parent, "ctrl.parent"))
            if pi < 0:
                fail(Status.NOTFOUND, f"ctrl.parent: no controller named '{parent}'",
                     "ctrl.parent")
            parent = pi
        c.parent = int(parent)
        c.attached = int(bool(attached))
        err = new_error()
        i = lib.mn_rig_add_ctrl(self._ptr, c, err)
        if i < 0:
            check(err.status or Status.ARG, err)
        return i

    def set_weights(self, idx, w):
        """Sparse weights: idx and w are nverts x k (k <= 8; -1 or 0 an empty slot).
        Returns the number of rows normalised (a warning each)."""
        I = as_array(idx, (self.nverts, None), "weights.idx", dtype=np.intc)
        W = as_array(w, (self.nverts, I.shape[1]), "weights.w")
        nwarn = ffi.new("int*")
        err = new_error()
        check(lib.mn_rig_set_weights(self._ptr, I.shape[1], ffi.cast("int*", I.ctypes.data),
                                     dptr(W), nwarn, err), err)
        return nwarn[0]

    def set_weights_dense(self, W):
        """Dense nverts x nctrl weights (the largest 8 of each row are kept)."""
        A = as_array(W, (self.nverts, self.nctrl), "weights")
        nwarn = ffi.new("int*")
        err = new_error()
        check(lib.mn_rig_set_weights_dense(self._ptr, dptr(A), nwarn, err), err)
        return nwarn[0]

    def set_hierarchy(self, model):
        if not isinstance(model, Model):
            arg_error("model", "a marionette.Model expected")
        err = new_error()
        check(lib.mn_rig_set_hierarchy(self._ptr, model._ptr, err), err)

    def rest_pose(self):
        """The rest pose: (nctrl, 12), R = I, p = the pivots."""
        pose = np.zeros((self.nctrl, 12))
        lib.mn_rig_rest_pose(self._ptr, _xf(pose))
        return pose

    def _pose(self, pose):
        P = as_array(pose, (self.nctrl, 12), "pose")
        if not np.all(np.isfinite(P)):
            arg_error("pose", "not finite")
        return P

    def deform(self, pose):
        """Forward LBS: the vertices (nverts x dim) for a pose (nctrl x 12)."""
        P = self._pose(pose)
        out = np.zeros((self.nverts, self.dim))
        lib.mn_rig_deform(self._ptr, _xf(P), dptr(out))
        return out

    def propagate(self, pose):
        """Attached controllers' positions from their parents, in place (pose must be a
        C-contiguous float64 (nctrl, 12) array)."""
        _inplace(pose, (self.nctrl, 12), "pose")
        lib.mn_rig_propagate(self._ptr, _xf(pose))

    def error(self, pose, targets):
        """(mass-weighted RMS, max) distance between the skinned rig and targets."""
        P = self._pose(pose)
        T = as_array(targets, (self.nverts, self.dim), "targets")
        rms, mx = ffi.new("double*"), ffi.new("double*")
        lib.mn_rig_error(self._ptr, _xf(P), dptr(T), rms, mx)
        return rms[0], mx[0]


def _inplace(a, shape, field):
    if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.shape == shape
            and a.flags.c_contiguous and a.flags.writeable):
        arg_error(field, f"expected a writable C-contiguous float64 array of shape {shape} "
                  f"(it is updated in place)")


class Fitter(Closable):
    """The skinning fit for a rig and a set of fixed controllers (a bool per controller,
    None for none)."""
    _what = "fitter"

    def __init__(self, rig, fixed=None):
        if not isinstance(rig, Rig):
            arg_error("rig", "a marionette.Rig expected")
        self.rig = rig
        self._fixed = self._flags(fixed)
        err = new_error()
        p = lib.mn_fitter_create(rig._ptr, self._fixed_ptr(), err)
        if p == ffi.NULL:
            check(err.status or Status.NOMEM, err)
        self._h = Owner(p, lib.mn_fitter_destroy, (rig._h,))
        self._r = ffi.new("mn_fit_result*")

    def _flags(self, fixed):
        if fixed is None:
            return None
        f = np.asarray(fixed)
        if f.shape != (self.rig.nctrl,):
            arg_error("fixed", f"expected shape ({self.rig.nctrl},), got {f.shape}")
        return np.ascontiguousarray(f.astype(bool), dtype=np.uint8)

    def _fixed_ptr(self):
        f = self._fixed
        return ffi.NULL if f is None else ffi.cast("uint8_t*", f.ctypes.data)

    def set_fixed(self, fixed):
        old = self._fixed
        self._fixed = self._flags(fixed)
        err = new_error()
        s = lib.mn_fitter_set_fixed(self._ptr, self._fixed_ptr(), err)
        if s != 0:
            self._fixed = old
            check(s, err)

    def reset(self):
        """Forgets what earlier fits taught the fitter (mn_fitter_reset): the next fit
        depends on its arguments only."""
        lib.mn_fitter_reset(self._ptr)

    def fit(self, pose, targets, **options):
        """Fits pose (a C-contiguous float64 (nctrl, 12) array, updated in place: in, the
        warm start; out, the fit) to targets (nverts x dim). Options: the fields of
        mn_fit_options with the C defaults (fit_defaults()): max_iters, tol, max_halvings,
        coupled_rotation, vertex_error. Returns a FitResult; raises for bad input."""
        _inplace(pose, (self.rig.nctrl, 12), "pose")
        T = as_array(targets, (self.rig.nverts, self.rig.dim), "targets")
        o = ffi.new("mn_fit_options*", lib.mn_fit_default())
        apply_options(o, options, {}, "fit")
        r = self._r
        s = lib.mn_fit(self._ptr, _xf(pose), dptr(T), o, r)
        if s == 1 or s == 4:
            fail(s, _s(r.message))
        return FitResult(r)

    def fit_kabsch(self, pose, targets, then_translate=True):
        """Every unfixed controller's own rigid fit (the per-bone baseline; a cold start)."""
        _inplace(pose, (self.rig.nctrl, 12), "pose")
        T = as_array(targets, (self.rig.nverts, self.rig.dim), "targets")
        s = lib.mn_fit_kabsch(self._ptr, _xf(pose), dptr(T), int(bool(then_translate)))
        if s != 0:
            fail(s, f"fit_kabsch: {Status(s).name}")
