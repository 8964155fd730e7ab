# Round trips through Blender (docs/blender.md), run inside it:
#   blender --background --factory-startup --python-exit-code 1 --python blender_check.py -- \
#       bvh IN.bvh REF.json OUT.bvh     import IN.bvh, compare, export the armature to OUT.bvh
#       glb IN.glb REF.json             import IN.glb (Blender's glTF importer), compare
# and with plain python3:
#   python3 blender_check.py compare REF.json OTHER.json [TOL]
#       OTHER is `marionette fk --every-frame --json` of a BVH that Blender exported (Z up).
#       TOL (default 1e-6): Blender computes in single precision and its BVH exporter takes
#       Euler angles from float matrices, which near gimbal lock (the CMU walk's LeftArm
#       passes 90.46 degrees about its middle axis) costs more than 1e-6 (docs/blender.md).
#
# REF.json is `marionette fk FILE --every-frame --json`: every joint's world position at
# every frame, y up. Blender works z up: its importers turn the file's y-up world into its
# own with axis_conversion(from_forward='-Z', from_up='Y'), (x, y, z) -> (x, -z, y), which
# the comparison undoes. Every joint (a bone's head; an End Site "<bone>_end" the tail of a
# bone that has one) must lie within 1e-6 of the figure's size of marionette's position at
# every frame; the size is the largest distance of a joint from the first at frame 0.
import builtins
import json
import re
import sys

TOL = 1e-6


def figure_size(frame):
    p0 = frame["joints"][0]["position"]
    size = max(sum((a - b) ** 2 for a, b in zip(j["position"], p0)) ** 0.5 for j in frame["joints"])
    return size if size > 0 else 1.0


def bvh_name(name):
    """A joint's name as a BVH file carries it: whitespace written '_' (Blender names the
    bones so; marionette reads a BVH of its built-in figure with the spaces back)."""
    return re.sub(r"\s", "_", name)


def worst_error(ref, got, label, tol=TOL, name_of=lambda n: n):
    """ref: frames of {name: (x, y, z)}; got: the same from the other side (a subset of
    names may be missing only for End Sites; name_of maps marionette's names to got's).
    Returns the worst relative error."""
    size = figure_size(ref["frames"][0])
    if len(got) != len(ref["frames"]):
        raise SystemExit("%s: %d frames, marionette has %d" % (label, len(got), len(ref["frames"])))
    worst, compared = 0.0, 0
    for f, frame in enumerate(ref["frames"]):
        for j in frame["joints"]:
            p = got[f].get(name_of(j["name"]))
            if p is None:
                if re.search(r"_end\d*$", j["name"]):
                    continue  # an End Site Blender has no bone for (a second one, or none)
                raise SystemExit("%s: frame %d: joint %s missing" % (label, f, j["name"]))
            e = sum((a - b) ** 2 for a, b in zip(p, j["position"])) ** 0.5 / size
            worst = max(worst, e)
            compared += 1
    print("%s: %d frames, %d joint positions, worst error %.3g of the figure's size %.4g"
          % (label, len(got), compared, worst, size))
    if not worst <= tol:
        raise SystemExit("%s: worst error %.3g is above %g" % (label, worst, tol))
    return worst


def compare_exported(ref_path, other_path, tol):
    ref = json.load(open(ref_path))
    other = json.load(open(other_path))
    # Blender's BVH exporter writes its own z-up world: back to y up, (x, y, z) -> (x, z, -y)
    got = [{bvh_name(j["name"]): (j["position"][0], j["position"][2], -j["position"][1])
            for j in fr["joints"]} for fr in other["frames"]]
    worst_error(ref, got, "marionette reads Blender's BVH " + other_path.split("/")[-1], tol,
                bvh_name)


