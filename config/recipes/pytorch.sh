#!/bin/sh
# tpuctl recipe: PyTorch/XLA on a TPU VM worker.  Run on every worker by
# "tpuctl install NODE --framework pytorch" (and "tpuctl run --framework
# pytorch"): this part, then the common body (recipes/common.sh, where the
# environment, idempotence and exit status are described), as
#   sh -c "$(cat pytorch.sh common.sh)" pytorch REQUIREMENT...
# with TPUCTL_VERSION "2.6.0" and the other pins of config/compat.json.
# shellcheck disable=SC2034 # read by common.sh
name=pytorch
# shellcheck disable=SC2034
hint="pytorch: run programs with PJRT_DEVICE=TPU (the PJRT runtime)"
