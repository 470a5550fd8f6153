//! The codecs Ogg carries: identification from the first packet, header
//! parsing, and the per-packet timing that ffmpeg's Ogg demuxer applies
//! (granule positions to timestamps, packet durations from the codec's own
//! bitstream).
//!
//! * Vorbis: the Vorbis I specification §4.2 (headers) and §A.2 (Ogg
//!   mapping; the granule position is the end sample of the last packet
//!   completed on the page). Durations come from the block sizes of the
//!   modes (§4.3.1: a packet returns `prev/4 + cur/4` samples).
//! * Opus: RFC 7845 §5 (ID and comment headers), §4 (granule position;
//!   pre-skip); durations from the TOC byte (RFC 6716 §3.1).
//! * Theora: the Theora specification §6.2 (identification header) and
//!   §A.2 (granule position: keyframe number shifted by KFGSHIFT plus the
//!   frames since).
//! * FLAC: the Ogg mapping of RFC 9639 §10.1 (first packet `\x7FFLAC`,
//!   STREAMINFO); durations from the frame header.
//! * Speex: the Speex manual's Ogg mapping (an 80-byte header and a comment
//!   packet; frames of a fixed size).

use crate::format::xiph::flac::{FrameHeader, StreamInfo, STREAMINFO_LEN};
use crate::types::{Codec, Rational, Track, TrackKind};

use super::page::{FLAG_BOS, FLAG_EOS, NO_GRANULE};

/// ffmpeg's "no timestamp" (`AV_NOPTS_VALUE`), kept so that the timing
/// logic reads like the reference it matches.
pub const NOPTS: i64 = i64::MIN;

/// The codec of a logical stream, from the first bytes of its first packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OggCodec {
    /// `\x01vorbis`.
    Vorbis,
    /// `OpusHead`.
    Opus,
    /// `\x80theora`.
    Theora,
    /// `\x7FFLAC`.
    Flac,
    /// `Speex   `.
    Speex,
    /// Anything else (Skeleton, Dirac, VP8, OGM, CELT, ...): its pages are
    /// skipped.
    Unknown,
}

impl OggCodec {
    /// Identifies a stream from the first bytes of its first packet.
    pub fn identify(b: &[u8]) -> OggCodec {
        if b.starts_with(b"\x01vorbis") {
            OggCodec::Vorbis
        } else if b.starts_with(b"OpusHead") {
            OggCodec::Opus
        } else if b.starts_with(b"\x80theora") {
            OggCodec::Theora
        } else if b.starts_with(b"\x7FFLAC") {
            OggCodec::Flac
        } else if b.starts_with(b"Speex   ") {
            OggCodec::Speex
        } else {
            OggCodec::Unknown
        }
    }

    /// How many header packets the codec has (for the `ogg.missing-headers`
    /// check).
    pub fn header_count(self) -> u8 {
        match self {
            OggCodec::Vorbis | OggCodec::Theora => 3,
            OggCodec::Opus => 1,
            OggCodec::Flac | OggCodec::Speex => 2,
            OggCodec::Unknown => 0,
        }
    }
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

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
        if b.len() != 30 || !b.starts_with(b"\x01vorbis") || le32(b, 7)? != 0 {
            return None;
        }
        let bs = *b.get(28)?;
        let (bs0, bs1) = (bs & 15, bs >> 4);
        if bs0 > bs1 || bs0 < 6 || bs1 > 13 || *b.get(29)? != 1 {
            return None;
        }
        Some(VorbisIdHeader {
            channels: *b.get(11)?,
            sample_rate: le32(b, 12)?,
            bitrate_nominal: le32(b, 20)? as i32,
            blocksize: [1 << bs0, 1 << bs1],
        })
    }
}

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
            pre_skip: le16(b, 10)?,
            input_sample_rate: le32(b, 12)?,
            output_gain: le16(b, 16)? as i16,
            mapping_family: *b.get(18)?,
        })
    }
}

