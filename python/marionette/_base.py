"""Statuses, the exception, lifetimes and the numpy views of the library's memory."""
import difflib
import enum
import errno
import os
import warnings

import numpy as np

from ._ffi import ffi, lib


class Status(enum.IntEnum):
    """mn_status: the outcome of a call (base.h)."""
    OK = 0
    ARG = 1
    IO = 2
    PARSE = 3
    NOMEM = 4
    NOTFOUND = 5
    SINGULAR = 6
    UNREACHABLE = 7
    NOCONVERGE = 8
    UNSUPPORTED = 9


class MarionetteError(Exception):
    """A call of the library failed. `status` is a Status, `message` the library's one-line
    message "file:line: field: what", and `file`, `line` and `field` its parts (empty or 0
    when the message has none).

    MarionetteError(status, ...) makes the kind that Python's own handlers catch too: a file
    that cannot be read (IO) a MarionetteOSError, which is an OSError (a missing one a
    MarionetteFileNotFoundError, a FileNotFoundError); bad input (ARG, PARSE, NOTFOUND,
    UNSUPPORTED) a MarionetteValueError, a ValueError. All are MarionetteErrors."""

    def __new__(cls, status=Status.ARG, message="", file="", line=0, field="", *args, **kw):
        if cls is MarionetteError:
            cls = _kind(status, message, file)
        return super().__new__(cls, status, message, file, line, field)

    def __init__(self, status, message, file="", line=0, field=""):
        super().__init__(message)
        self.status = Status(status)
        self.message = message
        self.file = file
        self.line = line
        self.field = field

    def __str__(self):
        return self.message

    def __repr__(self):
        return f"{type(self).__name__}({self.status.name}, {self.message!r})"


class MarionetteValueError(MarionetteError, ValueError):
    """Bad input: a malformed file or argument, an unknown name (ARG, PARSE, NOTFOUND,
    UNSUPPORTED)."""


class MarionetteOSError(MarionetteError, OSError):
    """A file that cannot be opened or read (IO); errno and filename as OSError's."""
    _errno = errno.EIO

    def __init__(self, status, message, file="", line=0, field=""):
        super().__init__(status, message, file, line, field)
        self.args = (message,)
        self.errno = self._errno
        self.strerror = os.strerror(self._errno)
        self.filename = file or None


class MarionetteFileNotFoundError(MarionetteOSError, FileNotFoundError):
    """The file named does not exist (IO, errno ENOENT)."""
    _errno = errno.ENOENT


def _kind(status, message, file):
    if status == Status.IO:
        missing = "No such file or directory" in message or (
            file and not os.path.lexists(file))
        return MarionetteFileNotFoundError if missing else MarionetteOSError
    if status in (Status.ARG, Status.PARSE, Status.NOTFOUND, Status.UNSUPPORTED):
        return MarionetteValueError
    return MarionetteError


class MarionetteWarning(UserWarning):
    """A reader's non-fatal finding ("frame count says 3069, data has 3070 rows")."""


def _s(cstr):
    return ffi.string(cstr).decode("utf-8", "replace")


def raise_error(status, err):
    """Raises the MarionetteError of a filled mn_error."""
    raise MarionetteError(status, _s(err.message), _s(err.file), err.line, _s(err.field))


def check(status, err):
    if status != 0:
        raise_error(status, err)


def fail(status, message, field=""):
    """A result's message as an exception; "ik: target_pos: not finite" names its field."""
    if not field:
        parts = message.split(": ")
        if len(parts) >= 3 and " " not in parts[1]:
            field = parts[1]
    raise MarionetteError(status, message, field=field)


def arg_error(field, what):
    """Bad input caught on the Python side: the same form as the library's messages."""
    raise MarionetteError(Status.ARG, f"{field}: {what}", field=field)


def emit_warnings(w):
    if w.count > 0:
        extra = f" (and {w.count - 1} more)" if w.count > 1 else ""
        warnings.warn(MarionetteWarning(_s(w.first) + extra), stacklevel=3)


def new_error():
    return ffi.new("mn_error*")


def encode(text, field):
    if isinstance(text, (bytes, bytearray)):
        b = bytes(text)
    elif isinstance(text, str):
        b = text.encode("utf-8")
    else:
        import os
        if isinstance(text, os.PathLike):
            return encode(os.fspath(text), field)
        arg_error(field, f"expected a string, got {type(text).__name__}")
    if b"\0" in b:
        arg_error(field, "contains a NUL character")
    return b


class Owner:
    """One object of the library and the function that frees it. Wrappers hold an Owner;
    so do the numpy views of its memory and the objects that need it alive (a Data its
    Model, a constraint system its figures). The object is freed when the last of them
    lets go: close() on a wrapper gives up the wrapper's hold, so a view taken before
    stays valid."""
    __slots__ = ("ptr", "free", "deps", "__weakref__")

    def __init__(self, ptr, free, deps=()):
        self.ptr = ptr
        self.free = free
        self.deps = tuple(deps)

    def __del__(self):
        p, self.ptr = self.ptr, None
        if p is not None and self.free is not None:
            self.free(p)


class Closable:
    """The context-manager half of every wrapper: `with` closes, close() is idempotent,
    and using a closed object raises ValueError."""
    _h = None
    _what = "object"

    @property
    def _ptr(self):
        h = self._h
        if h is None:
            raise ValueError(f"marionette: this {self._what} is closed")
        return h.ptr

    def close(self):
        self._h = None

    @property
    def closed(self):
        return self._h is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class _ArrayRef:
    """What a zero-copy view points at: numpy reads the address from
    __array_interface__ and keeps this object (and through it the owner) alive."""
    __slots__ = ("__array_interface__", "owner")

    def __init__(self, owner, addr, shape, readonly, strides=None):
        self.owner = owner
        self.__array_interface__ = {"version": 3, "shape": tuple(shape), "typestr": "<f8",
                                    "data": (addr, readonly), "strides": strides}


