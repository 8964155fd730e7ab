#!/usr/bin/env python3
"""Makes a BVH with position channels on every joint from a BVH without them.

Rigs such as the Bandai Namco research set and some MotionBuilder exports key
Xposition Yposition Zposition on every joint, not only the root. This script turns a
file of the usual kind into one of that kind: every JOINT below the root gets
"Xposition Yposition Zposition" in front of its rotation channels, and every frame the
values of its OFFSET, so the motion is unchanged (the bone lengths are the OFFSETs).

    scripts/make_positions_bvh.py IN.bvh OUT.bvh [FRAMES]

keeps the first FRAMES frames (default 10). tests/data/cmu_02_01_walk_positions.bvh is
data/mocap/cmu_motionbuilder/cmu_02_01_walk.bvh through this script with FRAMES 10.
"""
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    nframes = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    lines = open(src, newline="").read().replace("\r\n", "\n").split("\n")
    out, chans, offsets = [], [], []  # chans: per joint (nch, extra offset or None)
    i, pending_offset, depth_root = 0, None, True
    while i < len(lines) and lines[i].strip() != "MOTION":
        line = lines[i]
        t = line.split()
        if t and t[0] == "OFFSET":
            pending_offset = t[1:4]
        if t and t[0] == "CHANNELS":
            n = int(t[1])
            if depth_root:
                out.append(line)
                chans.append((n, None))
                depth_root = False
            else:
                indent = line[: len(line) - len(line.lstrip())]
                out.append(indent + "CHANNELS %d Xposition Yposition Zposition %s"
                           % (n + 3, " ".join(t[2:])))
                chans.append((n, pending_offset))
            i += 1
            continue
        out.append(line)
        i += 1
    out.append("MOTION")
    frames = [l for l in lines[i + 3:] if l.strip()][:nframes]
    out.append("Frames: %d" % len(frames))
    out.append(lines[i + 2])
    for row in frames:
        v = row.split()
        k, new = 0, []
        for n, off in chans:
            if off is not None:
                new += off
            new += v[k:k + n]
            k += n
        assert k == len(v), "channel count mismatch"
        out.append(" ".join(new))
    open(dst, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
