//! The MPEG transport stream muxer ([`crate::MuxFormat::Ts`]; ISO/IEC
//! 13818-1 §2.4), written as ffmpeg's `mpegts` muxer writes `-c copy`
//! output, with no copy of the payload and fixed state.
//!
//! Layout written:
//!
//! ```text
//! SDT (PID 0x11)                     at the start, then before the first
//!                                    PAT/PMT 500 ms after the last
//! PAT (PID 0)  PMT (PID 0x1000)      at the start, again before each video
//!                                    keyframe and every 100 ms
//! PES packets, one per packet        PID 0x100 + track index, cut into
//!                                    188-byte TS packets (packets.rs)
//! ```
//!
//! * **Program**: one, number 1, PMT on PID 0x1000, transport_stream_id 1
//!   (psi.rs). The PCR PID is the first video track's, else the first
//!   track's.
//! * **Service** (EN 300 468 §5.2.3 SDT, psi.rs): one service, number 1,
//!   with a service_descriptor: digital television with video, else
//!   digital radio; provider "mediaslice"; the name from the `title` tag
//!   ([`crate::Muxer::add_tag`]), else "Service01" as ffmpeg's muxer.
//!   Written before the PAT at the start, then right before the first
//!   PAT/PMT whose packet time is 500 ms or more past the last SDT's
//!   (ffmpeg's `sdt_period`; ETSI TR 101 290 §5.2.3 asks at most 2 s
//!   between two SDT sections): at most 600 ms apart, and never without
//!   the tables after it.
//! * **PES** (pes.rs): one per packet; stream_id 0xE0 video, 0xC0 MPEG
//!   audio and AAC, 0xBD AC-3/E-AC-3; PTS always, DTS when it differs;
//!   PES_packet_length 0 for video. The last TS packet of a PES is filled
//!   with adaptation-field stuffing.
//! * **Times**: each packet's times rescaled to 90 kHz
//!   ([`crate::types::rescale_q`], rounding to nearest) and moved by
//!   [`START_OFFSET`] (1.4 s, where ffmpeg's muxer starts), plus the first
//!   packet's negative decode time when it has one, so that no time is
//!   below 0. A later packet still before 0 is refused. Times wrap at 2^33
//!   (26.5 hours) as the field does (§2.4.3.7), and so does the PCR base
//!   (§2.4.3.5, the same 90 kHz clock): all comparisons of times (the
//!   PCR's "never backwards", the 40 ms, 100 ms and 500 ms periods) are
//!   modulo 2^33, a time up to 2^32 ticks (13 hours) behind another being
//!   before it, so an output over 26.5 hours stays valid. A packet with no time (a raw
//!   elementary stream) gets the previous packet's time plus its duration
//!   as its PTS, decode order, as ffmpeg does for a stream without
//!   reordering (0 for the first).
//! * **PCR** (§2.4.3.5): in the adaptation field of the first TS packet of
//!   every PES of the PCR PID; before a packet of another track whose time
//!   is 40 ms or more past the last PCR, packets of their own (adaptation
//!   field only) with PCRs 40 ms apart up to that time (one at its time
//!   past a gap of 320 ms). So PCRs are at most 40 ms apart (ETSI TR 101
//!   290's bound; §2.7.2 asks 100 ms) while any track has a packet every
//!   40 ms, else one frame of the PCR track. The clock is each packet's
//!   decode time less [`PCR_LEAD`] (0.7 s, ffmpeg's default `max_delay`),
//!   modulo 2^33, never going backwards (modulo 2^33); there is no mux rate (a variable-rate stream,
//!   as ffmpeg writes without `-muxrate`).
//! * **Random access**: the random_access_indicator is set on the first
//!   TS packet of every keyframe (every audio packet), as ffmpeg does.
//! * **Bitstreams**: H.264/H.265 from length-prefixed samples (an avcC or
//!   hvcC config) become Annex B with the parameter sets inserted before
//!   keyframes ([`crate::codec::convert::to_annexb::ToAnnexB`], ffmpeg's
//!   `h264_mp4toannexb`/`hevc_mp4toannexb`); Annex B input is written as it
//!   is. Before an access unit that does not begin with an access unit
//!   delimiter one is written (`00 00 00 01 09 F0` H.264,
//!   `00 00 00 01 46 01 50` H.265), as ffmpeg's muxer does. Raw AAC (an
//!   AudioSpecificConfig) gets a 7-byte ADTS header before each frame
//!   (`codec::convert::to_adts`); ADTS input, MPEG audio, AC-3 and E-AC-3 are written as they
//!   are. MPEG-4 Part 2 whose headers (VOS, VOL) are in its configuration
//!   (an MP4 `esds`) gets them before each keyframe that starts without
//!   one: a TS reader has only the stream.
//!
//! Nothing is patched and nothing is held back: the muxer writes to a
//! stream. Its state is a few bytes a track ([`crate::limits::MAX_TRACKS`]).

