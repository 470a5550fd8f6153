#!/usr/bin/env python3
"""Writes the IFF corpus files (EA IFF 85 `FORM` containers), which ffmpeg
can read but not write.

    corpus/iff.py OUTDIR      # writes OUTDIR/iff/*

Pictures after the ILBM specification ("ILBM IFF Interleaved Bitmap",
Commodore-Amiga, 1986: BMHD, CMAP, CAMG, BODY; ByteRun1 compression) and
PBM (Deluxe Paint's chunky variant); sound after "8SVX IFF 8-Bit Sampled
Voice" (Electronic Arts, 1985: VHDR, CHAN, BODY) and its 16-bit sibling
16SV. Deterministic: the pictures are integer patterns, the sounds integer
sine tables, no randomness, no time stamps.
"""
import math
import os
import struct
import sys


def chunk(cid, data):
    """One chunk: id, big-endian size, data, a pad byte when the size is odd
    (EA IFF 85: chunks start at even offsets)."""
    pad = b"\0" if len(data) & 1 else b""
    return cid + struct.pack(">I", len(data)) + data + pad


def form(ftype, chunks):
    body = ftype + b"".join(chunks)
    return b"FORM" + struct.pack(">I", len(body)) + body


def bmhd(w, h, planes, masking=0, compression=0, transparent=0, xasp=1, yasp=1):
    return chunk(b"BMHD", struct.pack(">HHhhBBBBHBBhh", w, h, 0, 0, planes, masking, compression, 0,
                                       transparent, xasp, yasp, w, h))


def cmap(n):
    return chunk(b"CMAP", bytes((i * 37 + c * 85) & 0xFF for i in range(n) for c in range(3)))


def byterun1(row):
    """PackBits (ByteRun1): runs of 3+ equal bytes as repeat codes, the rest
    as literal runs of at most 128 bytes."""
    out = bytearray()
    i = 0
    while i < len(row):
        j = i
        while j + 1 < len(row) and row[j + 1] == row[i] and j - i < 127:
            j += 1
        if j - i >= 2:
            out += bytes([(257 - (j - i + 1)) & 0xFF, row[i]])
            i = j + 1
            continue
        k = i
        while k < len(row) and k - i < 128 and not (k + 2 < len(row) and row[k] == row[k + 1] == row[k + 2]):
            k += 1
        out += bytes([k - i - 1]) + bytes(row[i:k])
        i = k
    return bytes(out)


