"""Chain inverse kinematics (ik.h): one entry point, eight methods, and many targets in
one call."""
from __future__ import annotations

from typing import Optional

import numpy as np
import numpy.typing as npt

from ._base import (Status, _s, apply_options, arg_error, as_array, dptr, fail,
                    options_dict, set_quat, set_vec3)
from ._ffi import ffi, lib
from .model import Data, Model

METHODS = ("lm", "dls", "pinv", "jt", "ccd", "fabrik", "analytic", "altjac")
MODES = ("speed", "distance", "manipulability")
_ENUMS = {"method": METHODS, "mode": MODES}


def ik_defaults():
    """The C defaults of every IK option (mn_ik_default), as a dict."""
    return options_dict(lib.mn_ik_default(), _ENUMS)


class IKResult:
    """mn_ik_result: status (a Status), ok, iterations, restarts, pos_err, rot_err,
    time_us and message (empty when ok)."""
    __slots__ = ("status", "iterations", "restarts", "pos_err", "rot_err", "time_us",
                 "message")

    def __init__(self, r):
        self.status = Status(r.status)
        self.iterations = r.iterations
        self.restarts = r.restarts
        self.pos_err = r.pos_err
        self.rot_err = r.rot_err
        self.time_us = r.time_us
        self.message = _s(r.message)

    @property
    def ok(self):
        return self.status == Status.OK

    def __repr__(self):
        return (f"IKResult(status={self.status.name}, iterations={self.iterations}, "
                f"pos_err={self.pos_err:.3g}, rot_err={self.rot_err:.3g}"
                + (f", message={self.message!r})" if self.message else ")"))


class IKBatchResult:
    """A batch's answers: q (n x nq), status (n Status codes as an int array), solved
    (targets met), first_unmet (-1 when none), and the summary of mn_ik_batch_result."""

    def __init__(self, r, q, status):
        self.q = q
        self.status = status
        self.summary = Status(r.status)
        self.iterations = r.iterations
        self.solved = r.solved
        self.first_unmet = r.first_unmet
        self.max_pos_err = r.max_pos_err
        self.max_rot_err = r.max_rot_err
        self.time_us = r.time_us
        self.message = _s(r.message)

    @property
    def ok(self):
        return self.summary == Status.OK

    @property
    def met(self):
        """Boolean mask of the targets met."""
        return self.status == Status.OK

    def __repr__(self):
        return (f"IKBatchResult({self.solved}/{len(self.status)} solved, "
                f"{self.time_us:.0f} us)")


