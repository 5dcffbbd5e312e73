#!/usr/bin/env bash
# The codec's rate–distortion on whole images, meant for the full Kodak set on a GPU (24 images, 768×512 and
# 512×768; COIN's 50,000 steps): learned inits meta-learned on other photographs (e.g. DIV2K's, none of Kodak), then
# SIREN from its random draw and from the learned init beside JPEG, WebP and AVIF at the same rates, in one run.
#
#     benchmarks/codec_kodak.sh KODAK_DIR PHOTOS_DIR [OUT]
#     benchmarks/codec_kodak.sh --estimate-only KODAK_DIR PHOTOS_DIR [OUT]   # the expected time, from a short probe
#     benchmarks/codec_kodak.sh --help
#
# KODAK_DIR: the images to code (docs/codec.md says where to get Kodak); PHOTOS_DIR: photographs to learn the inits
# from (at least the images' shorter side on each side). Settings by environment: RATES (bits per pixel,
# default 0.1,0.2,0.3,0.5,1), STEPS (per fit, default 50000), META_STEPS (outer steps per init, default 2000),
# INNER_STEPS (default 10). Fits run where Lightning finds an accelerator (a GPU when there is one). The expected
# time of the comparison is printed before it starts; its results land in OUT (default runs/codec_kodak), and a
# rerun keeps the rows already written.
# --estimate-only learns the inits for 1 and for 3 outer steps in a scratch folder, scales the difference to META_STEPS,
# prints the comparison's own estimate (inr-codec compare --estimate-only) with those inits, and stops.
set -euo pipefail
usage="usage: $0 [--estimate-only] KODAK_DIR PHOTOS_DIR [OUT]"
# shellcheck source=benchmarks/script_args.sh
source "$(dirname "$0")/script_args.sh"
script_args 2 3 "$@"
set -- "${ARGS[@]+"${ARGS[@]}"}"
KODAK=$1
PHOTOS=$2
OUT=${3:-runs/codec_kodak}
RATES=${RATES:-0.1,0.2,0.3,0.5,1}
STEPS=${STEPS:-50000}
META_STEPS=${META_STEPS:-2000}
INNER_STEPS=${INNER_STEPS:-10}
PYTHON=${PYTHON:-python}

# the network widths the comparison picks at these rates for the images' sizes, and their shorter side:
# the inits are learned for exactly those networks
read -r SIDE WIDTHS < <("$PYTHON" -m inr.experiments.codec_sizes "$KODAK" --bpp "$RATES")
echo "images' shorter side $SIDE; SIREN widths at $RATES bpp: $WIDTHS"

if [ "$ESTIMATE_ONLY" = 1 ]; then
    PROBE=$(mktemp -d)
    trap 'rm -rf "$PROBE"' EXIT
    probe() {  # seconds of learn-init for $1 outer steps, its start-up included; its output shown only if it fails
        local start end
        start=$(date +%s.%N)
        if ! "$PYTHON" -m inr.codec learn-init "$PHOTOS" -o "$PROBE/inits$1" --width "$WIDTHS" --resolution "$SIDE" \
            --steps "$1" --inner-steps "$INNER_STEPS" > "$PROBE/learn$1.log" 2>&1; then
            cat "$PROBE/learn$1.log" >&2
            exit 2
        fi
        end=$(date +%s.%N)
        awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }'
    }
    # one outer step's time is the difference of a 1-step and a 3-step probe (the start-up cancels)
    one=$(probe 1)
    three=$(probe 3)
    read -r step total < <(awk -v a="$one" -v b="$three" -v m="$META_STEPS" \
        'BEGIN { s = (b - a) / 2; if (s < 0) s = 0; printf "%.3f %.0f\n", s, a + (m - 1) * s }')
    echo "expected time of learning the inits: about $total s for $META_STEPS outer steps ($step s a step, measured" \
        "as (3 steps − 1 step) / 2 = ($three − $one) s / 2; the start-up $one s once)"
    mv "$PROBE/inits3" "$PROBE/inits"
    "$PYTHON" -m inr.experiments.codec --images "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$PROBE/inits" \
        --methods siren,siren+init,jpeg,webp,avif --out "$PROBE/compare" --estimate-only
    echo "the whole run: both estimates above, one after the other"
    exit 0
fi
"$PYTHON" -m inr.codec learn-init "$PHOTOS" -o "$OUT/inits" --width "$WIDTHS" --resolution "$SIDE" \
    --steps "$META_STEPS" --inner-steps "$INNER_STEPS"
"$PYTHON" -m inr.experiments.codec --images "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$OUT/inits" \
    --methods siren,siren+init,jpeg,webp,avif --out "$OUT" --estimate-only
"$PYTHON" -m inr.experiments.codec --images "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$OUT/inits" \
    --methods siren,siren+init,jpeg,webp,avif --out "$OUT"