mod packets;
mod pes;
mod psi;

use self::packets::{write_pcr_only, write_section, FirstPacket, PesWriter};
use self::pes::{carriage, is_video, pes_header};
use self::psi::{PmtStream, DEFAULT_PROVIDER, DEFAULT_SERVICE_NAME, MAX_SECTION, PAT_PID, PMT_PID, SDT_PID};
use crate::codec::adts::AdtsHeader;
use crate::codec::convert::to_adts::AdtsFromConfig;
use crate::codec::convert::to_annexb::{AnnexBState, ToAnnexB};
use crate::codec::convert::NalCodec;
use crate::error::{Error, ErrorKind, Result};
use crate::format::mux_traits::{FormatMuxer, MuxContext, TrackSpec};
use crate::limits::MAX_TRACKS;
use crate::sink::Sink;
use crate::types::{rescale_q, Codec, Packet, Rational};

/// Where times start: 1.4 s in 90 kHz, as in ffmpeg's output.
pub const START_OFFSET: i64 = 126_000;
/// How far the PCR runs ahead of the decode times: 0.7 s in 90 kHz.
pub const PCR_LEAD: i64 = 63_000;
/// Most time between two PCRs before a PCR-only packet: 40 ms in 90 kHz.
const PCR_EVERY: i64 = 3_600;
/// Most clock time filled with PCR-only packets 40 ms apart before a
/// packet: 320 ms (8 packets); a longer gap gets one PCR at its end.
const MAX_CATCH_UP: i64 = 8 * PCR_EVERY;
/// PAT/PMT repetition: 100 ms in 90 kHz (ffmpeg's `pat_period`).
const PSI_EVERY: i64 = 9_000;
/// SDT repetition: 500 ms in 90 kHz (ffmpeg's `sdt_period`).
const SDT_EVERY: i64 = 45_000;
/// The first elementary stream PID; track `i` is on `FIRST_PID + i`.
pub const FIRST_PID: u16 = 0x100;
/// 2^33: the range of PTS, DTS and PCR base.
const WRAP: i64 = 1 << 33;

/// How far the 90 kHz time `a` is after `b`, modulo 2^33: in
/// `-2^32..2^32`, negative when `a` is before `b` (a time across a wrap
/// is after the times just before it).
fn ahead(a: u64, b: u64) -> i64 {
    let d = (a as i64 - b as i64).rem_euclid(WRAP);
    if d >= WRAP / 2 {
        d - WRAP
    } else {
        d
    }
}

/// How a track's packets become PES payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Written as they are.
    AsIs,
    /// H.264/H.265 Annex B: an access unit delimiter first when missing.
    AnnexB(NalCodec),
    /// H.264/H.265 length-prefixed (avcC/hvcC): converted to Annex B,
    /// with the converter's state between packets.
    LengthPrefixed(NalCodec, AnnexBState),
    /// Raw AAC: an ADTS header before each frame.
    Adts(AdtsFromConfig),
    /// MPEG-4 Part 2 with its VOS/VOL headers in the configuration: they
    /// go before each keyframe that does not bring its own.
    Mpeg4Headers,
}

