//! The codec mappings Ogg carries, one file each: identification from the
//! first packet, header parsing, and the per-packet timing that ffmpeg's Ogg
//! demuxer applies (granule positions to timestamps, packet durations from
//! the codec's own bitstream). This file holds what they share: the codec
//! and state enums that dispatch to them, what a header packet yields, and
//! the timing state.
//!
//! * [`vorbis`]: the Vorbis I specification §4.2 (headers) and §A.2 (Ogg
//!   mapping; the granule position is the end sample of the last packet
//!   completed on the page). Durations come from the block sizes of the
//!   modes (§4.3.1: a packet returns `prev/4 + cur/4` samples).
//! * [`opus`]: RFC 7845 §5 (ID and comment headers), §4 (granule position;
//!   pre-skip); durations from the TOC byte (RFC 6716 §3.1).
//! * [`theora`]: the Theora specification §6.2 (identification header) and
//!   §A.2 (granule position: keyframe number shifted by KFGSHIFT plus the
//!   frames since).
//! * [`flac`]: the Ogg mapping of RFC 9639 §10.1 (first packet `\x7FFLAC`,
//!   STREAMINFO); durations from the frame header.
//! * [`speex`]: the Speex manual's Ogg mapping (an 80-byte header and a
//!   comment packet; frames of a fixed size).

pub mod flac;
pub mod opus;
pub mod speex;
pub mod theora;
pub mod vorbis;

use crate::types::{Codec, Rational, Track, TrackKind};

use super::physical::{FLAG_EOS, MAX_SEGMENTS, NO_GRANULE};
use flac::FlacState;
use opus::OpusState;
use speex::SpeexState;
use theora::TheoraState;
use vorbis::VorbisState;

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
            OggCodec::Vorbis => CodecState::Vorbis(VorbisState::default()),
            OggCodec::Opus => CodecState::Opus(OpusState::default()),
            OggCodec::Theora => CodecState::Theora(TheoraState::default()),
            OggCodec::Flac => CodecState::Flac(FlacState::default()),
            OggCodec::Speex => CodecState::Speex(SpeexState::default()),
            OggCodec::Unknown => CodecState::Unknown,
        }
    }

    /// Handles a packet while the stream's headers are pending, as ffmpeg's
    /// `header` callbacks do. `head` is the start of the packet (up to 96
    /// bytes), `size` its length, `page_flags` the flags of the page it ends
    /// on.
    pub fn header(&mut self, head: &[u8], size: u32, page_flags: u8) -> HeaderOutcome {
        match self {
            CodecState::Vorbis(v) => v.header(head, size),
            CodecState::Opus(o) => o.header(head, size, page_flags),
            CodecState::Theora(t) => t.header(head, size),
            CodecState::Flac(_) => flac::header(head),
            CodecState::Speex(s) => s.header(head, size),
            CodecState::Unknown => HeaderOutcome::error(),
        }
    }

    /// The granule position as a timestamp (ffmpeg's `gptopts`), with the
    /// keyframe flag Theora derives from it.
    pub fn granule_to_ts(&self, gp: u64) -> (i64, bool) {
        match self {
            CodecState::Theora(t) => theora::theora_frame(t, gp),
            _ => (gp as i64, false),
        }
    }

    /// Runs the codec's packet step (ffmpeg's `packet` callbacks): the
    /// first-packet handling that derives the first timestamp from the page
    /// granule, the packet duration, and the end trimming of the last page.
    /// `rest`: the sum of the later packets' durations kept from the
    /// packet timed before (Opus, Vorbis).
    pub fn packet(&mut self, ts: &mut Timing, p: &PacketView<'_>, rest: &mut RestSum) -> PacketTiming {
        match self {
            CodecState::Vorbis(v) => v.packet(ts, p, rest),
            CodecState::Opus(o) => o.packet(ts, p, rest),
            CodecState::Theora(t) => t.packet(ts, p),
            CodecState::Speex(s) => s.packet(ts, p),
            CodecState::Flac(f) => f.packet(p),
            CodecState::Unknown => PacketTiming::default(),
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
    /// The caller must read the end of the packet for
    /// [`vorbis::vorbis_modes`].
    pub needs_setup_tail: bool,
}

impl HeaderOutcome {
    /// The outcome for the first data packet of a stream.
    fn data() -> Self {
        HeaderOutcome {
            data: true,
            ..HeaderOutcome::default()
        }
    }

    /// The outcome for a malformed header.
    fn error() -> Self {
        HeaderOutcome {
            error: true,
            ..HeaderOutcome::default()
        }
    }
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

    /// An audio track of `codec` timed in samples at `rate`.
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
}

/// The first `size` bytes of `head` (all of it when the packet is longer).
fn head_of(head: &[u8], size: u32) -> &[u8] {
    head.get(..size.min(head.len() as u32) as usize).unwrap_or(&[])
}

/// What the per-packet timing sees of a packet and of the page it ends on.
#[derive(Debug, Clone, Copy)]
pub struct PacketView<'a> {
    /// Offset of the page the packet ends on: which page `lacing` is.
    pub page: u64,
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
    pub starts: &'a [[u8; 2]; MAX_SEGMENTS],
}

impl PacketView<'_> {
    /// The page ends its logical stream (RFC 3533 §6, `header_type` 0x04).
    #[inline]
    fn eos(&self) -> bool {
        self.page_flags & FLAG_EOS != 0
    }

    /// The lacing values after the packet.
    #[inline]
    fn rest(&self) -> &[u8] {
        self.lacing.get(self.segp..).unwrap_or(&[])
    }

    /// The packet is the last one the page completes.
    #[inline]
    fn last_on_page(&self) -> bool {
        self.segp == self.lacing.len()
    }
}

/// What a codec's `first_pts` adds up for the packets after one on its
/// page (Opus, Vorbis), kept for the page and lacing index of the last
/// packet it timed. ffmpeg adds them up again for every packet (each
/// packet's pts is the page granule minus the durations from it to the
/// page's end), which is quadratic in the packets of a page; the next
/// packet's sum is this one less the durations of the packets in
/// between, the same value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RestSum {
    pub valid: bool,
    /// Offset of the page, and the lacing index after the packet.
    pub page: u64,
    pub segp: usize,
    /// The durations of the packets after it, added with wrapping.
    pub sum: i32,
    /// The codec's state after the packet (Vorbis: the block size that
    /// times the next short block).
    pub state: u32,
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

impl Timing {
    /// No timestamp was set since the first data packet: the codec derives
    /// the first one from the page granule.
    #[inline]
    fn first_pending(&self) -> bool {
        self.lastpts == 0 || self.lastpts == NOPTS
    }

    /// Sets the pts and dts of the next packet.
    #[inline]
    fn set_next(&mut self, ts: i64) {
        self.lastpts = ts;
        self.lastdts = ts;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies() {
        assert_eq!(OggCodec::identify(b"\x01vorbis\0\0"), OggCodec::Vorbis);
        assert_eq!(OggCodec::identify(b"OpusHead"), OggCodec::Opus);
        assert_eq!(OggCodec::identify(b"fishead\0"), OggCodec::Unknown);
    }
}