def view(owner, ptr, shape, readonly=False):
    """A float64 numpy array over library memory, keeping owner alive."""
    if ptr == ffi.NULL or int(np.prod(shape)) == 0:
        return np.zeros(shape)
    addr = int(ffi.cast("uintptr_t", ptr))
    return np.asarray(_ArrayRef(owner, addr, shape, readonly))


def dptr(a):
    """double* of a C-contiguous float64 array (the array must stay referenced)."""
    return ffi.cast("double*", a.ctypes.data)


class OutTypeError(MarionetteError, TypeError):
    """An out= that is not a float64 numpy array (also a MarionetteError, status ARG)."""


class OutValueError(MarionetteError, ValueError):
    """An out= float64 array of another shape, not C-contiguous or read-only (also a
    MarionetteError, status ARG)."""


def out_array(out, shape, field="out"):
    """The array a call writes its answer into: a fresh one when out is None, else out itself
    when it is a writable C-contiguous float64 numpy array of exactly that shape. Anything
    else is refused before the library writes a byte: a TypeError (not an ndarray, another
    dtype: float32, int8, bytes) or a ValueError (another shape, not contiguous, read-only)."""
    shape = tuple(shape)
    if out is None:
        return np.zeros(shape)
    want = f"{field}: expected a writable C-contiguous float64 array of shape {shape}"
    if not isinstance(out, np.ndarray):
        raise OutTypeError(Status.ARG, f"{want}, got {type(out).__name__}", field=field)
    if out.dtype != np.dtype(np.float64):
        raise OutTypeError(Status.ARG, f"{want}, got dtype {out.dtype}", field=field)
    if out.shape != shape:
        raise OutValueError(Status.ARG, f"{want}, got shape {out.shape}", field=field)
    if not out.flags.c_contiguous:
        raise OutValueError(Status.ARG, f"{want}, got a non-contiguous array", field=field)
    if not out.flags.writeable:
        raise OutValueError(Status.ARG, f"{want}, got a read-only array", field=field)
    return out


def as_array(x, shape, field, dtype=np.float64, copy=False):
    """x as a C-contiguous array of the dtype and shape (None in shape: any length there).
    A clear MarionetteError (ARG, naming the field) for a wrong kind or shape."""
    try:
        a = np.asarray(x)
    except Exception as e:  # ragged lists and the like
        arg_error(field, f"not an array: {e}")
    if a.dtype.kind not in "iuf" or (a.dtype.kind == "b"):
        arg_error(field, f"expected real numbers, got dtype {a.dtype}")
    if a.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, a.shape)):
        want = "(" + ", ".join("N" if s is None else str(s) for s in shape) + \
            ("," if len(shape) == 1 else "") + ")"
        arg_error(field, f"expected shape {want}, got {a.shape}")
    return np.array(a, dtype=dtype, order="C", copy=True) if copy else \
        np.ascontiguousarray(a, dtype=dtype)


def vec3(x, field):
    a = as_array(x, (3,), field)
    if not np.all(np.isfinite(a)):
        arg_error(field, "not finite")
    return (float(a[0]), float(a[1]), float(a[2]))


def quat(x, field):
    a = as_array(x, (4,), field)
    return tuple(float(v) for v in a)


def set_vec3(cv, x, field):
    cv.x, cv.y, cv.z = vec3(x, field)


def set_quat(cq, x, field):
    cq.w, cq.x, cq.y, cq.z = quat(x, field)


def suggest(name, names):
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def apply_options(c_struct, kwargs, enums, where):
    """Sets the fields of an options struct from keyword arguments. enums maps a field to
    (parse function, names) so that `method="ccd"` reads like the command line."""
    for k, v in kwargs.items():
        if k not in c_fields(c_struct):
            raise TypeError(f"{where}: unknown option {k!r} (options: "
                            f"{', '.join(c_fields(c_struct))})")
        if k in enums:
            names = enums[k]
            if isinstance(v, str):
                if v not in names:
                    arg_error(f"options.{k}", f"{v!r} is not one of {', '.join(names)}")
                v = names.index(v)
            elif not isinstance(v, (int, np.integer)) or not 0 <= v < len(names):
                arg_error(f"options.{k}", f"{v!r} is not one of {', '.join(names)}")
        elif isinstance(getattr(c_struct, k), int):
            if isinstance(v, (bool, np.bool_)):
                v = int(v)
            if not isinstance(v, (int, np.integer)):
                arg_error(f"options.{k}", f"expected an integer, got {v!r}")
        else:
            if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, bool):
                arg_error(f"options.{k}", f"expected a number, got {v!r}")
        try:
            setattr(c_struct, k, v)
        except OverflowError:
            arg_error(f"options.{k}", f"{v!r} out of range")


_fields_cache = {}


def c_fields(c_struct):
    t = ffi.typeof(c_struct)
    if t.kind == "pointer":
        t = t.item
    f = _fields_cache.get(t.cname)
    if f is None:
        f = _fields_cache[t.cname] = tuple(n for n, _ in t.fields)
    return f


def options_dict(c_struct, enums=()):
    """The fields of an options struct as a dict (enums by name)."""
    out = {}
    for k in c_fields(c_struct):
        v = getattr(c_struct, k)
        if k in enums:
            v = enums[k][v]
        out[k] = v
    return out


def status_name(s):
    return _s(lib.mn_status_name(s))
