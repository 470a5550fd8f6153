#!/usr/bin/env python3
"""Writes the Monkey's Audio and Musepack corpus files, which ffmpeg can
read but not write.

    corpus/apempc.py OUTDIR   # writes OUTDIR/ape/*.ape and OUTDIR/mpc/*.mpc

The files are structurally valid containers: real headers (the Monkey's
Audio descriptor and header of versions 3.99 and 3.97, the Musepack SV7
header, the SV8 packets MPCK SH RG EI SO AP ST SE), real seek tables and
frames of plausible sizes, but their payload is made-up bytes (no encoder
for either format exists here). ffprobe -show_packets only demuxes, so
the corpus checks packetization, timestamps, stream facts and tags, not
decoding. Layouts follow Monkey's Audio's MACLib headers (APE_DESCRIPTOR,
APE_HEADER, APE_HEADER_OLD) and the Musepack SV7 / SV8 stream
specifications (musepack.net).

Deterministic: payload bytes come from a fixed linear congruential
generator, so two runs give identical bytes. Cut copies are made by
core/tests/ape_musepack_cuts.rs, which checks them against live ffprobe.
"""
import os
import struct
import sys
import zlib


class Lcg:
    """A fixed byte source (no randomness between runs)."""

    def __init__(self, seed):
        self.x = seed

    def bytes(self, n):
        out = bytearray()
        for _ in range(n):
            self.x = (self.x * 1103515245 + 12345) & 0x7FFFFFFF
            out.append((self.x >> 16) & 0xFF)
        return bytes(out)


def apev2(items):
    """An APEv2 tag (APE tag specification v2.0): header, text items,
    footer."""
    body = b''
    for k, v in items:
        v = v.encode()
        body += struct.pack('<II', len(v), 0) + k.encode() + b'\0' + v
    size = len(body) + 32
    def hf(flags):
        return b'APETAGEX' + struct.pack('<IIII', 2000, size, len(items), flags) + b'\0' * 8
    return hf(0xA0000000) + body + hf(0x80000000)


# ------------------------------------------------------------ Monkey's Audio

