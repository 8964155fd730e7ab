#!/usr/bin/env python3
"""Draws the pictures of docs/softbody.md from `marionette sim` outputs: a film strip of the
simulated mesh (sim-NNNN.obj, projected on a plane, the rig's reproduction fit-NNNN.obj
beside it in grey) and the per-frame residual and fit error of tracks.json, as SVG.

    scripts/sim_figures.py strip OUTDIR FRAMES out.svg [--view xy|zy] [--title T]
    scripts/sim_figures.py residual OUTDIR out.svg [--title T]
"""
import json
import math
import sys


def read_obj(path):
    v, f = [], []
    for line in open(path):
        p = line.split()
        if not p:
            continue
        if p[0] == "v":
            v.append(tuple(float(x) for x in p[1:4]))
        elif p[0] == "f":
            f.append([int(x.split("/")[0]) - 1 for x in p[1:]])
    return v, f


def strip(outdir, frames, out, view="xy", title=""):
    ax = {"xy": (0, 1), "zy": (2, 1), "xz": (0, 2)}[view]
    meshes = []
    for fr in frames:
        meshes.append((fr, read_obj(f"{outdir}/sim-{fr:04d}.obj"), read_obj(f"{outdir}/fit-{fr:04d}.obj")))
    xs = [p[ax[0]] for _, (v, _), _ in meshes for p in v]
    ys = [p[ax[1]] for _, (v, _), _ in meshes for p in v]
    w, h = max(xs) - min(xs), max(ys) - min(ys)
    cell = 220
    s = (cell - 20) / max(w / len(frames) * 1.0, h, 1e-9)
    s = min(s, (cell - 20) / max(h, 1e-9))
    width = cell * len(frames)
    height = cell + 50
    out_f = open(out, "w")
    out_f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
                f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">\n'
                '<rect width="100%" height="100%" fill="white"/>\n')
    if title:
        out_f.write(f'<text x="10" y="18" font-size="14">{title}</text>\n')
    cx_all = (max(xs) + min(xs)) / 2
    for k, (fr, (v, f), (vr, fr_)) in enumerate(meshes):
        ox = cell * k + cell / 2
        oy = 30 + cell - 10
        mx = sum(p[ax[0]] for p in v) / len(v)

        def P(p):
            return (ox + (p[ax[0]] - mx) * s, oy - (p[ax[1]] - min(ys)) * s)
        for faces, verts, col, op in ((fr_, vr, "#999", 0.35), (f, v, "#c0392b", 0.55)):
            for tri in faces:
                pts = " ".join("%.1f,%.1f" % P(verts[i]) for i in tri)
                out_f.write(f'<polygon points="{pts}" fill="none" stroke="{col}" '
                            f'stroke-width="0.4" stroke-opacity="{op}"/>\n')
        out_f.write(f'<text x="{ox:.0f}" y="{height - 6}" text-anchor="middle">frame {fr}</text>\n')
    out_f.write("</svg>\n")


def residual(outdir, out, title=""):
    doc = json.load(open(f"{outdir}/tracks.json"))
    fr = doc["frames"]
    t = [x["t"] for x in fr]
    series = [("residual (complementary constraint)", [max(x["residual"], 1e-20) for x in fr], "#c0392b"),
              ("fit RMS error (m)", [max(x["rms"], 1e-20) for x in fr], "#2c7fb8")]
    W, H, L, R, T, B = 640, 360, 70, 20, 40, 50
    lo = math.floor(math.log10(min(min(s) for _, s, _ in series)))
    hi = math.ceil(math.log10(max(max(s) for _, s, _ in series)))
    def X(v): return L + (v - t[0]) / max(t[-1] - t[0], 1e-9) * (W - L - R)
    def Y(v): return T + (hi - math.log10(v)) / max(hi - lo, 1) * (H - T - B)
    o = open(out, "w")
    o.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
            'font-family="sans-serif" font-size="12">\n<rect width="100%" height="100%" fill="white"/>\n')
    o.write(f'<text x="{L}" y="22" font-size="14">{title}</text>\n')
    for e in range(lo, hi + 1, max(1, (hi - lo) // 8)):
        o.write(f'<line x1="{L}" y1="{Y(10**e):.1f}" x2="{W-R}" y2="{Y(10**e):.1f}" stroke="#ddd"/>'
                f'<text x="{L-6}" y="{Y(10**e)+4:.1f}" text-anchor="end">1e{e}</text>\n')
    o.write(f'<text x="{(L+W-R)/2}" y="{H-12}" text-anchor="middle">time (s)</text>\n')
    for k in range(0, 5):
        tv = t[0] + (t[-1] - t[0]) * k / 4
        o.write(f'<text x="{X(tv):.1f}" y="{H-B+16}" text-anchor="middle">{tv:.2f}</text>\n')
    for i, (name, s, col) in enumerate(series):
        pts = " ".join(f"{X(a):.1f},{Y(b):.1f}" for a, b in zip(t, s))
        o.write(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="1.5"/>\n')
        o.write(f'<text x="{W-R-5}" y="{T+(H-T-B)*0.45+16*i:.0f}" text-anchor="end" fill="{col}">{name}</text>\n')
    o.write("</svg>\n")


if __name__ == "__main__":
    a = sys.argv[1:]
    opts = {}
    for key in ("--view", "--title"):
        if key in a:
            i = a.index(key)
            opts[key[2:]] = a[i + 1]
            del a[i:i + 2]
    if a[0] == "strip":
        strip(a[1], [int(x) for x in a[2].split(",")], a[3], **opts)
    elif a[0] == "residual":
        residual(a[1], a[2], title=opts.get("title", ""))
