#!/usr/bin/env bash
# The latent codec on the full Kodak set (24 images, 768×512 and 512×768, coded whole) beside JPEG, WebP, AVIF at
# Pillow's speed 6 and at speed 0, and HEVC intra (HEIF), in one run: one JSON per codec in CompressAI's layout,
# bd.md (BD-rate against AVIF, both averaging conventions) and rd.png, so the curves plot beside Cool-chic's
# published results. Meant for a GPU (the latent codec trains where torch finds one; decoding is on the CPU).
# Every file is kept (OUT/files/) and then decoded again on the CPU alone, in fresh processes at one thread and at
# all (benchmarks/codec_cpu_decode.py): a file encoded on the GPU must decode to the same pixels on any CPU.
#
#     benchmarks/codec_latent_kodak.sh KODAK_DIR [OUT]
#     benchmarks/codec_latent_kodak.sh --estimate-only KODAK_DIR
#
# KODAK_DIR: the 24 Kodak PNGs (docs/codec.md says where to get them). Settings by environment: PRESET (the latent
# codec's, default slow), ANCHORS (default jpeg,webp,avif,avif-slow,heif), STACKED=1 (an image's λ's trained as one
# stacked run, the codec latents[-PRESET]-stacked: the same files up to float rounding, fewer launches on a GPU). The expected time (training steps of the
# preset timed on the first image, times the steps, the λ ladder and the images) is printed before the run starts;
# the results land in OUT (default runs/codec_latent_kodak).
set -euo pipefail
usage="usage: $0 [--estimate-only] KODAK_DIR [OUT]"
# shellcheck source=benchmarks/script_args.sh
source "$(dirname "$0")/script_args.sh"
script_args 1 2 "$@"
set -- "${ARGS[@]+"${ARGS[@]}"}"
KODAK=$1
OUT=${2:-runs/codec_latent_kodak}
PRESET=${PRESET:-slow}
ANCHORS=${ANCHORS:-jpeg,webp,avif,avif-slow,heif}
PYTHON=${PYTHON:-python}
if [ ! -d "$KODAK" ]; then
    echo "$0: error: $KODAK: no such directory" >&2
    exit 2
fi
CODEC=latents
[ "$PRESET" = medium ] || CODEC="latents-$PRESET"
[ "${STACKED:-0}" = 1 ] && CODEC="$CODEC-stacked"

"$PYTHON" -m inr.codec.latent_estimate "$KODAK" --preset "$PRESET"
[ "$ESTIMATE_ONLY" = 1 ] && exit 0
"$PYTHON" -m inr.experiments.rd --images "$KODAK" --whole --codecs "$CODEC,$ANCHORS" --anchor avif --out "$OUT" --keep-files
"$PYTHON" "$(dirname "$0")/codec_cpu_decode.py" "$OUT/files/$CODEC"/*.inr | tee "$OUT/cpu_decode.md"
