#!/usr/bin/env bash
# The learned-initialisation study with the long meta-training a GPU affords: every learned row (Reptile, MAML,
# Meta-SGD, and the shift modulations for natural crops) meta-trained for META_STEPS outer steps (Reptile; the
# others half) over TRAIN_SIGNALS training signals, then every row, the tuned standard init and the classical
# baseline on the held-out signals, with the paired table, the curves against steps and seconds, and the NTK and
# band analysis (docs/learned_init.md). The CPU runs of that page are the short version of this one.
#
#     benchmarks/learned_init_gpu.sh KIND [OUT]
#     benchmarks/learned_init_gpu.sh --estimate-only KIND
#
# KIND: natural, ct, text or shape. Settings by environment: META_STEPS (default 100000), TRAIN_SIGNALS (default
# 2048), TEST_SIGNALS (default 8), FEW_ANGLES (CT's few angle counts, default 10,6), EXTRA (more flags of
# python -m inr.experiments.learned_init, e.g. "--resolution 128"). The expected time (a short probe of each
# meta-training's outer step and of each row's step, scaled) is printed before the run starts; the results land in
# OUT (default runs/learned_init_gpu/KIND), and a rerun with the same OUT keeps what is done.
set -euo pipefail
usage="usage: $0 [--estimate-only] KIND [OUT]"
# shellcheck source=benchmarks/script_args.sh
source "$(dirname "$0")/script_args.sh"
script_args 1 2 "$@"
set -- "${ARGS[@]+"${ARGS[@]}"}"
KIND=$1
case $KIND in
    natural|ct|text|shape) ;;
    *) echo "$0: error: KIND $KIND: one of natural, ct, text, shape" >&2; exit 2 ;;
esac
OUT=${2:-runs/learned_init_gpu/$KIND}
PYTHON=${PYTHON:-python}
# shellcheck disable=SC2206  # EXTRA is a list of flags, split on spaces
STUDY=(-m inr.experiments.learned_init --kind "$KIND" --meta-steps "${META_STEPS:-100000}"
    --train-signals "${TRAIN_SIGNALS:-2048}" --test-signals "${TEST_SIGNALS:-8}" --out "$OUT" ${EXTRA:-})
[ "$KIND" = ct ] && STUDY+=(--few-angles "${FEW_ANGLES:-10,6}")

"$PYTHON" "${STUDY[@]}" --estimate-only
[ "$ESTIMATE_ONLY" = 1 ] && exit 0
"$PYTHON" "${STUDY[@]}"
