//! PES assembly (ISO/IEC 13818-1 §2.4.3.6, §2.4.3.7): a completed PES,
//! known by where it started and how many TS packets it has, is read once
//! more: its header from the first TS packet, then its payloads, which stay
//! a slice of the input when they are in one TS packet and are otherwise
//! joined in scratch past the carry slots. Its payload is then handed out
//! as one packet or cut into frames ([`crate::format::mpeg::split`]).

use super::demuxer::TsDemuxer;
use super::packet::{TsPacket, TS_PACKET};
use super::walk::TsWalk;
use crate::error::{Error, ErrorKind, Result};
use crate::format::mpeg::pes::{parse_pes_header, PesHeader};
use crate::format::mpeg::split::{self, Cut};
use crate::format::mpeg::{keyframe_in, KEY_SCAN};
use crate::format::traits::Context;
use crate::pieces::PacketPieces;
use crate::source::Source;
use crate::types::{Codec, Packet, PacketFlags};

/// Bytes of a PES header copied out of its first TS packet: they cover
/// every header with stuffing that fits one TS packet.
const HEAD_COPY: usize = 64;
/// Pieces of a PES found per window of a slice source before they are
/// copied (`TsDemuxer::join`).
const JOIN_BATCH: usize = 32;
/// Bytes of the fixed PES header that PES_packet_length does not count
/// (packet_start_code_prefix, stream_id, PES_packet_length; §2.4.3.7).
pub(super) const PES_FIXED: usize = 6;

/// A PES ready to deliver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Done {
    pub(super) es: usize,
    pub(super) start: u64,
    /// Offset just past the last TS packet to search.
    pub(super) end: u64,
    pub(super) pieces: u32,
    pub(super) bytes: u32,
    /// The input ends inside this PES (flushed at the end of a cut input).
    pub(super) truncated: bool,
    /// H.265: zero bytes at the head of the payload that ffmpeg's parser
    /// gives to the access unit before, and zero bytes to append (those of
    /// the next PES).
    pub(super) skip: u8,
    pub(super) extra: u8,
}

/// A PES ready to hand out: a range of the input or the joined scratch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ready {
    track: usize,
    codec: Codec,
    pts: Option<i64>,
    dts: Option<i64>,
    offset: u64,
    len: usize,
    contiguous: bool,
    truncated: bool,
    /// No whole TS packet follows the PES's last one: the input ends in or
    /// right after it, and a longer input could continue it.
    last: bool,
    /// The payload is left in its TS packets, walked by `TsDemuxer::pieces`.
    pub(super) scattered: bool,
    /// Joined bytes before the payload handed out (a DVB subtitle PES's
    /// data_identifier and subtitle_stream_id).
    #[cfg(feature = "dvb-subtitles")]
    lead: u8,
}

/// A completed PES's header as read from its first TS packet.
struct Head {
    /// The first TS packet.
    first: TsPacket,
    pes: PesHeader,
    /// Bytes of the PES: what its TS packets hold, at most what
    /// PES_packet_length says.
    size: usize,
    /// Bytes before the payload handed out: the PES header and the H.265
    /// zero bytes given to the access unit before.
    skip: usize,
}

/// Hands out a prepared PES payload.
pub(super) fn emit<S: Source>(src: &mut S, r: Ready, base: usize) -> Result<Packet<'_>> {
    let data = if r.contiguous {
        split::input_bytes(src, r.offset, r.len, base)?
    } else {
        #[cfg(feature = "dvb-subtitles")]
        let at = base + r.lead as usize;
        #[cfg(not(feature = "dvb-subtitles"))]
        let at = base;
        S::joined(src, at + r.len)?.get(at..).unwrap_or(&[])
    };
    let packet = if r.contiguous {
        Packet::contiguous(r.track, r.offset, data)
    } else {
        Packet::joined(r.track, Some(r.offset), data)
    };
    let flags = PacketFlags {
        truncated: r.truncated,
        ..PacketFlags::keyframe(crate::format::mpeg::is_keyframe(r.codec, data))
    };
    Ok(packet.with_times(r.pts, r.dts, None).with_flags(flags))
}

