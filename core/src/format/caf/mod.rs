//! Apple Core Audio Format (CAF), after Apple's "Core Audio Format
//! Specification 1.0" (2006).
//!
//! A CAF file is the header `caff`, version 1, flags 0, then chunks with a
//! big-endian four-character type and a signed 64-bit size: `desc` (the
//! audio description, first), `data` (an edit count, then the audio; its size
//! may be -1 when it is the last chunk and was never finalised), `pakt` (the
//! packet table for variable-size or variable-duration packets), `kuki` (the
//! codec's magic cookie), `info` (key/value strings) and `chan` (the channel
//! layout).
//!
//! The packet table is never expanded: a cursor walks its variable-length
//! integers (CAF spec §"Packet Table Chunk") in step with the packets, one or
//! two small reads per packet through the source.
//!
//! Packets follow ffmpeg's CAF reader: constant-size packets of one frame
//! (linear PCM, A-law, mu-law) are grouped up to 4096 bytes; other
//! constant-size packets (IMA4) are one packet each; variable packets are the
//! packet table's entries.

use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::big_endian::{F64, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The `desc` chunk: CAFAudioDescription (CAF spec §"Audio Description Chunk").
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct AudioDescription {
    /// mSampleRate.
    pub sample_rate: F64,
    /// mFormatID.
    pub format_id: U32,
    /// mFormatFlags.
    pub format_flags: U32,
    /// mBytesPerPacket (0 = variable).
    pub bytes_per_packet: U32,
    /// mFramesPerPacket (0 = variable).
    pub frames_per_packet: U32,
    /// mChannelsPerFrame.
    pub channels: U32,
    /// mBitsPerChannel.
    pub bits_per_channel: U32,
}

/// The head of the `pakt` chunk: CAFPacketTableHeader.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct PacketTableHeader {
    /// mNumberPackets.
    pub packets: U64,
    /// mNumberValidFrames.
    pub valid_frames: U64,
    /// mPrimingFrames.
    pub priming_frames: U32,
    /// mRemainderFrames.
    pub remainder_frames: U32,
}

/// kCAFLinearPCMFormatFlagIsFloat.
const LPCM_FLOAT: u32 = 1;
/// kCAFLinearPCMFormatFlagIsLittleEndian.
const LPCM_LITTLE_ENDIAN: u32 = 2;
/// ffmpeg's grouping target for one-frame packets.
const PACKET_TARGET: u64 = 4096;
/// Bytes of a packet-table integer that ffmpeg reads (7 bits each).
const VARINT_MAX_BYTES: u32 = 4;

/// Demuxer state for CAF.
#[derive(Debug, Clone)]
pub struct CafDemuxer {
    data_start: u64,
    /// End of the audio data (the file's end when the size is -1).
    data_end: u64,
    /// End of the audio data as the `data` chunk says (beyond `data_end`
    /// when the file is cut short).
    claimed_end: u64,
    /// The file ended inside the last packet delivered.
    cut: bool,
    bytes_per_packet: u32,
    frames_per_packet: u32,
    /// Packet table: first entry byte, end, number of packets.
    pakt: Option<(u64, u64, u64)>,
    info: Option<ByteRange>,
    chan: Option<ByteRange>,
    // Cursor.
    pos: u64,
    frame: u64,
    packet: u64,
    table_at: u64,
}

