#!/bin/sh
# build_index.sh DIR: a local, offline pip index (a --find-links
# directory) of small hand-made wheels with the real names, versions and
# TPU dependency pins of the frameworks in config/compat.json, so that
# "pip install --no-index --find-links DIR" resolves the matrix's pinned
# command lines exactly as pip would against the real indexes, and fails
# where a pin is wrong.  No network: each wheel is a zip written by
# python3's zipfile (NAME-VER.dist-info/METADATA, WHEEL, RECORD and one
# module).
#
# The pins are copied from the projects' own setup.py (sources in
# config/compat.json), not from the matrix, so the matrix is checked
# against them:
#   jax 0.6.1      jaxlib>=0.6.1,<=0.6.1; [tpu] jaxlib, libtpu==0.0.15.*
#   jax 0.4.34     jaxlib>=0.4.34,<=0.4.34; [tpu] jaxlib,
#                  libtpu-nightly==0.1.dev20241002
#   torch_xla 2.6.0  [tpu] libtpu-nightly==0.1.dev20241020, tpu-info
#                  (torch_xla declares no torch requirement: tpuctl pins
#                  torch itself)
#   tensorflow-tpu 2.16.1, 2.15.0: no TPU pin is modelled (its libtpu
#                  pin was not verified)
# Generic dependencies (numpy, scipy, requests, absl-py, ...) are left out
# on purpose: only the TPU-relevant resolution is under test.  jaxlib
# 0.6.2 is a decoy: a matrix that pinned it with jax 0.6.1 must fail.
set -eu
dir=${1:?usage: build_index.sh DIR}
mkdir -p "$dir"
PYTHON=${PYTHON:-/usr/bin/python3}
"$PYTHON" - "$dir" <<'PY'
import base64, hashlib, os, sys, zipfile

out = sys.argv[1]

def wheel(dist, version, requires=(), extras=None, python=None, module=None):
    norm = dist.replace("-", "_")
    info = "%s-%s.dist-info" % (norm, version)
    meta = ["Metadata-Version: 2.1", "Name: %s" % dist, "Version: %s" % version,
            "Summary: tpuctl test stand-in for %s %s (no code)" % (dist, version)]
    if python:
        meta.append("Requires-Python: %s" % python)
    for r in requires:
        meta.append("Requires-Dist: %s" % r)
    for extra, reqs in (extras or {}).items():
        meta.append("Provides-Extra: %s" % extra)
        for r in reqs:
            meta.append('Requires-Dist: %s; extra == "%s"' % (r, extra))
    mod = module or norm
    files = {
        "%s/__init__.py" % mod: "__version__ = %r\n" % version,
        "%s/METADATA" % info: "\n".join(meta) + "\n",
        "%s/WHEEL" % info: "Wheel-Version: 1.0\nGenerator: tpuctl-build-index\n"
                           "Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        record.append("%s,sha256=%s,%d" % (name, digest.decode(), len(data)))
    record.append("%s/RECORD,," % info)
    files["%s/RECORD" % info] = "\n".join(record) + "\n"
    path = os.path.join(out, "%s-%s-py3-none-any.whl" % (norm, version))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files.items():
            z.writestr(name, text)

# jax (github.com/jax-ml/jax setup.py at jax-v0.6.1 and jax-v0.4.34)
wheel("jax", "0.6.1", ["jaxlib<=0.6.1,>=0.6.1"],
      {"tpu": ["jaxlib<=0.6.1,>=0.6.1", "libtpu==0.0.15.*"]}, ">=3.10")
wheel("jaxlib", "0.6.1", python=">=3.10")
wheel("jaxlib", "0.6.2", python=">=3.10")  # decoy
wheel("libtpu", "0.0.15", python=">=3.10")
wheel("jax", "0.4.34", ["jaxlib<=0.4.34,>=0.4.34"],
      {"tpu": ["jaxlib<=0.4.34,>=0.4.34", "libtpu-nightly==0.1.dev20241002"]},
      ">=3.10")
wheel("jaxlib", "0.4.34", python=">=3.10")
wheel("libtpu-nightly", "0.1.dev20241002", module="libtpu")
# PyTorch/XLA (github.com/pytorch/xla setup.py, build version 2.6.0)
wheel("torch", "2.6.0", python=">=3.9")
wheel("torch_xla", "2.6.0", [],
      {"tpu": ["libtpu-nightly==0.1.dev20241020", "tpu-info"]}, ">=3.8.0")
wheel("libtpu-nightly", "0.1.dev20241020", module="libtpu")
wheel("tpu-info", "0.2.0")
# TensorFlow on TPU VMs
wheel("tensorflow-tpu", "2.16.1", python=">=3.9", module="tensorflow")
wheel("tensorflow-tpu", "2.15.0", python=">=3.9", module="tensorflow")
PY
ls "$dir"