/// Hands out a prepared PES payload left in its TS packets: the packet's
/// facts, and `walk` to read its pieces. The keyframe flag is decided from
/// the first piece, or from the first [`KEY_SCAN`] bytes joined in scratch
/// when the first piece does not decide it: the flag
/// [`emit`] gives the same payload joined.
///
/// Errors: a read error; `ScratchTooSmall` when the first piece does not
/// decide the keyframe flag and the scratch cannot hold the bytes that do.
pub(super) fn emit_pieces<'s, S: Source>(
    src: &'s mut S,
    walk: &'s mut TsWalk,
    r: Ready,
    base: usize,
) -> Result<PacketPieces<'s, S>> {
    let keyframe = scattered_keyframe(src, *walk, r.codec, base)?;
    let flags = PacketFlags {
        truncated: r.truncated,
        ..PacketFlags::keyframe(keyframe)
    };
    let packet = Packet::joined(r.track, Some(r.offset), &[])
        .with_times(r.pts, r.dts, None)
        .with_flags(flags);
    Ok(PacketPieces::walk(packet, r.len, src, walk))
}

/// The keyframe flag of a payload in pieces (see [`emit_pieces`]).
fn scattered_keyframe<S: Source>(src: &mut S, mut walk: TsWalk, codec: Codec, base: usize) -> Result<bool> {
    if let Some(k) = keyframe_in(codec, &[]) {
        return Ok(k);
    }
    let Some((off, n)) = walk.next_range(src)? else {
        return Ok(false);
    };
    let first = split::input_bytes(src, off, n.min(KEY_SCAN), base)?;
    if let Some(k) = keyframe_in(codec, first) {
        return Ok(k);
    }
    // Not decided by the first piece: join up to KEY_SCAN bytes (the first
    // piece again, as the source may have served it from elsewhere).
    let mut have = first.len();
    src.gather(off, have, base)?;
    while have < KEY_SCAN {
        let Some((off, n)) = walk.next_range(src)? else { break };
        let n = n.min(KEY_SCAN - have);
        src.gather(off, n, base + have)?;
        have += n;
        let joined = S::joined(src, base + have)?.get(base..).unwrap_or(&[]);
        if let Some(k) = keyframe_in(codec, joined) {
            return Ok(k);
        }
    }
    Ok(false)
}

impl TsDemuxer {
    /// Prepares a completed PES and, when its track is split, starts
    /// cutting it: `Some` when it is to be handed out whole.
    pub(super) fn deliver<S: Source>(&mut self, src: &mut S, ctx: &mut Context, done: Done) -> Result<Option<Ready>> {
        match self.prepare(src, ctx, done)? {
            Some(r) if !self.begin_cut(r) => Ok(Some(r)),
            _ => Ok(None),
        }
    }

    /// Starts cutting `r` into frames when its track is split.
    fn begin_cut(&mut self, r: Ready) -> bool {
        let Some(i) = self.es.iter().position(|e| e.track == r.track) else {
            return false;
        };
        let Some(e) = self.es.get_mut(i).filter(|e| e.sp.kind != split::Kind::None) else {
            return false;
        };
        e.sp.begin(r.pts);
        self.cut = Some(Cut {
            stream: i,
            track: r.track,
            input: r.contiguous.then_some(r.offset),
            at: self.base,
            len: r.len,
            pos: r.offset,
            done: 0,
            last: r.last,
        });
        true
    }

    /// Appends `n` zero bytes to a prepared payload (joining it first when
    /// it is a slice of the input).
    fn append_zeros<S: Source>(&self, src: &mut S, mut r: Ready, n: u8) -> Result<Option<Ready>> {
        #[cfg(feature = "dvb-subtitles")]
        if r.codec == Codec::DvbSub {
            let data = if r.contiguous {
                src.bytes(r.offset, r.len)?
            } else {
                S::joined(src, self.base + r.len)?.get(self.base..).unwrap_or(&[])
            };
            let (lead, len) = dvb_subtitle_segments(data);
            if r.contiguous {
                r.offset += lead as u64;
            } else {
                r.lead = lead;
            }
            r.len = len;
        }
        if n == 0 {
            return Ok(Some(r));
        }
        if r.contiguous {
            src.gather(r.offset, r.len, self.base)?;
            r.contiguous = false;
        }
        src.put(self.base + r.len, [0u8; 4].get(..n as usize).unwrap_or(&[]))?;
        r.len += n as usize;
        Ok(Some(r))
    }

