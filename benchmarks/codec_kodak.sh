#!/usr/bin/env bash
# The codec's rate–distortion on whole images, meant for the full Kodak set on a GPU (24 images, 768×512 and
# 512×768; COIN's 50,000 steps): learned inits meta-learned on other photographs (e.g. DIV2K's, none of Kodak), then
# SIREN from its random draw and from the learned init beside JPEG, WebP and AVIF at the same rates, in one run.
#
#     benchmarks/codec_kodak.sh KODAK_DIR PHOTOS_DIR [OUT]
#
# KODAK_DIR: the images to code (docs/codec.md says where to get Kodak); PHOTOS_DIR: photographs to learn the inits
# from (at least the images' shorter side on each side). Settings by environment: RATES (bits per pixel,
# default 0.1,0.2,0.3,0.5,1), STEPS (per fit, default 50000), META_STEPS (outer steps per init, default 2000),
# INNER_STEPS (default 10). Fits run where Lightning finds an accelerator (a GPU when there is one). The expected
# time of the comparison is printed before it starts; its results land in OUT (default runs/codec_kodak), and a
# rerun keeps the rows already written.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 KODAK_DIR PHOTOS_DIR [OUT]" >&2
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

"$PYTHON" -m inr.codec learn-init "$PHOTOS" -o "$OUT/inits" --width "$WIDTHS" --resolution "$SIDE" \
    --steps "$META_STEPS" --inner-steps "$INNER_STEPS"
"$PYTHON" -m inr.codec compare "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$OUT/inits" \
    --methods siren,siren+init,jpeg,webp,avif --out "$OUT" --estimate-only
"$PYTHON" -m inr.codec compare "$KODAK" --whole --bpp "$RATES" --steps "$STEPS" --init "$OUT/inits" \
    --methods siren,siren+init,jpeg,webp,avif --out "$OUT"