/// An MSB-first bit reader (Theora's bit order).
struct BitsMsb<'a> {
    b: &'a [u8],
    pos: usize,
}

impl BitsMsb<'_> {
    fn get(&mut self, n: u32) -> Option<u32> {
        let mut v = 0u32;
        for _ in 0..n {
            let byte = *self.b.get(self.pos / 8)?;
            v = (v << 1) | ((byte >> (7 - self.pos % 8)) & 1) as u32;
            self.pos += 1;
        }
        Some(v)
    }
}

/// The Theora identification header (Theora specification §6.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TheoraIdHeader {
    /// VMAJ.VMIN.VREV as 0xMMmmrr.
    pub version: u32,
    /// Picture width (the frame width when the picture fields disagree).
    pub width: u32,
    /// Picture height.
    pub height: u32,
    /// Frame rate numerator (FRN).
    pub frame_rate_num: u32,
    /// Frame rate denominator (FRD).
    pub frame_rate_den: u32,
    /// Pixel aspect ratio numerator and denominator.
    pub aspect: (u32, u32),
    /// KFGSHIFT: bits of the granule position that count frames since the
    /// last keyframe.
    pub kfgshift: u8,
}

impl TheoraIdHeader {
    /// Parses the identification header as ffmpeg does (its layout for
    /// versions before 3.2 differs). Returns `None` for versions before
    /// 3.1.0 or a short packet.
    pub fn parse(b: &[u8]) -> Option<TheoraIdHeader> {
        if !b.starts_with(b"\x80theora") {
            return None;
        }
        let mut r = BitsMsb { b, pos: 56 };
        let version = r.get(24)?;
        if version < 0x030100 {
            return None;
        }
        let mut width = r.get(16)? << 4;
        let mut height = r.get(16)? << 4;
        if version >= 0x030400 {
            r.get(32)?;
            r.get(32)?;
            r.get(32)?;
            r.get(4)?;
        }
        if version >= 0x030200 {
            let w = r.get(24)?;
            let h = r.get(24)?;
            if w <= width && w + 16 > width && h <= height && h + 16 > height {
                width = w;
                height = h;
            }
            r.get(16)?;
        }
        let frame_rate_num = r.get(32)?;
        let frame_rate_den = r.get(32)?;
        let aspect = (r.get(24)?, r.get(24)?);
        if version >= 0x030200 {
            r.get(32)?;
            r.get(6)?;
        }
        let kfgshift = r.get(5)? as u8;
        Some(TheoraIdHeader {
            version,
            width,
            height,
            frame_rate_num,
            frame_rate_den,
            aspect,
            kfgshift,
        })
    }
}

/// The Speex header (Speex manual, "Ogg file format").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpeexHeader {
    /// Sample rate in Hz.
    pub sample_rate: u32,
    /// Channels (1 or 2).
    pub channels: u32,
    /// Samples per frame.
    pub frame_size: u32,
    /// Frames per Ogg packet (0 means 1).
    pub frames_per_packet: u32,
}

