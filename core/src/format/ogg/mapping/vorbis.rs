//! Vorbis in Ogg: the Vorbis I specification §4.2 (identification,
//! comment and setup headers), §4.3.1 (packet durations from the block
//! sizes of the modes) and §A.2 (the granule position is the end sample of
//! the last packet completed on the page), timed as ffmpeg's Vorbis parser
//! and Ogg demuxer do.

use crate::bytes;
use crate::types::{Codec, Rational};

use super::{HeaderOutcome, PacketTiming, PacketView, RestSum, Timing, TrackInfo, NOPTS};

/// The fewest bits left in the setup packet for the backward scan to go on:
/// the packet type and `vorbis` (56 bits) and one mode (41 bits), as
/// ffmpeg's `vorbis_parse_setup_hdr` requires.
const MODE_SCAN_MIN_BITS: usize = 97;
/// Most modes the backward scan counts: the mode count is a 6-bit field plus
/// one (Vorbis I §4.2.4, step 6), so a 65th is not a mode.
const MAX_MODES: u32 = 64;

/// The Vorbis identification header (Vorbis I §4.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VorbisIdHeader {
    /// Channels.
    pub channels: u8,
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Nominal bit rate (may be 0 or negative for "unset").
    pub bitrate_nominal: i32,
    /// The short and long block sizes.
    pub blocksize: [u32; 2],
}

impl VorbisIdHeader {
    /// Parses the 30-byte identification header packet. Returns `None` for
    /// another length, a non-zero version, block sizes outside 64..=8192 or
    /// out of order, or no framing bit (the checks ffmpeg makes).
    pub fn parse(b: &[u8]) -> Option<VorbisIdHeader> {
        if b.len() != 30 || !b.starts_with(b"\x01vorbis") || bytes::le32(b, 7)? != 0 {
            return None;
        }
        let bs = *b.get(28)?;
        let (bs0, bs1) = (bs & 15, bs >> 4);
        if bs0 > bs1 || bs0 < 6 || bs1 > 13 || *b.get(29)? != 1 {
            return None;
        }
        Some(VorbisIdHeader {
            channels: *b.get(11)?,
            sample_rate: bytes::le32(b, 12)?,
            bitrate_nominal: bytes::le32(b, 20)? as i32,
            blocksize: [1 << bs0, 1 << bs1],
        })
    }
}

/// Reads the Vorbis setup header's mode block from its end, as ffmpeg's
/// Vorbis parser (and liboggz) do: the modes (Vorbis I §4.2.4, step 6) are the
/// last fields before the framing bit, each a block flag, two zero 16-bit
/// fields and an 8-bit mapping, preceded by a 6-bit count. `tail` is the
/// last bytes of a packet of `total` bytes. Returns the mode count and a
/// bit per mode that is set for long blocks.
pub fn vorbis_modes(tail: &[u8], total: usize) -> Option<(u8, u64)> {
    // Reading the packet backwards, most significant bit first, reads each
    // field (written least significant bit first) as its value.
    let bits_total = total.checked_mul(8)?;
    let bit = |k: usize| -> Option<u32> {
        let byte = tail.len().checked_sub(1 + k / 8)?;
        Some(((*tail.get(byte)? >> (7 - k % 8)) & 1) as u32)
    };
    let get = |pos: &mut usize, n: u32| -> Option<u32> {
        let mut v = 0;
        for _ in 0..n {
            v = (v << 1) | bit(*pos)?;
            *pos += 1;
        }
        Some(v)
    };
    let mut pos = 0usize;
    let mut framing = None;
    while bits_total.saturating_sub(pos) > MODE_SCAN_MIN_BITS {
        if get(&mut pos, 1)? == 1 {
            framing = Some(pos);
            break;
        }
    }
    let framing = framing?;
    let mut count = 0u32;
    let mut last = 0u32;
    while bits_total.saturating_sub(pos) >= MODE_SCAN_MIN_BITS {
        let Some(mapping) = get(&mut pos, 8) else { break };
        if mapping > 63 {
            break;
        }
        match get(&mut pos, 16) {
            Some(0) => {}
            _ => break,
        }
        match get(&mut pos, 16) {
            Some(0) => {}
            _ => break,
        }
        if get(&mut pos, 1).is_none() {
            break;
        }
        count += 1;
        if count > MAX_MODES {
            break;
        }
        let mut p0 = pos;
        if get(&mut p0, 6).is_some_and(|c| c + 1 == count) {
            last = count;
        }
    }
    if last == 0 || last > 63 {
        return None;
    }
    let mut flags = 0u64;
    let mut pos = framing;
    for i in (0..last).rev() {
        pos += 40;
        if get(&mut pos, 1)? == 1 {
            flags |= 1 << i;
        }
    }
    Some((last as u8, flags))
}

