"""The constraint system (constrain.h, Welman ch. 5): handles, constraints, drags and three
solvers over one or more figures."""
import numpy as np

from ._base import (Closable, Owner, Status, _s, apply_options, arg_error, as_array, check,
                    encode, fail, new_error, options_dict, quat, set_quat, set_vec3, vec3)
from ._ffi import ffi, lib
from .model import Data

HANDLE_TYPES = ("point", "orientation", "com")
CONSTRAINT_TYPES = ("pin", "plane", "line", "orient", "equal", "balance")
SOLVERS = ("lagrange", "ccd", "dls")
_ENUMS = {"method": SOLVERS}


def csolve_defaults():
    """The C defaults of the solve options (mn_csolve_default), as a dict."""
    return options_dict(lib.mn_csolve_default(), _ENUMS)


def _pick(value, names, field):
    if isinstance(value, str) and value in names:
        return names.index(value)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) \
            and 0 <= value < len(names):
        return int(value)
    arg_error(field, f"{value!r} is not one of {', '.join(names)}")


class CSolveResult:
    """mn_csolve_result: status, ok, iterations, svd_fallbacks, rows, max_violation,
    max_rot_violation, max_drag_error, nunmet, message."""
    __slots__ = ("status", "iterations", "svd_fallbacks", "rows", "max_violation",
                 "max_rot_violation", "max_drag_error", "nunmet", "message")

    def __init__(self, r):
        self.status = Status(r.status)
        for k in self.__slots__[1:-1]:
            setattr(self, k, getattr(r, k))
        self.message = _s(r.message)

    @property
    def ok(self):
        return self.status == Status.OK

    def __repr__(self):
        return (f"CSolveResult(status={self.status.name}, iterations={self.iterations}, "
                f"max_violation={self.max_violation:.3g}"
                + (f", message={self.message!r})" if self.message else ")"))


def fill_handle(c, figures, type="point", figure=0, joint=0, point=(0, 0, 0), name=None):
    """An mn_handle_def from keywords; figures: the models of the system."""
    c.type = _pick(type, HANDLE_TYPES, "handle.type")
    if not isinstance(figure, (int, np.integer)) or not 0 <= figure < len(figures):
        arg_error("handle.figure", f"{figure!r} out of range [0, {len(figures)})")
    c.figure = int(figure)
    c.joint = figures[figure].joint(joint, "handle.joint", allow_world=(c.type == 2))
    set_vec3(c.point, point, "handle.point")
    keep = None
    if name is not None:
        keep = ffi.new("char[]", encode(name, "handle.name"))
        c.name = keep
    return keep


def fill_constraint(c, type="pin", handle=0, handle2=-1, target=None, target_rot=None,
                    origin=None, dir=None, polygon=None, up=None, margin=None, weight=None,
                    priority=None, enabled=None, name=None, axis=None):
    """An mn_constraint_def from keywords (unset ones keep mn_constraint_default). axis
    ("x", "y", "z" or 1-3) makes an orient constraint hold only that axis's direction."""
    c.type = _pick(type, CONSTRAINT_TYPES, "constraint.type")
    c.handle, c.handle2 = int(handle), int(handle2)
    for k, v in (("target", target), ("origin", origin), ("dir", dir), ("up", up)):
        if v is not None:
            set_vec3(getattr(c, k), v, "constraint." + k)
    if target_rot is not None:
        set_quat(c.target_rot, target_rot, "constraint.target_rot")
    if polygon is not None:
        P = as_array(polygon, (None, 3), "constraint.polygon")
        if P.shape[0] > 16:
            arg_error("constraint.polygon", f"{P.shape[0]} vertices, at most 16")
        c.npolygon = P.shape[0]
        for i, row in enumerate(P):
            c.polygon[i].x, c.polygon[i].y, c.polygon[i].z = row
    if margin is not None:
        c.margin = float(margin)
    if weight is not None:
        c.weight = float(weight)
    if priority is not None:
        c.priority = int(priority)
    if enabled is not None:
        c.enabled = int(bool(enabled))
    if axis is not None:
        c.axis = _pick(axis, ("whole", "x", "y", "z"), "constraint.axis")
    keep = None
    if name is not None:
        keep = ffi.new("char[]", encode(name, "constraint.name"))
        c.name = keep
    return keep