    /// Reads a completed PES's header and, when it spans TS packets, joins
    /// its payloads in scratch. `None` when it holds no usable PES header
    /// (`ts.bad-pes-header`).
    ///
    /// Errors: the input ends early; `ScratchTooSmall` when the PES does not
    /// fit the scratch.
    ///
    /// When the caller takes pieces (`self.scatter`), a PES of a track not
    /// cut into frames is not joined: its walk is left in `self.pieces`.
    fn prepare<S: Source>(&mut self, src: &mut S, ctx: &mut Context, done: Done) -> Result<Option<Ready>> {
        let e = *self.es.get(done.es).ok_or(Error::malformed(
            done.start,
            &"mpegts PES: completed on a stream the PMT did not list (ISO/IEC 13818-1 §2.4.4.8)",
        ))?;
        let Some(head) = self.read_head(src, ctx, done)? else {
            return Ok(None);
        };
        #[cfg(feature = "ts-unwrap")]
        let mut head = head;
        #[cfg(feature = "ts-unwrap")]
        self.unwrap_pes(&mut head.pes);
        let payload_len = head.size - head.skip;
        let mut r = Ready {
            track: e.track,
            codec: ctx.tracks.get(e.track).map(|t| t.codec).unwrap_or_default(),
            pts: head.pes.pts,
            dts: head.pes.dts.or(head.pes.pts),
            offset: head.first.payload + head.skip as u64,
            len: payload_len,
            contiguous: true,
            truncated: done.truncated,
            last: done.end.saturating_add(self.prefix + TS_PACKET) > src.len(),
            scattered: false,
            #[cfg(feature = "dvb-subtitles")]
            lead: 0,
        };
        // The whole PES in one TS packet is a slice of the input. For a
        // track whose PES are split into frames that holds only when the
        // PES is known complete there (its length field says so): a PES
        // that the end of the input (or a PES of unknown length) leaves in
        // one packet is joined in scratch like one spanning packets, so a
        // prefix gives its frames the same offsets and `contiguous` as the
        // whole input does (truncation fuzz, third session of 2 December).
        let length = head.pes.packet_length as usize;
        let complete = length > 0 && done.bytes as usize >= PES_FIXED + length;
        let slice = complete || e.sp.kind == split::Kind::None;
        if slice && (done.pieces == 1 || (head.first.payload_len as usize) >= head.size) {
            return self.append_zeros(src, r, done.extra);
        }
        let walk = self.walk(ctx, e.pid, done, head.skip, payload_len);
        if self.scatter && e.sp.kind == split::Kind::None && done.extra == 0 && !dvb_subtitle(r.codec) {
            self.pieces = walk;
            r.contiguous = false;
            r.scattered = true;
            return Ok(Some(r));
        }
        r.len = self.join(src, walk)?;
        r.contiguous = false;
        self.append_zeros(src, r, done.extra)
    }

    /// The PES header of `done` from its first TS packet, and the PES's
    /// size; `None` (reported `ts.bad-pes-header`) when there is no PES
    /// header or it is longer than the PES or its first TS packet.
    fn read_head<S: Source>(&self, src: &mut S, ctx: &mut Context, done: Done) -> Result<Option<Head>> {
        let first = self.read_packet(src, done.start)?.ok_or(Error::malformed(
            done.start,
            &"mpegts PES: no TS packet sync where it started (ISO/IEC 13818-1 §2.4.3.2)",
        ))?;
        // The PES header, copied out.
        let mut head = [0u8; HEAD_COPY];
        let hn = (first.payload_len as usize).min(HEAD_COPY);
        src.read_exact_at(first.payload, head.get_mut(..hn).unwrap_or(&mut []))?;
        let Some(h) = parse_pes_header(head.get(..hn).unwrap_or(&[])) else {
            ctx.diags.report("ts.bad-pes-header", done.start);
            return Ok(None);
        };
        let mut size = done.bytes as usize;
        if h.packet_length > 0 {
            size = size.min(PES_FIXED + h.packet_length as usize);
        }
        if h.header_len > size || h.header_len > hn {
            ctx.diags.report("ts.bad-pes-header", done.start);
            return Ok(None);
        }
        Ok(Some(Head {
            first,
            pes: h,
            size,
            skip: h.header_len + (done.skip as usize).min(size - h.header_len),
        }))
    }

    /// The walk over the payload of `done` on `pid`: `payload_len` bytes
    /// after the first `skip`, from the TS packet where it started.
    fn walk(&self, ctx: &Context, pid: u16, done: Done, skip: usize, payload_len: usize) -> TsWalk {
        TsWalk {
            pid,
            at: done.start,
            end: done.end,
            pieces: done.pieces,
            skip,
            left: payload_len,
            started: false,
            packet_size: self.packet_size,
            prefix: self.prefix,
            resync_bytes: ctx.limits.resync_bytes,
            base: self.base,
        }
    }

