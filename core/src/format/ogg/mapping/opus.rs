//! Opus in Ogg: RFC 7845 §5.1 (`OpusHead`), §5.2 (`OpusTags`), §4 (the
//! granule position counts 48 kHz samples including the pre-skip; the last
//! page trims the end); packet durations from the TOC byte (RFC 6716 §3.1).

use crate::bytes;
use crate::codec::opus::toc_samples;
use crate::types::Codec;

use super::super::physical::FLAG_BOS;
use super::{head_of, HeaderOutcome, PacketTiming, PacketView, RestSum, Timing, TrackInfo, NOPTS};

/// Granule positions above this are not taken (ffmpeg's `opus_packet`
/// rejects them as implausible: 2^62 samples at 48 kHz are 3 million
/// years).
const MAX_GRANULE: u64 = 1 << 62;

/// The Opus identification header (RFC 7845 §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpusHead {
    /// Version (the major version, the high nibble, must be 0).
    pub version: u8,
    /// Output channel count.
    pub channels: u8,
    /// Samples (at 48 kHz) to discard from the start of the decoded output.
    pub pre_skip: u16,
    /// Sample rate of the original input (informational).
    pub input_sample_rate: u32,
    /// Gain to apply to the output, Q7.8 dB.
    pub output_gain: i16,
    /// Channel mapping family.
    pub mapping_family: u8,
}

impl OpusHead {
    /// Parses an `OpusHead` packet (at least 19 bytes, major version 0).
    pub fn parse(b: &[u8]) -> Option<OpusHead> {
        if b.len() < 19 || !b.starts_with(b"OpusHead") || b.get(8)? & 0xF0 != 0 {
            return None;
        }
        Some(OpusHead {
            version: *b.get(8)?,
            channels: *b.get(9)?,
            pre_skip: bytes::le16(b, 10)?,
            input_sample_rate: bytes::le32(b, 12)?,
            output_gain: bytes::le16(b, 16)? as i16,
            mapping_family: *b.get(18)?,
        })
    }
}

/// Per-stream Opus state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpusState {
    /// Pre-skip from `OpusHead`.
    pub pre_skip: u16,
    /// Whether `OpusTags` is still expected.
    pub need_comments: bool,
    cur_dts: i64,
}

impl OpusState {
    /// Handles a header packet: `OpusHead` on the first page (RFC 7845
    /// §5.1), then `OpusTags` (§5.2); anything after them is data.
    pub(super) fn header(&mut self, head: &[u8], size: u32, page_flags: u8) -> HeaderOutcome {
        let mut out = HeaderOutcome::default();
        if page_flags & FLAG_BOS != 0 {
            match OpusHead::parse(head_of(head, size)) {
                Some(h) if size >= 19 => {
                    self.pre_skip = h.pre_skip;
                    self.need_comments = true;
                    out.slot = Some(0);
                    out.config = Some((0, size));
                    out.track = Some(TrackInfo::audio(Codec::Opus, 48000, h.channels as u16));
                }
                _ => out.error = true,
            }
        } else if self.need_comments {
            if size < 8 || !head.starts_with(b"OpusTags") {
                out.error = true;
            } else {
                self.need_comments = false;
                out.slot = Some(1);
                out.comment = Some(8);
            }
        } else {
            out.data = true;
        }
        out
    }

    /// The packet step: the first packet's pts from the page granule, the
    /// duration from the TOC byte, the pre-skip, and the end trimming of
    /// the last page (RFC 7845 §4).
    #[inline]
    pub(super) fn packet(&mut self, ts: &mut Timing, p: &PacketView<'_>, rest: &mut RestSum) -> PacketTiming {
        let mut out = PacketTiming::default();
        let eos = p.eos();
        let granule = ts.granule;
        if p.size == 0 || granule > MAX_GRANULE {
            out.drop = true;
            return out;
        }
        if ts.first_pending() && !eos {
            let Some(d) = toc_samples(p.head[0], p.head[1], p.size) else {
                return out;
            };
            first_pts(ts, p, d, rest);
        }
        let Some(d) = toc_samples(p.head[0], p.head[1], p.size) else {
            out.drop = true;
            return out;
        };
        out.duration = d;
        if ts.lastpts != NOPTS {
            if ts.start_time == NOPTS {
                ts.start_time = ts.lastpts;
            }
            ts.lastpts = ts.lastpts.wrapping_sub(self.pre_skip as i64);
            ts.lastdts = ts.lastpts;
            self.cur_dts = ts.lastpts;
        }
        self.cur_dts = self.cur_dts.wrapping_add(d as i64);
        if eos {
            let skip = (self.cur_dts as u64)
                .wrapping_sub(granule)
                .wrapping_add(self.pre_skip as u64) as i64;
            let skip = skip.min(d as i64);
            if skip > 0 {
                out.duration = if skip < d as i64 { d - skip as u32 } else { 1 };
            }
        }
        out
    }
}

