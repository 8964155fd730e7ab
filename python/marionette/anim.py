"""Keyframed sequences sampled at any time (anim.h, Welman 6.1.2), constrained in-betweens
(6.3) and retargeting a take onto another skeleton (retarget.h)."""
import numpy as np

from ._base import (Closable, Owner, Status, _s, apply_options, arg_error, as_array, check,
                    dptr, encode, fail, new_error, options_dict, out_array)
from ._ffi import ffi, lib
from .constrain import SOLVERS, CSolveResult, fill_constraint, fill_handle
from .io import Motion
from .model import Data, Model

INTERP = ("default", "constant", "linear", "slerp", "squad", "catmull-rom", "kb")


def _interp(v, field):
    if isinstance(v, str) and v in INTERP:
        return INTERP.index(v)
    arg_error(field, f"{v!r} is not one of {', '.join(INTERP)}")


class Sequence(Closable):
    """Key poses of one figure at frame times; in-betweens sampled on the fly.
    rot: the default for rotations ("constant", "linear", "slerp", "squad"); trans: for
    translations ("constant", "linear", "catmull-rom", "kb")."""
    _what = "sequence"

    def __init__(self, model, fps=30.0, rot="slerp", trans="linear"):
        if not isinstance(model, Model):
            arg_error("model", "a marionette.Model expected")
        d = ffi.new("mn_seq_def*", lib.mn_seq_def_default())
        d.fps = float(fps)
        d.rot = _interp(rot, "rot")
        d.trans = _interp(trans, "trans")
        err = new_error()
        p = lib.mn_seq_create(model._ptr, d, err)
        if p == ffi.NULL:
            check(err.status or Status.ARG, err)
        self.model = model
        self._h = Owner(p, lib.mn_seq_destroy, (model._h,))
        self._keep = []  # names of handles and constraints (copied by the library, kept anyway)

    @property
    def fps(self):
        return lib.mn_seq_fps(self._ptr)

    @property
    def key_count(self):
        return lib.mn_seq_key_count(self._ptr)

    @property
    def start(self):
        return lib.mn_seq_start(self._ptr)

    @property
    def end(self):
        return lib.mn_seq_end(self._ptr)

    def key_frames(self):
        p = self._ptr
        return np.array([lib.mn_seq_key_frame(p, k) for k in range(lib.mn_seq_key_count(p))])

    def key_q(self, k):
        p = lib.mn_seq_key_q(self._ptr, int(k))
        if p == ffi.NULL:
            arg_error("key", f"{k} out of range")
        return np.frombuffer(ffi.buffer(p, 8 * self.model.nq), dtype=np.float64).copy()

    def set_key(self, frame, q):
        """The key at frame (replaced, or inserted); returns its index."""
        a = as_array(q, (self.model.nq,), "q")
        err = new_error()
        k = lib.mn_seq_set_key(self._ptr, float(frame), dptr(a), err)
        if k < 0:
            check(err.status or Status.ARG, err)
        return k

    def remove_key(self, k):
        if lib.mn_seq_remove_key(self._ptr, int(k)) != 0:
            arg_error("key", f"{k} out of range")

    def set_default_interp(self, rot="default", trans="default"):
        s = lib.mn_seq_set_default_interp(self._ptr, _interp(rot, "rot"), _interp(trans, "trans"))
        if s != 0:
            arg_error("interp", f"rot {rot!r} / trans {trans!r} does not apply")

    def set_joint_interp(self, joint, rot="default", trans="default"):
        j = self.model.joint(joint)
        s = lib.mn_seq_set_joint_interp(self._ptr, j, _interp(rot, "rot"), _interp(trans, "trans"))
        if s != 0:
            arg_error("interp", f"rot {rot!r} / trans {trans!r} does not apply to "
                      f"'{self.model.joint_names[j]}'")

    def add_motion(self, motion, first_frame=0.0, tol=0.0):
        """Keys from a motion (a Motion or an (nframes, nq) array): every frame with tol <= 0,
        else reduced keys within tol (length). Returns (keys added, max error)."""
        q = motion.q if isinstance(motion, Motion) else motion
        Q = as_array(q, (None, self.model.nq), "motion.q")
        nk, me = ffi.new("int*"), ffi.new("double*")
        err = new_error()
        check(lib.mn_seq_add_motion(self._ptr, dptr(Q), Q.shape[0], float(first_frame),
                                    float(tol), nk, me, err), err)
        return nk[0], me[0]

    def sample(self, frame, out=None):
        """The in-between state at a frame (clamped to the keys)."""
        out = out_array(out, (self.model.nq,))
        s = lib.mn_seq_sample(self._ptr, float(frame), dptr(out))
        if s != 0:
            arg_error("frame", "no keys, or the frame is not finite")
        return out

    def sample_many(self, frames):
        """States at every frame of an array of frames: (len(frames), nq)."""
        F = as_array(frames, (None,), "frames")
        out = np.empty((F.shape[0], self.model.nq))
        p = self._ptr
        base = out.ctypes.data
        for i, f in enumerate(F):
            if lib.mn_seq_sample(p, f, ffi.cast("double*", base + 8 * self.model.nq * i)) != 0:
                arg_error(f"frames[{i}]", "no keys, or the frame is not finite")
        return out

    def sample_data(self, data, frame):
        """The in-between into data.q, then forward kinematics."""
        if not isinstance(data, Data) or data._m is not self.model._h:
            arg_error("data", "data of the sequence's model expected")
        if lib.mn_seq_sample_data(self._ptr, data._ptr, float(frame)) != 0:
            arg_error("frame", "no keys, or the frame is not finite")

    def add_handle(self, type="point", joint=0, point=(0, 0, 0), name=None):
        c = ffi.new("mn_handle_def*", lib.mn_handle_default())
        keep = fill_handle(c, [self.model], type, 0, joint, point, name)
        err = new_error()
        i = lib.mn_seq_add_handle(self._ptr, c, err)
        del keep
        if i < 0:
            check(err.status or Status.ARG, err)
        return i

    def add_constraint(self, type="pin", handle=0, start=None, end=None, lock=False,
                       target_interp="linear", **fields):
        """A constraint active over [start, end] (default: every frame); lock=True pins it
        where the handle is at start. The other keywords as ConstraintSystem.add_constraint."""
        c = ffi.new("mn_seq_constraint_def*", lib.mn_seq_constraint_default())
        keep = fill_constraint(c.con, type, handle, **fields)
        if start is not None:
            c.start = float(start)
        if end is not None:
            c.end = float(end)
        c.lock = int(bool(lock))
        c.target_interp = _interp(target_interp, "target_interp")
        err = new_error()
        i = lib.mn_seq_add_constraint(self._ptr, c, err)
        del keep
        if i < 0:
            check(err.status or Status.ARG, err)
        return i

    def solver(self, data):
        """A solver of constrained in-betweens on data (SequenceSolver)."""
        return SequenceSolver(self, data)