fn codec_for(format_id: &[u8; 4], flags: u32, bits: u32) -> Codec {
    match format_id {
        b"lpcm" => {
            let le = flags & LPCM_LITTLE_ENDIAN != 0;
            if flags & LPCM_FLOAT != 0 {
                match (bits, le) {
                    (32, false) => Codec::PcmF32Be,
                    (32, true) => Codec::PcmF32Le,
                    (64, false) => Codec::PcmF64Be,
                    (64, true) => Codec::PcmF64Le,
                    _ => Codec::Unknown,
                }
            } else {
                match (bits, le) {
                    (8, _) => Codec::PcmS8,
                    (16, false) => Codec::PcmS16Be,
                    (16, true) => Codec::PcmS16Le,
                    (24, false) => Codec::PcmS24Be,
                    (24, true) => Codec::PcmS24Le,
                    (32, false) => Codec::PcmS32Be,
                    (32, true) => Codec::PcmS32Le,
                    _ => Codec::Unknown,
                }
            }
        }
        b"aac " => Codec::Aac,
        b"alac" => Codec::Alac,
        b"samr" => Codec::AmrNb,
        b"ima4" => Codec::AdpcmImaQt,
        b"ilbc" => Codec::Ilbc,
        b"MAC3" => Codec::Mace3,
        b"MAC6" => Codec::Mace6,
        b".mp1" => Codec::Mp1,
        b".mp2" => Codec::Mp2,
        b".mp3" => Codec::Mp3,
        b"opus" => Codec::Opus,
        b"QDMC" => Codec::Qdmc,
        b"QDM2" => Codec::Qdm2,
        b"Qclp" => Codec::Qcelp,
        b"ulaw" => Codec::PcmMulaw,
        b"alaw" => Codec::PcmAlaw,
        b"flac" => Codec::Flac,
        _ => Codec::Unknown,
    }
}

/// Reads one packet-table integer (7 bits per byte, high bit = more) at
/// `at`, at most [`VARINT_MAX_BYTES`] bytes as ffmpeg does, not past `end`.
/// Returns the value and the offset after it.
fn read_varint<S: Source>(src: &mut S, at: u64, end: u64) -> Result<(u64, u64)> {
    let mut v = 0u64;
    let mut p = at;
    for _ in 0..VARINT_MAX_BYTES {
        if p >= end {
            return Err(Error::malformed(p, "CAF packet table ends inside an entry"));
        }
        let [b] = src.array::<1>(p)?;
        p += 1;
        v = (v << 7) | u64::from(b & 0x7F);
        if b & 0x80 == 0 {
            break;
        }
    }
    Ok((v, p))
}

struct Chunk {
    id: [u8; 4],
    body: u64,
    /// None for a size of -1 (to the end of the file).
    size: Option<u64>,
}

fn read_chunk<S: Source>(src: &mut S, at: u64) -> Result<Chunk> {
    let h: [u8; 12] = src.array(at)?;
    let id = [h[0], h[1], h[2], h[3]];
    let mut s = [0u8; 8];
    s.copy_from_slice(h.get(4..12).unwrap_or(&[0; 8]));
    let size = i64::from_be_bytes(s);
    Ok(Chunk {
        id,
        body: at + 12,
        size: u64::try_from(size).ok(),
    })
}

