//! The Matroska and WebM muxer ([`crate::MuxFormat::Matroska`],
//! [`crate::MuxFormat::WebM`]; RFC 9559, EBML RFC 8794).
//!
//! Layout written:
//!
//! ```text
//! EBML header (DocType matroska or webm)
//! Segment (size patched at the end; unknown on a stream, RFC 8794 6.2)
//!   SeekHead   Info, Tracks, and Cues (patched, or made Void when none)
//!   Info       TimestampScale 1 ms, MuxingApp, WritingApp, Duration (patched)
//!   Tracks     one TrackEntry per track: CodecID, CodecPrivate, Video/Audio
//!   Chapters   one EditionEntry, when there are chapters (`muxer/chapters.rs`)
//!   Attachments  attached files, when any (`muxer/attachments.rs`)
//!   Tags       file-level tags, when any (`muxer/tags.rs`)
//!   Cluster*   Timestamp, SimpleBlock* (size patched; unknown on a stream)
//!   Cues       CuePoints for the keyframes of the first video track
//! ```
//!
//! Timestamps are rescaled to milliseconds (TimestampScale 1 000 000 ns)
//! with [`crate::types::rescale_q`], ffmpeg's `av_rescale_q`; when the first
//! packet's time is negative (an MP4 edit list), every time is shifted by
//! the same amount so that it becomes 0, as ffmpeg's `avoid_negative_ts`. A new Cluster
//! starts when a Block's timestamp relative to its Cluster would not fit
//! the signed 16 bits (RFC 9559 §10.1), and otherwise at a video keyframe
//! (or any packet of an audio-only file) once the Cluster holds 5 s or
//! 5 MiB. Each payload goes to the sink in one vectored write with its
//! SimpleBlock header; Annex B video and ADTS audio are reframed on the way
//! (`codec::convert`), borrowing the NAL units and raw frames.
//!
//! On a sink that cannot patch (`Sink::can_patch`, a pipe), the Segment and
//! every Cluster have the unknown size, Info has no Duration and SeekHead no
//! Cues entry (live mode); Cues are still written at the end.
//!
//! State is fixed: [`MAX_TRACKS`] tracks, [`MAX_CUES`] cue points (thinned
//! to every other one, and spaced twice as far from then on, when full).
//! Nothing is allocated.

mod attachments;
mod av1;
mod chapters;
mod ebml_write;
mod tags;
mod track;

use crate::error::{Error, ErrorKind, Result};
use crate::format::mkv::codec_id::may_reorder;
use crate::format::mkv::ids;
use crate::format::mux_traits::{FormatMuxer, MuxContext, TrackSpec, MAX_CONFIG_BYTES};
use crate::limits::MAX_TRACKS;
use crate::mux::attachments::Attachment;
use crate::sink::Sink;
use crate::source::SliceSource;
use crate::types::{rescale_q, ByteRange, Packet, Rational, Track, TrackKind};
use ebml_write::{
    f64_bits_of_u64, fixed_size_vint, id_bytes, measure, put_bytes, put_float, put_master, put_uint, put_uint8,
    size_vint, UNKNOWN_SIZE,
};
use track::Framing;

/// Most cue points kept (RFC 9559 §5.1.5): 512 × 16 bytes of state. When
/// full, every other one is dropped and the least spacing between cue
/// points doubles.
pub const MAX_CUES: usize = 512;

pub use attachments::MAX_ATTACHMENTS;

/// A Cluster is closed at the next video keyframe (or audio packet in an
/// audio-only file) once it spans this many milliseconds (ffmpeg's
/// `cluster_time_limit` default).
pub const CLUSTER_TIME_MS: i64 = 5_000;

/// ... or holds this many bytes (ffmpeg's `cluster_size_limit` default).
pub const CLUSTER_BYTES: u64 = 5 << 20;

/// The output time base: TimestampScale 1 000 000 ns (RFC 9559 §11.1).
const MS: Rational = Rational::new(1, 1000);
/// TimestampScale written in Info.
const TIMESTAMP_SCALE_NS: u64 = 1_000_000;
/// The Muxing and Writing applications written in Info.
const APP: &[u8] = b"mediaslice";
/// A Seek entry for Cues with an 8-byte SeekPosition: its size, and where
/// the position's bytes start in it.
const CUES_SEEK_LEN: u64 = 21;
const CUES_SEEK_POS_AT: u64 = 13;
/// Void (RFC 8794 §11.3.2).
const VOID: u64 = 0xEC;