/// The state of ffmpeg's Vorbis packet parser (`av_vorbis_parse_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VorbisState {
    /// Block sizes from the identification header.
    pub blocksize: [u32; 2],
    /// Whether the setup header gave the modes.
    pub valid: bool,
    mode_count: u8,
    mode_long: u64,
    mode_mask: u8,
    prev_mask: u8,
    previous: u32,
    final_pts: i64,
    final_duration: i32,
}

/// A Vorbis packet's kind, as the parser reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VorbisFrame {
    Audio(u32),
    Header,
    Bad,
}

impl VorbisState {
    /// Takes the modes of the setup header.
    pub fn set_modes(&mut self, count: u8, long: u64) {
        self.mode_count = count;
        self.mode_long = long;
        let log2 = 31 - (count.saturating_sub(1) as u32 | 1).leading_zeros();
        let log2 = if count <= 1 { 0 } else { log2 };
        self.mode_mask = (((1u32 << (log2 + 1)) - 1) << 1) as u8;
        self.prev_mask = (self.mode_mask | 1).wrapping_add(1);
        self.valid = true;
        self.previous = self.block((long & 1) as usize);
    }

    fn block(&self, long: usize) -> u32 {
        self.blocksize.get(long).copied().unwrap_or(0)
    }

    fn reset(&mut self) {
        if self.valid {
            self.previous = self.block(0);
        }
    }

    /// The durations of the packets that end at lacing values
    /// `from..to`, each timed from the block size before it (the state
    /// this leaves is the last audio packet's); `None` at a Bad packet.
    fn durations(&mut self, p: &PacketView<'_>, from: usize, to: usize) -> Option<i32> {
        let mut total = 0i32;
        for (i, &s) in p.lacing.get(from..to).unwrap_or(&[]).iter().enumerate() {
            if s < 255 {
                let b0 = p.starts.get(from + i).map_or(0, |b| b[0]);
                match self.frame(b0) {
                    VorbisFrame::Bad => return None,
                    VorbisFrame::Header => {}
                    VorbisFrame::Audio(d) => total = total.wrapping_add(d as i32),
                }
            }
        }
        Some(total)
    }

    /// The duration of a packet from its first byte (Vorbis I §4.3.1).
    fn frame(&mut self, b0: u8) -> VorbisFrame {
        if !self.valid {
            return VorbisFrame::Audio(0);
        }
        if b0 & 1 != 0 {
            return if b0 == 1 || b0 == 3 || b0 == 5 {
                VorbisFrame::Header
            } else {
                VorbisFrame::Bad
            };
        }
        let mode = if self.mode_count == 1 {
            0
        } else {
            (b0 & self.mode_mask) >> 1
        };
        if mode >= self.mode_count {
            return VorbisFrame::Bad;
        }
        let long = (self.mode_long >> mode) & 1 == 1;
        let previous = if long {
            self.block((b0 & self.prev_mask != 0) as usize)
        } else {
            self.previous
        };
        let current = self.block(long as usize);
        self.previous = current;
        VorbisFrame::Audio((previous + current) >> 2)
    }
}

