#!/bin/sh
# tpuctl recipe: TensorFlow (tensorflow-tpu) on a TPU VM worker.  Run on every worker by
# "tpuctl install NODE --framework tensorflow" (and "tpuctl run --framework
# tensorflow"): this part, then the common body (recipes/common.sh, where the
# environment, idempotence and exit status are described), as
#   sh -c "$(cat tensorflow.sh common.sh)" tensorflow REQUIREMENT...
# with TPUCTL_VERSION "2.16.1" and the other pins of config/compat.json.
# shellcheck disable=SC2034 # read by common.sh
name=tensorflow
