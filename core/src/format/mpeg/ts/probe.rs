//! Opening a transport stream: the packet size and the first packet, the
//! PAT and every PMT it lists (ISO/IEC 13818-1 §2.4.4.3, §2.4.4.8) within
//! `Limits::probe_bytes`, the codec of undescribed private streams from
//! their first PES, and the start time and duration from the PES time
//! stamps after the tables and in the tail window.

use super::demuxer::{Es, TsDemuxer};
use super::packet::{find_start, TS_PACKET};
use super::psi::{self, PidTracks, MAX_PROGRAMS, MAX_SECTION, TABLE_PAT, TABLE_PMT};
use crate::error::{Error, ErrorKind, Result};
use crate::format::mpeg::pes::parse_pes_header;
use crate::format::mpeg::{split, TAIL_WINDOW};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{Codec, TrackKind};

/// stream_type of PES packets containing private data (Table 2-34), whose
/// codec a descriptor or the payload names.
const PRIVATE_PES: u32 = 0x06;
/// Bytes of a PES start read to name a private stream's codec: the PES
/// header and the first bytes of the payload.
const SNIFF_HEAD: usize = 64;
/// Bytes of a PES start read in the time-stamp scans: the PES header up to
/// the time stamps and the first bytes of an MPEG audio frame.
const SCAN_HEAD: usize = 40;

/// What the table search found.
struct Tables {
    /// The PMT PIDs the PAT lists, and whether each was read.
    pmts: heapless::Vec<(u16, bool), MAX_PROGRAMS>,
    pat_seen: bool,
    /// Where the search stopped.
    at: u64,
}

