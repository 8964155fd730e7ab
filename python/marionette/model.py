"""Figures (mn_model), their state and frames (mn_data): forward kinematics, Jacobians,
centres of mass (model.h)."""
from __future__ import annotations

from typing import Optional, Union

import numpy as np
import numpy.typing as npt

from ._base import (Closable, Owner, Status, _s, arg_error, as_array, dptr, fail, out_array,
                    suggest, vec3, view)
from ._ffi import ffi, lib

JOINT_TYPES = ("fixed", "hinge", "slide", "ball", "free")

#: A joint given by its index or its name.
JointRef = Union[int, str]


class Model(Closable):
    """A compiled figure (mn_model): immutable. Made by the readers (marionette.load and
    friends) or marionette.stickman(). Close it (or use `with`) to free it early; the
    Data and systems made from it keep it alive while they live."""
    _what = "model"

    def __init__(self, ptr):
        self._h = Owner(ptr, lib.mn_model_destroy)
        m = ptr
        self.name = _s(m.name) if m.name != ffi.NULL else ""
        self.njoint, self.nq, self.nv = m.njoint, m.nq, m.nv
        self.joint_names = tuple(_s(m.jnt_name[i]) for i in range(m.njoint))
        self._index = {n: i for i, n in enumerate(self.joint_names)}

    # ---- per-joint arrays (copies: the model is immutable) ----
    def _ints(self, field, n=None):
        p = getattr(self._ptr, field)
        n = self.njoint if n is None else n
        return np.array([p[i] for i in range(n)], dtype=np.int64)

    @property
    def joint_parents(self):
        return self._ints("jnt_parent")

    @property
    def joint_types(self):
        return tuple(JOINT_TYPES[t] for t in self._ints("jnt_type"))

    @property
    def qadr(self):
        return self._ints("jnt_qadr")

    @property
    def dofadr(self):
        return self._ints("jnt_dofadr")

    @property
    def q0(self):
        """The rest state (a copy)."""
        return view(self._h, self._ptr.q0, (self.nq,), readonly=True).copy()

    @property
    def offsets(self):
        return view(self._h, ffi.cast("double*", self._ptr.jnt_offset), (self.njoint, 3),
                    readonly=True).copy()

    @property
    def limits(self):
        """(njoint, 2) hinge/slide ranges, NaN where a joint is not limited."""
        m = self._ptr
        r = view(self._h, m.jnt_range, (self.njoint, 2), readonly=True).copy()
        for i in range(self.njoint):
            if not m.jnt_limited[i]:
                r[i] = np.nan
        return r

    @property
    def total_mass(self):
        return self._ptr.total_mass

    def joint(self, j: JointRef | None, field: str = "joint", allow_world: bool = False) -> int:
        """The index of a joint given by name or index. "world", None or -1 name the world
        when allow_world. MarionetteError NOTFOUND with the closest names on a miss."""
        if allow_world and (j is None or j == "world" or (isinstance(j, int) and j == -1)):
            return -1
        if isinstance(j, (int, np.integer)) and not isinstance(j, bool):
            if not 0 <= j < self.njoint:
                arg_error(field, f"joint {j} out of range [0, {self.njoint})")
            return int(j)
        if isinstance(j, str):
            i = self._index.get(j)
            if i is None:
                fail(Status.NOTFOUND, f"{field}: no joint named '{j}' in '{self.name}'"
                     f"{suggest(j, self.joint_names)}", field)
            return i
        arg_error(field, f"expected a joint name or index, got {j!r}")

    def data(self, arena_bytes: int = 0) -> Data:
        """New state and workspace for this figure (Data)."""
        return Data(self, arena_bytes)

    def __repr__(self):
        state = "closed" if self.closed else f"{self.njoint} joints, nq {self.nq}, nv {self.nv}"
        return f"<marionette.Model {self.name!r}: {state}>"