def in_blender(args):
    import bpy
    from bpy_extras.io_utils import axis_conversion

    # Debian's Blender 3.4 BVH importer opens files with mode 'rU', which Python 3.11
    # refuses: give it 'r' (universal newlines are Python 3's default) before importing.
    real_open = builtins.open

    def open_without_U(file, mode="r", *a, **k):
        return real_open(file, mode.replace("U", "") if isinstance(mode, str) else mode, *a, **k)

    builtins.open = open_without_U
    # Debian's Blender 3.4 glTF importer makes its smooth-shading array with dtype=np.bool
    # (io_scene_gltf2/blender/imp/gltf2_blender_mesh.py, set_poly_smoothing), an alias that
    # numpy 1.24 (Debian's) removed: any file with a mesh fails to import. The one-line fix
    # is to give the name back before importing (docs/blender.md).
    import numpy
    if "bool" not in numpy.__dict__:
        numpy.bool = bool

    kind, path, ref_path = args[0], args[1], args[2]
    ref = json.load(open(ref_path))
    nframes = len(ref["frames"])
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    to_yup = axis_conversion(from_forward="-Z", from_up="Y").to_4x4().inverted()
    if kind == "bvh":
        bpy.ops.import_anim.bvh(filepath=path, axis_forward="-Z", axis_up="Y",
                                rotate_mode="NATIVE", update_scene_duration=True)
        first = 1  # the importer keys file frame i at scene frame 1 + i
    else:
        # one key per scene frame: the scene's rate is the animation's
        dt = ref["frames"][1]["time"] - ref["frames"][0]["time"] if nframes > 1 else 1 / 30
        scene.render.fps = int(round(1 / dt))
        scene.render.fps_base = 1.0
        bpy.ops.import_scene.gltf(filepath=path)
        first = 0  # the importer keys time t at scene frame t * fps
    arms = [ob for ob in bpy.data.objects if ob.type == "ARMATURE"]
    if kind == "bvh" and len(arms) != 1:
        raise SystemExit("%s: expected one armature, found %d" % (path, len(arms)))
    got = []
    for f in range(nframes):
        scene.frame_set(first + f)
        pos = {}
        for arm in arms:
            for pb in arm.pose.bones:
                pos[pb.name] = tuple(to_yup @ (arm.matrix_world @ pb.head))
                pos.setdefault(pb.name + "_end", tuple(to_yup @ (arm.matrix_world @ pb.tail)))
        if not arms:
            # a glTF without a skin: Blender makes each joint node an empty, animated by
            # an action of its own
            for ob in bpy.data.objects:
                pos[ob.name] = tuple(to_yup @ ob.matrix_world.translation)
        got.append(pos)
    # A bone's tail is an End Site where the file had one, unless the End Site sits on
    # the joint: Blender then lengthens the bone (its importer's 0.001 rule).
    name_of = bvh_name if kind == "bvh" else (lambda n: n)
    rest = {name_of(j["name"]): j["position"] for j in ref["frames"][0]["joints"]}

    def tail_is_end_site(k):
        b = k[:-len("_end")]
        return k in rest and b in rest and sum((x - y) ** 2 for x, y in zip(rest[k], rest[b])) ** 0.5 > 0.001

    for pos in got:
        for k in [k for k in pos if k.endswith("_end") and not tail_is_end_site(k)]:
            del pos[k]
    worst_error(ref, got, "Blender imports %s" % path.split("/")[-1], name_of=name_of)
    if kind == "bvh" and len(args) > 3:
        arm = arms[0]
        bpy.ops.object.select_all(action="DESELECT")
        arm.select_set(True)
        bpy.context.view_layer.objects.active = arm
        bpy.ops.export_anim.bvh(filepath=args[3], frame_start=1, frame_end=nframes,
                                rotate_mode="NATIVE")
        print("exported %s" % args[3])


if __name__ == "__main__":
    argv = sys.argv
    if "--" in argv:
        in_blender(argv[argv.index("--") + 1:])
    elif len(argv) in (4, 5) and argv[1] == "compare":
        compare_exported(argv[2], argv[3], float(argv[4]) if len(argv) == 5 else TOL)
    else:
        raise SystemExit(__doc__ if __doc__ else "usage: see the comment at the top")