/// Per-track state.
#[derive(Debug, Clone, Copy)]
struct TrackOut {
    framing: Framing,
    time_base: Rational,
    video: bool,
    /// A subtitle track: its packets go in BlockGroups with their
    /// BlockDuration (a cue's display time, which nothing else gives).
    subtitle: bool,
    reorders: bool,
    /// Latest decoding (or, for a codec that does not reorder,
    /// presentation) time written, in ms.
    last: Option<i64>,
    /// The time, in track ticks, given to a next packet with none: the
    /// last one's time plus its duration (an elementary stream's access
    /// units carry only durations; MPEG-PS pieces of a frame carry none).
    next: Option<i64>,
    /// How the samples a packet holds are known, so that one shorter
    /// than that (the end trim of Ogg's last page) gets a DiscardPadding.
    trim: Trim,
    /// Where the DiscardPadding of the track's latest Block is, until the
    /// track's next packet shows that Block was not its last (the padding
    /// is then patched into a `Void`).
    pending_trim: Option<u64>,
    /// Added to the track's times: its CodecDelay in ms (Opus pre-skip),
    /// which a reader subtracts again (RFC 9559 §5.1.4.1.25).
    delay_ms: i64,
}

/// The open Cluster.
#[derive(Debug, Clone, Copy)]
struct Cluster {
    /// Position of its ID.
    start: u64,
    /// Position of its first child (after the 8-byte size).
    data: u64,
    /// Its Timestamp, in ms.
    ts: i64,
}

/// One cue point: time in ms and the Cluster's position relative to the
/// Segment's data.
#[derive(Debug, Clone, Copy)]
struct Cue {
    time: u64,
    cluster: u64,
}

/// The Matroska / WebM muxer's state.
#[derive(Debug, Clone)]
pub struct MkvMuxer {
    webm: bool,
    live: bool,
    tracks: heapless::Vec<TrackOut, MAX_TRACKS>,
    /// Position of the Segment's 8-byte size, and of its data.
    segment_size_at: u64,
    segment_data: u64,
    /// Position of the Cues Seek entry (patchable sinks only).
    cues_seek_at: Option<u64>,
    /// Position of Info's Duration float (patchable sinks only).
    duration_at: Option<u64>,
    cluster: Option<Cluster>,
    has_video: bool,
    /// The track cue points are made for.
    cue_track: Option<usize>,
    cues: heapless::Vec<Cue, MAX_CUES>,
    cue_spacing: u64,
    /// Latest end (pts + duration) seen, in ms.
    end_ms: i64,
    /// Added to every time: set by the first packet, to bring a negative
    /// first time to 0 (Matroska times are read as unsigned, so a negative
    /// one is lost; ffmpeg's `avoid_negative_ts make_non_negative`).
    shift_ms: Option<i64>,
}

impl MkvMuxer {
    /// A Matroska muxer (`webm` false) or a WebM one.
    pub fn with_doc_type(webm: bool) -> Self {
        MkvMuxer {
            webm,
            live: false,
            tracks: heapless::Vec::new(),
            segment_size_at: 0,
            segment_data: 0,
            cues_seek_at: None,
            duration_at: None,
            cluster: None,
            has_video: false,
            cue_track: None,
            cues: heapless::Vec::new(),
            cue_spacing: 0,
            end_ms: 0,
            shift_ms: None,
        }
    }