impl TsDemuxer {
    /// Opens a transport stream (the [`crate::format::traits::FormatDemuxer::open`]
    /// of `mpegts`).
    ///
    /// Errors: `Malformed` when there is no TS sync within
    /// `Limits::resync_bytes`, or no PAT/PMT that describes a stream within
    /// `Limits::probe_bytes`.
    pub(super) fn probe<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let start = find_start(src, ctx.limits.resync_bytes)?.ok_or(Error::malformed(
            0,
            &"mpegts: no sync byte starting five packets in a row (ISO/IEC 13818-1 §2.4.3.2)",
        ))?;
        if !start.confirmed {
            // Fewer than `SYNC_RUN` packets before the end of the input: a
            // longer input could reject this sync (or packet size).
            ctx.diags.report("ts.unconfirmed-sync", start.first);
        }
        if start.first > 0 {
            ctx.diags.report("ts.leading-junk", 0);
        }
        let mut d = TsDemuxer::fresh(start.packet_size, start.prefix, start.first);
        let len = src.len();
        let limit = start.first.saturating_add(ctx.limits.probe_bytes).min(len);
        // The tracks the PMTs describe (a local, not a field of `Tables`:
        // that made the compiler zero 2 KiB at every open).
        let mut tracks = PidTracks::new();
        let t = d.find_tables(src, ctx, limit, &mut tracks)?;
        let at = t.at;
        if !t.pat_seen || t.pmts.iter().any(|p| !p.1) {
            ctx.diags.report("ts.tables-not-found", at);
            if tracks.is_empty() {
                return Err(Error::new(
                    ErrorKind::Malformed,
                    at,
                    &"mpegts: no PAT and PMT within Limits::probe_bytes (ts.tables-not-found; \
                     ISO/IEC 13818-1 §2.4.4.3, §2.4.4.8)",
                ));
            }
        }
        // Private data (stream_type 0x06) with no descriptor that names its
        // codec: ffmpeg probes the payload; look at the first PES of each.
        d.sniff_private(src, ctx, &mut tracks, at, limit)?;
        for (pid, track) in tracks {
            if let Some(track) = ctx.add_track(track, 0) {
                let _ = d.es.push(Es::new(pid, track));
            }
        }
        d.probe_span(src, ctx, at)?;
        for e in d.es.iter_mut() {
            e.hevc = ctx.tracks.get(e.track).is_some_and(|t| t.codec == Codec::Hevc);
        }
        let tracks = &ctx.tracks;
        d.base = split::assign_slots(
            d.es.iter_mut()
                .map(|e| (&mut e.sp, tracks.get(e.track).map(|t| t.codec).unwrap_or_default())),
        );
        Ok(d)
    }

    /// Reads the PAT and then the PMTs it lists from the first packet up to
    /// `limit`, resynchronising after junk as the reading loop does; the
    /// tracks they describe go to `tracks`.
    fn find_tables<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        limit: u64,
        tracks: &mut PidTracks,
    ) -> Result<Tables> {
        let mut t = Tables {
            pmts: heapless::Vec::new(),
            pat_seen: false,
            at: self.first,
        };
        let mut buf = [0u8; MAX_SECTION];
        let len = src.len();
        let packet_size = self.packet_size;
        while t.at + packet_size <= limit || (t.at < limit && t.at + TS_PACKET + self.prefix <= len) {
            let at = t.at;
            let Some(tp) = self.read_packet(src, at)? else {
                match self.resync(src, at + 1, ctx.limits.resync_bytes)? {
                    // As in the reading loop, a sync that only the end of
                    // the input confirms is not taken: a longer input could
                    // reject it, and the tables found after it.
                    Some(n) if self.confirmed(n, len) => {
                        ctx.diags.report("ts.resync", at);
                        t.at = n;
                        continue;
                    }
                    _ => break,
                }
            };
            if tp.pusi && tp.has_payload {
                if tp.pid == 0 && !t.pat_seen {
                    if let Some(n) = psi::read_section(self, src, tp, at, &mut buf, limit)? {
                        let sec = buf.get(..n).unwrap_or(&[]);
                        if sec.first() == Some(&TABLE_PAT) && psi::check_crc(sec, ctx, at) {
                            psi::parse_pat(sec, &mut t.pmts, ctx, at);
                            t.pat_seen = true;
                        }
                    }
                } else if let Some(i) = t.pmts.iter().position(|p| p.0 == tp.pid && !p.1) {
                    if let Some(n) = psi::read_section(self, src, tp, at, &mut buf, limit)? {
                        let sec = buf.get(..n).unwrap_or(&[]);
                        if sec.first() == Some(&TABLE_PMT) && psi::check_crc(sec, ctx, at) {
                            psi::parse_pmt(sec, self, tracks, ctx, at);
                            if let Some(p) = t.pmts.get_mut(i) {
                                p.1 = true;
                            }
                        }
                    }
                }
            }
            if t.pat_seen && !t.pmts.is_empty() && t.pmts.iter().all(|p| p.1) {
                break;
            }
            t.at += packet_size;
        }
        Ok(t)
    }

    /// Identifies undescribed private streams from their first PES payload:
    /// ADTS AAC, AC-3/E-AC-3 or MPEG audio sync words. Reports
    /// `ts.unconfirmed-codec` when the input ends (`limit` is clamped to it) ahead of the
    /// first PES of such a stream: it stays a data track, which a longer input
    /// may identify.
    fn sniff_private<S: Source>(
        &self,
        src: &mut S,
        ctx: &mut Context,
        tracks: &mut PidTracks,
        from: u64,
        limit: u64,
    ) -> Result<()> {
        let mut at = self.first;
        let stop = limit.max(from);
        let undescribed = |t: &crate::types::Track| t.codec_tag == PRIVATE_PES && t.kind == TrackKind::Data;
        let mut left = tracks.iter().filter(|(_, t)| undescribed(t)).count();
        while left > 0 && at + self.prefix + TS_PACKET <= stop.min(src.len()) {
            if let Some(tp) = self.read_packet(src, at)?.filter(|tp| tp.pusi && tp.has_payload) {
                if let Some((_, t)) = tracks.iter_mut().find(|(p, t)| *p == tp.pid && undescribed(t)) {
                    let mut head = [0u8; SNIFF_HEAD];
                    let n = (tp.payload_len as usize).min(SNIFF_HEAD);
                    src.read_exact_at(tp.payload, head.get_mut(..n).unwrap_or(&mut []))?;
                    if let Some(h) = parse_pes_header(head.get(..n).unwrap_or(&[])) {
                        let codec = sniff_codec(head.get(h.header_len..n).unwrap_or(&[]));
                        if codec != Codec::Unknown {
                            t.codec = codec;
                            t.kind = TrackKind::Audio;
                        }
                    }
                    left -= 1;
                }
            }
            at += self.packet_size;
        }
        if left > 0 && stop >= src.len() {
            // A `truncation` find: a prefix cut before the first PES of an
            // undescribed private stream gave a data track where the whole
            // input, with that PES, gave AAC.
            ctx.diags.report("ts.unconfirmed-codec", at);
        }
        Ok(())
    }

    /// Start time and duration: the first time stamps after the tables
    /// (answered from the blocks already read), and the last ones in the
    /// tail window.
    fn probe_span<S: Source>(&mut self, src: &mut S, ctx: &mut Context, tables_end: u64) -> Result<()> {
        let len = src.len();
        let want = self.es.iter().enumerate().fold(0u32, |m, (i, e)| {
            let media = ctx.tracks.get(e.track).is_some_and(|t| t.kind != TrackKind::Data);
            m | ((media as u32) << i)
        });
        let front_end = tables_end.saturating_add(TAIL_WINDOW).min(len);
        let (first_pts, front_last, scanned) = self.scan_pts(src, ctx, self.first, front_end, want)?;
        let grid = |x: u64| self.first + (x.saturating_sub(self.first)).div_ceil(self.packet_size) * self.packet_size;
        let tail = grid(len.saturating_sub(TAIL_WINDOW).max(scanned));
        let (_, tail_last, _) = self.scan_pts(src, ctx, tail, len, 0)?;
        #[cfg(feature = "ts-unwrap")]
        crate::format::mpeg::set_span_unwrapped(ctx, first_pts, front_last.max(tail_last));
        #[cfg(not(feature = "ts-unwrap"))]
        crate::format::mpeg::set_span(ctx, first_pts, front_last.max(tail_last));
        Ok(())
    }

    /// The smallest and largest PTS of the PES that start in `from..to` on
    /// the PIDs in `self.es`, and where the scan stopped: once each PID of
    /// the `want` mask (bits by `self.es` index) has given one, when `want`
    /// is not 0.
    ///
    /// MPEG audio tracks (stream types 3 and 4) are named by the layer of
    /// their first frame there, as ffmpeg names them (mp2 or mp3).
    fn scan_pts<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        from: u64,
        to: u64,
        want: u32,
    ) -> Result<(Option<i64>, Option<i64>, u64)> {
        let (mut lo, mut hi, mut seen) = (None::<i64>, None::<i64>, 0u32);
        let mut at = from;
        while at + self.prefix + TS_PACKET <= to && (want == 0 || seen & want != want) {
            let tp = self.read_packet(src, at)?;
            at += self.packet_size;
            let Some(tp) = tp.filter(|t| t.pusi && t.has_payload) else {
                continue;
            };
            let Some(i) = self.es.iter().position(|e| e.pid == tp.pid) else {
                continue;
            };
            let mut head = [0u8; SCAN_HEAD];
            let n = (tp.payload_len as usize).min(head.len());
            let head = head.get_mut(..n).unwrap_or(&mut []);
            src.read_exact_at(tp.payload, head)?;
            let Some(h) = parse_pes_header(head) else { continue };
            #[cfg(feature = "ts-unwrap")]
            let mut h = h;
            #[cfg(feature = "ts-unwrap")]
            self.unwrap_pes(&mut h);
            let bit = 1u32.checked_shl(i as u32).unwrap_or(0);
            let track = self.es.get(i).and_then(|e| ctx.tracks.get_mut(e.track));
            if let (Some(t), Some(&[0xFF, b, ..])) = (track, head.get(h.header_len..)) {
                if want & bit != 0 && t.codec == Codec::Mp3 && (b >> 1) & 3 == 2 {
                    t.codec = Codec::Mp2;
                }
            }
            if let Some(p) = h.pts {
                lo = Some(lo.map_or(p, |l: i64| l.min(p)));
                hi = hi.max(Some(p));
                seen |= bit;
            }
        }
        Ok((lo, hi, at))
    }
}

/// The codec a private stream's first payload bytes name by their sync
/// word: ADTS AAC (0xFFF, layer 0), AC-3 or E-AC-3 (0x0B77, by bsid above
/// 10), MPEG audio layer III or II (0x7FF); `Unknown` otherwise.
fn sniff_codec(es: &[u8]) -> Codec {
    match es {
        [0xFF, b, ..] if b & 0xF6 == 0xF0 => Codec::Aac,
        [0x0B, 0x77, _, _, _, b5, ..] => {
            if b5 >> 3 > 10 {
                Codec::Eac3
            } else {
                Codec::Ac3
            }
        }
        [0xFF, b, ..] if b & 0xE0 == 0xE0 && (b >> 1) & 3 != 0 => {
            if (b >> 1) & 3 == 1 {
                Codec::Mp3
            } else {
                Codec::Mp2
            }
        }
        _ => Codec::Unknown,
    }
}
