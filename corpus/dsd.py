#!/usr/bin/env python3
"""Writes the DSD corpus files: DSF (Sony DSF File Format Specification
v1.01) and DSDIFF (Philips DSDIFF File Format Specification v1.5), which
ffmpeg can read but not write.

    corpus/dsd.py OUTDIR      # writes OUTDIR/dsf/*.dsf and OUTDIR/dff/*.dff

Deterministic: the 1-bit signal is a first-order sigma-delta modulation of
one sine per channel (integer arithmetic on a fixed table, no randomness, no
time stamps), so two runs give identical bytes. The DST file carries frames
of made-up bytes (no DST encoder exists here): ffprobe packetizes DST frames
without decoding them, which is all the corpus checks.
"""
import math
import os
import struct
import sys

DSD64 = 2822400


def dsd_bits(n, freq, rate=DSD64):
    """n 1-bit samples of a sine at freq Hz (amplitude 0.5), by a
    first-order sigma-delta modulator."""
    out = bytearray()
    acc = 0.0
    bit = 0
    byte = 0
    for i in range(n):
        x = 0.5 * math.sin(2 * math.pi * freq * i / rate)
        y = 1.0 if acc >= 0 else -1.0
        acc += x - y
        byte = (byte << 1) | (1 if y > 0 else 0)
        bit += 1
        if bit == 8:
            out.append(byte)
            byte = 0
            bit = 0
    if bit:
        out.append(byte << (8 - bit))
    return bytes(out)


def rev(b):
    """Each byte bit-reversed (LSB-first DSD)."""
    return bytes(int(f"{x:08b}"[::-1], 2) for x in b)


def id3v2(title, artist):
    """A small ID3v2.3 tag with TIT2 and TPE1 text frames (ISO-8859-1)."""
    frames = b""
    for fid, text in ((b"TIT2", title), (b"TPE1", artist)):
        body = b"\x00" + text.encode("latin-1")
        frames += fid + struct.pack(">I", len(body)) + b"\x00\x00" + body
    size = len(frames)
    syncsafe = bytes([(size >> 21) & 0x7F, (size >> 14) & 0x7F, (size >> 7) & 0x7F, size & 0x7F])
    return b"ID3\x03\x00\x00" + syncsafe + frames


def dsf(channels, samples, lsb_first, block=4096, tag=None):
    """A DSF file: `samples` 1-bit samples per channel in blocks of `block`
    bytes per channel, the last block zero-padded (DSF spec, data chunk)."""
    chan_type = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 7}[channels]
    per_ch = [dsd_bits(samples, 500 + 250 * c) for c in range(channels)]
    if lsb_first:
        per_ch = [rev(b) for b in per_ch]
    nbytes = (samples + 7) // 8
    nblocks = (nbytes + block - 1) // block
    data = bytearray()
    for k in range(nblocks):
        for c in range(channels):
            part = per_ch[c][k * block:(k + 1) * block]
            data += part + bytes(block - len(part))
    fmt = b"fmt " + struct.pack("<QIIIIIIQII", 52, 1, 0, chan_type, channels, DSD64,
                                1 if lsb_first else 8, samples, block, 0)
    data_chunk = b"data" + struct.pack("<Q", 12 + len(data)) + bytes(data)
    meta = tag or b""
    total = 28 + len(fmt) + len(data_chunk) + len(meta)
    pointer = 28 + len(fmt) + len(data_chunk) if tag else 0
    head = b"DSD " + struct.pack("<QQQ", 28, total, pointer)
    return head + fmt + data_chunk + meta


def chunk(ckid, body):
    """A DSDIFF chunk: ID, 64-bit big-endian size, body, pad to even."""
    return ckid + struct.pack(">Q", len(body)) + body + (b"\x00" if len(body) & 1 else b"")


CHANNEL_IDS = {1: [b"C   "], 2: [b"SLFT", b"SRGT"],
               6: [b"MLFT", b"MRGT", b"C   ", b"LFE ", b"LS  ", b"RS  "]}


def dff_prop(channels, cmpr, name):
    fs = chunk(b"FS  ", struct.pack(">I", DSD64))
    chnl = chunk(b"CHNL", struct.pack(">H", channels) + b"".join(CHANNEL_IDS[channels]))
    pname = bytes([len(name)]) + name + (b"\x00" if (len(name) + 1) & 1 else b"")
    cm = chunk(b"CMPR", cmpr + pname)
    abss = chunk(b"ABSS", struct.pack(">HBBI", 0, 0, 0, 0))
    return chunk(b"PROP", b"SND " + fs + chnl + cm + abss)


def dff(channels, samples):
    """An uncompressed DSDIFF file: bytes interleaved per channel, MSB first
    (DSDIFF 1.5 §3.3)."""
    per_ch = [dsd_bits(samples, 500 + 250 * c) for c in range(channels)]
    data = bytes(b for group in zip(*per_ch) for b in group)
    body = b"DSD " + chunk(b"FVER", struct.pack(">I", 0x01050000)) + \
        dff_prop(channels, b"DSD ", b"not compressed") + chunk(b"DSD ", data)
    return chunk(b"FRM8", body)


def dff_dst(channels, frames):
    """A DST-compressed DSDIFF file (DSDIFF 1.5 §3.4): FRTE, then one DSTF
    chunk per frame (odd sizes too, to check the padding) and a DSTC CRC
    chunk after every frame. The frame bytes are made up."""
    parts = [chunk(b"FRTE", struct.pack(">IH", frames, 75))]
    for i in range(frames):
        size = 300 + 37 * i
        parts.append(chunk(b"DSTF", bytes((i * 7 + j) & 0xFF for j in range(size))))
        parts.append(chunk(b"DSTC", struct.pack(">I", i)))
    body = b"DSD " + chunk(b"FVER", struct.pack(">I", 0x01050000)) + \
        dff_prop(channels, b"DST ", b"DST Encoded") + chunk(b"DST ", b"".join(parts))
    return chunk(b"FRM8", body)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "files")
    files = {
        # Stereo, LSB first, the last of three blocks padded.
        "dsf/stereo_lsbf.dsf": dsf(2, 84672, True),
        # Mono, MSB first, exactly two whole blocks (nothing padded).
        "dsf/mono_msbf.dsf": dsf(1, 2 * 4096 * 8, False),
        # Stereo with an ID3v2 tag at the metadata pointer.
        "dsf/stereo_id3.dsf": dsf(2, 40000, True, tag=id3v2("Mediaslice DSD", "Mediaslice Artist")),
        "dff/stereo.dff": dff(2, 84672),
        "dff/5.1.dff": dff(6, 40000),
        "dff/dst_stereo.dff": dff_dst(2, 6),
    }
    for rel, data in files.items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        print(f"OK    {rel} ({len(data)} bytes)")


if __name__ == "__main__":
    main()