impl SpeexHeader {
    /// Parses the header packet (at least 68 bytes; ffmpeg's checks).
    pub fn parse(b: &[u8]) -> Option<SpeexHeader> {
        if b.len() < 68 || !b.starts_with(b"Speex   ") {
            return None;
        }
        let h = SpeexHeader {
            sample_rate: le32(b, 36)?,
            channels: le32(b, 48)?,
            frame_size: le32(b, 56)?,
            frames_per_packet: le32(b, 64)?,
        };
        let valid = (h.sample_rate as i32) > 0
            && (1..=2).contains(&h.channels)
            && (h.frame_size as i32) >= 0
            && (h.frames_per_packet as i32) >= 0
            && (h.frame_size as i64) * (h.frames_per_packet as i64) <= (i32::MAX / 256) as i64;
        valid.then_some(h)
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
    while bits_total.saturating_sub(pos) > 97 {
        if get(&mut pos, 1)? == 1 {
            framing = Some(pos);
            break;
        }
    }
    let framing = framing?;
    let mut count = 0u32;
    let mut last = 0u32;
    while bits_total.saturating_sub(pos) >= 97 {
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
        if count > 64 {
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

/// Per-stream state of the other codecs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpusState {
    /// Pre-skip from `OpusHead`.
    pub pre_skip: u16,
    /// Whether `OpusTags` is still expected.
    pub need_comments: bool,
    cur_dts: i64,
}

/// Theora's granule layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TheoraState {
    /// KFGSHIFT.
    pub shift: u8,
    /// The bitstream version.
    pub version: u32,
}

/// Speex framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpeexState {
    /// Samples per packet.
    pub packet_size: i32,
    final_packet_duration: i32,
    /// Header packets seen.
    pub seq: u8,
}

/// FLAC-in-Ogg: the last block size seen (ffmpeg's parser keeps it when a
/// frame header does not parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlacState {
    /// Samples in the last frame with a valid header.
    pub block_size: u32,
}

/// Codec-specific state of a logical stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecState {
    /// Vorbis.
    Vorbis(VorbisState),
    /// Opus.
    Opus(OpusState),
    /// Theora.
    Theora(TheoraState),
    /// FLAC.
    Flac(FlacState),
    /// Speex.
    Speex(SpeexState),
    /// Not handled.
    Unknown,
}

impl CodecState {
    /// Fresh state for `codec`.
    pub fn new(codec: OggCodec) -> CodecState {
        match codec {
            OggCodec::Vorbis => CodecState::Vorbis(VorbisState {
                final_pts: 0,
                ..VorbisState::default()
            }),
            OggCodec::Opus => CodecState::Opus(OpusState::default()),
            OggCodec::Theora => CodecState::Theora(TheoraState::default()),
            OggCodec::Flac => CodecState::Flac(FlacState::default()),
            OggCodec::Speex => CodecState::Speex(SpeexState::default()),
            OggCodec::Unknown => CodecState::Unknown,
        }
    }
}

/// What a header packet turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeaderOutcome {
    /// Not a header: the first data packet of the stream.
    pub data: bool,
    /// A malformed header.
    pub error: bool,
    /// The track this (identification) header describes.
    pub track: Option<TrackInfo>,
    /// The codec configuration: offset and length within the packet.
    pub config: Option<(u32, u32)>,
    /// A Vorbis comment block starts at this offset within the packet.
    pub comment: Option<u32>,
    /// The header's slot among the stream's header packets.
    pub slot: Option<u8>,
    /// The caller must read the end of the packet for [`vorbis_modes`].
    pub needs_setup_tail: bool,
}

/// What an identification header says about the track.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TrackInfo {
    /// Video or audio.
    pub kind: TrackKind,
    /// The codec.
    pub codec: Codec,
    /// Time base of the packets.
    pub time_base: Rational,
    /// Sample rate (audio).
    pub sample_rate: u32,
    /// Channels (audio).
    pub channels: u16,
    /// Bits per sample (FLAC).
    pub bits_per_sample: u16,
    /// Width (video).
    pub width: u32,
    /// Height (video).
    pub height: u32,
    /// Nominal bit rate.
    pub bit_rate: u32,
}

impl TrackInfo {
    /// The track, with `id` the stream serial.
    pub fn track(&self, id: u32) -> Track {
        Track {
            id,
            kind: self.kind,
            codec: self.codec,
            time_base: self.time_base,
            sample_rate: self.sample_rate,
            channels: self.channels,
            bits_per_sample: self.bits_per_sample,
            width: self.width,
            height: self.height,
            bit_rate: self.bit_rate,
            ..Track::default()
        }
    }
}

