//! The CAF demuxer: opening (`desc`, then the chunk walk), packets from the
//! `data` chunk as ffmpeg's `cafdec.c` cuts them, seeking, and the `info`
//! and `chan` tags.

use super::chunks::{self, AudioDescription, Chunks, Pakt};
use super::pakt;
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{text_or_bytes, Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// ffmpeg's grouping target for one-frame packets.
const PACKET_TARGET: u64 = 4096;
/// Bytes of the `info` chunk's mNumEntries, before its key/value pairs.
const INFO_COUNT: u64 = 4;
/// Bytes of a CAFChannelLayout before its descriptions (layout tag, bitmap,
/// number of descriptions): a shorter `chan` is not given.
const CHAN_MIN: u32 = 12;
/// Bytes read per call while looking for the NULs that end an `info` key
/// and value.
const INFO_SCAN_BLOCK: usize = 64;
/// Tag walk stages ([`TagCursor`] `stage`): not started, in `info`, at
/// `chan`, done.
const STAGE_START: u32 = 0;
const STAGE_INFO: u32 = 1;
const STAGE_CHAN: u32 = 2;
const STAGE_DONE: u32 = 3;
/// The error once the input has ended inside the audio data.
const CUT: &str = "caf data: the input ends inside the audio data (CAF spec, Audio Data chunk)";

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
    /// Packet table.
    pakt: Option<Pakt>,
    info: Option<ByteRange>,
    chan: Option<ByteRange>,
    // Cursor.
    pos: u64,
    frame: u64,
    packet: u64,
    table_at: u64,
}