def planar_rows(w, h, planes):
    """Interleaved bitplanes of a diagonal stripe pattern: per row, each
    plane's row of ceil(w/16)*2 bytes."""
    rowbytes = (w + 15) // 16 * 2
    rows = []
    for y in range(h):
        pix = [((x + y) // 3) % (1 << planes) for x in range(w)]
        for p in range(planes):
            r = bytearray(rowbytes)
            for x in range(w):
                if pix[x] >> p & 1:
                    r[x // 8] |= 0x80 >> (x % 8)
            rows.append(bytes(r))
    return rows


def ilbm(w, h, planes, compress, extra=(), asp=(1, 1), camg=None):
    rows = planar_rows(w, h, planes)
    body = b"".join(byterun1(r) for r in rows) if compress else b"".join(rows)
    chunks = [bmhd(w, h, planes, compression=1 if compress else 0, xasp=asp[0], yasp=asp[1]),
              cmap(1 << min(planes, 8))]
    if camg is not None:
        chunks.append(chunk(b"CAMG", struct.pack(">I", camg)))
    chunks += list(extra)
    chunks.append(chunk(b"BODY", body))
    return form(b"ILBM", chunks)


def pbm(w, h):
    """Chunky 8-bit pixels, rows padded to even widths, ByteRun1 rows."""
    rowlen = w + (w & 1)
    rows = [bytes(((x * 5 + y * 3) % 256) for x in range(rowlen)) for y in range(h)]
    return form(b"PBM ", [bmhd(w, h, 8, compression=1, xasp=10, yasp=11), cmap(256),
                          chunk(b"BODY", b"".join(byterun1(r) for r in rows))])


def sine8(n, freq, rate):
    return bytes((round(100 * math.sin(2 * math.pi * freq * i / rate)) & 0xFF) for i in range(n))


def sine16(n, freq, rate):
    return b"".join(struct.pack(">h", round(12000 * math.sin(2 * math.pi * freq * i / rate))) for i in range(n))


def vhdr(samples, rate, compression=0):
    # oneShotHiSamples, repeatHiSamples, samplesPerHiCycle, samplesPerSec,
    # ctOctave, sCompression, volume (16.16 fixed, 1.0)
    return chunk(b"VHDR", struct.pack(">IIIHBBI", samples, 0, 0, rate, 1, compression, 0x10000))


def svx8(rate, seconds, stereo=False, name=None, odd=False):
    n = int(rate * seconds) + (1 if odd else 0)
    chans = [sine8(n, 440, rate)] + ([sine8(n, 660, rate)] if stereo else [])
    chunks = [vhdr(n, rate)]
    if name:
        chunks.append(chunk(b"NAME", name.encode()))
        chunks.append(chunk(b"AUTH", b"Mediaslice"))
        chunks.append(chunk(b"ANNO", b"made by corpus/iff.py"))
    if stereo:
        chunks.append(chunk(b"CHAN", struct.pack(">I", 6)))
    chunks.append(chunk(b"BODY", b"".join(chans)))
    return form(b"8SVX", chunks)


def sv16(rate, seconds):
    n = int(rate * seconds)
    return form(b"16SV", [vhdr(n, rate), chunk(b"BODY", sine16(n, 440, rate))])


FILES = {
    "ilbm_raw.iff": lambda: ilbm(40, 24, 4, False),
    "ilbm_byterun1.iff": lambda: ilbm(64, 32, 5, True, asp=(10, 11), camg=0x8004),
    "ilbm_ehb.iff": lambda: ilbm(32, 16, 6, True, camg=0x0080),
    "ilbm_ham6.iff": lambda: ilbm(32, 16, 6, False, camg=0x0800),
    "ilbm_24bit.iff": lambda: form(b"ILBM", [bmhd(16, 8, 24), chunk(b"BODY", b"".join(planar_rows(16, 8, 24)))]),
    "pbm.lbm": lambda: pbm(33, 20),
    "ilbm_gray8.iff": lambda: form(b"ILBM", [bmhd(16, 8, 8), chunk(b"BODY", b"".join(planar_rows(16, 8, 8)))]),
    "ilbm_mask.iff": lambda: form(b"ILBM", [bmhd(16, 8, 8, masking=1), cmap(256),
                                            chunk(b"BODY", b"".join(planar_rows(16, 8, 9)))]),
    "acbm.iff": lambda: form(b"ACBM", [bmhd(16, 8, 4), cmap(16), chunk(b"ABIT", bytes(range(64)))]),
    # Impulse true colour: 4-byte (RGB8) and 2-byte (RGBN) pixels whose
    # low bits are a repeat count (compression 4).
    "rgb8.iff": lambda: form(b"RGB8", [bmhd(16, 8, 25, compression=4),
                                       chunk(b"BODY", b"".join(bytes([x * 16, 128, 255 - x * 16, 0x88]) for x in range(16)))]),
    "rgbn.iff": lambda: form(b"RGBN", [bmhd(16, 8, 13, compression=4),
                                       chunk(b"BODY", b"".join(struct.pack(">H", x << 12 | 0x0F08) for x in range(16)))]),
    # TV Paint DEEP: DGBL (size, compression 0, aspect), DPEL (R, G, B of
    # 8 bits), DBOD pixels.
    "deep.iff": lambda: form(b"DEEP", [chunk(b"DGBL", struct.pack(">HHHBB", 16, 8, 0, 10, 11)),
                                       chunk(b"DPEL", bytes([0, 0, 0, 3, 0, 1, 0, 8, 0, 2, 0, 8, 0, 3, 0, 8])),
                                       chunk(b"DBOD", bytes((i * 7) & 0xFF for i in range(16 * 8 * 3)))]),
    "8svx.8svx": lambda: svx8(8000, 0.25, name="Mediaslice tone"),
    # Fibonacci-delta compressed (sCompression 1): made-up delta codes.
    "8svx_fib.8svx": lambda: form(b"8SVX", [vhdr(2000, 8000, 1), chunk(b"BODY", bytes((i * 13) & 0xFF for i in range(1000)))]),
    "8svx_stereo_odd.8svx": lambda: svx8(11025, 0.1, stereo=True, odd=True),
    "16sv.iff": lambda: sv16(8000, 0.2),
}


def main():
    out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "iff")
    os.makedirs(out, exist_ok=True)
    for name, make in FILES.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(make())


if __name__ == "__main__":
    main()