fn audio(codec: Codec, rate: u32, channels: u16) -> TrackInfo {
    TrackInfo {
        kind: TrackKind::Audio,
        codec,
        time_base: Rational::new(1, rate.max(1)),
        sample_rate: rate,
        channels,
        ..TrackInfo::default()
    }
}

impl CodecState {
    /// Handles a packet while the stream's headers are pending, as ffmpeg's
    /// `header` callbacks do. `head` is the start of the packet (up to 96
    /// bytes), `size` its length, `page_flags` the flags of the page it ends
    /// on.
    pub fn header(&mut self, head: &[u8], size: u32, page_flags: u8) -> HeaderOutcome {
        let mut out = HeaderOutcome::default();
        let b0 = head.first().copied().unwrap_or(0);
        match self {
            CodecState::Vorbis(v) => {
                if b0 & 1 == 0 {
                    out.data = v.valid;
                    out.error = !v.valid;
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
                            v.blocksize = h.blocksize;
                            out.config = Some((0, 30));
                            let mut t = audio(Codec::Vorbis, h.sample_rate, h.channels as u16);
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
            }
            CodecState::Opus(o) => {
                if page_flags & FLAG_BOS != 0 {
                    match OpusHead::parse(head.get(..size.min(head.len() as u32) as usize).unwrap_or(&[])) {
                        Some(h) if size >= 19 => {
                            o.pre_skip = h.pre_skip;
                            o.need_comments = true;
                            out.slot = Some(0);
                            out.config = Some((0, size));
                            out.track = Some(audio(Codec::Opus, 48000, h.channels as u16));
                        }
                        _ => out.error = true,
                    }
                } else if o.need_comments {
                    if size < 8 || !head.starts_with(b"OpusTags") {
                        out.error = true;
                    } else {
                        o.need_comments = false;
                        out.slot = Some(1);
                        out.comment = Some(8);
                    }
                } else {
                    out.data = true;
                }
            }
            CodecState::Theora(t) => {
                if b0 & 0x80 == 0 {
                    out.data = true;
                    return out;
                }
                out.slot = Some(b0 & 3);
                match b0 {
                    0x80 => {
                        match TheoraIdHeader::parse(head.get(..size.min(head.len() as u32) as usize).unwrap_or(&[])) {
                            Some(h) => {
                                t.shift = h.kfgshift;
                                t.version = h.version;
                                let (mut num, mut den) = (h.frame_rate_den, h.frame_rate_num);
                                if num == 0 || den == 0 {
                                    (num, den) = (1, 25);
                                }
                                let g = gcd(num, den).max(1);
                                out.config = Some((0, size));
                                out.track = Some(TrackInfo {
                                    kind: TrackKind::Video,
                                    codec: Codec::Theora,
                                    time_base: Rational::new(num / g, den / g),
                                    width: h.width,
                                    height: h.height,
                                    ..TrackInfo::default()
                                });
                            }
                            None => out.error = true,
                        }
                    }
                    0x81 => out.comment = Some(7),
                    _ => {}
                }
            }
            CodecState::Flac(_) => {
                if b0 == 0xFF {
                    out.data = true;
                    return out;
                }
                if b0 & 0x7F == 0x7F {
                    // RFC 9639 §10.1: "\x7FFLAC", version 1.x, header count,
                    // "fLaC", then the STREAMINFO block with its header.
                    let block_len = le32(head, 13).map(u32::swap_bytes);
                    let info = head.get(17..17 + STREAMINFO_LEN).and_then(StreamInfo::parse);
                    match (head.get(5), block_len, info) {
                        (Some(1), Some(34), Some(si)) if si.sample_rate > 0 => {
                            out.slot = Some(0);
                            out.config = Some((17, STREAMINFO_LEN as u32));
                            let mut t = audio(Codec::Flac, si.sample_rate, si.channels as u16);
                            t.bits_per_sample = si.bits_per_sample as u16;
                            out.track = Some(t);
                        }
                        _ => out.error = true,
                    }
                } else if b0 & 0x7F == 4 {
                    out.comment = Some(4);
                }
            }
            CodecState::Speex(s) => {
                if s.seq > 1 {
                    out.data = true;
                    return out;
                }
                out.slot = Some(s.seq);
                if s.seq == 0 {
                    match SpeexHeader::parse(head.get(..size.min(head.len() as u32) as usize).unwrap_or(&[])) {
                        Some(h) => {
                            s.packet_size = h.frame_size as i32;
                            if h.frames_per_packet != 0 {
                                s.packet_size = s.packet_size.saturating_mul(h.frames_per_packet as i32);
                            }
                            out.config = Some((0, size));
                            out.track = Some(audio(Codec::Speex, h.sample_rate, h.channels as u16));
                        }
                        None => {
                            out.error = true;
                            return out;
                        }
                    }
                } else {
                    out.comment = Some(0);
                }
                s.seq += 1;
            }
            CodecState::Unknown => out.error = true,
        }
        out
    }
}

/// What the per-packet timing sees of a packet and of the page it ends on.
#[derive(Debug, Clone, Copy)]
pub struct PacketView<'a> {
    /// Packet length.
    pub size: u32,
    /// Its first bytes (zero-padded).
    pub head: [u8; 16],
    /// Flags of the page the packet ends on.
    pub page_flags: u8,
    /// The lacing values of that page.
    pub lacing: &'a [u8],
    /// Index of the first lacing value after the packet.
    pub segp: usize,
    /// For each lacing value that ends a packet starting on this page, the
    /// packet's first two bytes (ffmpeg reads them past an empty packet).
    pub starts: &'a [[u8; 2]; 255],
}