impl VorbisState {
    /// Handles a header packet (Vorbis I §4.2.1: an odd packet type 1, 3
    /// or 5); the first even packet type ends the headers.
    pub(super) fn header(&mut self, head: &[u8], size: u32) -> HeaderOutcome {
        let b0 = head.first().copied().unwrap_or(0);
        let mut out = HeaderOutcome::default();
        if b0 & 1 == 0 {
            out.data = self.valid;
            out.error = !self.valid;
            return out;
        }
        if size < 1 || b0 > 5 {
            out.error = true;
            return out;
        }
        let slot = b0 >> 1;
        out.slot = Some(slot);
        match slot {
            0 => match VorbisIdHeader::parse(head.get(..size.min(30) as usize).unwrap_or(&[])) {
                Some(h) if size == 30 => {
                    self.blocksize = h.blocksize;
                    out.config = Some((0, 30));
                    let mut t = TrackInfo::audio(Codec::Vorbis, h.sample_rate, h.channels as u16);
                    t.bit_rate = h.bitrate_nominal.max(0) as u32;
                    if h.sample_rate == 0 {
                        t.time_base = Rational::new(1, 1_000_000);
                    }
                    out.track = Some(t);
                }
                _ => out.error = true,
            },
            1 => out.comment = Some(7),
            _ => out.needs_setup_tail = true,
        }
        out
    }

    /// The packet step: the first packet's pts from the page granule, the
    /// duration from the modes, and the end trimming of the last page.
    #[inline]
    pub(super) fn packet(&mut self, ts: &mut Timing, p: &PacketView<'_>, rest: &mut RestSum) -> PacketTiming {
        let mut out = PacketTiming::default();
        let eos = p.eos();
        let granule = ts.granule;
        if ts.first_pending() && !eos && (granule as i64) >= 0 && !self.first_pts(ts, p, rest) {
            return out;
        }
        if p.size > 0 {
            match self.frame(p.head[0]) {
                VorbisFrame::Bad => return out,
                VorbisFrame::Header => out.duration = 0,
                VorbisFrame::Audio(d) => out.duration = d,
            }
        }
        if eos {
            if ts.lastpts != NOPTS {
                self.final_pts = ts.lastpts;
                self.final_duration = 0;
            }
            if p.last_on_page() {
                out.duration = granule
                    .wrapping_sub(self.final_pts as u64)
                    .wrapping_sub(self.final_duration as i64 as u64) as u32;
            }
            self.final_duration = self.final_duration.wrapping_add(out.duration as i32);
        }
        out
    }