impl FormatDemuxer for CafDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let head: [u8; 8] = src.array(0)?;
        if head.get(0..4) != Some(b"caff") || head.get(4..6) != Some(&[0, 1]) {
            return Err(Error::malformed(0, "not a CAF file (caff, version 1)"));
        }
        let file_len = src.len();
        let first = read_chunk(src, 8)?;
        if &first.id != b"desc" || first.size != Some(32) {
            return Err(Error::malformed(8, "CAF must start with a 32-byte desc chunk"));
        }
        let b: [u8; 32] = src.array(first.body)?;
        let desc = AudioDescription::read_from_bytes(&b).map_err(|_| Error::malformed(first.body, "desc chunk"))?;
        let rate_f = desc.sample_rate.get();
        if !(rate_f >= 1.0 && rate_f <= u32::MAX as f64) {
            return Err(Error::malformed(
                first.body,
                "desc sample rate is not a positive number",
            ));
        }
        let rate = rate_f as u32;
        let format_id = desc.format_id.get().to_be_bytes();
        let bits = desc.bits_per_channel.get();
        let codec = codec_for(&format_id, desc.format_flags.get(), bits);
        let bytes_per_packet = desc.bytes_per_packet.get();
        let frames_per_packet = desc.frames_per_packet.get();

        let mut at = first.body + 32;
        let mut data: Option<(u64, u64, u64)> = None;
        let mut pakt = None;
        let mut total_frames: Option<u64> = None;
        let mut kuki = None;
        let mut info = None;
        let mut chan = None;
        let mut walked = 0u32;
        while at.saturating_add(12) <= file_len {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                ctx.diags.report("caf.too-many-chunks", at);
                break;
            }
            let c = read_chunk(src, at)?;
            let avail = file_len.saturating_sub(c.body);
            let range = |len: u64| ByteRange {
                offset: c.body,
                len: len.min(avail).min(u32::MAX as u64) as u32,
            };
            match &c.id {
                b"data" => {
                    let start = c.body.saturating_add(4);
                    let end = match c.size {
                        Some(s) => {
                            let e = c.body.saturating_add(s);
                            if e > file_len {
                                ctx.diags.report("caf.data-beyond-eof", c.body);
                            }
                            e.min(file_len)
                        }
                        None => {
                            ctx.diags.report("caf.data-size-unknown", at);
                            file_len
                        }
                    };
                    if data.is_none() {
                        let claimed = c.size.map_or(end, |s| c.body.saturating_add(s).max(end));
                        data = Some((start.min(end), end, claimed));
                    }
                }
                b"pakt" => {
                    let size = c.size.ok_or(Error::malformed(at, "pakt chunk with size -1"))?;
                    if size < 24 {
                        return Err(Error::malformed(c.body, "pakt chunk shorter than its 24-byte header"));
                    }
                    let h: [u8; 24] = src.array(c.body)?;
                    let ph = PacketTableHeader::read_from_bytes(&h).map_err(|_| Error::malformed(c.body, "pakt"))?;
                    let end = c.body.saturating_add(size).min(file_len);
                    pakt = Some((c.body + 24, end, ph.packets.get()));
                    total_frames = Some(
                        ph.valid_frames
                            .get()
                            .saturating_add(u64::from(ph.priming_frames.get()))
                            .saturating_add(u64::from(ph.remainder_frames.get())),
                    );
                }
                b"kuki" => kuki = c.size.map(range),
                b"info" => info = c.size.map(range),
                b"chan" => chan = c.size.map(range),
                _ => {}
            }
            match c.size {
                Some(s) => {
                    let next = c.body.saturating_add(s);
                    if next <= at {
                        break;
                    }
                    at = next;
                }
                None => break,
            }
        }
        let (data_start, data_end, claimed_end) = data.ok_or(Error::malformed(8, "no data chunk"))?;
        let variable = bytes_per_packet == 0 || frames_per_packet == 0;
        if variable && pakt.is_none() {
            return Err(Error::malformed(
                8,
                "variable packets without a pakt chunk (CAF spec: pakt is required)",
            ));
        }
        if codec == Codec::Unknown {
            ctx.diags.report("caf.unknown-format", first.body + 8);
        }
        let data_len = data_end - data_start;
        let duration = if !variable {
            Some((data_len / u64::from(bytes_per_packet)).saturating_mul(u64::from(frames_per_packet)))
        } else {
            total_frames
        };
        let bit_rate = if !variable {
            // Saturating: a hostile `desc` gives rate × bytes per packet × 8
            // past 2^64 (a fuzz find).
            (u64::from(rate)
                .saturating_mul(u64::from(bytes_per_packet))
                .saturating_mul(8)
                / u64::from(frames_per_packet))
            .min(u32::MAX as u64) as u32
        } else {
            0
        };
        let channels = desc.channels.get().min(u32::from(u16::MAX)) as u16;
        let track = Track {
            id: 0,
            kind: TrackKind::Audio,
            codec,
            codec_tag: u32::from_be_bytes(format_id),
            time_base: Rational::new(1, rate),
            duration,
            frames: duration,
            sample_rate: rate,
            channels,
            bits_per_sample: bits.min(u32::from(u16::MAX)) as u16,
            block_align: bytes_per_packet,
            bit_rate,
            config: kuki,
            ..Track::default()
        };
        let tb = track.time_base;
        ctx.add_track(track, first.body);
        ctx.info.duration_us = duration.map(|d| tb.to_micros(d.min(i64::MAX as u64) as i64).max(0) as u64);
        ctx.info.start_us = Some(0);
        Ok(CafDemuxer {
            data_start,
            data_end,
            claimed_end,
            cut: false,
            bytes_per_packet,
            frames_per_packet,
            pakt,
            info,
            chan,
            pos: data_start,
            frame: 0,
            packet: 0,
            table_at: pakt.map(|p| p.0).unwrap_or(0),
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(
                self.data_end,
                "the input ends inside the CAF audio data",
            ));
        }
        if self.pos >= self.data_end {
            if self.claimed_end > self.data_end && self.pos < self.claimed_end {
                self.cut = true;
                return Err(Error::truncated(
                    self.data_end,
                    "the input ends inside the CAF audio data",
                ));
            }
            return Ok(None);
        }
        let left = self.data_end - self.pos;
        // What the data chunk says is left, before the file's end cut it.
        let claimed_left = self.claimed_end.saturating_sub(self.pos);
        let bpp = u64::from(self.bytes_per_packet);
        let (size, frames, next_table) = if bpp > 0 && self.frames_per_packet == 1 {
            let s = (PACKET_TARGET / bpp).max(1).saturating_mul(bpp).min(claimed_left);
            (s, s / bpp, self.table_at)
        } else if let Some((_, end, count)) = self.pakt {
            if self.packet >= count {
                return Ok(None);
            }
            let mut p = self.table_at;
            let size = if bpp > 0 {
                bpp
            } else {
                let (v, n) = read_varint(src, p, end)?;
                p = n;
                v
            };
            let frames = if self.frames_per_packet > 0 {
                u64::from(self.frames_per_packet)
            } else {
                let (v, n) = read_varint(src, p, end)?;
                p = n;
                v
            };
            (size, frames, p)
        } else {
            (bpp, u64::from(self.frames_per_packet), self.table_at)
        };
        if size == 0 || frames == 0 {
            ctx.diags.report("caf.empty-packet", self.table_at);
            return Ok(None);
        }
        let mut truncated = false;
        let (size, frames) = if size <= left {
            (size, frames)
        } else if self.claimed_end > self.data_end && size <= claimed_left {
            // The file ends inside this packet: give what is there, flagged,
            // as ffprobe does; the next call reports the truncation.
            truncated = true;
            self.cut = true;
            (
                left,
                if bpp > 0 && self.frames_per_packet == 1 {
                    left / bpp
                } else {
                    frames
                },
            )
        } else {
            // ffmpeg stops here (EIO).
            return Err(Error::truncated(
                self.data_end,
                "CAF packet extends past the audio data",
            ));
        };
        if size > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(self.pos, "CAF packet larger than Limits::max_packet"));
        }
        let at = self.pos;
        let pts = self.frame.min(i64::MAX as u64) as i64;
        let data = src.bytes(at, size as usize)?;
        self.pos += size;
        self.frame = self.frame.saturating_add(frames);
        self.packet += 1;
        self.table_at = next_table;
        Ok(Some(Packet {
            track: 0,
            pts: Some(pts),
            dts: Some(pts),
            duration: Some(frames),
            flags: PacketFlags {
                keyframe: true,
                truncated,
                ..PacketFlags::default()
            },
            pos: Some(at),
            contiguous: true,
            data,
        }))
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
        self.cut = false;
        let ts = ts.max(0) as u64;
        let bpp = u64::from(self.bytes_per_packet);
        let fpp = u64::from(self.frames_per_packet);
        if bpp > 0 && fpp > 0 {
            // Constant packets; one-frame ones are grouped up to 4096 bytes,
            // so land on the start of the group holding `ts`.
            let group = if fpp == 1 { (PACKET_TARGET / bpp).max(1) } else { 1 };
            let packets = ts / fpp / group * group;
            let off = packets.saturating_mul(bpp).min(self.data_end - self.data_start);
            let packets = off / bpp / group * group;
            self.pos = self.data_start + packets * bpp;
            self.frame = packets.saturating_mul(fpp);
            self.packet = packets;
            return Ok(());
        }
        // Walk the packet table from its start to the packet holding `ts`.
        let Some((first, end, count)) = self.pakt else {
            return Ok(());
        };
        self.pos = self.data_start;
        self.frame = 0;
        self.packet = 0;
        self.table_at = first;
        while self.packet < count && self.pos < self.data_end {
            let mut p = self.table_at;
            let size = if bpp > 0 {
                bpp
            } else {
                let (v, n) = read_varint(src, p, end)?;
                p = n;
                v
            };
            let frames = if fpp > 0 {
                fpp
            } else {
                let (v, n) = read_varint(src, p, end)?;
                p = n;
                v
            };
            if self.frame.saturating_add(frames) > ts || size == 0 || frames == 0 {
                break;
            }
            self.pos = self.pos.saturating_add(size);
            self.frame += frames;
            self.packet += 1;
            self.table_at = p;
        }
        let _ = ctx;
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage == 0 {
            cur.stage = 1;
            if let Some(r) = self.info {
                // mNumEntries (u32), then key\0value\0 pairs.
                cur.offset = r.offset + 4;
                cur.end = r.offset + u64::from(r.len);
            }
        }
        if cur.stage == 1 {
            let limit = u64::from(ctx.limits.max_tag_bytes);
            // Find the two terminating NULs of the next pair.
            let start = cur.offset;
            let mut p = start;
            let mut nuls = 0;
            let mut key_len = 0u64;
            let mut buf = [0u8; 64];
            'scan: while p < cur.end && p - start <= limit {
                let n = src.read_at(p, &mut buf)?;
                if n == 0 {
                    break;
                }
                for &b in buf.get(..n).unwrap_or(&[]) {
                    if p >= cur.end {
                        break 'scan;
                    }
                    p += 1;
                    if b == 0 {
                        nuls += 1;
                        if nuls == 1 {
                            key_len = p - start - 1;
                        } else {
                            break 'scan;
                        }
                    }
                }
            }
            if nuls == 2 {
                cur.offset = p;
                let all = src.bytes(start, (p - start) as usize)?;
                let key = all.get(..key_len as usize).unwrap_or(&[]);
                let value = all.get(key_len as usize + 1..).unwrap_or(&[]);
                let key = core::str::from_utf8(key).unwrap_or("");
                return Ok(Some(Tag {
                    scope: TagScope::Format,
                    key: TagKey::Text(key),
                    name: None,
                    value: text_or_bytes(value),
                }));
            }
            cur.stage = 2;
        }
        if cur.stage == 2 {
            cur.stage = 3;
            if let Some(r) = self.chan {
                if r.len >= 12 {
                    // CAFChannelLayout: mChannelLayoutTag, mChannelBitmap,
                    // mNumberChannelDescriptions, descriptions.
                    let v = src.bytes(r.offset, r.len.min(ctx.limits.max_tag_bytes) as usize)?;
                    return Ok(Some(Tag {
                        scope: TagScope::Track(0),
                        key: TagKey::FourCc(*b"chan"),
                        name: None,
                        value: TagValue::Bytes(v),
                    }));
                }
            }
        }
        Ok(None)
    }

    fn max_packet_size(&self) -> Option<usize> {
        if self.bytes_per_packet > 0 && self.frames_per_packet == 1 {
            let b = u64::from(self.bytes_per_packet);
            return Some(((PACKET_TARGET / b).max(1) * b) as usize);
        }
        if self.bytes_per_packet > 0 {
            return Some(self.bytes_per_packet as usize);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Demuxer, FormatKind, SliceSource};

    struct W<'a> {
        b: &'a mut [u8],
        n: usize,
    }
    impl W<'_> {
        fn put(&mut self, d: &[u8]) {
            self.b[self.n..self.n + d.len()].copy_from_slice(d);
            self.n += d.len();
        }
        fn chunk(&mut self, id: &[u8; 4], size: i64) {
            self.put(id);
            self.put(&size.to_be_bytes());
        }
    }

    fn desc(w: &mut W, id: &[u8; 4], flags: u32, bpp: u32, fpp: u32, ch: u32, bits: u32) {
        w.put(b"caff\0\x01\0\0");
        w.chunk(b"desc", 32);
        w.put(&44100f64.to_be_bytes());
        for v in [u32::from_be_bytes(*id), flags, bpp, fpp, ch, bits] {
            w.put(&v.to_be_bytes());
        }
    }

    #[test]
    fn lpcm_groups_to_4096() {
        let mut b = [0u8; 12000];
        let mut w = W { b: &mut b, n: 0 };
        desc(&mut w, b"lpcm", 2, 4, 1, 2, 16);
        w.chunk(b"info", 4 + 12);
        w.put(&1u32.to_be_bytes());
        w.put(b"title\0hello\0");
        w.chunk(b"data", -1);
        w.put(&[0; 4]);
        w.put(&[7; 5000]);
        let n = w.n;
        let mut d = Demuxer::open(SliceSource::new(&b[..n]), None).unwrap();
        assert_eq!(d.format(), FormatKind::Caf);
        assert_eq!(d.tracks()[0].codec, Codec::PcmS16Le);
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts), (4096, Some(0)));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts), (904, Some(1024)));
        assert!(d.next_packet().unwrap().is_none());
        let t = d.next_tag().unwrap().unwrap();
        assert_eq!(t.key, TagKey::Text("title"));
        assert_eq!(t.value, TagValue::Text("hello"));
        assert!(d.next_tag().unwrap().is_none());
    }

    #[test]
    fn pakt_is_walked_in_place() {
        let mut b = [0u8; 4096];
        let mut w = W { b: &mut b, n: 0 };
        desc(&mut w, b"aac ", 0, 0, 1024, 2, 0);
        w.chunk(b"kuki", 3);
        w.put(&[1, 2, 3]);
        // Three packets: 200, 300 (two-byte varint 0x82 0x2C), 5.
        w.chunk(b"pakt", 24 + 5);
        w.put(&3u64.to_be_bytes());
        w.put(&3072u64.to_be_bytes());
        w.put(&[0; 8]);
        w.put(&[0x81, 0x48, 0x82, 0x2C, 5]);
        w.chunk(b"data", 4 + 504);
        w.put(&[0; 4]);
        w.put(&[1; 504]);
        let n = w.n;
        // The data holds 504 bytes: the third packet (5 bytes) is cut.
        let mut d = Demuxer::open(SliceSource::new(&b[..n]), None).unwrap();
        assert_eq!(d.codec_config(0).unwrap(), &[1, 2, 3]);
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts), (200, Some(0)));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.pts), (300, Some(1024)));
        assert!(d.next_packet().is_err());
        d.seek(0, 1500).unwrap();
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!(p.pts, Some(1024));
    }

    #[test]
    fn cut_files_do_not_panic() {
        let mut b = [0u8; 2048];
        let mut w = W { b: &mut b, n: 0 };
        desc(&mut w, b"ima4", 0, 34, 64, 1, 0);
        w.chunk(b"data", 4 + 34 * 10);
        w.put(&[0; 4]);
        w.put(&[3; 340]);
        let n = w.n;
        for cut in 0..=n {
            if let Ok(mut d) = Demuxer::open(SliceSource::new(&b[..cut]), None) {
                let mut k = 0;
                loop {
                    match d.next_packet() {
                        Ok(Some(p)) => {
                            // Whole blocks, or the cut last one flagged.
                            assert!(p.data.len() == 34 || (p.flags.truncated && p.data.len() < 34));
                            k += 1;
                        }
                        Ok(None) => break,
                        Err(e) => {
                            assert!(e.is_truncation());
                            break;
                        }
                    }
                }
                assert!(k <= 10);
            }
        }
    }
}