/// The timing state ffmpeg keeps per Ogg stream (`lastpts`, `lastdts`,
/// `granule`, `start_time`), with its sentinels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// pts for the next packet, or [`NOPTS`].
    pub lastpts: i64,
    /// dts for the next packet, or [`NOPTS`].
    pub lastdts: i64,
    /// Granule of the last page read, [`NO_GRANULE`] once used.
    pub granule: u64,
    /// The stream's start time, or [`NOPTS`].
    pub start_time: i64,
}

impl Default for Timing {
    fn default() -> Self {
        // ffmpeg zeroes a new stream: lastpts 0 marks "before the first
        // data packet" for the first-packet handling below.
        Timing {
            lastpts: 0,
            lastdts: 0,
            granule: NO_GRANULE,
            start_time: NOPTS,
        }
    }
}

/// The result of the per-packet codec step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketTiming {
    /// Duration in time-base ticks (ffmpeg's `pduration`, an unsigned int).
    pub duration: u32,
    /// The keyframe flag the codec step set (Theora).
    pub key: bool,
    /// The packet cannot be delivered (ffmpeg fails here).
    pub drop: bool,
}

fn opus_duration(b0: u8, b1: u8, size: u32) -> Option<u32> {
    let config = (b0 >> 3) as u32;
    let count = b0 & 3;
    let frame = if config < 12 {
        (960 * (config & 3)).max(480)
    } else if config < 16 {
        480 << (config & 1)
    } else {
        120 << (config & 3)
    };
    let frames = match count {
        0 => 1,
        3 => {
            if size < 2 {
                return None;
            }
            (b1 & 0x3F) as u32
        }
        _ => 2,
    };
    Some(frame * frames)
}

/// Theora granule position to frame number (ffmpeg's `theora_gptopts`);
/// also says whether it names a keyframe.
pub fn theora_frame(t: &TheoraState, gp: u64) -> (i64, bool) {
    let shift = t.shift.min(63) as u32;
    let mut iframe = gp >> shift;
    let pframe = gp & ((1u64 << shift) - 1);
    if t.version < 0x030201 {
        iframe = iframe.wrapping_add(1);
    }
    (iframe.wrapping_add(pframe) as i64, pframe == 0)
}