/// The audio track that `desc` and the chunks describe: `rate` is the
/// sample rate as an integer, `duration` in frames.
fn audio_track(desc: &AudioDescription, rate: u32, duration: Option<u64>, kuki: Option<ByteRange>) -> Track {
    let format_id = desc.format_id.get().to_be_bytes();
    let bits = desc.bits_per_channel.get();
    let bytes_per_packet = desc.bytes_per_packet.get();
    let frames_per_packet = desc.frames_per_packet.get();
    let bit_rate = if bytes_per_packet > 0 && frames_per_packet > 0 {
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
    Track {
        id: 0,
        kind: TrackKind::Audio,
        codec: chunks::codec_for(&format_id, desc.format_flags.get(), bits),
        codec_tag: u32::from_be_bytes(format_id),
        time_base: Rational::new(1, rate),
        duration,
        frames: duration,
        sample_rate: rate,
        channels: desc.channels.get().min(u32::from(u16::MAX)) as u16,
        bits_per_sample: bits.min(u32::from(u16::MAX)) as u16,
        block_align: bytes_per_packet,
        bit_rate,
        config: kuki,
        ..Track::default()
    }
}

impl CafDemuxer {
    /// The size, frames and next table entry of the packet at `self.pos`;
    /// `None` past the last entry of the packet table.
    fn next_entry<S: Source>(&self, src: &mut S) -> Result<Option<(u64, u64, u64)>> {
        // What the data chunk says is left, before the file's end cut it.
        let claimed_left = self.claimed_end.saturating_sub(self.pos);
        let bpp = u64::from(self.bytes_per_packet);
        if bpp > 0 && self.frames_per_packet == 1 {
            let s = (PACKET_TARGET / bpp).max(1).saturating_mul(bpp).min(claimed_left);
            return Ok(Some((s, s / bpp, self.table_at)));
        }
        let Some(p) = self.pakt else {
            return Ok(Some((bpp, u64::from(self.frames_per_packet), self.table_at)));
        };
        if self.packet >= p.packets {
            return Ok(None);
        }
        pakt::entry(src, self.table_at, p.end, bpp, u64::from(self.frames_per_packet)).map(Some)
    }

    /// A packet of `size` bytes and `frames` frames against what is left
    /// of the data: whole; or, where the file ends inside it, what is
    /// there, flagged truncated (as ffprobe gives it; the next call reports
    /// the truncation).
    ///
    /// Errors: `Truncated` when it runs past a `data` chunk that is whole
    /// (ffmpeg stops there, EIO).
    ///
    /// Once per packet, and not generic: `#[inline]` lets it inline into
    /// `next_packet` across crates, as it did as part of it.
    #[inline]
    fn fit(&mut self, size: u64, frames: u64) -> Result<(u64, u64, bool)> {
        let left = self.data_end - self.pos;
        let claimed_left = self.claimed_end.saturating_sub(self.pos);
        if size <= left {
            return Ok((size, frames, false));
        }
        if self.claimed_end > self.data_end && size <= claimed_left {
            self.cut = true;
            let bpp = u64::from(self.bytes_per_packet);
            let frames = if bpp > 0 && self.frames_per_packet == 1 {
                left / bpp
            } else {
                frames
            };
            return Ok((left, frames, true));
        }
        Err(Error::truncated(
            self.data_end,
            &"caf pakt: a packet runs past the end of the data chunk (CAF spec, Packet Table chunk)",
        ))
    }

    /// The next `info` key/value pair from `cur.offset` (CAF spec,
    /// "Information chunk": NUL-terminated strings): its start, key length
    /// and end; `None` when no whole pair is left within `limit` bytes.
    fn next_info_pair<S: Source>(src: &mut S, cur: &TagCursor, limit: u64) -> Result<Option<(u64, u64, u64)>> {
        let start = cur.offset;
        let mut p = start;
        let mut nuls = 0;
        let mut key_len = 0u64;
        let mut buf = [0u8; INFO_SCAN_BLOCK];
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
        Ok((nuls == 2).then_some((start, key_len, p)))
    }
}

impl FormatDemuxer for CafDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let (first, desc) = chunks::read_desc(src)?;
        let rate = desc.rate_hz().unwrap_or(0);
        let bytes_per_packet = desc.bytes_per_packet.get();
        let frames_per_packet = desc.frames_per_packet.get();
        let found: Chunks = chunks::walk_chunks(src, ctx, first.body + chunks::DESC_LEN)?;
        let (data_start, data_end, claimed_end) = found.data.ok_or(Error::malformed(
            chunks::FIRST_CHUNK,
            &"caf: no data chunk (CAF spec, Audio Data chunk)",
        ))?;
        if bytes_per_packet > ctx.limits.max_packet {
            // At mBytesPerPacket.
            return Err(Error::limit(
                first.body + 16,
                &"caf desc: mBytesPerPacket over Limits::max_packet",
            ));
        }
        let variable = bytes_per_packet == 0 || frames_per_packet == 0;
        if variable && found.pakt.is_none() {
            return Err(Error::malformed(
                chunks::FIRST_CHUNK,
                &"caf desc: variable packets without a pakt chunk (CAF spec, Packet Table chunk: required)",
            ));
        }
        let duration = if !variable {
            let data_len = data_end - data_start;
            Some((data_len / u64::from(bytes_per_packet)).saturating_mul(u64::from(frames_per_packet)))
        } else {
            found.total_frames
        };
        let track = audio_track(&desc, rate, duration, found.kuki);
        if track.codec == Codec::Unknown {
            // At mFormatID.
            ctx.diags.report("caf.unknown-format", first.body + 8);
        }
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
            pakt: found.pakt,
            info: found.info,
            chan: found.chan,
            pos: data_start,
            frame: 0,
            packet: 0,
            table_at: found.pakt.map(|p| p.first).unwrap_or(0),
        })
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(self.data_end, &CUT));
        }
        if self.pos >= self.data_end {
            if self.claimed_end > self.data_end && self.pos < self.claimed_end {
                self.cut = true;
                return Err(Error::truncated(self.data_end, &CUT));
            }
            return Ok(None);
        }
        let Some((size, frames, next_table)) = self.next_entry(src)? else {
            return Ok(None);
        };
        if size == 0 || frames == 0 {
            if self.packet == 0 && self.pos < self.data_end {
                // Data, but not one whole packet of it: an error, not an
                // empty success.
                return Err(Error::malformed(
                    self.pos,
                    &"caf data: less than one packet (CAF spec, desc)",
                ));
            }
            ctx.diags.report("caf.empty-packet", self.table_at);
            return Ok(None);
        }
        let (size, frames, truncated) = self.fit(size, frames)?;
        if size > u64::from(ctx.limits.max_packet) {
            return Err(Error::limit(
                self.pos,
                &"caf data: packet larger than Limits::max_packet",
            ));
        }
        let at = self.pos;
        let pts = self.frame.min(i64::MAX as u64) as i64;
        let data = src.bytes(at, size as usize)?;
        self.pos += size;
        self.frame = self.frame.saturating_add(frames);
        self.packet += 1;
        self.table_at = next_table;
        let flags = PacketFlags {
            truncated,
            ..PacketFlags::keyframe(true)
        };
        Ok(Some(
            Packet::contiguous(0, at, data)
                .with_times(Some(pts), Some(pts), Some(frames))
                .with_flags(flags),
        ))
    }

    fn seek<S: Source>(&mut self, src: &mut S, _ctx: &mut Context, _track: usize, ts: i64) -> Result<()> {
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
        let Some(table) = self.pakt else {
            return Ok(());
        };
        self.pos = self.data_start;
        self.frame = 0;
        self.packet = 0;
        self.table_at = table.first;
        while self.packet < table.packets && self.pos < self.data_end {
            let (size, frames, next) = pakt::entry(src, self.table_at, table.end, bpp, fpp)?;
            if self.frame.saturating_add(frames) > ts || size == 0 || frames == 0 {
                break;
            }
            self.pos = self.pos.saturating_add(size);
            self.frame += frames;
            self.packet += 1;
            self.table_at = next;
        }
        Ok(())
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        if cur.stage == STAGE_START {
            cur.stage = STAGE_INFO;
            if let Some(r) = self.info {
                // mNumEntries (u32), then key\0value\0 pairs.
                cur.offset = r.offset + INFO_COUNT;
                cur.end = r.offset + u64::from(r.len);
            }
        }
        if cur.stage == STAGE_INFO {
            let limit = u64::from(ctx.limits.max_tag_bytes);
            if let Some((start, key_len, end)) = Self::next_info_pair(src, cur, limit)? {
                cur.offset = end;
                let all = src.bytes(start, (end - start) as usize)?;
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
            cur.stage = STAGE_CHAN;
        }
        if cur.stage == STAGE_CHAN {
            cur.stage = STAGE_DONE;
            if let Some(r) = self.chan.filter(|r| r.len >= CHAN_MIN) {
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
        Ok(None)
    }

    /// Never more than the data chunk holds: scratch is not sized by a
    /// declared field beyond what the input can hold.
    fn max_packet_size(&self) -> Option<usize> {
        let data = self.claimed_end.saturating_sub(self.data_start);
        let b = u64::from(self.bytes_per_packet);
        let size = match (b, self.frames_per_packet) {
            (0, _) => return None,
            (_, 1) => (PACKET_TARGET / b).max(1) * b,
            _ => b,
        };
        usize::try_from(size.min(data)).ok()
    }
}