class Data(Closable):
    """State and workspace of a figure (mn_data). `q` and the frames are numpy views of the
    library's memory (no copy): write q, call fk(), read positions."""
    _what = "data"

    def __init__(self, model: Model, arena_bytes: int = 0) -> None:
        if not isinstance(model, Model):
            arg_error("model", f"expected a marionette.Model, got {type(model).__name__}")
        if not isinstance(arena_bytes, (int, np.integer)) or arena_bytes < 0:
            arg_error("arena_bytes", f"expected an integer >= 0, got {arena_bytes!r}")
        p = lib.mn_data_create(model._ptr, int(arena_bytes))
        if p == ffi.NULL:
            fail(Status.NOMEM, "data: out of memory", "arena_bytes")
        self.model = model
        self._m = model._h
        self._h = Owner(p, lib.mn_data_destroy, (model._h,))
        self._q = view(self._h, p.q, (model.nq,))
        xf = view(self._h, ffi.cast("double*", p.xf), (model.njoint, 12), readonly=True)
        self._pos = xf[:, 9:12]
        self._rot = xf[:, 0:9].reshape(model.njoint, 3, 3)

    def close(self):
        """Gives up this wrapper's hold on the state: it is freed now unless a view of q or
        of the frames, or a constraint system, still refers to it."""
        self._h = self._q = self._pos = self._rot = None

    @property
    def q(self) -> np.ndarray:
        """The state (nq), a writable view of the library's memory."""
        self._ptr
        return self._q

    @q.setter
    def q(self, value: npt.ArrayLike) -> None:
        self._ptr
        self._q[...] = as_array(value, (self.model.nq,), "q")

    @property
    def positions(self) -> np.ndarray:
        """World position of every joint (njoint x 3) after fk(): a read-only view."""
        self._ptr
        return self._pos

    @property
    def rotations(self) -> np.ndarray:
        """World rotation matrix of every joint (njoint x 3 x 3, columns the frame's axes):
        a read-only view."""
        self._ptr
        return self._rot

    def orientations(self) -> np.ndarray:
        """World orientation of every joint as unit quaternions w, x, y, z (njoint x 4, a
        copy)."""
        p = self._ptr
        out = np.empty((self.model.njoint, 4))
        for i in range(self.model.njoint):
            qq = lib.mn_quat_from_mat3(ffi.addressof(p.xf[i], "R"))
            out[i] = (qq.w, qq.x, qq.y, qq.z)
        return out

    def fk(self, q: Optional[npt.ArrayLike] = None, *, copy: bool = True) -> np.ndarray:
        """Forward kinematics from q (when given, it is copied into the state first).
        Returns the joints' world positions (njoint x 3): a copy of them, so that
        `[d.fk(q) for q in motion.q]` holds one pose per frame; copy=False returns the
        read-only view `positions` instead, which the next fk() overwrites."""
        if q is not None:
            self.q = q
        lib.mn_fk(self._m.ptr, self._ptr)
        return self._pos.copy() if copy else self._pos

    def fk_many(self, Q: npt.ArrayLike) -> np.ndarray:
        """Forward kinematics of every row of Q (N x nq, a motion's q for one): the joints'
        world positions, N x njoint x 3 (a new array). The state is left as it was."""
        qs = as_array(Q, (None, self.model.nq), "Q")
        if not np.all(np.isfinite(qs)):
            arg_error("Q", "not finite")
        p = self._ptr
        out = np.empty((qs.shape[0], self.model.njoint, 3))
        keep = self._q.copy()
        try:
            for i in range(qs.shape[0]):
                self._q[...] = qs[i]
                lib.mn_fk(self._m.ptr, p)
                out[i] = self._pos
        finally:
            self._q[...] = keep
            lib.mn_fk(self._m.ptr, p)
        return out

    def reset(self) -> None:
        """State <- the rest pose (frames not recomputed: call fk())."""
        lib.mn_data_reset(self._m.ptr, self._ptr)

    def copy_from(self, other: Data) -> None:
        if not isinstance(other, Data) or other.model._h is not self._m:
            arg_error("other", "data of the same model expected")
        lib.mn_data_copy(self._m.ptr, self._ptr, other._ptr)

    def point_world(self, joint: JointRef, point: npt.ArrayLike = (0, 0, 0)) -> np.ndarray:
        j = self.model.joint(joint)
        v = lib.mn_point_world(self._ptr, j, vec3(point, "point"))
        return np.array([v.x, v.y, v.z])

    def jacobian(self, joint, point=(0, 0, 0), out=None):
        """6 x nv Jacobian of a point fixed in the joint's frame (rows: linear then angular
        velocity, world coordinates), after fk()."""
        j = self.model.joint(joint)
        pt = vec3(point, "point")
        out = self._out(out, (6, self.model.nv))
        lib.mn_jacobian(self._m.ptr, self._ptr, j, pt, dptr(out))
        return out

    def chain_dofs(self, base: JointRef | None, tip: JointRef) -> np.ndarray:
        """The DOF indices that move tip relative to base, root to tip."""
        b = self.model.joint(base, "base", allow_world=True)
        t = self.model.joint(tip, "tip")
        n = lib.mn_chain_dofs(self._m.ptr, b, t, ffi.NULL, 0)
        if n < 0:
            arg_error("tip", f"'{self.model.joint_names[t]}' is not below base")
        buf = ffi.new("int[]", max(n, 1))
        lib.mn_chain_dofs(self._m.ptr, b, t, buf, n)
        return np.array([buf[i] for i in range(n)], dtype=np.int64)

    def jacobian_chain(self, base: JointRef | None, tip: JointRef,
                       point: npt.ArrayLike = (0, 0, 0)) -> np.ndarray:
        """6 x ndof Jacobian restricted to chain_dofs(base, tip)."""
        n = len(self.chain_dofs(base, tip))
        out = np.zeros((6, n))
        lib.mn_jacobian_chain(self._m.ptr, self._ptr, self.model.joint(base, "base", True),
                              self.model.joint(tip, "tip"), vec3(point, "point"), dptr(out))
        return out

    def com(self, root: Optional[JointRef] = None) -> tuple[np.ndarray, float]:
        """(centre of mass, mass) of the subtree of root (None: the whole figure)."""
        r = -1 if root is None else self.model.joint(root, "root")
        mass = ffi.new("double*")
        v = lib.mn_com(self._m.ptr, self._ptr, r, mass)
        return np.array([v.x, v.y, v.z]), mass[0]

    def com_jacobian(self, root: Optional[JointRef] = None) -> np.ndarray:
        r = -1 if root is None else self.model.joint(root, "root")
        out = np.zeros((3, self.model.nv))
        lib.mn_com_jacobian(self._m.ptr, self._ptr, r, dptr(out))
        return out

    def integrate(self, v: npt.ArrayLike, scale: float = 1.0) -> None:
        """q <- q (+) scale * v on the joints' manifolds (v: nv)."""
        a = as_array(v, (self.model.nv,), "v")
        lib.mn_integrate(self._m.ptr, self._ptr.q, dptr(a), float(scale))

    def difference(self, q1: npt.ArrayLike, q0: Optional[npt.ArrayLike] = None) -> np.ndarray:
        """The velocity (nv) that carries q0 (default: the current state) to q1."""
        a = as_array(q1, (self.model.nq,), "q1")
        b = self._q if q0 is None else as_array(q0, (self.model.nq,), "q0")
        out = np.zeros(self.model.nv)
        lib.mn_q_difference(self._m.ptr, dptr(a), dptr(b), dptr(out))
        return out

    def clamp_to_limits(self) -> None:
        lib.mn_clamp_to_limits(self._m.ptr, self._ptr.q)

    def within_limits(self, tol: float = 1e-9) -> bool:
        return bool(lib.mn_q_within_limits(self._m.ptr, self._ptr.q, float(tol)))

    def _out(self, out, shape):
        self._ptr
        return out_array(out, shape)

    def __repr__(self):
        return f"<marionette.Data of {self.model.name!r}{' (closed)' if self.closed else ''}>"