    /// The first data packet: its pts is the page granule minus the
    /// durations of the packets the page completes from it on. Returns
    /// `false` when the packet is not Vorbis audio (it is then not timed).
    #[inline]
    fn first_pts(&mut self, ts: &mut Timing, p: &PacketView<'_>, rest: &mut RestSum) -> bool {
        let granule = ts.granule;
        self.reset();
        let (d, audio) = match self.frame(p.head[0]) {
            VorbisFrame::Bad => return false,
            VorbisFrame::Header => (0, false),
            VorbisFrame::Audio(d) => (d, true),
        };
        // The durations of the later packets of the page, in the chain
        // that starts from this packet's block size. Kept from the packet
        // timed before on the page when this one is audio (then both
        // chains hold its block size after it); a Bad packet ends the sum
        // (the pts is then 0, as ffmpeg's).
        let after = self.previous;
        let kept = *rest;
        let mut later = None;
        if kept.valid && kept.page == p.page && kept.segp <= p.segp && audio {
            self.previous = kept.state;
            later = self
                .durations(p, kept.segp, p.segp)
                .map(|between| kept.sum.wrapping_sub(between));
            self.previous = after;
        }
        if later.is_none() {
            later = self.durations(p, p.segp, p.lacing.len());
        }
        *rest = RestSum {
            valid: later.is_some(),
            page: p.page,
            segp: p.segp,
            sum: later.unwrap_or(0),
            state: after,
        };
        let duration = match later {
            Some(s) => (d as i32).wrapping_add(s),
            None => granule as i32,
        };
        let pts = granule.wrapping_sub(duration as i64 as u64) as i64;
        ts.set_next(pts);
        if granule == 0 && duration != 0 {
            ts.set_next(NOPTS);
        }
        if ts.start_time == NOPTS {
            ts.start_time = ts.lastpts.max(0);
        }
        self.final_pts = NOPTS;
        self.reset();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes bits least significant first, as Vorbis does.
    struct Writer {
        b: [u8; 64],
        pos: usize,
    }
    impl Writer {
        fn put(&mut self, v: u32, n: u32) {
            for i in 0..n {
                if (v >> i) & 1 == 1 {
                    self.b[self.pos / 8] |= 1 << (self.pos % 8);
                }
                self.pos += 1;
            }
        }
    }

    #[test]
    fn vorbis_modes_from_the_end() {
        // Some filler, then mode count 2 (stored as 1), two modes (short,
        // long), then the framing bit.
        let mut w = Writer { b: [0; 64], pos: 0 };
        for _ in 0..8 {
            w.put(0x5A5A_5A5A, 32);
        }
        w.put(0x0123, 13);
        w.put(1, 6);
        for flag in [0, 1] {
            w.put(flag, 1);
            w.put(0, 16);
            w.put(0, 16);
            w.put(0, 8);
        }
        w.put(1, 1);
        let len = w.pos.div_ceil(8);
        let (count, long) = vorbis_modes(&w.b[..len], len).unwrap();
        assert_eq!((count, long), (2, 0b10));
        let mut v = VorbisState {
            blocksize: [256, 2048],
            ..VorbisState::default()
        };
        v.set_modes(count, long);
        assert_eq!((v.mode_mask, v.prev_mask), (2, 4));
        v.reset();
        // Short after short; long after short (previous flag 0); short
        // after long.
        assert_eq!(v.frame(0x00), VorbisFrame::Audio(128));
        assert_eq!(v.frame(0x02), VorbisFrame::Audio(576));
        assert_eq!(v.frame(0x00), VorbisFrame::Audio(576));
        assert_eq!(v.frame(0x03), VorbisFrame::Header);
        assert_eq!(v.frame(0x05), VorbisFrame::Header);
        assert_eq!(v.frame(0x07), VorbisFrame::Bad);
    }

    /// The sum kept from packet to packet gives every packet of a page the
    /// pts the sum taken afresh gives (as ffmpeg takes it): short and long
    /// blocks with both previous-window flags, a header packet, an empty
    /// packet, 255-byte runs and a packet left open at the page's end; and
    /// a Bad packet ends the sum in both.
    #[test]
    fn the_kept_sum_gives_the_pts_the_sum_taken_afresh_gives() {
        let lacing = [10u8, 0, 255, 20, 1, 7, 255, 255, 3, 40, 9, 12, 255];
        let mut starts = [[0u8; 2]; crate::format::ogg::physical::MAX_SEGMENTS];
        let mut fresh = VorbisState {
            blocksize: [256, 2048],
            ..VorbisState::default()
        };
        fresh.set_modes(2, 0b10);
        for bad in [false, true] {
            // b0: short (0x00), long after short (0x02), long after long
            // (0x06), a header (0x03); 0x07 is Bad.
            let b0s = [
                0x00, 0x02, 0x06, 0x06, 0x00, 0x03, 0x02, 0x00, 0x06, 0x00, 0x00, 0x02, 0x00,
            ];
            for (i, b) in b0s.iter().enumerate() {
                starts[i] = [*b, 0];
            }
            if bad {
                starts[10] = [0x07, 0];
            }
            let view = |segp: usize| PacketView {
                page: 512,
                size: 1,
                head: [
                    starts.get(segp.wrapping_sub(1)).map_or(0, |b| b[0]),
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                    0,
                ],
                page_flags: 0,
                lacing: &lacing,
                segp,
                starts: &starts,
            };
            let mut kept = fresh;
            let mut cache = RestSum::default();
            let mut timed = 0;
            for segp in (1..=lacing.len()).filter(|&e| lacing.get(e - 1).is_some_and(|&s| s < 255)) {
                let p = view(segp);
                let (mut a, mut b) = (
                    Timing {
                        granule: 90_000,
                        ..Timing::default()
                    },
                    Timing {
                        granule: 90_000,
                        ..Timing::default()
                    },
                );
                let mut afresh = fresh;
                let ka = kept.first_pts(&mut a, &p, &mut cache);
                let kb = afresh.first_pts(&mut b, &p, &mut RestSum::default());
                assert_eq!(ka, kb, "segp {segp}");
                assert_eq!(
                    (a.lastpts, a.start_time),
                    (b.lastpts, b.start_time),
                    "bad {bad} segp {segp}"
                );
                timed += usize::from(ka);
            }
            assert!(timed >= 6, "{timed} packets timed");
        }
    }
}