class SequenceSolver(Closable):
    """Constrained in-betweens: each frame interpolated, then its active constraints
    re-satisfied (Welman 6.3). The sequence must not be edited while it lives."""
    _what = "sequence solver"

    def __init__(self, seq, data):
        if not isinstance(data, Data) or data._m is not seq.model._h:
            arg_error("data", "data of the sequence's model expected")
        err = new_error()
        p = lib.mn_seq_solver_create(seq._ptr, data._ptr, err)
        if p == ffi.NULL:
            check(err.status or Status.ARG, err)
        self.sequence, self.data = seq, data
        self._h = Owner(p, lib.mn_seq_solver_destroy, (seq._h, data._h))
        self._r = ffi.new("mn_csolve_result*")

    def solve_frame(self, frame, warm_start=None, relax=None, balance=None, constraints=None,
                    **solve):
        """Frame `frame` into data (q and frames). solve: the constrain layer's options.
        Returns a CSolveResult."""
        o = ffi.new("mn_seq_solve_options*", lib.mn_seq_solve_options_default())
        for k, v in (("warm_start", warm_start), ("balance", balance),
                     ("constraints", constraints)):
            if v is not None:
                setattr(o, k, int(bool(v)))
        if relax is not None:
            o.relax = float(relax)
        apply_options(o.solve, solve, {"method": SOLVERS}, "solve_frame")
        s = lib.mn_seq_solve_frame(self._ptr, float(frame), o, self._r)
        if s == 1 or s == 4:
            fail(s, _s(self._r.message))
        return CSolveResult(self._r)