    /// Joins the pieces of `walk` in scratch at `self.base`; returns the
    /// bytes joined. Over a slice source [`TsDemuxer::join_windows`] takes
    /// them first; the rest (junk between packets, any other source) come
    /// one at a time.
    ///
    /// Errors: `ScratchTooSmall` when the PES does not fit the scratch.
    fn join<S: Source>(&self, src: &mut S, mut walk: TsWalk) -> Result<usize> {
        let mut have = if src.is_slice() {
            self.join_windows(src, &mut walk)?
        } else {
            0
        };
        while let Some((off, n)) = walk.next_range(src)? {
            if self.base + have + n > src.scratch_len() {
                return Err(Error::new(
                    ErrorKind::ScratchTooSmall,
                    off,
                    &"mpegts PES: spans TS packets and needs scratch to join them \
                     (SliceSource::with_scratch; ISO/IEC 13818-1 §2.4.3.6)",
                ));
            }
            src.gather(off, n, self.base + have)?;
            have += n;
        }
        Ok(have)
    }

    /// The first part of [`TsDemuxer::join`] over a slice source: the
    /// pieces found [`JOIN_BATCH`] at a time in one window of the input
    /// ([`TsWalk::skim`]), then copied; returns the bytes joined, and
    /// leaves in `walk` what is left (after junk between packets). Nothing
    /// when the scratch may not hold the whole payload: the piece that
    /// does not fit is then reported by `join`'s own loop.
    fn join_windows<S: Source>(&self, src: &mut S, walk: &mut TsWalk) -> Result<usize> {
        if self.base.saturating_add(walk.left) > src.scratch_len() {
            return Ok(0);
        }
        let mut have = 0usize;
        let mut batch = [(0u64, 0usize); JOIN_BATCH];
        loop {
            let k = walk.skim(src, &mut batch);
            for &(off, n) in batch.get(..k).unwrap_or(&[]) {
                src.gather(off, n, self.base + have)?;
                have += n;
            }
            if k < JOIN_BATCH {
                return Ok(have);
            }
        }
    }
}

/// Whether `codec` is DVB subtitles whose PES payloads are trimmed (the
/// `dvb-subtitles` feature); such a PES is always joined, never handed out
/// in pieces.
const fn dvb_subtitle(codec: Codec) -> bool {
    cfg!(feature = "dvb-subtitles") && matches!(codec, Codec::DvbSub)
}

/// The part of a DVB subtitle PES payload that ffprobe gives as the packet
/// (ffmpeg's dvbsub parser): after the data_identifier 0x20 and
/// subtitle_stream_id 0x00, the whole subtitling segments (sync byte 0x0F,
/// type, page_id, 16-bit segment_length; ETSI EN 300 743 §7.1, §7.2) up to
/// the end_of_PES_data_field_marker 0xFF or the first byte that starts no
/// segment. The whole payload when it does not start so or holds no whole
/// segment. `(lead, len)`: bytes before the packet and its length.
#[cfg(any(feature = "dvb-subtitles", test))]
fn dvb_subtitle_segments(p: &[u8]) -> (u8, usize) {
    if p.get(..2) != Some(&[0x20, 0x00][..]) {
        return (0, p.len());
    }
    let mut at = 2usize;
    while p.get(at) == Some(&0x0F) {
        let Some(&[hi, lo]) = p.get(at + 4..at + 6) else { break };
        let next = at + 6 + u16::from_be_bytes([hi, lo]) as usize;
        if next > p.len() {
            break;
        }
        at = next;
    }
    if at == 2 {
        (0, p.len())
    } else {
        (2, at - 2)
    }
}

#[cfg(test)]
mod tests {
    use super::dvb_subtitle_segments;

    #[test]
    fn dvb_subtitle_packets_are_the_whole_segments() {
        // data_identifier, stream id, a page composition segment of 2
        // bytes, an end of display set segment, the end marker.
        let pes = [0x20, 0x00, 0x0F, 0x10, 0, 1, 0, 2, 9, 9, 0x0F, 0x80, 0, 1, 0, 0, 0xFF];
        assert_eq!(dvb_subtitle_segments(&pes), (2, 14));
        // A cut segment ends the packet before it.
        assert_eq!(dvb_subtitle_segments(&pes[..12]), (2, 8));
        // No whole segment, or no DVB subtitle header: the whole payload.
        assert_eq!(dvb_subtitle_segments(&pes[..7]), (0, 7));
        assert_eq!(dvb_subtitle_segments(&pes[2..]), (0, 15));
    }
}