    fn doc_type(&self) -> &'static [u8] {
        if self.webm {
            b"webm"
        } else {
            b"matroska"
        }
    }

    /// The EBML header (RFC 8794 §11.2; DocTypeVersion 4, read version 2,
    /// RFC 9559 §6).
    fn write_ebml_header(&self, k: &mut dyn Sink) -> Result<()> {
        let doc_type = self.doc_type();
        put_master(k, ids::EBML, &|k| {
            put_uint(k, EBML_VERSION, 1)?;
            put_uint(k, ids::EBML_READ_VERSION, 1)?;
            put_uint(k, ids::EBML_MAX_ID_LENGTH, 4)?;
            put_uint(k, ids::EBML_MAX_SIZE_LENGTH, 8)?;
            put_bytes(k, ids::DOC_TYPE, doc_type)?;
            put_uint(k, DOC_TYPE_VERSION, 4)?;
            put_uint(k, DOC_TYPE_READ_VERSION, 2)
        })
    }

    /// Info (RFC 9559 §5.1.2), with the Title when there is one; the
    /// Duration last, as a placeholder 0, when it is to be patched.
    fn write_info(k: &mut dyn Sink, title: Option<&str>, with_duration: bool) -> Result<()> {
        put_master(k, ids::INFO, &|k| {
            put_uint(k, ids::TIMESTAMP_SCALE, TIMESTAMP_SCALE_NS)?;
            put_bytes(k, ids::MUXING_APP, APP)?;
            put_bytes(k, ids::WRITING_APP, APP)?;
            if let Some(t) = title {
                put_bytes(k, ids::TITLE, t.as_bytes())?;
            }
            if with_duration {
                put_float(k, ids::DURATION, 0)?;
            }
            Ok(())
        })
    }

    /// SeekHead (RFC 9559 §5.1.1): an entry per (ID, position) of
    /// `entries` (Info, Tracks, and Chapters, Attachments and Tags when
    /// written), and Cues last with an 8-byte position when the sink can
    /// patch it. Positions are relative to the Segment's data.
    fn write_seek_head(k: &mut dyn Sink, entries: &[(u64, u64)], cues: bool) -> Result<()> {
        put_master(k, ids::SEEK_HEAD, &|k| {
            for &(id, at) in entries {
                seek_entry(k, id, at)?;
            }
            if cues {
                seek_entry(k, ids::CUES, 0)?;
            }
            Ok(())
        })
    }

    fn write_tracks(k: &mut dyn Sink, ctx: &MuxContext) -> Result<()> {
        put_master(k, ids::TRACKS, &|k| {
            for (i, t) in ctx.tracks.iter().enumerate() {
                let kind_has_default = ctx.tracks.iter().any(|o| o.kind == t.kind && o.default);
                track::write_entry(k, t, i as u64 + 1, ctx.config(i), kind_has_default)?;
            }
            Ok(())
        })
    }

    /// Closes the open Cluster: patches its size on a patchable sink.
    fn close_cluster<K: Sink>(&mut self, sink: &mut K) -> Result<()> {
        if let Some(c) = self.cluster.take() {
            if !self.live {
                let size = sink.position().saturating_sub(c.data);
                let (v, _) = size_vint(size).map(|_| fixed_size_vint(size, 8)).map_err(|e| {
                    Error::new(
                        e.kind(),
                        c.start,
                        &"mkv muxer: a Cluster over 2^56 bytes (RFC 8794 4.4)",
                    )
                })?;
                sink.patch_at(c.start + 4, &v)?;
            }
            // A closed Cluster reaches the sink's destination (a sink that
            // combines small writes writes them out): a recorder that is
            // killed loses at most the open one.
            sink.flush()?;
        }
        Ok(())
    }

    /// Opens a Cluster with Timestamp `ts` (ms, at least 0; RFC 9559
    /// §5.1.3.1).
    fn open_cluster<K: Sink>(&mut self, sink: &mut K, ts: i64) -> Result<()> {
        let start = sink.position();
        let size = if self.live {
            UNKNOWN_SIZE
        } else {
            fixed_size_vint(0, 8).0
        };
        let (id, il) = id_bytes(ids::CLUSTER);
        sink.write_vectored(&[id.get(..il).unwrap_or(&[]), &size])?;
        let data = sink.position();
        put_uint(sink, ids::TIMESTAMP, ts.max(0) as u64)?;
        self.cluster = Some(Cluster {
            start,
            data,
            ts: ts.max(0),
        });
        Ok(())
    }

    /// Records a cue point for a keyframe at `time` ms in the open Cluster;
    /// thins the table when it is full.
    fn add_cue(&mut self, time: i64) {
        let (Some(c), Ok(time)) = (self.cluster, u64::try_from(time)) else {
            return;
        };
        let cluster = c.start.saturating_sub(self.segment_data);
        if let Some(last) = self.cues.last() {
            if time < last.time.saturating_add(self.cue_spacing) || last.cluster == cluster && last.time == time {
                return;
            }
        }
        if self.cues.is_full() {
            let mut i = 0usize;
            self.cues.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.cue_spacing = self.cue_spacing.saturating_mul(2).max(1000);
            if self
                .cues
                .last()
                .is_some_and(|l| time < l.time.saturating_add(self.cue_spacing))
            {
                return;
            }
        }
        let _ = self.cues.push(Cue { time, cluster });
    }

    /// Writes Cues (RFC 9559 §5.1.5) when there is a cue point; returns
    /// whether it did.
    fn write_cues<K: Sink>(&self, sink: &mut K) -> Result<bool> {
        let Some(track) = self.cue_track else {
            return Ok(false);
        };
        if self.cues.is_empty() {
            return Ok(false);
        }
        let number = track as u64 + 1;
        let point = |k: &mut dyn Sink, c: &Cue| {
            put_master(k, ids::CUE_POINT, &|k| {
                put_uint(k, ids::CUE_TIME, c.time)?;
                put_master(k, ids::CUE_TRACK_POSITIONS, &|k| {
                    put_uint(k, ids::CUE_TRACK, number)?;
                    put_uint(k, ids::CUE_CLUSTER_POSITION, c.cluster)
                })
            })
        };
        // Sized point by point: no nested re-measuring of every point.
        let mut size = 0u64;
        for c in &self.cues {
            size = size.saturating_add(measure(&|k| point(k, c))?);
        }
        ebml_write::put_head(sink, ids::CUES, size)?;
        for c in &self.cues {
            point(sink, c)?;
        }
        Ok(true)
    }

    /// The Block timestamp of `packet` in ms: its pts, or its dts, or for
    /// a packet with neither the end of the track's previous packet (its
    /// time plus its duration; the first packet of a track without times
    /// is at 0). Remembers where the next untimed packet goes.
    fn time_ms(t: &mut TrackOut, packet: &Packet<'_>, pos: u64) -> Result<i64> {
        let ts = packet.pts.or(packet.dts).or(t.next).unwrap_or(0);
        let dur = packet.duration.and_then(|d| i64::try_from(d).ok()).unwrap_or(0);
        t.next = Some(packet.dts.or(packet.pts).unwrap_or(ts).saturating_add(dur));
        let ms = rescale_q(ts, t.time_base, MS);
        if ms == i64::MIN {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                pos,
                &"mkv muxer: a timestamp out of range in milliseconds (RFC 9559 11.1)",
            ));
        }
        Ok(ms)
    }

    /// Checks that the track's decoding order does not go back, and
    /// remembers where it is.
    fn check_order(t: &mut TrackOut, packet: &Packet<'_>, ms: i64, pos: u64) -> Result<()> {
        let order = match packet.dts {
            Some(d) => Some(rescale_q(d, t.time_base, MS)),
            None if !t.reorders => Some(ms),
            None => None,
        };
        if let Some(o) = order {
            if t.last.is_some_and(|l| o < l) {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    pos,
                    &"mkv muxer: packets of a track out of decoding order (RFC 9559 10.1)",
                ));
            }
            t.last = Some(o);
        }
        Ok(())
    }

    /// Whether `packet` at `ms` must start a new Cluster.
    fn needs_cluster(&self, sink_pos: u64, t: &TrackOut, packet: &Packet<'_>, ms: i64) -> bool {
        let Some(c) = self.cluster else {
            return true;
        };
        let rel = ms.saturating_sub(c.ts);
        if i16::try_from(rel).is_err() {
            return true;
        }
        let boundary = if self.has_video {
            t.video && packet.flags.keyframe
        } else {
            true
        };
        boundary && (rel >= CLUSTER_TIME_MS || sink_pos.saturating_sub(c.data) >= CLUSTER_BYTES)
    }

    /// Writes `packet` at `ms` in the open Cluster: as a SimpleBlock (RFC
    /// 9559 §10.2), or, given a duration in ms or a DiscardPadding in ns, as
    /// a BlockGroup (§5.1.3.5) of its Block (§10.1; no keyframe bit there:
    /// a BlockGroup without ReferenceBlock is a keyframe), BlockDuration
    /// and DiscardPadding (§5.1.3.5.6), as ffmpeg orders them.
    fn write_block<K: Sink>(
        &self,
        sink: &mut K,
        index: usize,
        framing: Framing,
        packet: &Packet<'_>,
        ms: i64,
        (duration_ms, discard_ns): (Option<u64>, Option<i64>),
    ) -> Result<()> {
        let pos = sink.position();
        let c = self
            .cluster
            .ok_or(Error::new(ErrorKind::InvalidArgument, pos, &"mkv muxer: no Cluster"))?;
        let rel = i16::try_from(ms.saturating_sub(c.ts)).map_err(|_| {
            Error::new(
                ErrorKind::InvalidArgument,
                pos,
                &"mkv muxer: a timestamp before its Cluster's by more than 32768 ms (RFC 9559 10.1)",
            )
        })?;
        let opts = crate::codec::convert::to_length::LengthPrefixOptions::default();
        let (payload, size): (&[u8], u64) = match framing {
            Framing::AsIs => (packet.data, packet.data.len() as u64),
            Framing::Adts => {
                let (_, raw) = crate::codec::convert::adts::adts_to_raw(packet.data).map_err(|e| {
                    Error::new(
                        e.kind(),
                        pos,
                        &"mkv muxer: an AAC packet that is not one ADTS frame (ISO/IEC 14496-3 1.A.2)",
                    )
                })?;
                (raw, raw.len() as u64)
            }
            Framing::AnnexB(_) => (
                &[],
                crate::codec::convert::to_length::length_prefixed_size(packet.data, opts)?,
            ),
            Framing::Av1 => {
                let tu = av1::strip_temporal_delimiters(packet.data);
                (tu, tu.len() as u64)
            }
            Framing::WebVttCue => (packet.data, packet.data.len() as u64 + CUE_LINES.len() as u64),
        };
        let number = 0x80 | (index as u8 + 1);
        let [r0, r1] = rel.to_be_bytes();
        let grouped = duration_ms.is_some() || discard_ns.is_some();
        let flags = if packet.flags.keyframe && !grouped { 0x80 } else { 0 };
        let body = [number, r0, r1, flags];
        let block_size = size.saturating_add(4);
        let (sz, sl) = size_vint(block_size)?;
        // The BlockDuration and DiscardPadding elements after the Block,
        // when in a group (11 bytes each at most: a 2-byte ID, a size byte,
        // 8 bytes).
        let mut tail = [0u8; 22];
        let mut tail_len = 0usize;
        let mut group = ([0u8; 8], 0usize);
        if grouped {
            let mut t = crate::sink::SliceSink::new(&mut tail);
            if let Some(d) = duration_ms {
                put_uint(&mut t, ids::BLOCK_DURATION, d)?;
            }
            if let Some(d) = discard_ns {
                // Eight bytes, two's complement (RFC 8794 §7.1), last in
                // the group: [`DISCARD_LEN`] bytes that a Void can replace.
                put_bytes(&mut t, ids::DISCARD_PADDING, &d.to_be_bytes())?;
            }
            tail_len = t.position() as usize;
            let block_len = 1 + sl as u64 + block_size;
            group = size_vint(block_len.saturating_add(tail_len as u64))?;
        }
        let (gid, gl) = id_bytes(ids::BLOCK_GROUP);
        let (id, il) = if grouped {
            id_bytes(ids::BLOCK)
        } else {
            id_bytes(ids::SIMPLE_BLOCK)
        };
        let (gid, gsz) = if grouped {
            (gid.get(..gl).unwrap_or(&[]), group.0.get(..group.1).unwrap_or(&[]))
        } else {
            (&[][..], &[][..])
        };
        let head = [
            gid,
            gsz,
            id.get(..il).unwrap_or(&[]),
            sz.get(..sl).unwrap_or(&[]),
            &body,
        ];
        let tail = tail.get(..tail_len).unwrap_or(&[]);
        match framing {
            Framing::AnnexB(_) => {
                sink.write_vectored(&head)?;
                crate::codec::convert::to_length::write_length_prefixed(sink, packet.data, opts)?;
                sink.write_vectored(&[tail])
            }
            Framing::WebVttCue => {
                let [a, b, d, e, f] = head;
                sink.write_vectored(&[a, b, d, e, f, CUE_LINES, payload, tail])
            }
            _ => {
                let [a, b, d, e, f] = head;
                sink.write_vectored(&[a, b, d, e, f, payload, tail])
            }
        }
    }
}

