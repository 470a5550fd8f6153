#!/usr/bin/env python3
"""Adds cover art to an Ogg Vorbis or Opus file made by ffmpeg, as Vorbis
comment entries `METADATA_BLOCK_PICTURE=<base64 of a FLAC PICTURE block>`
(RFC 9639 §8.8; the Xiph wiki's VorbisComment page). ffmpeg's Ogg muxer
writes one value per key, so it cannot write two pictures itself.

usage: oggpic.py IN OUT PICTURE... where PICTURE is TYPE:MIME:DESCRIPTION:FILE,
or `bad:TEXT` for an entry whose value is TEXT as given (broken base64);
oggpic.py --base64 PICTURE prints the value alone (for ffmpeg's
`-metadata`, which writes one picture).

The header packets are paged again (the identification packet alone on the
first page, the others after it, granule 0) and the later pages renumbered,
with their CRCs (RFC 3533 §6) computed again.
"""
import base64, struct, sys

def crc(data):
    c = 0
    for b in data:
        c ^= b << 24
        for _ in range(8):
            c = ((c << 1) ^ 0x04C11DB7) & 0xFFFFFFFF if c & 0x80000000 else (c << 1) & 0xFFFFFFFF
    return c

def pages(buf):
    at = 0
    while at < len(buf):
        assert buf[at:at + 4] == b"OggS"
        nseg = buf[at + 26]
        lacing = buf[at + 27:at + 27 + nseg]
        body = at + 27 + nseg
        end = body + sum(lacing)
        yield buf[at:at + 27], list(lacing), buf[body:end]
        at = end

def page(flags, granule, serial, seq, lacing, body):
    h = b"OggS\0" + bytes([flags]) + struct.pack("<qII", granule, serial, seq) + b"\0\0\0\0"
    h += bytes([len(lacing)]) + bytes(lacing)
    p = bytearray(h + body)
    p[22:26] = struct.pack("<I", crc(p))
    return bytes(p)

def paginate(packets):
    segs = []
    for pk in packets:
        n = len(pk)
        vals = [255] * (n // 255) + [n % 255]
        off = 0
        for v in vals:
            segs.append((v, pk[off:off + v]))
            off += v
    res = []
    for i in range(0, len(segs), 255):
        chunk = segs[i:i + 255]
        res.append(([v for v, _ in chunk], b"".join(d for _, d in chunk), i > 0 and segs[i - 1][0] == 255))
    return res

def picture(spec):
    if spec.startswith("bad:"):
        return spec[4:].encode()
    kind, mime, desc, path = spec.split(":", 3)
    data = open(path, "rb").read()
    desc = desc.encode()
    b = struct.pack(">II", int(kind), len(mime)) + mime.encode() + struct.pack(">I", len(desc)) + desc
    b += struct.pack(">IIIII", 0, 0, 0, 0, len(data)) + data
    return base64.b64encode(b)

def main():
    if sys.argv[1] == "--base64":
        print(picture(sys.argv[2]).decode())
        return
    src, dst, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    buf = open(src, "rb").read()
    ps = list(pages(buf))
    serial = struct.unpack("<I", ps[0][0][14:18])[0]
    ident = ps[0][2]
    nheaders = 2 if ident.startswith(b"OpusHead") else 3
    packets, cur, used = [], b"", 0
    for hdr, lacing, body in ps:
        used += 1
        off = 0
        for v in lacing:
            cur += body[off:off + v]
            off += v
            if v < 255:
                packets.append(cur)
                cur = b""
        if len(packets) >= nheaders:
            break
    assert len(packets) == nheaders and cur == b""
    comment = packets[1]
    magic = 8 if nheaders == 2 else 7
    at = magic
    vlen = struct.unpack("<I", comment[at:at + 4])[0]
    at += 4 + vlen
    count = struct.unpack("<I", comment[at:at + 4])[0]
    at += 4
    for _ in range(count):
        at += 4 + struct.unpack("<I", comment[at:at + 4])[0]
    entries = comment[magic + 4 + vlen + 4:at]
    for s in specs:
        e = b"METADATA_BLOCK_PICTURE=" + picture(s)
        entries += struct.pack("<I", len(e)) + e
        count += 1
    new = comment[:magic + 4 + vlen] + struct.pack("<I", count) + entries + comment[at:]
    out = [page(2, 0, serial, 0, [len(ident)], ident)]
    seq = 1
    for lacing, body, cont in paginate([new] + packets[2:]):
        out.append(page(1 if cont else 0, 0, serial, seq, lacing, body))
        seq += 1
    for hdr, lacing, body in ps[used:]:
        flags = hdr[5]
        granule, ser = struct.unpack("<qI", hdr[6:18])
        out.append(page(flags, granule, ser, seq, lacing, body))
        seq += 1
    open(dst, "wb").write(b"".join(out))

main()