def ape_file(name, version, sizes, final_blocks, channels=2, rate=44100, bps=16,
             tag=None, wav_header=44, wav_tail=0, seed=1):
    """A Monkey's Audio file with frames of `sizes` bytes (frame offsets as
    stored in the seek table, so a frame need not start on 4 bytes)."""
    g = Lcg(seed)
    frames = len(sizes)
    if version >= 3980:
        blocks = 73728 * 4
        head_len = 52 + 24
        table_len = 4 * frames
    else:
        blocks = 73728 * 4 if version >= 3950 else 73728
        # APE_HEADER_OLD (32 bytes), peak level (flag 4), seek elements
        # (flag 16).
        head_len = 32 + 4 + 4
        table_len = 4 * frames
    first = head_len + wav_header + table_len
    # Before 3.81: one byte per frame after the seek table (the bits the
    # frame's first word starts with).
    bit_table = bytes((3 * i) % 8 for i in range(frames)) if version < 3810 else b''
    first += len(bit_table)
    offsets = []
    at = first
    for s in sizes:
        offsets.append(at)
        at += s
    audio = sum(sizes)
    wav = b'RIFF' + struct.pack('<I', 36 + 4 * blocks) + b'WAVEfmt ' + struct.pack(
        '<IHHIIHH', 16, 1, channels, rate, rate * channels * bps // 8, channels * bps // 8, bps) + b'data' + \
        struct.pack('<I', 0)
    wav = wav[:wav_header]
    flags = 0
    if bps == 8:
        flags |= 1
    elif bps == 24:
        flags |= 8
    table = b''.join(struct.pack('<I', o) for o in offsets)
    if version >= 3980:
        desc = b'MAC ' + struct.pack('<HHIIIIIII', version, 0, 52, 24, table_len, wav_header, audio, 0, wav_tail)
        desc += zlib.crc32(b'%d' % seed).to_bytes(4, 'little') * 4  # MD5 slot
        head = struct.pack('<HHIIIHHI', 2000, flags, blocks, final_blocks, frames, bps, channels, rate)
        out = desc + head + table + wav
    else:
        flags |= 4 | 16
        head = b'MAC ' + struct.pack('<HHHHIIIII', version, 2000, flags, channels, rate, wav_header, wav_tail,
                                     frames, final_blocks)
        head += struct.pack('<II', 0x1234, frames)  # peak level, seek elements
        out = head + wav + table + bit_table
    assert len(out) == first
    for s in sizes:
        out += g.bytes(s)
    out += g.bytes(wav_tail)
    if tag:
        out += apev2(tag)
    return name, out


def ape_files():
    yield ape_file('ape/stereo_399.ape', 3990, [1203, 990, 1417, 702], 40000,
                   tag=[('Title', 'Mediaslice APE'), ('Artist', 'Mediaslice Artist'), ('Year', '2026')])
    yield ape_file('ape/mono24_399.ape', 3990, [2049, 1500], 12345, channels=1, rate=48000, bps=24, wav_tail=6,
                   seed=2)
    yield ape_file('ape/stereo_397_old.ape', 3970, [800, 1001, 613], 5000, rate=22050, seed=3,
                   tag=[('Album', 'Old Header')])
    yield ape_file('ape/mono8_380_bittable.ape', 3800, [301, 450, 377, 290], 1000, channels=1, rate=8000, bps=8,
                   seed=4)


# ------------------------------------------------------------ Musepack SV7

class Bits:
    """Musepack's bit order: 32-bit little-endian words, each read from its
    most significant bit."""

    def __init__(self):
        self.bits = []

    def put(self, value, n):
        for i in range(n - 1, -1, -1):
            self.bits.append((value >> i) & 1)

    def words(self):
        b = self.bits + [0] * (-len(self.bits) % 32)
        out = bytearray()
        for i in range(0, len(b), 32):
            w = 0
            for bit in b[i:i + 32]:
                w = (w << 1) | bit
            out += struct.pack('<I', w)
        return bytes(out)


def sv7_file(name, frame_bits, rate_index=0, last_frame=700, tag=None, seed=7, version=0x17):
    """An SV7 stream: the 25-byte header (in 32-bit words: `MP+` and the
    version, the frame count, profile/link/rate/band word, the gains, the
    gapless word, the encoder version), then frames of a 20-bit length and
    that many payload bits, packed without gaps."""
    g = Lcg(seed)
    b = Bits()
    out_head = b'MP+' + bytes([version]) + struct.pack('<I', len(frame_bits))
    # Word 2: intensity stereo 0, mid/side 1, max band 26, profile 10,
    # link 1, sample rate index, max level 0x7fff.
    w2 = (0 << 31) | (1 << 30) | (26 << 24) | (10 << 20) | (1 << 18) | (rate_index << 16) | 0x7FFF
    w5 = (1 << 31) | (last_frame << 20)  # true gapless, last frame length
    head_words = struct.pack('<IIIII', w2, 0x40002000, 0x40002000, w5, 0)
    b.put(116, 8)  # encoder version 1.16: the top byte of the 7th word
    for n in frame_bits:
        b.put(n, 20)
        data = g.bytes((n + 7) // 8)
        for i in range(n):
            b.put((data[i // 8] >> (7 - i % 8)) & 1, 1)
    body = b.words()
    # The 7th header word's top byte is the encoder version, which the
    # bit writer put first: the words start at byte 24.
    out = out_head + head_words[:16] + body
    if tag:
        out += apev2(tag)
    return name, out


# ------------------------------------------------------------ Musepack SV8

def varint(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def packet(key, payload):
    """An SV8 packet: 2-byte key, size (key, size field and payload) as a
    variable-length integer."""
    for n in range(1, 10):
        size = 2 + n + len(payload)
        v = varint(size)
        if len(v) == n:
            return key + v + payload
    raise ValueError


def sv8_file(name, ap_sizes, samples, rate_index=0, channels=2, block_pwr=1, tag=None, seed=8, seek=True):
    g = Lcg(seed)
    sh = bytes([8]) + varint(samples) + varint(0) + bytes([(rate_index << 5) | 25, ((channels - 1) << 4) | (1 << 3) | block_pwr])
    sh = zlib.crc32(sh).to_bytes(4, 'big') + sh
    rg = bytes([1]) + struct.pack('>hHhH', 0, 0, 0, 0)
    ei = bytes([(10 << 1) | 0, 1, 1, 1])
    head = b'MPCK' + packet(b'SH', sh) + packet(b'RG', rg) + packet(b'EI', ei)
    aps = b''.join(packet(b'AP', g.bytes(s)) for s in ap_sizes)
    out = head
    if seek:
        # SO holds the offset of ST from the SO packet's start; its size
        # depends on that offset's length: fix it in two passes.
        so_len = len(packet(b'SO', varint(0)))
        for _ in range(3):
            st_at = len(head) + so_len + len(aps)
            so = packet(b'SO', varint(st_at - len(head)))
            so_len = len(so)
        # ST: the entry count, the seek distance power, then two entries
        # (offsets from the byte after MPCK) as variable-length integers,
        # in ffmpeg's bit reader terms (gb_get_v over whole bytes).
        first_ap = len(head) + so_len
        second_ap = first_ap + len(packet(b'AP', b'\0' * ap_sizes[0]))
        st = varint(2) + bytes([0x00]) + varint(first_ap - 4) + varint(second_ap - 4)
        out += so + aps + packet(b'ST', st)
    else:
        out += aps
    out += packet(b'SE', b'')
    if tag:
        out += apev2(tag)
    return name, out


def mpc_files():
    yield sv7_file('mpc/sv7_44100.mpc', [3000, 4097, 2500, 3333, 1200], tag=[('Title', 'Mediaslice SV7')])
    yield sv7_file('mpc/sv7_48000.mpc', [5000, 4000, 6000], rate_index=1, seed=9)
    yield sv8_file('mpc/sv8_stereo.mpc', [700, 913, 650, 820, 300], 4 * 2304 + 1000,
                   tag=[('Title', 'Mediaslice SV8'), ('Artist', 'Mediaslice Artist')])
    yield sv8_file('mpc/sv8_mono_32000.mpc', [400, 380, 390], 3 * 1152 - 100, rate_index=3, channels=1,
                   block_pwr=0, seed=10, seek=False)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else 'files'
    files = list(ape_files()) + list(mpc_files())
    for name, data in files:
        path = os.path.join(outdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