/// A DiscardPadding element as written: a 2-byte ID, a 1-byte size, an
/// 8-byte value.
const DISCARD_LEN: u64 = 11;

/// How a track's packets' samples are known (see [`end_trim_ns`]).
#[derive(Debug, Clone, Copy)]
enum Trim {
    None,
    /// From the TOC byte (RFC 6716 §3.1), at 48 kHz.
    Opus,
    /// From the mode's window and the previous packet's (Vorbis I §4.3.1),
    /// walked over every packet of the track.
    Vorbis(super::vorbis::Vorbis),
}

/// The end trim of an Opus or Vorbis packet as DiscardPadding in ns (RFC
/// 9559 §5.1.3.5.6): the samples it holds (Opus: its TOC, RFC 6716 §3.1;
/// Vorbis: its windows, Vorbis I §4.3.1) past its duration, where the
/// duration is exact in samples (Ogg's time base: the last page's granule
/// position trims the last packet, RFC 7845 §4.5, Vorbis I §A.2) and
/// shorter; rounded as ffmpeg's `av_rescale_q`, which is how ffmpeg's
/// muxer writes the end trim its Ogg reader gives.
fn end_trim_ns(t: &mut TrackOut, packet: &Packet<'_>) -> Option<i64> {
    let (full, rate) = match &mut t.trim {
        Trim::None => return None,
        Trim::Opus => (crate::codec::opus::packet_samples(packet.data)?, 48_000),
        Trim::Vorbis(v) => (v.samples(*packet.data.first()?), v.rate),
    };
    let full = i64::from(full);
    let d = i64::try_from(packet.duration?).ok()?;
    // A duration in a coarser time base (Matroska's ms) may be rounded:
    // no trim is read from it.
    let ticks = i128::from(d) * i128::from(t.time_base.num) * i128::from(rate);
    let den = i128::from(t.time_base.den.max(1));
    if ticks % den != 0 {
        return None;
    }
    let samples = i64::try_from(ticks / den).ok()?;
    let trim = full.checked_sub(samples).filter(|&n| n > 0)?;
    Some(rescale_q(trim, Rational::new(1, rate), Rational::new(1, 1_000_000_000)))
}