impl CodecState {
    /// The granule position as a timestamp (ffmpeg's `gptopts`), with the
    /// keyframe flag Theora derives from it.
    pub fn granule_to_ts(&self, gp: u64) -> (i64, bool) {
        match self {
            CodecState::Theora(t) => theora_frame(t, gp),
            _ => (gp as i64, false),
        }
    }

    /// Runs the codec's packet step (ffmpeg's `packet` callbacks): the
    /// first-packet handling that derives the first timestamp from the page
    /// granule, the packet duration, and the end trimming of the last page.
    pub fn packet(&mut self, ts: &mut Timing, p: &PacketView<'_>) -> PacketTiming {
        let mut out = PacketTiming::default();
        let eos = p.page_flags & FLAG_EOS != 0;
        let rest = p.lacing.get(p.segp..).unwrap_or(&[]);
        let first_pending = ts.lastpts == 0 || ts.lastpts == NOPTS;
        let granule = ts.granule;
        match self {
            CodecState::Vorbis(v) => {
                if first_pending && !eos && (granule as i64) >= 0 {
                    v.reset();
                    let d = match v.frame(p.head[0]) {
                        VorbisFrame::Bad => return out,
                        VorbisFrame::Header => 0,
                        VorbisFrame::Audio(d) => d,
                    };
                    let mut duration = d as i32;
                    for (i, &s) in rest.iter().enumerate() {
                        if s < 255 {
                            let b0 = p.starts.get(p.segp + i).map_or(0, |b| b[0]);
                            match v.frame(b0) {
                                VorbisFrame::Bad => {
                                    duration = granule as i32;
                                    break;
                                }
                                VorbisFrame::Header => {}
                                VorbisFrame::Audio(d) => duration = duration.wrapping_add(d as i32),
                            }
                        }
                    }
                    let pts = granule.wrapping_sub(duration as i64 as u64) as i64;
                    ts.lastpts = pts;
                    ts.lastdts = pts;
                    if granule == 0 && duration != 0 {
                        ts.lastpts = NOPTS;
                        ts.lastdts = NOPTS;
                    }
                    if ts.start_time == NOPTS {
                        ts.start_time = ts.lastpts.max(0);
                    }
                    v.final_pts = NOPTS;
                    v.reset();
                }
                if p.size > 0 {
                    match v.frame(p.head[0]) {
                        VorbisFrame::Bad => return out,
                        VorbisFrame::Header => out.duration = 0,
                        VorbisFrame::Audio(d) => out.duration = d,
                    }
                }
                if eos {
                    if ts.lastpts != NOPTS {
                        v.final_pts = ts.lastpts;
                        v.final_duration = 0;
                    }
                    if p.segp == p.lacing.len() {
                        out.duration = granule
                            .wrapping_sub(v.final_pts as u64)
                            .wrapping_sub(v.final_duration as i64 as u64) as u32;
                    }
                    v.final_duration = v.final_duration.wrapping_add(out.duration as i32);
                }
            }
            CodecState::Opus(o) => {
                if p.size == 0 || granule > (1u64 << 62) {
                    out.drop = true;
                    return out;
                }
                if first_pending && !eos {
                    let Some(d) = opus_duration(p.head[0], p.head[1], p.size) else {
                        return out;
                    };
                    let mut duration = d as i32;
                    let mut run = 0u32;
                    for (i, &s) in rest.iter().enumerate() {
                        run += s as u32;
                        if s < 255 && run > 0 {
                            let b = p.starts.get(p.segp + i).copied().unwrap_or([0; 2]);
                            if let Some(d) = opus_duration(b[0], b[1], run) {
                                if d > 0 {
                                    duration = duration.wrapping_add(d as i32);
                                }
                            }
                            run = 0;
                        }
                    }
                    let pts = granule.wrapping_sub(duration as i64 as u64) as i64;
                    ts.lastpts = pts;
                    ts.lastdts = pts;
                }
                let Some(d) = opus_duration(p.head[0], p.head[1], p.size) else {
                    out.drop = true;
                    return out;
                };
                out.duration = d;
                if ts.lastpts != NOPTS {
                    if ts.start_time == NOPTS {
                        ts.start_time = ts.lastpts;
                    }
                    ts.lastpts = ts.lastpts.wrapping_sub(o.pre_skip as i64);
                    ts.lastdts = ts.lastpts;
                    o.cur_dts = ts.lastpts;
                }
                o.cur_dts = o.cur_dts.wrapping_add(d as i64);
                if eos {
                    let skip = (o.cur_dts as u64).wrapping_sub(granule).wrapping_add(o.pre_skip as u64) as i64;
                    let skip = skip.min(d as i64);
                    if skip > 0 {
                        out.duration = if skip < d as i64 { d - skip as u32 } else { 1 };
                    }
                }
            }
            CodecState::Theora(t) => {
                if first_pending && !eos {
                    let duration = 1 + rest.iter().filter(|&&s| s < 255).count() as i64;
                    let (frame, key) = theora_frame(t, granule);
                    out.key |= key;
                    let pts = frame.wrapping_sub(duration);
                    ts.lastpts = pts;
                    ts.lastdts = pts;
                    if ts.start_time == NOPTS {
                        ts.start_time = pts;
                    }
                }
                if p.size > 0 {
                    out.duration = 1;
                }
            }
            CodecState::Speex(s) => {
                let packets = p.lacing.iter().filter(|&&l| l < 255).count() as i64;
                let size = s.packet_size as i64;
                if eos && ts.lastpts != NOPTS && granule > 0 {
                    s.final_packet_duration = granule
                        .wrapping_sub(ts.lastpts as u64)
                        .wrapping_sub((size * (packets - 1)) as u64)
                        as i32;
                }
                if ts.lastpts == 0 && granule > 0 {
                    let pts = granule.wrapping_sub((size * packets) as u64) as i64;
                    ts.lastpts = pts;
                    ts.lastdts = pts;
                }
                out.duration = if eos && p.segp == p.lacing.len() && s.final_packet_duration != 0 {
                    s.final_packet_duration as u32
                } else {
                    s.packet_size as u32
                };
            }
            CodecState::Flac(f) => {
                // ffmpeg's FLAC parser (complete frames): the frame header's
                // block size, or the last one when the header does not parse.
                if let Some(h) = FrameHeader::parse(&p.head) {
                    f.block_size = h.block_size;
                }
                out.duration = f.block_size;
            }
            CodecState::Unknown => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies() {
        assert_eq!(OggCodec::identify(b"\x01vorbis\0\0"), OggCodec::Vorbis);
        assert_eq!(OggCodec::identify(b"OpusHead"), OggCodec::Opus);
        assert_eq!(OggCodec::identify(b"fishead\0"), OggCodec::Unknown);
    }

    #[test]
    fn opus_toc_durations() {
        assert_eq!(opus_duration(0xF8, 0, 1), Some(960)); // CELT FB 20 ms
        assert_eq!(opus_duration(0x01, 0, 1), Some(960)); // SILK 10 ms x2
        assert_eq!(opus_duration(0x4B, 0x03, 2), Some(960 * 3)); // SILK WB 20 ms x3
        assert_eq!(opus_duration(0x4B, 0x03, 1), None);
    }

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

    #[test]
    fn theora_granules() {
        let t = TheoraState {
            shift: 6,
            version: 0x030201,
        };
        assert_eq!(theora_frame(&t, 3 << 6), (3, true));
        assert_eq!(theora_frame(&t, (3 << 6) | 2), (5, false));
        let old = TheoraState {
            shift: 6,
            version: 0x030200,
        };
        assert_eq!(theora_frame(&old, 3 << 6), (4, true));
    }
}