def retarget_defaults():
    o = lib.mn_retarget_options_default()
    d = options_dict(o)
    d["solve"] = options_dict(o.solve, {"method": SOLVERS})
    return d


class Retargeter(Closable):
    """Moves takes of src onto dst (retarget.h). map: None (detected from the built-in rig
    tables) or a map file's path. Options: the fields of mn_retarget_options with the C
    defaults (retarget_defaults()); solve=dict(...) for the clean-up solve's."""
    _what = "retargeter"

    def __init__(self, src, dst, map=None, solve=None, **options):
        for nm, m in (("src", src), ("dst", dst)):
            if not isinstance(m, Model):
                arg_error(nm, "a marionette.Model expected")
        mp = ffi.NULL
        err = new_error()
        if map is not None:
            mp = ffi.new("mn_retarget_map*")
            check(lib.mn_retarget_map_read(encode(map, "map"), mp, err), err)
        o = ffi.new("mn_retarget_options*", lib.mn_retarget_options_default())
        apply_options(o, options, {}, "Retargeter")
        if solve:
            apply_options(o.solve, solve, {"method": SOLVERS}, "Retargeter solve")
        p = lib.mn_retarget_create(src._ptr, dst._ptr, mp, o, err)
        if p == ffi.NULL:
            check(err.status or Status.ARG, err)
        self.src, self.dst = src, dst
        self._h = Owner(p, lib.mn_retarget_destroy, (src._h, dst._h))
        self._nframes = 0

    def set_take(self, motion):
        """Analyses a take of the source (a Motion)."""
        if not isinstance(motion, Motion):
            arg_error("motion", "a marionette.Motion expected")
        Q = as_array(motion.q, (None, self.src.nq), "motion.q")
        self._take = Q
        err = new_error()
        check(lib.mn_retarget_set_take(self._ptr, dptr(Q), Q.shape[0], motion.frame_time, err),
              err)
        self._nframes, self._ft = Q.shape[0], motion.frame_time

    def frame(self, f, mode="mapped", out=None):
        """The target state of frame f ("mapped": aligned and cleaned up; "naive": local
        rotations copied). Returns (q, status)."""
        if mode not in ("mapped", "naive"):
            arg_error("mode", f"{mode!r} is not one of mapped, naive")
        out = out_array(out, (self.dst.nq,))
        s = lib.mn_retarget_frame(self._ptr, int(f), 0 if mode == "mapped" else 1, dptr(out))
        if s == 1:
            arg_error("frame", f"{f}: no take, or out of range [0, {self._nframes})")
        return out, Status(s)

    def run(self, motion=None, mode="mapped"):
        """Every frame of the take (set_take(motion) first when given): a Motion of dst."""
        if motion is not None:
            self.set_take(motion)
        out = np.empty((self._nframes, self.dst.nq))
        for f in range(self._nframes):
            self.frame(f, mode, out[f])
        return Motion(out, self._ft) if self._nframes else None

    def measure(self, motion):
        """Foot skate, end-effector error and limit violations of target states."""
        Q = as_array(motion.q if isinstance(motion, Motion) else motion,
                     (None, self.dst.nq), "q")
        m = ffi.new("mn_retarget_metrics*")
        s = lib.mn_retarget_measure(self._ptr, dptr(Q), Q.shape[0], m)
        if s != 0:
            arg_error("q", "no take, or the frame count is not the take's")
        return {k: getattr(m, k) for k, _ in ffi.typeof("mn_retarget_metrics").fields}

    def info(self):
        i = ffi.new("mn_retarget_info*")
        lib.mn_retarget_get_info(self._ptr, i)
        return {"scale": i.scale, "leg_source": i.leg_source, "leg_target": i.leg_target,
                "contacts": (i.contacts[0], i.contacts[1]), "mapped_roles": i.mapped_roles,
                "rig": tuple(_s(r) if r != ffi.NULL else None for r in i.rig),
                "target_foot": (i.target_foot[0], i.target_foot[1]),
                "source_foot": (i.source_foot[0], i.source_foot[1])}
