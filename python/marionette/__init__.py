"""marionette: posing and animating articulated figures, from Python.

A thin layer over the C library libmarionette.so.0 (cffi, ABI mode: nothing is compiled).
See docs/python.md for the tour; every class and function here mirrors a call of
include/marionette/*.h in Python's conventions.
"""
from ._base import (MarionetteError, MarionetteFileNotFoundError, MarionetteOSError,
                    MarionetteValueError, MarionetteWarning, Status)
from ._ffi import library_path
from .anim import INTERP, Retargeter, Sequence, SequenceSolver, retarget_defaults
from .constrain import (CONSTRAINT_TYPES, HANDLE_TYPES, SOLVERS, ConstraintSystem,
                        CSolveResult, csolve_defaults)
from .ik import IK, METHODS, IKBatchResult, IKResult, ik_defaults, ik_solve
from .io import (Z_UP_TO_Y_UP, Motion, convert, from_text, guess_scale, load, load_motion,
                 read_bvh, read_figure_document, read_skeleton, read_urdf, stickman,
                 to_bvh_text, to_glb_bytes, write_bvh, write_figure_document, write_gltf,
                 write_skeleton)
from .model import JOINT_TYPES, Data, Model
from .skin import Fitter, FitResult, Rig, fit_defaults

Error = MarionetteError
__version__ = "0.1.0"

__all__ = [
    "CONSTRAINT_TYPES", "CSolveResult", "ConstraintSystem", "Data", "Error", "FitResult",
    "Fitter", "HANDLE_TYPES", "IK", "IKBatchResult", "IKResult", "INTERP", "JOINT_TYPES",
    "METHODS", "MarionetteError", "MarionetteFileNotFoundError", "MarionetteOSError",
    "MarionetteValueError", "MarionetteWarning", "Model", "Motion", "Retargeter", "Rig",
    "SOLVERS", "Sequence", "SequenceSolver", "Status", "convert", "csolve_defaults",
    "Z_UP_TO_Y_UP", "fit_defaults", "from_text", "guess_scale", "ik_defaults", "ik_solve", "library_path", "load",
    "load_motion", "read_bvh", "read_figure_document", "read_skeleton", "read_urdf",
    "retarget_defaults", "stickman", "to_bvh_text", "to_glb_bytes", "write_bvh",
    "write_figure_document", "write_gltf",
    "write_skeleton",
]