/// Per-track state.
#[derive(Debug, Clone, Copy)]
struct StreamOut {
    pid: u16,
    stream_type: u8,
    stream_id: u8,
    video: bool,
    framing: Framing,
    /// Continuity counter of the next packet with payload.
    cc: u8,
    /// The ISO 639 language of an audio track (3 letters, not `und`).
    language: Option<[u8; 3]>,
    /// The shifted 90 kHz time after the last packet (its time plus its
    /// duration), for a packet with no time.
    next: Option<u64>,
}

/// The transport stream muxer's state.
#[derive(Debug, Clone, Default)]
pub struct TsMuxer {
    streams: heapless::Vec<StreamOut, MAX_TRACKS>,
    pat_cc: u8,
    pmt_cc: u8,
    /// Index of the track whose PID carries the PCR.
    pcr_track: usize,
    /// Added to every 90 kHz time; set by the first packet.
    shift: Option<i64>,
    /// The last PCR written (90 kHz base).
    last_pcr: Option<u64>,
    /// The packet time (90 kHz) the last PAT/PMT counts for; `None`
    /// before the first packet.
    last_psi: Option<i64>,
    /// A PAT/PMT was just written (no PES since).
    psi_fresh: bool,
    /// The SDT section, built by `write_header` (the tags are known then).
    sdt: heapless::Vec<u8, MAX_SECTION>,
    sdt_cc: u8,
    /// The packet time (90 kHz) of the last SDT; `None` before the first
    /// packet with a time.
    last_sdt: Option<u64>,
}

/// The access unit delimiter ffmpeg's muxer writes before an access unit
/// without one: H.264 primary_pic_type 7 (any slice), H.265 type 35 with
/// pic_type 2.
fn aud(codec: NalCodec) -> &'static [u8] {
    match codec {
        NalCodec::H264 => &[0, 0, 0, 1, 0x09, 0xF0],
        NalCodec::H265 => &[0, 0, 0, 1, 0x46, 0x01, 0x50],
    }
}

/// Whether the NAL unit starting with byte `b` is an access unit
/// delimiter.
fn is_aud(codec: NalCodec, b: u8) -> bool {
    match codec {
        NalCodec::H264 => b & 0x1F == 9,
        NalCodec::H265 => (b >> 1) & 0x3F == 35,
    }
}

/// The first NAL unit header byte of an Annex B access unit.
fn first_annexb_nal(data: &[u8]) -> Option<u8> {
    let at = crate::codec::annexb::find_start_code(data, 0)?;
    data.get(at + 3).copied()
}

impl TsMuxer {
    /// Writes the SDT built by `write_header`.
    fn write_sdt<K: Sink>(&mut self, sink: &mut K) -> Result<()> {
        write_section(sink, SDT_PID, &mut self.sdt_cc, &self.sdt)
    }

    /// Writes the PAT and the PMT.
    fn write_psi<K: Sink>(&mut self, sink: &mut K) -> Result<()> {
        let mut buf = [0u8; MAX_SECTION];
        let n = psi::pat(&mut buf)?;
        write_section(sink, PAT_PID, &mut self.pat_cc, buf.get(..n).unwrap_or(&[]))?;
        let mut list = heapless::Vec::<PmtStream, MAX_TRACKS>::new();
        for s in &self.streams {
            let _ = list.push(PmtStream {
                stream_type: s.stream_type,
                pid: s.pid,
                language: s.language,
            });
        }
        let pcr_pid = self.streams.get(self.pcr_track).map_or(FIRST_PID, |s| s.pid);
        // Many tracks with languages may not fit one packet: then none.
        let n = match psi::pmt(&mut buf, pcr_pid, &list) {
            Ok(n) => n,
            Err(_) => {
                list.iter_mut().for_each(|s| s.language = None);
                psi::pmt(&mut buf, pcr_pid, &list)?
            }
        };
        write_section(sink, PMT_PID, &mut self.pmt_cc, buf.get(..n).unwrap_or(&[]))?;
        self.psi_fresh = true;
        Ok(())
    }