class IK:
    """A chain IK problem and its options, set up once and solved many times (the problem
    and options structs live in C memory: a solve from Python sets the target and calls).

        ik = marionette.IK(model, base="panda_link0", tip="panda_link8", method="lm")
        r = ik.solve(data, target=(0.4, 0.2, 0.5))

    base: a joint (name or index) whose frame the targets are given in; "world" or None
    for the world. point: the end effector in the tip's frame. Keyword options are the
    fields of mn_ik_options with the C defaults (ik_defaults()): method, tol_pos, tol_rot,
    max_iters, timeout_ms, seed, max_restarts, respect_limits, max_step, damping,
    nullspace, nullspace_gain, timeout_cpu, free_locked, mode ("speed", "distance",
    "manipulability": which answer LM returns, docs/ik.md)."""

    def __init__(self, model, base=None, tip=None, *, point=(0, 0, 0), use_position=True,
                 use_orientation=False, w_pos=1.0, w_rot=1.0, pole=(0, 0, 0), **options):
        if not isinstance(model, Model):
            arg_error("model", f"expected a marionette.Model, got {type(model).__name__}")
        if tip is None:
            arg_error("tip", "a tip joint is required")
        self.model = model
        self._m = model._h
        p = self._p = ffi.new("mn_ik_problem*", lib.mn_ik_problem_default())
        p.base = model.joint(base, "base", allow_world=True)
        p.tip = model.joint(tip, "tip")
        set_vec3(p.point, point, "point")
        p.use_position = int(bool(use_position))
        p.use_orientation = int(bool(use_orientation))
        p.w_pos, p.w_rot = float(w_pos), float(w_rot)
        set_vec3(p.pole, pole, "pole")
        self._o = ffi.new("mn_ik_options*", lib.mn_ik_default())
        apply_options(self._o, options, _ENUMS, "IK")
        self._r = ffi.new("mn_ik_result*")
        self._br = ffi.new("mn_ik_batch_result*")
        self._tp = p.target_pos
        self._tr = p.target_rot
        self._solve = lib.mn_ik_solve

    @property
    def options(self):
        return options_dict(self._o[0], _ENUMS)

    def set_options(self, **options):
        apply_options(self._o, options, _ENUMS, "IK")

    def _data(self, data):
        if not isinstance(data, Data) or data._m is not self._m:
            arg_error("data", "data of the IK's model expected")
        return data._ptr

    def solve(self, data: Data, target: Optional[npt.ArrayLike] = None,
              orientation: Optional[npt.ArrayLike] = None) -> IKResult:
        """Solves from the state in data.q (the seed) to target (x, y, z in the base frame)
        and/or orientation (the tip frame's unit quaternion w, x, y, z); either may be left
        out to keep the previous one. The answer is left in data.q. Returns an IKResult;
        raises MarionetteError for bad input (status ARG, the message names the field).
        UNREACHABLE and NOCONVERGE come back in the result with the best pose found."""
        d = self._data(data)
        if target is not None:
            tp = self._tp
            try:
                tp.x, tp.y, tp.z = target
            except (TypeError, ValueError):
                set_vec3(tp, target, "target")
        if orientation is not None:
            set_quat(self._tr, orientation, "orientation")
        r = self._r
        s = self._solve(self._m.ptr, d, self._p, self._o, r)
        if s == 1 or s == 4:  # ARG, NOMEM: nothing was solved
            fail(s, _s(r.message))
        return IKResult(r)

    def solve_status(self, data, x, y, z):
        """The leanest call: a position target as three floats, returns the status code
        (an int; 0 when met) and leaves the details in last_result()."""
        tp = self._tp
        tp.x = x
        tp.y = y
        tp.z = z
        return self._solve(self._m.ptr, data._h.ptr, self._p, self._o, self._r)

    def last_result(self):
        return IKResult(self._r)

    def solve_batch(self, data: Data, targets: npt.ArrayLike, follow: bool = False) -> IKBatchResult:
        """Solves for every row of targets in one call into the library
        (mn_ik_solve_batch): an (N, 3) array of positions or an (N, 7) array of positions
        and quaternions w, x, y, z. Each target starts from data.q as it is now (the seed),
        or with follow=True from the previous answer. Returns an IKBatchResult (q: N x nq
        answers, status per target); data.q is left at the last answer."""
        d = self._data(data)
        if np.ndim(targets) != 2:
            arg_error("targets", f"expected shape (N, 3) or (N, 7), got {np.shape(targets)}"
                      + (" (one target: give [target], or use solve)"
                         if np.ndim(targets) == 1 else ""))
        t = as_array(targets, (None, None), "targets")
        if t.shape[1] not in (3, 7):
            arg_error("targets", f"expected shape (N, 3) or (N, 7), got {t.shape}")
        n = t.shape[0]
        q = np.empty((n, self.model.nq))
        st = np.empty(n, dtype=np.int32)
        r = self._br
        s = lib.mn_ik_solve_batch(self._m.ptr, d, self._p, dptr(t), n, t.shape[1],
                                  int(bool(follow)), self._o, dptr(q),
                                  ffi.cast("mn_status*", st.ctypes.data), r)
        if s == 1 or s == 4:
            fail(s, _s(r.message))
        return IKBatchResult(r, q, st)

    def chain_joints(self):
        """Names of the chain's joints from below base to tip."""
        m = self.model
        out, j = [], self._p.tip
        while j != self._p.base and j >= 0:
            out.append(m.joint_names[j])
            j = int(m.joint_parents[j])
        return out[::-1]


def ik_solve(data: Data, base=None, tip=None, target: Optional[npt.ArrayLike] = None,
             orientation: Optional[npt.ArrayLike] = None, **kwargs) -> IKResult:
    """One solve without keeping an IK object, as mn_ik_solve: the goals are the ones given
    (target: a position in the base frame; orientation: the tip frame's quaternion w, x, y,
    z); the other keywords are IK's."""
    if target is None and orientation is None:
        arg_error("target", "give a target position, an orientation or both")
    ik = IK(data.model, base, tip, use_position=target is not None,
            use_orientation=orientation is not None, **kwargs)
    return ik.solve(data, target, orientation)
