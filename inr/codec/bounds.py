"""Every bound a decoder puts on what a file may ask of it, in one place: the network's size, the image's, the
file's bytes and the work of evaluating the network at every pixel. Plain numbers, importable without torch (the
command's ``--help`` shows one).

A file is small whatever it declares: within the network bounds the worst case is about 17 M parameters (68 MB),
and 105 bytes may name 16 layers of 1024 at 2^26 pixels, about 1.1e15 multiply-adds (``inr.codec.cost``).
"""

# the network a file may ask a decoder to build (``architecture.Architecture.check``)
MAX_WIDTH, MAX_DEPTH = 1024, 16
MAX_HASH_LEVELS, MAX_HASH_LOG2 = 16, 18
MAX_SEED = 2**16 - 1
MAX_NAME = 32  # bytes of the network's name
# the image and the file (``bitstream``)
MAX_SIDE = 16384
MAX_PIXELS = 2**26  # 64 megapixels
MAX_FILE_BYTES = 2**28  # 256 MiB: read no larger file into memory
# A 768×512 photograph through SIREN 4 × 64 is about 4e9 multiply-adds (a second here); 1e12 is a few minutes of
# this CPU's float64 matrix products (≈ 7e9 a second, measured with 2 threads) and 250 times the largest file the
# codec's search writes for such a photograph (``cost.check_decode_work``; ``inr-codec decode --max-work`` raises it).
MAX_DECODE_WORK = 1e12