    /// Before the PES of a packet of track `i` at time `now`: the PAT/PMT
    /// when due, PCR-only packets when the PCR is 40 ms old (another
    /// track's packet); gives the PCR the PES carries (track `i` is the
    /// PCR track).
    fn psi_and_pcr<K: Sink>(
        &mut self,
        sink: &mut K,
        i: usize,
        video: bool,
        keyframe: bool,
        now: Option<u64>,
    ) -> Result<Option<u64>> {
        // PAT/PMT before each video keyframe, and every 100 ms of packet
        // time (ffmpeg's `pat_period`; ETSI TR 101 290 §5.2.1 wants them
        // at most 0.5 s apart, so a receiver that tunes in finds the
        // program between two keyframes too).
        let has_video = self.streams.iter().any(|v| v.video);
        let psi_due = match (video && keyframe, has_video, now, self.last_psi) {
            (true, _, _, _) => true,
            (false, _, Some(n), Some(last)) => (n as i64 - last).rem_euclid(WRAP) >= PSI_EVERY,
            (false, false, Some(_), None) => !self.psi_fresh,
            _ => false,
        };
        if psi_due && !self.psi_fresh {
            // The SDT with the PAT/PMT once 500 ms of packet time have
            // passed since the last (ffmpeg's `sdt_period`), right before
            // them, so that a segment cut at the tables keeps it; the
            // header wrote the first.
            if let (Some(n), Some(l)) = (now, self.last_sdt) {
                if ahead(n, l) >= SDT_EVERY {
                    self.write_sdt(sink)?;
                    self.last_sdt = Some(n);
                }
            }
            self.write_psi(sink)?;
        }
        if self.last_sdt.is_none() {
            self.last_sdt = now;
        }
        // Without video the PAT/PMT times step by 100 ms (so they average
        // one every 100 ms whatever the packet spacing); past a gap, from
        // this packet.
        let n = now.map(|n| n as i64);
        self.last_psi = match (psi_due, self.last_psi, n) {
            (true, Some(l), Some(n)) if !has_video && (n - l).rem_euclid(WRAP) < 2 * PSI_EVERY => {
                Some((l + PSI_EVERY) % WRAP)
            }
            (true, _, Some(n)) | (_, None, Some(n)) => Some(n),
            (_, l, _) => l,
        };
        // The clock, modulo 2^33 as the times, never backwards (modulo
        // 2^33: past a wrap it goes on from 0).
        let clock = now.map(|n| (n as i64 - PCR_LEAD).rem_euclid(WRAP) as u64);
        let clock = match (clock, self.last_pcr) {
            (Some(c), Some(l)) if ahead(c, l) < 0 => Some(l),
            (c, l) => c.or(l),
        };
        let pcr_stream = self.streams.get(self.pcr_track).copied();
        let mut pcr = None;
        if i == self.pcr_track {
            pcr = clock;
        } else if let (Some(c), Some(mut l), Some(p)) = (clock, self.last_pcr, pcr_stream) {
            // PCRs 40 ms apart up to this packet's time; past a gap of
            // MAX_CATCH_UP one PCR at its time (a gap in the input).
            loop {
                let gap = ahead(c, l);
                if gap < PCR_EVERY {
                    break;
                }
                l = if gap > MAX_CATCH_UP {
                    c
                } else {
                    (l + PCR_EVERY as u64) % WRAP as u64
                };
                write_pcr_only(sink, p.pid, p.cc, l)?;
            }
            self.last_pcr = Some(l);
        }
        if pcr.is_some() {
            self.last_pcr = pcr;
        }
        Ok(pcr)
    }

    /// `v` in `tb` as a shifted 90 kHz time stamp.
    fn to_90k(&self, v: i64, tb: Rational, at: u64) -> Result<u64> {
        let t = rescale_q(v, tb, Rational::new(1, 90_000)).saturating_add(self.shift.unwrap_or(START_OFFSET));
        if t < 0 {
            return Err(Error::unsupported(
                at,
                &"ts muxer: a packet time before the first packet's by more than the 1.4 s start offset",
            ));
        }
        Ok((t % WRAP) as u64)
    }
}

impl FormatMuxer for TsMuxer {
    fn new() -> Self {
        TsMuxer::default()
    }

    fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        let t = spec.track;
        let c = carriage(t)?;
        let config = spec.config;
        let nal = match t.codec {
            Codec::H264 => Some(NalCodec::H264),
            Codec::Hevc => Some(NalCodec::H265),
            _ => None,
        };
        let framing = match (nal, t.codec) {
            (Some(n), _) if config.first() == Some(&1) => {
                // Parse now so a bad record is refused here, not per packet.
                ToAnnexB::with_parameter_sets(n, config)?;
                Framing::LengthPrefixed(n, AnnexBState::default())
            }
            (Some(n), _) => Framing::AnnexB(n),
            (None, Codec::Aac) if AdtsHeader::has_sync(config) || config.is_empty() => Framing::AsIs,
            (None, Codec::Aac) => Framing::Adts(AdtsFromConfig::parse(config)?),
            (None, Codec::Mpeg4) if !config.is_empty() => Framing::Mpeg4Headers,
            _ => Framing::AsIs,
        };
        let n = self.streams.len();
        let s = StreamOut {
            pid: FIRST_PID + n as u16,
            stream_type: c.stream_type,
            stream_id: c.stream_id,
            video: is_video(t),
            framing,
            cc: 0,
            next: None,
            language: match t.language.as_bytes() {
                [a, b, c]
                    if t.kind == crate::types::TrackKind::Audio
                        && [a, b, c].iter().all(|x| x.is_ascii_lowercase())
                        && [*a, *b, *c] != *b"und" =>
                {
                    Some([*a, *b, *c])
                }
                _ => None,
            },
        };
        if self.streams.is_full() {
            return Err(Error::capacity(0, &"ts muxer: more streams than MAX_TRACKS"));
        }
        let i = ctx.push_track(spec)?;
        let _ = self.streams.push(s);
        Ok(i)
    }

    fn write_header<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        self.pcr_track = self.streams.iter().position(|s| s.video).unwrap_or(0);
        // As ffmpeg's muxer: `service_name`, else `title`, else the
        // default; `service_provider`, else ours.
        let tag = |key: &str| {
            ctx.tags
                .iter()
                .find(|(n, v)| n.eq_ignore_ascii_case(key) && !v.is_empty())
                .map(|(_, v)| v)
        };
        let name = tag("service_name")
            .or_else(|| tag("title"))
            .unwrap_or(DEFAULT_SERVICE_NAME);
        let provider = tag("service_provider").unwrap_or(DEFAULT_PROVIDER);
        let radio = !self.streams.iter().any(|s| s.video);
        let mut buf = [0u8; MAX_SECTION];
        let n = psi::sdt(&mut buf, radio, provider, name)?;
        self.sdt.clear();
        let _ = self.sdt.extend_from_slice(buf.get(..n).unwrap_or(&[]));
        self.write_sdt(sink)?;
        self.write_psi(sink)
    }

    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        _scratch: &mut [u8],
        ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let i = packet.track;
        let at = sink.position();
        let (Some(&s), Some(t)) = (self.streams.get(i), ctx.tracks.get(i)) else {
            return Err(Error::new(ErrorKind::InvalidArgument, at, &"ts muxer: no such stream"));
        };
        let tb = t.time_base;
        let decode = packet.dts.or(packet.pts);
        if self.shift.is_none() {
            let first = decode.map_or(0, |d| rescale_q(d, tb, Rational::new(1, 90_000)));
            self.shift = Some(START_OFFSET.saturating_add(first.saturating_neg().max(0)));
        }
        let mut pts = packet.pts.map(|v| self.to_90k(v, tb, at)).transpose()?;
        let dts = packet.dts.map(|v| self.to_90k(v, tb, at)).transpose()?;
        if pts.is_none() && dts.is_none() {
            // No time (a raw elementary stream): the previous packet's
            // time plus its duration, as the PTS (decode order).
            pts = Some(match s.next {
                Some(n) => n,
                None => self.to_90k(0, tb, at)?,
            });
        }
        // A decode time alone is the presentation time too (a PES has no
        // DTS without a PTS, ISO/IEC 13818-1 §2.4.3.7).
        let pts = pts.or(dts);
        let now = dts.or(pts);
        let pcr = self.psi_and_pcr(sink, i, s.video, packet.flags.keyframe, now)?;
        // The payload's size as written.
        let config = ctx.config(i);
        let data = packet.data;
        let (prefix, size, converter): (&[u8], u64, Option<ToAnnexB<'_>>) = match s.framing {
            Framing::AsIs => (&[], data.len() as u64, None),
            Framing::AnnexB(n) => {
                let has = first_annexb_nal(data).is_some_and(|b| is_aud(n, b));
                let p = if has { &[][..] } else { aud(n) };
                (p, (p.len() + data.len()) as u64, None)
            }
            Framing::LengthPrefixed(n, state) => {
                let c = ToAnnexB::with_parameter_sets(n, config)?.resume(state);
                let has = first_length_prefixed_nal(n, config, data).is_some_and(|b| is_aud(n, b));
                let p = if has { &[][..] } else { aud(n) };
                let body = c.sample_size(data)?;
                (p, p.len() as u64 + body, Some(c))
            }
            Framing::Adts(_) => (&[], 7 + data.len() as u64, None),
            Framing::Mpeg4Headers => {
                let p = if packet.flags.keyframe && !starts_with_mpeg4_header(data) {
                    config
                } else {
                    &[][..]
                };
                (p, (p.len() + data.len()) as u64, None)
            }
        };
        let adts_header = match s.framing {
            Framing::Adts(a) => Some(a.header(data.len())?),
            _ => None,
        };
        let pes_dts = match (pts, dts) {
            (Some(p), Some(d)) if p != d => Some(d),
            _ => None,
        };
        let (head, head_len) = pes_header(s.stream_id, s.video, size, pts, pes_dts);
        let head = head.get(..head_len).unwrap_or(&[]);
        let first = FirstPacket {
            pcr,
            random_access: packet.flags.keyframe,
        };
        let Some(out) = self.streams.get_mut(i) else {
            return Ok(());
        };
        let mut w = PesWriter::new(sink, out.pid, &mut out.cc, head.len() as u64 + size, first);
        w.write_all(head)?;
        if let Some(h) = adts_header {
            w.write_all(&h)?;
        }
        w.write_all(prefix)?;
        match converter {
            Some(mut c) => {
                c.write_sample(&mut w, data)?;
                if let Framing::LengthPrefixed(n, _) = out.framing {
                    out.framing = Framing::LengthPrefixed(n, c.state());
                }
            }
            None => w.write_all(data)?,
        }
        w.finish()?;
        let duration = packet.duration.and_then(|d| i64::try_from(d).ok());
        out.next = match (now, duration) {
            (Some(n), Some(d)) => Some((n as i64 + rescale_q(d, tb, Rational::new(1, 90_000))).rem_euclid(WRAP) as u64),
            (n, _) => n,
        };
        self.psi_fresh = false;
        Ok(())
    }

    fn finish<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], _ctx: &mut MuxContext) -> Result<()> {
        sink.flush()
    }
}

/// The first NAL unit header byte of a length-prefixed sample, with the
/// length size of its avcC (byte 4) or hvcC (byte 21) `config`
/// (ISO/IEC 14496-15 §5.3.3.1, §8.3.3.1).
fn first_length_prefixed_nal(codec: NalCodec, config: &[u8], data: &[u8]) -> Option<u8> {
    let at = match codec {
        NalCodec::H264 => 4,
        NalCodec::H265 => 21,
    };
    let size = crate::codec::convert::LengthSize::from_minus_one(config.get(at)? & 3).ok()?;
    data.get(size.bytes()).copied()
}

/// Whether an MPEG-4 Part 2 packet starts with a visual object sequence,
/// visual object or video object layer start code (ISO/IEC 14496-2 §6.2.1:
/// 0xB0, 0xB5, 0x00..=0x2F), so it brings its own headers.
fn starts_with_mpeg4_header(data: &[u8]) -> bool {
    match data {
        [0, 0, 1, code, ..] => matches!(code, 0xB0 | 0xB5 | 0x00..=0x2F),
        _ => false,
    }
}
