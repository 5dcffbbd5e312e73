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
# --estimate-only learns the inits for PROBE_STEPS outer steps (default 2) in a scratch folder, scales that time to
# META_STEPS, prints the comparison's own estimate (inr-codec compare --estimate-only) with those inits, and stops.
set -euo pipefail
usage="usage: $0 [--estimate-only] KODAK_DIR PHOTOS_DIR [OUT]"
ESTIMATE_ONLY=0
ARGS=()
for arg in "$@"; do
    case $arg in
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; echo "$usage"; exit 0 ;;
        --estimate-only) ESTIMATE_ONLY=1 ;;
        -*) echo "$0: error: unknown option $arg; $usage" >&2; exit 2 ;;
        *) ARGS+=("$arg") ;;
    esac
done
set -- "${ARGS[@]+"${ARGS[@]}"}"
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "$0: error: $usage" >&2
    exit 2
fi
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
read -r SIDE WIDTHS < <("$PYTHON" -m inr.codec.sizes "$KODAK" --bpp "$RATES")
echo "images' shorter side $SIDE; SIREN widths at $RATES bpp: $WIDTHS"

if [ "$ESTIMATE_ONLY" = 1 ]; then
    PROBE_STEPS=${PROBE_STEPS:-2}
    [ "$PROBE_STEPS" -gt "$META_STEPS" ] && PROBE_STEPS=$META_STEPS
    PROBE=$(mktemp -d)
    trap 'rm -rf "$PROBE"' EXIT
    start=$(date +%s.%N)
    "$PYTHON" -m inr.codec learn-init "$PHOTOS" -o "$PROBE/inits" --width "$WIDTHS" --resolution "$SIDE" \
        --steps "$PROBE_STEPS" --inner-steps "$INNER_STEPS" > /dev/null
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" -v p="$PROBE_STEPS" -v m="$META_STEPS" 'BEGIN { printf "%.0f", (e - s) * m / p }')
    echo "expected time of learning the inits: about $seconds s ($PROBE_STEPS of $META_STEPS outer steps took" \
        "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s, scaled; start-up included)"
    "$PYTHON" -m inr.codec compare "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$PROBE/inits" \
        --methods siren,siren+init,jpeg,webp,avif --out "$PROBE/compare" --estimate-only
    echo "the whole run: both estimates above, one after the other"
    exit 0
fi
"$PYTHON" -m inr.codec learn-init "$PHOTOS" -o "$OUT/inits" --width "$WIDTHS" --resolution "$SIDE" \
    --steps "$META_STEPS" --inner-steps "$INNER_STEPS"
"$PYTHON" -m inr.codec compare "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$OUT/inits" \
    --methods siren,siren+init,jpeg,webp,avif --out "$OUT" --estimate-only
"$PYTHON" -m inr.codec compare "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$OUT/inits" \
    --methods siren,siren+init,jpeg,webp,avif --out "$OUT"