/// The empty identifier and settings lines before a WebVTT cue's text
/// (the WebM WebVTT mapping; see [`Framing::WebVttCue`]).
const CUE_LINES: &[u8] = b"\n\n";

/// EBMLVersion (RFC 8794 §11.2.2).
const EBML_VERSION: u64 = 0x4286;
/// DocTypeVersion and DocTypeReadVersion (RFC 8794 §11.2.7, §11.2.8).
const DOC_TYPE_VERSION: u64 = 0x4287;
const DOC_TYPE_READ_VERSION: u64 = 0x4285;

/// A Seek entry (RFC 9559 §5.1.1.1) with an 8-byte SeekPosition, so that
/// every entry has the same size and the Cues one can be patched.
fn seek_entry(k: &mut dyn Sink, id: u64, pos: u64) -> Result<()> {
    let (i, il) = id_bytes(id);
    let id = i.get(..il).unwrap_or(&[]);
    put_master(k, ids::SEEK, &|k| {
        put_bytes(k, ids::SEEK_ID, id)?;
        put_uint8(k, ids::SEEK_POSITION, pos)
    })
}

impl FormatMuxer for MkvMuxer {
    fn new() -> Self {
        MkvMuxer::with_doc_type(false)
    }

    /// Checks the codec against the target and converts its configuration
    /// into the CodecPrivate Matroska stores (see `track::codec_private`).
    fn add_track(&mut self, ctx: &mut MuxContext, spec: &TrackSpec<'_>) -> Result<usize> {
        let t = spec.track;
        track::check(t, self.webm)?;
        let mut private = [0u8; MAX_CONFIG_BYTES];
        let (n, framing) = track::codec_private(t, spec.config, &mut private)?;
        let config = private.get(..n).unwrap_or(&[]);
        if self.tracks.is_full() {
            return Err(Error::capacity(0, &"mux: more tracks than MAX_TRACKS"));
        }
        // A video track the container gave no picture size: from its SPS.
        let sized: Track;
        let mut t = t;
        if t.kind == TrackKind::Video && (t.width == 0 || t.height == 0) {
            if let Some((width, height)) = crate::codec::convert::picture_size(t.codec, config) {
                sized = Track {
                    width,
                    height,
                    ..t.clone()
                };
                t = &sized;
            }
        }
        let index = ctx.push_track(&TrackSpec::new(t).with_config(config))?;
        let out = TrackOut {
            framing,
            time_base: t.time_base,
            video: t.kind == TrackKind::Video,
            subtitle: t.kind == TrackKind::Subtitle,
            reorders: may_reorder(t.codec),
            trim: match t.codec {
                crate::types::Codec::Opus => Trim::Opus,
                crate::types::Codec::Vorbis => {
                    let private = ByteRange {
                        offset: 0,
                        len: u32::try_from(config.len()).unwrap_or(0),
                    };
                    super::vorbis::Vorbis::from_private(&mut SliceSource::new(config), private, t.sample_rate)
                        .map_or(Trim::None, Trim::Vorbis)
                }
                _ => Trim::None,
            },
            pending_trim: None,
            last: None,
            next: None,
            delay_ms: track::codec_delay_ns(t.codec, config).map_or(0, |ns| {
                rescale_q(i64::try_from(ns).unwrap_or(0), Rational::new(1, 1_000_000_000), MS)
            }),
        };
        self.tracks
            .push(out)
            .map_err(|_| Error::capacity(0, &"mux: more tracks than MAX_TRACKS"))?;
        Ok(index)
    }

