"""A PNG file checked as a PNG reader would: signature, chunks with their CRCs, IHDR first with
a non-empty image, IDAT data that inflates to the image's rows, IEND last."""

import struct
import zlib
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# bits per pixel by colour type, at 8 bits per sample: grey, RGB, palette, grey + alpha, RGBA
_SAMPLES = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png_size(path) -> tuple:
    """``(width, height)`` of a valid PNG file; AssertionError naming what is wrong otherwise."""
    data = Path(path).read_bytes()
    assert data[:8] == SIGNATURE, f"{path}: not a PNG signature"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        assert pos + 8 <= len(data), f"{path}: truncated chunk header at byte {pos}"
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        assert len(body) == length and pos + 12 + length <= len(data), f"{path}: truncated {kind!r} chunk"
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"{path}: bad CRC in the {kind!r} chunk"
        chunks.append(kind)
        if kind == b"IDAT":
            idat += body
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks, f"{path}: chunks {chunks}"
    assert width > 0 and height > 0, f"{path}: empty image"
    if depth == 8 and colour in _SAMPLES:  # what matplotlib writes: one filter byte per row, then the pixels
        raw = zlib.decompress(idat)
        assert len(raw) == height * (1 + width * _SAMPLES[colour]), f"{path}: pixel data of the wrong size"
    return width, height