class ConstraintSystem(Closable):
    """Handles, constraints and drags over 1 to 8 figures (each a Data; its model is
    data.model). The figures stay alive as long as the system.

        with marionette.ConstraintSystem([data]) as cs:
            foot = cs.add_handle(joint="left foot")
            cs.add_constraint("pin", handle=foot, target=data.positions[j])
            hand = cs.add_handle(joint="right hand")
            cs.drag(hand, (0.3, 1.2, 0.2))
            r = cs.solve(method="lagrange")
    """
    _what = "constraint system"

    def __init__(self, figures, max_handles=32, max_constraints=32):
        if isinstance(figures, Data):
            figures = [figures]
        figures = list(figures)
        if not 1 <= len(figures) <= 8 or not all(isinstance(f, Data) for f in figures):
            arg_error("figures", "1 to 8 marionette.Data expected")
        fl = ffi.new("mn_figure[]", len(figures))
        for i, f in enumerate(figures):
            fl[i].model = f._m.ptr
            fl[i].data = f._ptr
        d = ffi.new("mn_csys_def*", lib.mn_csys_default())
        d.max_handles, d.max_constraints = int(max_handles), int(max_constraints)
        err = new_error()
        p = lib.mn_csys_create(fl, len(figures), d, err)
        if p == ffi.NULL:
            check(err.status or Status.NOMEM, err)
        self.figures = tuple(figures)
        self._models = [f.model for f in figures]
        self._h = Owner(p, lib.mn_csys_destroy, [f._h for f in figures])
        self._r = ffi.new("mn_csolve_result*")

    @property
    def nv(self):
        return lib.mn_csys_nv(self._ptr)

    @property
    def handle_count(self):
        return lib.mn_csys_handle_count(self._ptr)

    @property
    def constraint_count(self):
        return lib.mn_csys_constraint_count(self._ptr)

    def dof_offset(self, figure):
        return lib.mn_csys_dof_offset(self._ptr, int(figure))

    def add_handle(self, type="point", figure=0, joint=0, point=(0, 0, 0), name=None):
        """A handle: "point" (a point fixed in a joint frame), "orientation" (the joint
        frame's orientation) or "com" (centre of mass of the joint's subtree; joint None or
        -1 for the whole figure). Returns its index."""
        c = ffi.new("mn_handle_def*", lib.mn_handle_default())
        keep = fill_handle(c, self._models, type, figure, joint, point, name)
        err = new_error()
        i = lib.mn_csys_add_handle(self._ptr, c, err)
        del keep
        if i < 0:
            check(err.status or Status.ARG, err)
        return i

    def add_constraint(self, type="pin", handle=0, **fields):
        """A constraint of a type ("pin", "plane", "line", "orient", "equal", "balance") on
        a handle; the other fields of mn_constraint_def as keywords (handle2, target,
        target_rot, origin, dir, polygon, up, margin, weight, priority, enabled, name, axis).
        Returns its index."""
        c = ffi.new("mn_constraint_def*", lib.mn_constraint_default())
        keep = fill_constraint(c, type, handle, **fields)
        err = new_error()
        i = lib.mn_csys_add_constraint(self._ptr, c, err)
        del keep
        if i < 0:
            check(err.status or Status.ARG, err)
        return i

    def find_handle(self, name):
        return lib.mn_csys_find_handle(self._ptr, encode(name, "name"))

    def find_constraint(self, name):
        return lib.mn_csys_find_constraint(self._ptr, encode(name, "name"))

    def handle_value(self, h):
        """(position, rotation matrix) of handle h now."""
        pos = ffi.new("mn_vec3*")
        rot = ffi.new("mn_mat3*")
        self._status(lib.mn_csys_handle_value(self._ptr, int(h), pos, rot), "handle")
        return np.array([pos.x, pos.y, pos.z]), np.array(list(rot.m)).reshape(3, 3)

    def _status(self, s, field):
        if s != 0:
            fail(s, f"{field}: refused ({Status(s).name})", field)

    def set_target(self, c, target):
        self._status(lib.mn_csys_set_target(self._ptr, int(c), vec3(target, "target")),
                     "target")

    def set_target_rot(self, c, target):
        self._status(lib.mn_csys_set_target_rot(self._ptr, int(c), quat(target, "target_rot")),
                     "target_rot")

    def set_plane(self, c, origin, dir):
        self._status(lib.mn_csys_set_plane(self._ptr, int(c), vec3(origin, "origin"),
                                           vec3(dir, "dir")), "plane")

    def set_enabled(self, c, enabled=True):
        self._status(lib.mn_csys_set_enabled(self._ptr, int(c), int(bool(enabled))), "enabled")

    def set_weight(self, c, weight):
        self._status(lib.mn_csys_set_weight(self._ptr, int(c), float(weight)), "weight")

    def set_joint_scale(self, figure, joint, scale):
        """How readily a joint moves in every solver (Welman 4.1.4's K): 1 as built from the
        figure's stiffness, 0 freezes it (mn_csys_set_joint_scale)."""
        self._status(lib.mn_csys_set_joint_scale(self._ptr, int(figure), int(joint), float(scale)),
                     "joint scale")
        return self

    def joint_scale(self, figure, joint):
        return lib.mn_csys_joint_scale(self._ptr, int(figure), int(joint))

    def reset_joint_scales(self):
        lib.mn_csys_reset_joint_scales(self._ptr)
        return self

    def drag(self, h, target, weight=1.0, priority=1):
        """Pulls handle h toward a world target while every constraint holds."""
        self._status(lib.mn_csys_drag(self._ptr, int(h), vec3(target, "target"), float(weight),
                                      int(priority)), "drag")

    def drag_rot(self, h, target, weight=1.0, priority=1):
        self._status(lib.mn_csys_drag_rot(self._ptr, int(h), quat(target, "target"),
                                          float(weight), int(priority)), "drag_rot")

    def push(self, h, force):
        self._status(lib.mn_csys_push(self._ptr, int(h), vec3(force, "force")), "push")

    def release(self, h):
        self._status(lib.mn_csys_release(self._ptr, int(h)), "release")

    def drag_error(self, h):
        return lib.mn_csys_drag_error(self._ptr, int(h))

    def invalidate(self):
        """After writing a figure's q yourself: drop every cached block."""
        lib.mn_csys_invalidate(self._ptr)

    def evaluate(self):
        """Evaluates every constraint; returns C (the stacked constraint values)."""
        self._status(lib.mn_csys_evaluate(self._ptr), "evaluate")
        C = np.zeros(self.row_count)
        keep, items = self._blocks()
        for b in items:
            C[b.row:b.row + b.nrows] = [b.c[i] for i in range(b.nrows)]
        return C

    @property
    def row_count(self):
        return lib.mn_csys_row_count(self._ptr)

    def _blocks(self):
        """The Jacobian's blocks. The items of a cffi array do not keep the array alive, so
        the array is returned too: the caller holds it while it reads the items."""
        n = lib.mn_csys_jacobian(self._ptr, ffi.NULL, 0)
        blocks = ffi.new("mn_jac_block[]", max(n, 1))
        lib.mn_csys_jacobian(self._ptr, blocks, n)
        return blocks, [blocks[i] for i in range(n)]

    def jacobian(self):
        """The constraint Jacobian J_c after evaluate(), dense (rows x nv)."""
        J = np.zeros((self.row_count, self.nv))
        keep, items = self._blocks()
        for b in items:
            cols = [b.cols[k] for k in range(b.ncols)]
            for r in range(b.nrows):
                J[b.row + r, cols] = [b.val[r * b.ncols + k] for k in range(b.ncols)]
        return J

    def solve(self, **options):
        """One solve: every constraint held, every drag pulled toward its target. Keyword
        options are the fields of mn_csolve_options with the C defaults (csolve_defaults()):
        method ("lagrange", "ccd", "dls"), tol, tol_rot, drag_tol, max_iters, rcond,
        feedback, feedback_k, drag_damping, max_step, respect_limits, min_progress,
        free_locked. Returns a CSolveResult; raises for bad input (ARG) only."""
        o = ffi.new("mn_csolve_options*", lib.mn_csolve_default())
        apply_options(o, options, _ENUMS, "solve")
        r = self._r
        s = lib.mn_csys_solve(self._ptr, o, r)
        if s == 1 or s == 4:
            fail(s, _s(r.message))
        return CSolveResult(r)

    def residual(self, c):
        return lib.mn_csys_residual(self._ptr, int(c))

    def unmet(self, c):
        return bool(lib.mn_csys_unmet(self._ptr, int(c)))
