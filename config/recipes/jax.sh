#!/bin/sh
# tpuctl recipe: JAX on a TPU VM worker.  Run on every worker by
# "tpuctl install NODE --framework jax" (and "tpuctl run --framework
# jax"): this part, then the common body (recipes/common.sh, where the
# environment, idempotence and exit status are described), as
#   sh -c "$(cat jax.sh common.sh)" jax REQUIREMENT...
# with TPUCTL_VERSION "0.6.1" and the other pins of config/compat.json.
# shellcheck disable=SC2034 # read by common.sh
name=jax