    fn write_header<K: Sink>(&mut self, sink: &mut K, scratch: &mut [u8], ctx: &mut MuxContext) -> Result<()> {
        self.write_header_with(sink, scratch, ctx, &[])
    }

    /// The header: EBML header, Segment, SeekHead, Info, Tracks, then
    /// Chapters, Attachments and Tags when there are any.
    fn write_header_with<K: Sink>(
        &mut self,
        sink: &mut K,
        _scratch: &mut [u8],
        ctx: &mut MuxContext,
        files: &[Attachment<'_>],
    ) -> Result<()> {
        attachments::check(files)?;
        self.live = !sink.can_patch();
        self.has_video = self.tracks.iter().any(|t| t.video);
        self.cue_track = self.tracks.iter().position(|t| t.video).or(Some(0));
        self.write_ebml_header(sink)?;
        let (id, il) = id_bytes(ids::SEGMENT);
        self.segment_size_at = sink.position() + il as u64;
        let size = if self.live {
            UNKNOWN_SIZE
        } else {
            fixed_size_vint(0, 8).0
        };
        sink.write_vectored(&[id.get(..il).unwrap_or(&[]), &size])?;
        self.segment_data = sink.position();
        let patch = !self.live;
        let title = tags::title(ctx);
        let ctx = &*ctx;
        // The sections after the SeekHead, in order, with their sizes.
        let sections: [(u64, u64); 5] = [
            (ids::INFO, measure(&|k| Self::write_info(k, title, patch))?),
            (ids::TRACKS, measure(&|k| Self::write_tracks(k, ctx))?),
            (ids::CHAPTERS, measure(&|k| chapters::write(k, ctx))?),
            (ids::ATTACHMENTS, measure(&|k| attachments::write(k, files))?),
            (ids::TAGS, measure(&|k| tags::write(k, ctx))?),
        ];
        let mut entries: heapless::Vec<(u64, u64), 5> = heapless::Vec::new();
        let mut at = 0u64;
        for &(id, len) in &sections {
            if len > 0 {
                let _ = entries.push((id, at));
            }
            at = at.saturating_add(len);
        }
        let seek_len = measure(&|k| Self::write_seek_head(k, &entries, patch))?;
        for e in &mut entries {
            e.1 = e.1.saturating_add(seek_len);
        }
        Self::write_seek_head(sink, &entries, patch)?;
        if patch {
            self.cues_seek_at = Some(sink.position() - CUES_SEEK_LEN);
        }
        Self::write_info(sink, title, patch)?;
        if patch {
            self.duration_at = Some(sink.position() - 8);
        }
        Self::write_tracks(sink, ctx)?;
        chapters::write(sink, ctx)?;
        attachments::write(sink, files)?;
        tags::write(sink, ctx)
    }

    fn write_packet<K: Sink>(
        &mut self,
        sink: &mut K,
        _scratch: &mut [u8],
        _ctx: &mut MuxContext,
        packet: &Packet<'_>,
    ) -> Result<()> {
        let pos = sink.position();
        let index = packet.track;
        let mut t =
            *self
                .tracks
                .get(index)
                .ok_or(Error::new(ErrorKind::InvalidArgument, pos, &"mkv muxer: no such track"))?;
        let ms = Self::time_ms(&mut t, packet, pos)?;
        Self::check_order(&mut t, packet, ms, pos)?;
        let ms = ms.saturating_add(t.delay_ms);
        let shift = *self.shift_ms.get_or_insert(ms.min(0).saturating_neg());
        let ms = ms.saturating_add(shift);
        if self.needs_cluster(pos, &t, packet, ms) {
            self.close_cluster(sink)?;
            self.open_cluster(sink, ms)?;
            if self.cue_track == Some(index) && !t.video {
                self.add_cue(ms);
            }
        }
        if self.cue_track == Some(index) && t.video && packet.flags.keyframe {
            self.add_cue(ms);
        }
        let dur = packet
            .duration
            .map_or(0, |d| rescale_q(i64::try_from(d).unwrap_or(0), t.time_base, MS));
        let group = (t.subtitle && packet.duration.is_some()).then_some(dur.max(0) as u64);
        // A trim only ends a track (ffmpeg's Ogg reader trims the packet of
        // the end-of-stream page): the padding of a Block the track goes on
        // after becomes a Void of its size (RFC 8794 §11.3.2). A sink that
        // cannot patch gets no DiscardPadding.
        if let Some(at) = t.pending_trim.take() {
            let mut void = [0u8; DISCARD_LEN as usize];
            let [id, size, ..] = &mut void;
            *id = VOID as u8;
            *size = 0x80 | (DISCARD_LEN as u8 - 2);
            sink.patch_at(at, &void)?;
        }
        let discard = end_trim_ns(&mut t, packet).filter(|_| !self.live);
        self.write_block(sink, index, t.framing, packet, ms, (group, discard))?;
        if discard.is_some() {
            t.pending_trim = Some(sink.position().saturating_sub(DISCARD_LEN));
        }
        if let Some(slot) = self.tracks.get_mut(index) {
            *slot = t;
        }
        self.end_ms = self.end_ms.max(ms.saturating_add(dur.max(0)));
        Ok(())
    }

    fn finish<K: Sink>(&mut self, sink: &mut K, _scratch: &mut [u8], _ctx: &mut MuxContext) -> Result<()> {
        self.close_cluster(sink)?;
        let cues_at = sink.position().saturating_sub(self.segment_data);
        let wrote_cues = self.write_cues(sink)?;
        if self.live {
            return Ok(());
        }
        if let Some(at) = self.cues_seek_at {
            if wrote_cues {
                sink.patch_at(at + CUES_SEEK_POS_AT, &cues_at.to_be_bytes())?;
            } else {
                // A Void of the Seek entry's size: 0xEC, a 1-byte size, zeros.
                let mut void = [0u8; CUES_SEEK_LEN as usize];
                let [id, size, ..] = &mut void;
                *id = VOID as u8;
                *size = 0x80 | (CUES_SEEK_LEN as u8 - 2);
                sink.patch_at(at, &void)?;
            }
        }
        if let Some(at) = self.duration_at {
            let ms = u64::try_from(self.end_ms).unwrap_or(0);
            sink.patch_at(at, &f64_bits_of_u64(ms).to_be_bytes())?;
        }
        let size = sink.position().saturating_sub(self.segment_data);
        size_vint(size)?;
        sink.patch_at(self.segment_size_at, &fixed_size_vint(size, 8).0)
    }
}

#[cfg(test)]
mod tests;