/// The first data packet, of duration `d`: its pts is the page granule
/// minus the durations of the packets the page completes from it on
/// (their sum kept in `rest` from the packet before on the same page).
#[inline]
fn first_pts(ts: &mut Timing, p: &PacketView<'_>, d: u32, rest: &mut RestSum) {
    let later = match *rest {
        RestSum {
            valid: true,
            page,
            segp,
            sum,
            ..
        } if page == p.page && segp <= p.segp => sum.wrapping_sub(durations(p, segp, p.segp)),
        _ => durations(p, p.segp, p.lacing.len()),
    };
    *rest = RestSum {
        valid: true,
        page: p.page,
        segp: p.segp,
        sum: later,
        state: 0,
    };
    let duration = (d as i32).wrapping_add(later);
    let pts = ts.granule.wrapping_sub(duration as i64 as u64) as i64;
    ts.set_next(pts);
}

/// The durations (48 kHz samples; those above 0) of the packets that end
/// at lacing values `from..to` of the page, `from` being where a packet
/// starts; added with wrapping as ffmpeg's `int` does.
fn durations(p: &PacketView<'_>, from: usize, to: usize) -> i32 {
    let mut total = 0i32;
    let mut run = 0u32;
    for (i, &s) in p.lacing.get(from..to).unwrap_or(&[]).iter().enumerate() {
        run += s as u32;
        if s < 255 && run > 0 {
            let b = p.starts.get(from + i).copied().unwrap_or([0; 2]);
            if let Some(d) = toc_samples(b[0], b[1], run) {
                if d > 0 {
                    total = total.wrapping_add(d as i32);
                }
            }
            run = 0;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opus_head() {
        let mut b = [0u8; 19];
        b[..8].copy_from_slice(b"OpusHead");
        b[8] = 1;
        b[9] = 2;
        b[10..12].copy_from_slice(&312u16.to_le_bytes());
        b[16..18].copy_from_slice(&(-256i16).to_le_bytes());
        let h = OpusHead::parse(&b).unwrap();
        assert_eq!((h.channels, h.pre_skip, h.output_gain), (2, 312, -256));
        b[8] = 0x10;
        assert!(OpusHead::parse(&b).is_none());
    }

    /// The sum kept from packet to packet equals the sum taken afresh for
    /// every packet of a page, as ffmpeg takes it: with empty packets,
    /// packets of 255-byte runs, code 3 packets with and without a count
    /// byte, and a page that ends inside a packet.
    #[test]
    fn the_kept_sum_equals_the_sum_taken_afresh() {
        let lacing = [10u8, 0, 255, 20, 1, 0, 7, 255, 255, 3, 40, 255];
        let mut starts = [[0u8; 2]; crate::format::ogg::physical::MAX_SEGMENTS];
        // TOC bytes: configs 0, 13, 18 and 31 with codes 0 to 3.
        let tocs = [[0x00, 0], [0x69, 0], [0x92, 0], [0xFB, 0x05], [0x03, 0x02], [0x13, 0]];
        for (i, t) in tocs.iter().cycle().take(lacing.len()).enumerate() {
            starts[i] = *t;
        }
        let view = |segp: usize| PacketView {
            page: 4096,
            size: 1,
            head: [0; 16],
            page_flags: 0,
            lacing: &lacing,
            segp,
            starts: &starts,
        };
        // Where packets end: after each lacing value below 255.
        let ends = (1..=lacing.len()).filter(|&e| lacing.get(e - 1).is_some_and(|&s| s < 255));
        let mut kept = RestSum::default();
        for segp in ends {
            let mut ts = Timing {
                granule: 1_000_000,
                ..Timing::default()
            };
            first_pts(&mut ts, &view(segp), 960, &mut kept);
            let afresh = durations(&view(segp), segp, lacing.len());
            assert_eq!(kept.sum, afresh, "segp {segp}");
            assert_eq!(ts.lastpts, 1_000_000 - 960 - i64::from(afresh), "segp {segp}");
        }
        // Another page at the same lacing index is summed afresh.
        let other = PacketView { page: 8192, ..view(4) };
        let mut ts = Timing::default();
        first_pts(&mut ts, &other, 0, &mut kept);
        assert_eq!(kept.sum, durations(&other, 4, lacing.len()));
        assert_eq!(kept.page, 8192);
    }
}
