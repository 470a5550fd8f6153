//! ISO base media file format: MP4, MOV, M4A, M4V, 3GP and fragmented MP4
//! (ISO/IEC 14496-12, with QuickTime File Format extensions).
//!
//! * The movie box is found by walking top-level box headers, so a `moov`
//!   after a multi-GiB `mdat` costs one seek. 64-bit sizes, size-0 last boxes
//!   and `co64` are handled.
//! * Sample tables (`stsz`/`stz2`, `stco`/`co64`, `stsc`, `stts`, `ctts`,
//!   `stss`) are never expanded: each track keeps a cursor and reads entries
//!   through the source (§8.6, §8.7).
//! * Packets are delivered in ffmpeg's order: among the tracks' next samples,
//!   the one with the lowest file offset unless their decode times are more
//!   than a second apart, then the earliest.
//! * Fragments (`moof`/`traf`/`tfhd`/`tfdt`/`trun`, §8.8) are read after the
//!   movie's own samples, in file order.
//! * Edit lists (§8.6.6) shift timestamps as ffmpeg does: the first non-empty
//!   edit's media time is subtracted, leading empty edits are added, and
//!   samples before the edit start are flagged `discard`.

pub mod boxes;
mod tags;

use self::boxes::{
    read_box_header, tfhd_flags, trun_flags, AudioSampleEntry, BoxHeader, MdhdV0, MdhdV1, MvhdV0, MvhdV1,
    VisualSampleEntry, SAMPLE_DEPENDS_YES, SAMPLE_NON_SYNC,
};
use crate::error::{Error, ErrorKind, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{rescale, ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};
use zerocopy::FromBytes;

/// Number of samples ffmpeg groups into one packet for uncompressed audio
/// stored one sample per `stsz` entry (`mov.c`, chunk demuxing).
const PCM_GROUP: u32 = 1024;

/// Samples and bytes of the next packet of a chunk read as uncompressed
/// audio, with `left` samples left in the chunk (ffmpeg `mov_build_index`).
fn chunk_group(mode: ChunkMode, left: u32) -> (u32, u32) {
    if mode.samples_per_frame >= 160 {
        (mode.samples_per_frame.min(left), mode.bytes_per_frame)
    } else if mode.samples_per_frame > 1 {
        let s = (PCM_GROUP / mode.samples_per_frame * mode.samples_per_frame)
            .min(left)
            .max(1);
        (s, (s / mode.samples_per_frame).saturating_mul(mode.bytes_per_frame))
    } else {
        let s = PCM_GROUP.min(left);
        (s, s.saturating_mul(mode.frame_bytes.max(1)))
    }
}

/// The next child box at `*at` of a parent ending at `end`, advancing `*at`
/// past it (to `end` when a box does not advance); `None` when no header
/// fits before `end`.
fn next_child<S: Source>(src: &mut S, at: &mut u64, end: u64) -> Result<Option<BoxHeader>> {
    if at.saturating_add(8) > end {
        return Ok(None);
    }
    let h = read_box_header(src, *at, end)?;
    *at = if h.end > *at { h.end } else { end };
    Ok(Some(h))
}

/// A table inside `stbl`: where its first entry is and how many there are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Table {
    off: u64,
    count: u32,
}

/// Uncompressed-audio chunk reading (QuickTime sound description v0/v1/v2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ChunkMode {
    /// Bytes per sample frame (all channels), when frames are read singly.
    frame_bytes: u32,
    /// Samples per compressed frame and bytes per frame (v1 sound
    /// descriptions, IMA4), or 0.
    samples_per_frame: u32,
    bytes_per_frame: u32,
}

/// One sample ready to deliver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sample {
    pos: u64,
    size: u32,
    dts: i64,
    cts: i64,
    duration: u32,
    key: bool,
}

/// Position in a track's sample tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Cursor {
    sample: u32,
    next_chunk: u32,
    left_in_chunk: u32,
    offset: u64,
    stsc_i: u32,
    spc: u32,
    stsc_next_first: u32,
    stts_i: u32,
    stts_left: u32,
    stts_delta: u32,
    ctts_i: u32,
    ctts_left: u32,
    ctts_off: i32,
    stss_i: u32,
    next_sync: u32,
    dts: i64,
}

/// Per-track state.
#[derive(Debug, Clone, Default)]
struct Mp4Track {
    index: usize,
    track_id: u32,
    timescale: u32,
    audio: bool,
    stsz: Table,
    stsz_const: u32,
    stz2_bits: u8,
    stco: Table,
    co64: bool,
    stsc: Table,
    stts: Table,
    ctts: Table,
    stss: Table,
    has_stss: bool,
    sample_count: u32,
    /// Subtracted from raw decode times (edit list).
    shift: i64,
    /// Presentation time where the edit starts, after the shift.
    start: i64,
    /// The edit's media time and its end in raw composition time (ffmpeg
    /// `mov_fix_index`): samples are read from the keyframe before the start
    /// and up to the first keyframe past the end.
    edit: Option<(i64, i64)>,
    /// A keyframe past the edit's end was seen (B-frames after it may still
    /// belong to the edit).
    key_after_edit: bool,
    /// The edit's end was reached: no more samples from the tables.
    edit_done: bool,
    chunk: Option<ChunkMode>,
    trex_duration: u32,
    trex_size: u32,
    trex_flags: u32,
    cur: Cursor,
    pending: Option<Sample>,
    /// Raw decode time after the last sample delivered (fragments continue
    /// from it when a `traf` has no `tfdt`).
    next_dts: i64,
}

/// Fragment reading state (§8.8).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Frag {
    /// Next top-level box to examine.
    top: u64,
    moof_start: u64,
    moof_end: u64,
    moof_child: u64,
    in_moof: bool,
    traf_end: u64,
    traf_child: u64,
    in_traf: bool,
    track: usize,
    base: u64,
    implicit: u64,
    def_duration: u32,
    def_size: u32,
    def_flags: u32,
    dts: i64,
    trun_left: u32,
    trun_entry: u64,
    trun_flags: u32,
    first_flags: Option<u32>,
    pos: u64,
    fragments: u32,
}

/// Where the tag-bearing boxes are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TagBoxes {
    pub(crate) ftyp: Option<ByteRange>,
    pub(crate) ilst: Option<(u64, u64)>,
    pub(crate) keys: Option<(u64, u64)>,
    pub(crate) udta: Option<(u64, u64)>,
}

/// Demuxer state for ISO BMFF.
#[derive(Debug, Clone)]
pub struct Mp4Demuxer {
    tracks: heapless::Vec<Mp4Track, MAX_TRACKS>,
    frag: Frag,
    fragmented: bool,
    in_fragments: bool,
    tag_boxes: TagBoxes,
    key_buf: heapless::String<64>,
    max_sample: u32,
    /// Set after a packet cut by the end of the input.
    cut: Option<u64>,
    /// Cover art in `ilst`/`covr`, delivered first as attached pictures:
    /// (track index, offset, length).
    covers: heapless::Vec<(usize, u64, u32), 4>,
    next_cover: usize,
    /// After a seek into fragments: (anchor track, anchor samples still to
    /// skip, landing time in microseconds).
    frag_skip: Option<(usize, u32, i64)>,
}

fn be32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_be_bytes(w)
}

/// Whether `e` is a failure of the source (the reader's I/O, its scratch)
/// rather than damage in the input: such errors always propagate, never end
/// a walk quietly or become a diagnostic, or a reader would silently lose
/// tracks or tags that a slice of the same bytes gives.
pub(crate) fn source_fault(e: &Error) -> bool {
    matches!(e.kind(), ErrorKind::Io(_) | ErrorKind::ScratchTooSmall)
}

/// `Ok(Some)` for a parsed value, `Ok(None)` for input damage (the caller
/// ends its walk there), `Err` for a [`source_fault`].
pub(crate) fn soft<T>(r: Result<T>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if source_fault(&e) => Err(e),
        Err(_) => Ok(None),
    }
}

/// Checks a table's entry count against its box: returns the count that fits.
fn table(ctx: &mut Context, h: &BoxHeader, header: u64, entry: u64, count: u32, code: &'static str) -> Table {
    let room = h.body_len().saturating_sub(header) / entry.max(1);
    let fit = (count as u64).min(room) as u32;
    if fit < count {
        ctx.diags.report(code, h.start);
    }
    Table {
        off: h.body + header,
        count: fit,
    }
}

/// Maps a sample entry's four-character code to a codec (ffmpeg `isom.c`).
fn codec_for(fourcc: &[u8; 4], bits: u16) -> (Codec, TrackKind) {
    use Codec as C;
    use TrackKind::{Audio, Video};
    match fourcc {
        b"raw " if bits > 8 || bits == 0 => (C::RawVideo, Video),
        b"raw " | b"NONE" => (C::PcmU8, Audio),
        b"sowt" | b"twos" if bits == 8 => (C::PcmS8, Audio),
        b"sowt" => (C::PcmS16Le, Audio),
        b"twos" => (C::PcmS16Be, Audio),
        _ => SAMPLE_ENTRIES
            .iter()
            .find(|(_, _, tags)| tags.contains(fourcc))
            .map_or((C::Unknown, TrackKind::Unknown), |&(c, k, _)| (c, k)),
    }
}

/// Sample entry types of `codec_for` (ffmpeg `isom.c`), as a table rather
/// than a `match`: less flash on thumbv7em.
static SAMPLE_ENTRIES: &[(Codec, TrackKind, &[[u8; 4]])] = {
    use Codec as C;
    use TrackKind::{Audio, Subtitle, Video};
    &[
        (C::H264, Video, &[*b"avc1", *b"avc3"]),
        (C::Hevc, Video, &[*b"hvc1", *b"hev1", *b"dvh1", *b"dvhe"]),
        (C::Vvc, Video, &[*b"vvc1", *b"vvi1"]),
        (C::Av1, Video, &[*b"av01"]),
        (C::Vp8, Video, &[*b"vp08"]),
        (C::Vp9, Video, &[*b"vp09"]),
        (C::Mpeg4, Video, &[*b"mp4v"]),
        (C::H263, Video, &[*b"s263", *b"h263", *b"H263"]),
        (C::Mjpeg, Video, &[*b"jpeg", *b"mjpa", *b"mjpb", *b"AVDJ"]),
        (C::Png, Video, &[*b"png "]),
        (
            C::ProRes,
            Video,
            &[*b"apch", *b"apcn", *b"apcs", *b"apco", *b"ap4h", *b"ap4x"],
        ),
        (C::Aac, Audio, &[*b"mp4a"]),
        (C::Mp3, Audio, &[*b".mp3", *b"ms\x00\x55"]),
        (C::Ac3, Audio, &[*b"ac-3", *b"sac3"]),
        (C::Eac3, Audio, &[*b"ec-3"]),
        (C::Ac4, Audio, &[*b"ac-4"]),
        (C::Opus, Audio, &[*b"Opus"]),
        (C::Flac, Audio, &[*b"fLaC"]),
        (C::Alac, Audio, &[*b"alac"]),
        (C::AmrNb, Audio, &[*b"samr"]),
        (C::AmrWb, Audio, &[*b"sawb"]),
        (C::Qcelp, Audio, &[*b"sqcp"]),
        (C::TrueHd, Audio, &[*b"mlpa"]),
        (C::Dts, Audio, &[*b"dtsc", *b"dtsh", *b"dtsl", *b"dtse", *b"dtsx"]),
        (C::Unknown, Audio, &[*b"mhm1", *b"mha1"]),
        (C::PcmS24Be, Audio, &[*b"in24"]),
        (C::PcmS32Be, Audio, &[*b"in32"]),
        (C::PcmF32Be, Audio, &[*b"fl32"]),
        (C::PcmF64Be, Audio, &[*b"fl64"]),
        (C::PcmMulaw, Audio, &[*b"ulaw"]),
        (C::PcmAlaw, Audio, &[*b"alaw"]),
        (C::AdpcmImaQt, Audio, &[*b"ima4"]),
        (C::Unknown, Audio, &[*b"lpcm", *b"ipcm", *b"fpcm"]),
        (C::MovText, Subtitle, &[*b"tx3g", *b"text"]),
        (C::Unknown, Subtitle, &[*b"mp4s"]),
        (C::Eia608, Subtitle, &[*b"c608"]),
        (C::WebVtt, Subtitle, &[*b"wvtt"]),
    ]
};

/// Bits per sample of the PCM codecs, for chunk reading.
fn pcm_bits(c: Codec) -> u32 {
    match c {
        Codec::PcmU8 | Codec::PcmS8 | Codec::PcmAlaw | Codec::PcmMulaw => 8,
        Codec::PcmS16Le | Codec::PcmS16Be => 16,
        Codec::PcmS24Le | Codec::PcmS24Be => 24,
        Codec::PcmS32Le | Codec::PcmS32Be | Codec::PcmF32Le | Codec::PcmF32Be => 32,
        Codec::PcmF64Le | Codec::PcmF64Be => 64,
        _ => 0,
    }
}

/// MPEG-4 systems objectTypeIndication to codec (ISO/IEC 14496-1 §7.2.6.6.2,
/// the MP4 registration authority's table).
fn codec_for_oti(oti: u8) -> Option<Codec> {
    Some(match oti {
        0x20 => Codec::Mpeg4,
        0x21 => Codec::H264,
        0x23 => Codec::Hevc,
        0x40 | 0x66..=0x68 => Codec::Aac,
        0x60..=0x65 => Codec::Mpeg2Video,
        0x69 | 0x6B => Codec::Mp3,
        0x6A => Codec::Mpeg1Video,
        0x6C => Codec::Mjpeg,
        0xA5 => Codec::Ac3,
        0xA6 => Codec::Eac3,
        0xA9 | 0xAC => Codec::Dts,
        0xAD => Codec::Opus,
        0xDD => Codec::Vorbis,
        0xE1 => Codec::Qcelp,
        0xE0 => Codec::DvdSub,
        _ => return None,
    })
}

/// Reads an MPEG-4 descriptor header (tag, size with up to 4 continuation
/// bytes; ISO/IEC 14496-1 §8.3.3). Returns (tag, body offset, body length).
fn descriptor<S: Source>(src: &mut S, at: u64, end: u64) -> Result<(u8, u64, u64)> {
    let tag: [u8; 1] = src.array(at)?;
    let mut len = 0u64;
    let mut p = at + 1;
    for _ in 0..4 {
        if p >= end {
            return Err(Error::malformed(
                p,
                "descriptor size runs past esds (ISO/IEC 14496-1 §8.3.3)",
            ));
        }
        let b: [u8; 1] = src.array(p)?;
        p += 1;
        len = (len << 7) | (b[0] & 0x7F) as u64;
        if b[0] & 0x80 == 0 {
            break;
        }
    }
    Ok((tag[0], p, len.min(end.saturating_sub(p))))
}

/// Parses an `esds` payload for the codec and DecoderSpecificInfo
/// (ISO/IEC 14496-14 §5.6, ISO/IEC 14496-1 §7.2.6.5).
fn parse_esds<S: Source>(src: &mut S, body: u64, end: u64, t: &mut Track) -> Result<()> {
    let mut p = body + 4; // version and flags
    let (tag, b, len) = descriptor(src, p, end)?;
    if tag != 0x03 {
        return Ok(());
    }
    let es_end = b + len;
    let flags: [u8; 3] = src.array(b)?;
    p = b + 3;
    if flags[2] & 0x80 != 0 {
        p += 2;
    }
    if flags[2] & 0x40 != 0 {
        let l: [u8; 1] = src.array(p)?;
        p += 1 + l[0] as u64;
    }
    if flags[2] & 0x20 != 0 {
        p += 2;
    }
    if p >= es_end {
        return Ok(());
    }
    let (tag, b, len) = descriptor(src, p, es_end)?;
    if tag != 0x04 || len < 13 {
        return Ok(());
    }
    let oti: [u8; 1] = src.array(b)?;
    if let Some(c) = codec_for_oti(oti[0]) {
        t.codec = c;
    }
    let br = src.u32_be(b + 9)?;
    if br > 0 {
        t.bit_rate = br;
    }
    let dc_end = b + len;
    let p = b + 13;
    if p < dc_end {
        let (tag, b, len) = descriptor(src, p, dc_end)?;
        if tag == 0x05 && len > 0 {
            t.config = Some(ByteRange {
                offset: b,
                len: len.min(u32::MAX as u64) as u32,
            });
        }
    }
    Ok(())
}

/// Reads the first sample entry of `stsd` (§8.5.2) into `t`; returns the
/// chunk-reading parameters for uncompressed audio.
fn parse_stsd<S: Source>(src: &mut S, ctx: &mut Context, h: &BoxHeader, t: &mut Track) -> Result<ChunkMode> {
    let mut mode = ChunkMode::default();
    let count = src.u32_be(h.body + 4)?;
    if count == 0 {
        return Ok(mode);
    }
    let e = read_box_header(src, h.body + 8, h.end)?;
    let mut fourcc = e.kind;
    t.codec_tag = u32::from_be_bytes(fourcc);
    let mut children = e.body;
    match t.kind {
        TrackKind::Video => {
            let b: [u8; 78] = src.array(e.body)?;
            if let Ok(v) = VisualSampleEntry::read_from_bytes(&b[..]) {
                t.width = v.width.get() as u32;
                t.height = v.height.get() as u32;
            }
            children = e.body + 78;
        }
        TrackKind::Audio => {
            let b: [u8; 28] = src.array(e.body)?;
            if let Ok(a) = AudioSampleEntry::read_from_bytes(&b[..]) {
                t.channels = a.channels.get();
                t.bits_per_sample = a.sample_size.get();
                t.sample_rate = a.sample_rate.get() >> 16;
                children = e.body + 28;
                match a.version.get() {
                    1 => {
                        let v1: [u8; 16] = src.array(children)?;
                        mode.samples_per_frame = be32(&v1, 0);
                        mode.bytes_per_frame = be32(&v1, 8);
                        children += 16;
                    }
                    2 => {
                        let v2: [u8; 36] = src.array(children)?;
                        let rate = f64::from_bits(u64::from_be_bytes(v2[4..12].try_into().unwrap_or([0; 8])));
                        if rate.is_finite() && rate > 0.0 && rate < 4.0e9 {
                            t.sample_rate = rate as u32;
                        }
                        t.channels = be32(&v2, 12).min(u16::MAX as u32) as u16;
                        t.bits_per_sample = be32(&v2, 20).min(u16::MAX as u32) as u16;
                        let flags = be32(&v2, 24);
                        mode.bytes_per_frame = be32(&v2, 28);
                        mode.samples_per_frame = be32(&v2, 32);
                        if &fourcc == b"lpcm" {
                            t.codec = lpcm_codec(flags, t.bits_per_sample);
                        }
                        children += 36;
                    }
                    _ => {}
                }
            }
        }
        _ => children = e.body + 8,
    }
    let (codec, kind) = if t.kind == TrackKind::Audio && &fourcc == b"raw " {
        (Codec::PcmU8, TrackKind::Audio)
    } else {
        codec_for(&fourcc, t.bits_per_sample)
    };
    if t.codec == Codec::Unknown {
        t.codec = codec;
    }
    if t.kind == TrackKind::Unknown {
        t.kind = kind;
    }
    // Child boxes of the sample entry: codec configuration and QuickTime
    // `wave`/`enda`/`frma`, ISO 23003-5 `pcmC`.
    let mut at = children;
    let mut guard = 0u32;
    let mut little_endian = false;
    while at.saturating_add(8) <= e.end && guard < 64 {
        guard += 1;
        let Some(c) = soft(read_box_header(src, at, e.end))? else {
            break;
        };
        match &c.kind {
            b"avcC" | b"hvcC" | b"av1C" | b"vpcC" | b"dOps" | b"dac3" | b"dec3" | b"dfLa" | b"alac" | b"glbl"
            | b"vvcC" | b"dac4" | b"ddts" | b"dmlp"
                if t.config.is_none() =>
            {
                let skip = if matches!(&c.kind, b"vpcC" | b"dfLa" | b"alac" | b"vvcC") {
                    4
                } else {
                    0
                };
                let len = c.body_len().saturating_sub(skip);
                t.config = Some(ByteRange {
                    offset: c.body + skip,
                    len: len.min(u32::MAX as u64) as u32,
                });
            }
            b"esds" => parse_esds(src, c.body, c.end, t)?,
            b"sinf" => {
                // Protected sample entry (ISO/IEC 14496-12 §8.12): the
                // original format is in `frma`.
                let mut w = c.body;
                let mut g = 0;
                while w.saturating_add(8) <= c.end && g < 16 {
                    g += 1;
                    let Some(x) = soft(read_box_header(src, w, c.end))? else {
                        break;
                    };
                    if &x.kind == b"frma" {
                        fourcc = src.array(x.body)?;
                        t.codec_tag = u32::from_be_bytes(fourcc);
                        let (codec, _) = codec_for(&fourcc, t.bits_per_sample);
                        if codec != Codec::Unknown {
                            t.codec = codec;
                        }
                    }
                    w = x.end;
                }
            }
            b"wave" => {
                // QuickTime: wave holds frma, esds, enda.
                let mut w = c.body;
                let mut g = 0;
                while w.saturating_add(8) <= c.end && g < 16 {
                    g += 1;
                    let Some(x) = soft(read_box_header(src, w, c.end))? else {
                        break;
                    };
                    match &x.kind {
                        b"esds" => parse_esds(src, x.body, x.end, t)?,
                        b"enda" => {
                            let v: [u8; 2] = src.array(x.body)?;
                            little_endian = v != [0, 0];
                        }
                        b"frma" => {
                            fourcc = src.array(x.body)?;
                            if t.codec == Codec::Unknown {
                                t.codec = codec_for(&fourcc, t.bits_per_sample).0;
                            }
                        }
                        _ => {}
                    }
                    w = x.end;
                }
            }
            b"enda" => {
                let v: [u8; 2] = src.array(c.body)?;
                little_endian = v != [0, 0];
            }
            b"pcmC" => {
                let v: [u8; 6] = src.array(c.body)?;
                let le = v[4] & 1 != 0;
                t.bits_per_sample = v[5] as u16;
                t.codec = match (&fourcc, le, v[5]) {
                    (b"fpcm", true, 64) => Codec::PcmF64Le,
                    (b"fpcm", false, 64) => Codec::PcmF64Be,
                    (b"fpcm", true, _) => Codec::PcmF32Le,
                    (b"fpcm", false, _) => Codec::PcmF32Be,
                    (_, true, 16) => Codec::PcmS16Le,
                    (_, false, 16) => Codec::PcmS16Be,
                    (_, true, 24) => Codec::PcmS24Le,
                    (_, false, 24) => Codec::PcmS24Be,
                    (_, true, 32) => Codec::PcmS32Le,
                    (_, false, 32) => Codec::PcmS32Be,
                    _ => t.codec,
                };
            }
            _ => {}
        }
        if c.end <= at {
            break;
        }
        at = c.end;
    }
    if little_endian {
        t.codec = match t.codec {
            Codec::PcmS16Be => Codec::PcmS16Le,
            Codec::PcmS24Be => Codec::PcmS24Le,
            Codec::PcmS32Be => Codec::PcmS32Le,
            Codec::PcmF32Be => Codec::PcmF32Le,
            Codec::PcmF64Be => Codec::PcmF64Le,
            c => c,
        };
    }
    if t.codec == Codec::AdpcmImaQt {
        mode.samples_per_frame = 64;
        mode.bytes_per_frame = 34 * t.channels as u32;
    }
    let bits = pcm_bits(t.codec);
    if bits > 0 {
        mode.frame_bytes = bits / 8 * t.channels as u32;
        t.bits_per_sample = bits as u16;
    }
    let _ = ctx;
    Ok(mode)
}

/// QuickTime `lpcm` format flags (kAudioFormatFlagIsFloat = 1,
/// IsBigEndian = 2) to a PCM codec.
fn lpcm_codec(flags: u32, bits: u16) -> Codec {
    let float = flags & 1 != 0;
    let be = flags & 2 != 0;
    match (float, be, bits) {
        (true, false, 64) => Codec::PcmF64Le,
        (true, true, 64) => Codec::PcmF64Be,
        (true, false, _) => Codec::PcmF32Le,
        (true, true, _) => Codec::PcmF32Be,
        (false, _, 8) => Codec::PcmS8,
        (false, false, 16) => Codec::PcmS16Le,
        (false, true, 16) => Codec::PcmS16Be,
        (false, false, 24) => Codec::PcmS24Le,
        (false, true, 24) => Codec::PcmS24Be,
        (false, false, 32) => Codec::PcmS32Le,
        (false, true, 32) => Codec::PcmS32Be,
        _ => Codec::Unknown,
    }
}

/// Decodes the packed ISO 639-2/T language of `mdhd` (§8.4.2.3).
fn language(packed: u16) -> crate::types::Language {
    let mut s = crate::types::Language::new();
    if packed == 0 || packed == 0x7FFF || packed < 0x400 {
        return s;
    }
    for shift in [10u16, 5, 0] {
        let c = ((packed >> shift) & 0x1F) as u8 + 0x60;
        if !c.is_ascii_lowercase() {
            return crate::types::Language::new();
        }
        let _ = s.push(c as char);
    }
    s
}

impl Mp4Demuxer {
    fn parse_moov<S: Source>(&mut self, src: &mut S, ctx: &mut Context, moov: &BoxHeader) -> Result<()> {
        let mut movie_timescale = 0u32;
        let mut movie_duration = 0u64;
        let mut mvex = None;
        let mut at = moov.body;
        let mut guard = 0u32;
        while at.saturating_add(8) <= moov.end {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                break;
            }
            let h = match read_box_header(src, at, moov.end) {
                Ok(h) => h,
                Err(e) if e.is_truncation() => break,
                Err(e) => return Err(e),
            };
            match &h.kind {
                b"mvhd" => {
                    let v: [u8; 1] = src.array(h.body)?;
                    if v[0] == 1 {
                        let b: [u8; 32] = src.array(h.body)?;
                        if let Ok(m) = MvhdV1::read_from_bytes(&b[..]) {
                            movie_timescale = m.timescale.get();
                            movie_duration = m.duration.get();
                        }
                    } else {
                        let b: [u8; 20] = src.array(h.body)?;
                        if let Ok(m) = MvhdV0::read_from_bytes(&b[..]) {
                            movie_timescale = m.timescale.get();
                            let d = m.duration.get();
                            movie_duration = if d == u32::MAX { 0 } else { d as u64 };
                        }
                    }
                }
                b"trak" => {
                    if let Err(e) = self.parse_trak(src, ctx, &h, movie_timescale) {
                        if e.is_truncation() || source_fault(&e) {
                            return Err(e);
                        }
                        ctx.diags.report("mp4.bad-trak", h.start);
                    }
                }
                b"mvex" => {
                    self.fragmented = true;
                    mvex = Some(h);
                }
                b"udta" => {
                    self.tag_boxes.udta = Some((h.body, h.end));
                    let mut u = h.body;
                    let mut g = 0;
                    while u.saturating_add(8) <= h.end && g < 256 {
                        g += 1;
                        let Some(c) = soft(read_box_header(src, u, h.end))? else {
                            break;
                        };
                        if &c.kind == b"meta" {
                            self.parse_meta(src, &c)?;
                        }
                        if c.end <= u {
                            break;
                        }
                        u = c.end;
                    }
                }
                b"meta" => self.parse_meta(src, &h)?,
                _ => {}
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        // `trex` may come before the tracks it describes.
        if let Some(h) = mvex {
            self.parse_mvex(src, &h)?;
        }
        if movie_timescale > 0 && movie_duration > 0 {
            let us = Rational::new(1, movie_timescale).to_micros(movie_duration.min(i64::MAX as u64) as i64);
            ctx.info.duration_us = Some(us.max(0) as u64);
        }
        Ok(())
    }

    /// `meta` (§8.11.1): a full box in ISO files, a plain container in
    /// QuickTime; holds `hdlr`, `keys` and `ilst`.
    fn parse_meta<S: Source>(&mut self, src: &mut S, h: &BoxHeader) -> Result<()> {
        let Some(probe) = soft(src.array::<8>(h.body))? else {
            return Ok(());
        };
        let mut at = if &probe[4..8] == b"hdlr" || &probe[4..8] == b"keys" || &probe[4..8] == b"ilst" {
            h.body
        } else {
            h.body + 4
        };
        let mut guard = 0;
        while at.saturating_add(8) <= h.end && guard < 64 {
            guard += 1;
            let Some(c) = soft(read_box_header(src, at, h.end))? else {
                break;
            };
            match &c.kind {
                b"ilst" if self.tag_boxes.ilst.is_none() => self.tag_boxes.ilst = Some((c.body, c.end)),
                b"keys" if self.tag_boxes.keys.is_none() => self.tag_boxes.keys = Some((c.body, c.end)),
                _ => {}
            }
            if c.end <= at {
                break;
            }
            at = c.end;
        }
        Ok(())
    }

    fn parse_mvex<S: Source>(&mut self, src: &mut S, mvex: &BoxHeader) -> Result<()> {
        let mut at = mvex.body;
        let mut guard = 0;
        while at.saturating_add(8) <= mvex.end && guard < 256 {
            guard += 1;
            let Some(h) = soft(read_box_header(src, at, mvex.end))? else {
                break;
            };
            if &h.kind == b"trex" {
                let b: [u8; 24] = src.array(h.body)?;
                let id = be32(&b, 4);
                if let Some(t) = self.tracks.iter_mut().find(|t| t.track_id == id) {
                    t.trex_duration = be32(&b, 12);
                    t.trex_size = be32(&b, 16);
                    t.trex_flags = be32(&b, 20);
                }
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        Ok(())
    }

    fn parse_trak<S: Source>(&mut self, src: &mut S, ctx: &mut Context, trak: &BoxHeader, movie_ts: u32) -> Result<()> {
        let mut t = Track::default();
        let mut m = Mp4Track::default();
        // Edit list: (segment duration in movie timescale, media time).
        let mut empty_movie = 0u64;
        let mut media_time: Option<i64> = None;
        let mut edit_dur_movie = 0u64;
        let mut edits = 0u32;
        // Walk trak → (tkhd, edts/elst, mdia → (mdhd, hdlr, minf → stbl)).
        let mut stack: heapless::Vec<(u64, u64), 8> = heapless::Vec::new();
        let _ = stack.push((trak.body, trak.end));
        let mut steps = 0u32;
        let mut stsd: Option<BoxHeader> = None;
        while let Some((at, end)) = stack.pop() {
            steps += 1;
            if steps > 4096 || at.saturating_add(8) > end {
                continue;
            }
            let h = match read_box_header(src, at, end) {
                Ok(h) => h,
                Err(e) if e.is_truncation() || source_fault(&e) => return Err(e),
                Err(_) => continue,
            };
            if h.end > at {
                let _ = stack.push((h.end, end));
            }
            match &h.kind {
                b"edts" | b"mdia" | b"minf" | b"stbl" if stack.push((h.body, h.end)).is_err() => {
                    ctx.diags.report("mp4.depth", h.start);
                }
                b"tkhd" => {
                    let v: [u8; 1] = src.array(h.body)?;
                    let id_at = if v[0] == 1 { h.body + 20 } else { h.body + 12 };
                    m.track_id = src.u32_be(id_at)?;
                }
                b"elst" => {
                    let v: [u8; 1] = src.array(h.body)?;
                    let entry = if v[0] == 1 { 20u64 } else { 12 };
                    let count = src.u32_be(h.body + 4)?;
                    let tab = table(ctx, &h, 8, entry, count, "mp4.elst-count-mismatch");
                    edits = tab.count;
                    for i in 0..tab.count.min(64) {
                        let e = tab.off + i as u64 * entry;
                        let (dur, mt) = if v[0] == 1 {
                            (src.u64_be(e)?, src.u64_be(e + 8)? as i64)
                        } else {
                            (src.u32_be(e)? as u64, src.u32_be(e + 4)? as i32 as i64)
                        };
                        if mt == -1 {
                            if media_time.is_none() {
                                empty_movie = empty_movie.saturating_add(dur);
                            }
                        } else if media_time.is_none() {
                            media_time = Some(mt);
                            edit_dur_movie = dur;
                        }
                    }
                }
                b"mdhd" => {
                    let v: [u8; 1] = src.array(h.body)?;
                    let (ts, dur, lang) = if v[0] == 1 {
                        let b: [u8; 34] = src.array(h.body)?;
                        let d = MdhdV1::read_from_bytes(&b[..]).map_err(|_| Error::malformed(h.body, "mdhd"))?;
                        (d.timescale.get(), d.duration.get(), d.language.get())
                    } else {
                        let b: [u8; 22] = src.array(h.body)?;
                        let d = MdhdV0::read_from_bytes(&b[..]).map_err(|_| Error::malformed(h.body, "mdhd"))?;
                        let dur = d.duration.get();
                        (
                            d.timescale.get(),
                            if dur == u32::MAX { 0 } else { dur as u64 },
                            d.language.get(),
                        )
                    };
                    m.timescale = ts;
                    t.duration = if dur > 0 { Some(dur) } else { None };
                    t.language = language(lang);
                }
                b"hdlr" => {
                    let k: [u8; 4] = src.array(h.body + 8)?;
                    // QuickTime puts a second (data) handler in minf: keep
                    // the media handler's kind.
                    let kind = match &k {
                        b"vide" => TrackKind::Video,
                        b"soun" => TrackKind::Audio,
                        b"sbtl" | b"subt" | b"text" | b"clcp" | b"subp" => TrackKind::Subtitle,
                        b"tmcd" | b"meta" | b"hint" => TrackKind::Data,
                        _ => TrackKind::Unknown,
                    };
                    if t.kind == TrackKind::Unknown {
                        t.kind = kind;
                    }
                }
                b"stsd" => stsd = Some(h),
                b"stts" => {
                    let n = src.u32_be(h.body + 4)?;
                    m.stts = table(ctx, &h, 8, 8, n, "mp4.stts-count-mismatch");
                }
                b"ctts" => {
                    let n = src.u32_be(h.body + 4)?;
                    m.ctts = table(ctx, &h, 8, 8, n, "mp4.ctts-count-mismatch");
                }
                b"stss" => {
                    let n = src.u32_be(h.body + 4)?;
                    m.stss = table(ctx, &h, 8, 4, n, "mp4.stss-count-mismatch");
                    m.has_stss = true;
                }
                b"stsc" => {
                    let n = src.u32_be(h.body + 4)?;
                    m.stsc = table(ctx, &h, 8, 12, n, "mp4.stsc-count-mismatch");
                }
                b"stco" | b"co64" => {
                    let n = src.u32_be(h.body + 4)?;
                    m.co64 = &h.kind == b"co64";
                    let entry = if m.co64 { 8 } else { 4 };
                    m.stco = table(ctx, &h, 8, entry, n, "mp4.stco-count-mismatch");
                }
                b"stsz" => {
                    let b: [u8; 12] = src.array(h.body)?;
                    m.stsz_const = be32(&b, 4);
                    m.sample_count = be32(&b, 8);
                    if m.stsz_const == 0 {
                        m.stsz = table(ctx, &h, 12, 4, m.sample_count, "mp4.stsz-count-mismatch");
                        m.sample_count = m.stsz.count;
                    } else {
                        m.stsz = Table {
                            off: h.body + 12,
                            count: m.sample_count,
                        };
                    }
                }
                b"stz2" => {
                    let b: [u8; 12] = src.array(h.body)?;
                    m.stz2_bits = b[7];
                    let n = be32(&b, 8);
                    if !matches!(m.stz2_bits, 4 | 8 | 16) {
                        return Err(Error::malformed(h.body, "stz2 field size not 4, 8 or 16 (§8.7.3.3)"));
                    }
                    let room = h.body_len().saturating_sub(12).saturating_mul(8) / m.stz2_bits as u64;
                    let fit = (n as u64).min(room) as u32;
                    if fit < n {
                        ctx.diags.report("mp4.stsz-count-mismatch", h.start);
                    }
                    m.stsz = Table {
                        off: h.body + 12,
                        count: fit,
                    };
                    m.sample_count = fit;
                }
                _ => {}
            }
        }
        if m.timescale == 0 {
            return Err(Error::malformed(
                trak.start,
                "trak without a usable mdhd timescale (§8.4.2)",
            ));
        }
        let mut chunk_mode = ChunkMode::default();
        if let Some(h) = stsd {
            chunk_mode = parse_stsd(src, ctx, &h, &mut t)?;
        }
        t.id = m.track_id;
        t.time_base = Rational::new(1, m.timescale);
        t.frames = Some(m.sample_count as u64);
        m.audio = t.kind == TrackKind::Audio;
        // ffmpeg reads uncompressed audio by chunk when stts says every
        // sample lasts one tick.
        if m.audio && m.stts.count == 1 && src.u32_be(m.stts.off + 4)? == 1 {
            if chunk_mode.frame_bytes == 0 && chunk_mode.samples_per_frame == 0 {
                chunk_mode.frame_bytes = m.stsz_const;
            }
            if chunk_mode.frame_bytes > 0 || chunk_mode.samples_per_frame > 0 {
                m.chunk = Some(chunk_mode);
                t.frames = None;
            }
        }
        if edits > 0 {
            let empty = if movie_ts > 0 {
                rescale(
                    empty_movie.min(i64::MAX as u64) as i64,
                    Rational::new(1, movie_ts),
                    t.time_base,
                )
            } else {
                0
            };
            let mt = media_time.unwrap_or(0);
            m.shift = mt.saturating_sub(empty);
            m.start = empty;
            if media_time.is_some() {
                let dur = edit_dur_movie;
                let end = if dur == 0 || movie_ts == 0 {
                    i64::MAX
                } else {
                    mt.saturating_add(rescale(
                        dur.min(i64::MAX as u64) as i64,
                        Rational::new(1, movie_ts),
                        t.time_base,
                    ))
                };
                m.edit = Some((mt, end));
            }
            if edits > 2 || (edits == 2 && empty_movie == 0) {
                ctx.diags.report("mp4.complex-edit-list", trak.start);
            }
        }
        if t.kind == TrackKind::Video && t.codec == Codec::Unknown && t.width == 0 {
            t.kind = TrackKind::Data;
        }
        let Some(index) = ctx.add_track(t, trak.start) else {
            return Ok(());
        };
        m.index = index;
        if self.tracks.push(m).is_err() {
            ctx.diags.report("track-capacity", trak.start);
        }
        Ok(())
    }

    /// Puts `t`'s cursor at its first sample.
    fn reset_cursor<S: Source>(src: &mut S, t: &mut Mp4Track) -> Result<()> {
        t.cur = Cursor {
            stsc_i: u32::MAX,
            next_sync: u32::MAX,
            ..Cursor::default()
        };
        t.edit_done = false;
        t.key_after_edit = false;
        if t.stsc.count > 0 {
            t.cur.stsc_next_first = src.u32_be(t.stsc.off)?;
        }
        if t.has_stss && t.stss.count > 0 {
            t.cur.next_sync = src.u32_be(t.stss.off)?;
        }
        t.next_dts = 0;
        Ok(())
    }

    /// Reads the size of sample `i` (0-based) from `stsz`/`stz2`.
    fn sample_size<S: Source>(src: &mut S, t: &Mp4Track, i: u32) -> Result<u32> {
        if t.stsz_const != 0 {
            return Ok(t.stsz_const);
        }
        match t.stz2_bits {
            0 => src.u32_be(t.stsz.off + i as u64 * 4),
            16 => {
                let b: [u8; 2] = src.array(t.stsz.off + i as u64 * 2)?;
                Ok(u16::from_be_bytes(b) as u32)
            }
            8 => {
                let b: [u8; 1] = src.array(t.stsz.off + i as u64)?;
                Ok(b[0] as u32)
            }
            _ => {
                let b: [u8; 1] = src.array(t.stsz.off + i as u64 / 2)?;
                Ok(if i % 2 == 0 {
                    (b[0] >> 4) as u32
                } else {
                    (b[0] & 0xF) as u32
                })
            }
        }
    }

    /// Enters the next non-empty chunk; false when the chunk table ends.
    fn enter_chunk<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track) -> Result<bool> {
        loop {
            let chunk = t.cur.next_chunk;
            if chunk >= t.stco.count {
                if t.cur.sample < t.sample_count {
                    ctx.diags.report("mp4.stco-too-short", t.stco.off);
                }
                return Ok(false);
            }
            let mut guard = 0u32;
            while t.cur.stsc_next_first != 0 && chunk.saturating_add(1) >= t.cur.stsc_next_first {
                guard += 1;
                if guard > 1_000_000 {
                    return Err(Error::malformed(t.stsc.off, "stsc does not advance (§8.7.4)"));
                }
                let i = t.cur.stsc_i.wrapping_add(1);
                t.cur.stsc_i = i;
                let e = t.stsc.off + i as u64 * 12;
                t.cur.spc = src.u32_be(e + 4)?;
                let next = i.saturating_add(1);
                let nf = if next < t.stsc.count { src.u32_be(e + 12)? } else { 0 };
                t.cur.stsc_next_first = if nf > t.cur.stsc_next_first { nf } else { 0 };
            }
            t.cur.offset = if t.co64 {
                src.u64_be(t.stco.off + chunk as u64 * 8)?
            } else {
                src.u32_be(t.stco.off + chunk as u64 * 4)? as u64
            };
            t.cur.next_chunk = chunk + 1;
            t.cur.left_in_chunk = t.cur.spc;
            if t.cur.spc > 0 {
                return Ok(true);
            }
        }
    }

    /// Advances the decode-time cursor by `n` samples, returning the
    /// duration of those samples.
    fn advance_stts<S: Source>(src: &mut S, t: &mut Mp4Track, mut n: u32) -> Result<u64> {
        let mut total = 0u64;
        let mut guard = 0u32;
        while n > 0 {
            if t.cur.stts_left == 0 {
                guard += 1;
                if t.cur.stts_i >= t.stts.count || guard > 1_000_000 {
                    return Ok(total);
                }
                let e = t.stts.off + t.cur.stts_i as u64 * 8;
                t.cur.stts_left = src.u32_be(e)?;
                t.cur.stts_delta = src.u32_be(e + 4)?;
                t.cur.stts_i += 1;
                continue;
            }
            let k = n.min(t.cur.stts_left);
            t.cur.stts_left -= k;
            n -= k;
            let d = k as u64 * t.cur.stts_delta as u64;
            total = total.saturating_add(d);
            t.cur.dts = t.cur.dts.saturating_add(d.min(i64::MAX as u64) as i64);
        }
        Ok(total)
    }

    /// The composition offset of the current sample, advancing `ctts`.
    fn next_ctts<S: Source>(src: &mut S, t: &mut Mp4Track) -> Result<i64> {
        let mut guard = 0u32;
        while t.cur.ctts_left == 0 {
            guard += 1;
            if t.cur.ctts_i >= t.ctts.count || guard > 1_000_000 {
                return Ok(0);
            }
            let e = t.ctts.off + t.cur.ctts_i as u64 * 8;
            t.cur.ctts_left = src.u32_be(e)?;
            t.cur.ctts_off = src.u32_be(e + 4)? as i32;
            t.cur.ctts_i += 1;
        }
        t.cur.ctts_left -= 1;
        Ok(t.cur.ctts_off as i64)
    }

    /// Computes the next sample of `t` from its tables.
    /// Computes the next sample of `t`, ending the track after the first
    /// keyframe past its edit (ffmpeg `mov_fix_index`; with composition
    /// offsets a second keyframe is waited for, since B-frames after the
    /// first may still fall inside the edit).
    fn next_sample<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track) -> Result<Option<Sample>> {
        if t.edit_done {
            return Ok(None);
        }
        let Some(s) = Self::table_sample(src, ctx, t)? else {
            return Ok(None);
        };
        if let Some((_, end)) = t.edit {
            let cts = s.dts.saturating_add(s.cts);
            if cts.saturating_add(s.duration as i64) >= end && (s.key || t.audio) {
                if t.ctts.count > 0 && !t.audio && !t.key_after_edit {
                    t.key_after_edit = true;
                } else {
                    t.edit_done = true;
                }
            }
        }
        Ok(Some(s))
    }

    /// The first sample ffmpeg keeps for an edit starting at media time
    /// `mt`: the last keyframe whose decode time, and then presentation time,
    /// is at or before it (audio searches a second earlier for decoder
    /// priming).
    fn edit_start<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track, mt: i64) -> Result<u32> {
        let search = if t.audio {
            mt.saturating_sub(t.timescale as i64).max(0)
        } else {
            mt
        };
        let mut n = Self::sample_at(src, t, search, true)?;
        if t.ctts.count > 0 && t.has_stss {
            // Step back over keyframes shown after the search time.
            let mut guard = 0;
            loop {
                guard += 1;
                Self::position(src, ctx, t, n)?;
                let Some(sm) = Self::table_sample(src, ctx, t)? else {
                    break;
                };
                if sm.dts.saturating_add(sm.cts) <= search || n == 0 || guard > 64 {
                    break;
                }
                let prev = n - 1;
                let key = Self::sample_at_key_before(src, t, prev)?;
                if key >= n {
                    break;
                }
                n = key;
            }
        }
        Ok(n)
    }

    /// Puts `t` where a read from the beginning starts: its first sample, or
    /// the first sample kept by its edit list; and computes its first
    /// pending sample.
    fn restart<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track) -> Result<()> {
        if let (Some((mt, _)), None) = (t.edit, t.chunk) {
            if t.sample_count > 0 {
                let n = Self::edit_start(src, ctx, t, mt)?;
                Self::position(src, ctx, t, n)?;
            }
        }
        t.pending = Self::next_sample(src, ctx, t)?;
        Ok(())
    }

    /// The last sync sample at or before sample `n` (0-based).
    fn sample_at_key_before<S: Source>(src: &mut S, t: &Mp4Track, n: u32) -> Result<u32> {
        let mut key = 0u32;
        scan_entries::<S, 4>(src, t.stss.off, 0, t.stss.count, |_, e| {
            let s = u32::from_be_bytes(e);
            if s == 0 || s - 1 > n {
                return false;
            }
            key = s - 1;
            true
        })?;
        Ok(key)
    }

    fn table_sample<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track) -> Result<Option<Sample>> {
        if t.cur.sample >= t.sample_count && t.chunk.is_none() {
            return Ok(None);
        }
        if t.cur.left_in_chunk == 0 && !Self::enter_chunk(src, ctx, t)? {
            return Ok(None);
        }
        if let Some(mode) = t.chunk {
            // Uncompressed audio: up to 1024 samples of the chunk at a time.
            let (samples, size) = chunk_group(mode, t.cur.left_in_chunk);
            let dts = t.cur.dts;
            let pos = t.cur.offset;
            Self::advance_stts(src, t, samples)?;
            t.cur.left_in_chunk -= samples;
            t.cur.sample = t.cur.sample.saturating_add(samples);
            t.cur.offset = t.cur.offset.saturating_add(size as u64);
            return Ok(Some(Sample {
                pos,
                size,
                dts,
                cts: 0,
                duration: samples,
                key: true,
            }));
        }
        let i = t.cur.sample;
        let size = Self::sample_size(src, t, i)?;
        let dts = t.cur.dts;
        let duration = Self::advance_stts(src, t, 1)?.min(u32::MAX as u64) as u32;
        let cts = if t.ctts.count > 0 { Self::next_ctts(src, t)? } else { 0 };
        let key = if !t.has_stss {
            true
        } else if i.saturating_add(1) == t.cur.next_sync {
            t.cur.stss_i += 1;
            t.cur.next_sync = if t.cur.stss_i < t.stss.count {
                src.u32_be(t.stss.off + t.cur.stss_i as u64 * 4)?
            } else {
                u32::MAX
            };
            true
        } else {
            false
        };
        let pos = t.cur.offset;
        t.cur.offset = t.cur.offset.saturating_add(size as u64);
        t.cur.left_in_chunk -= 1;
        t.cur.sample += 1;
        Ok(Some(Sample {
            pos,
            size,
            dts,
            cts,
            duration,
            key,
        }))
    }

    fn packet<'s, S: Source>(src: &'s mut S, t: &Mp4Track, s: Sample, limits_max: u32) -> Result<Packet<'s>> {
        if s.size > limits_max {
            return Err(Error::limit(s.pos, "sample larger than Limits::max_packet"));
        }
        let avail = src.len().saturating_sub(s.pos);
        let truncated = (s.size as u64) > avail && avail > 0;
        let len = if truncated { avail as usize } else { s.size as usize };
        let data = src.bytes(s.pos, len)?;
        let dts = s.dts.saturating_sub(t.shift);
        let pts = s.dts.saturating_add(s.cts).saturating_sub(t.shift);
        let discard = if t.audio {
            pts.saturating_add(s.duration as i64) <= t.start
        } else {
            pts < t.start
        };
        Ok(Packet {
            track: t.index,
            pts: Some(pts),
            dts: Some(dts),
            duration: Some(s.duration as u64),
            flags: PacketFlags {
                keyframe: s.key,
                discard,
                truncated,
            },
            pos: Some(s.pos),
            contiguous: true,
            data,
        })
    }

    /// Picks the track whose pending sample comes next (ffmpeg
    /// `mov_find_next_sample`).
    fn pick(&self) -> Option<usize> {
        let mut best: Option<(usize, i64, u64)> = None;
        for (i, t) in self.tracks.iter().enumerate() {
            let Some(s) = &t.pending else { continue };
            let dts = rescale(
                s.dts.saturating_sub(t.shift),
                Rational::new(1, t.timescale),
                Rational::new(1, 1_000_000),
            );
            best = match best {
                None => Some((i, dts, s.pos)),
                Some((bi, bd, bp)) => {
                    let close = dts.abs_diff(bd) <= 1_000_000;
                    if (close && s.pos < bp) || (!close && dts < bd) {
                        Some((i, dts, s.pos))
                    } else {
                        Some((bi, bd, bp))
                    }
                }
            };
        }
        best.map(|b| b.0)
    }

    /// Moves to the next top-level `moof` at or after `frag.top`.
    fn next_moof<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<bool> {
        let len = src.len();
        let mut guard = 0u32;
        while self.frag.top.saturating_add(8) <= len {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                ctx.diags.report("mp4.too-many-boxes", self.frag.top);
                return Ok(false);
            }
            let h = read_box_header(src, self.frag.top, len)?;
            let next = h.end;
            if &h.kind == b"moof" {
                if h.clamped {
                    return Err(Error::truncated(h.start, "moof runs past the end of the file"));
                }
                self.frag.fragments += 1;
                if self.frag.fragments > ctx.limits.max_fragments {
                    return Err(Error::limit(h.start, "more fragments than Limits::max_fragments"));
                }
                self.frag.moof_start = h.start;
                self.frag.moof_end = h.end;
                self.frag.moof_child = h.body;
                self.frag.implicit = h.start;
                self.frag.in_moof = true;
                self.frag.top = next;
                return Ok(true);
            }
            if next <= self.frag.top {
                return Ok(false);
            }
            self.frag.top = next;
        }
        Ok(false)
    }

    /// Reads `tfhd` and `tfdt` of the `traf` at `h` (§8.8.7, §8.8.12).
    fn enter_traf<S: Source>(&mut self, src: &mut S, ctx: &mut Context, h: &BoxHeader) -> Result<bool> {
        let mut at = h.body;
        let mut tfhd = false;
        let mut tfdt: Option<i64> = None;
        let mut guard = 0;
        while at.saturating_add(8) <= h.end && guard < 256 {
            guard += 1;
            let c = read_box_header(src, at, h.end)?;
            match &c.kind {
                b"tfhd" => {
                    let vf = src.u32_be(c.body)?;
                    let flags = vf & 0xFF_FFFF;
                    let id = src.u32_be(c.body + 4)?;
                    let Some(ti) = self.tracks.iter().position(|t| t.track_id == id) else {
                        ctx.diags.report("mp4.traf-unknown-track", c.start);
                        return Ok(false);
                    };
                    let t = self.tracks.get(ti).ok_or(Error::malformed(c.start, "track"))?;
                    let mut p = c.body + 8;
                    let mut base = if flags & tfhd_flags::DEFAULT_BASE_IS_MOOF != 0 {
                        self.frag.moof_start
                    } else {
                        self.frag.implicit
                    };
                    if flags & tfhd_flags::BASE_DATA_OFFSET != 0 {
                        base = src.u64_be(p)?;
                        p += 8;
                    }
                    if flags & tfhd_flags::DESCRIPTION_INDEX != 0 {
                        p += 4;
                    }
                    self.frag.def_duration = t.trex_duration;
                    self.frag.def_size = t.trex_size;
                    self.frag.def_flags = t.trex_flags;
                    if flags & tfhd_flags::DEFAULT_DURATION != 0 {
                        self.frag.def_duration = src.u32_be(p)?;
                        p += 4;
                    }
                    if flags & tfhd_flags::DEFAULT_SIZE != 0 {
                        self.frag.def_size = src.u32_be(p)?;
                        p += 4;
                    }
                    if flags & tfhd_flags::DEFAULT_FLAGS != 0 {
                        self.frag.def_flags = src.u32_be(p)?;
                    }
                    self.frag.track = ti;
                    self.frag.base = base;
                    self.frag.implicit = base;
                    tfhd = true;
                }
                b"tfdt" => {
                    let v: [u8; 1] = src.array(c.body)?;
                    tfdt = Some(if v[0] == 1 {
                        src.u64_be(c.body + 4)?.min(i64::MAX as u64) as i64
                    } else {
                        src.u32_be(c.body + 4)? as i64
                    });
                }
                _ => {}
            }
            if c.end <= at {
                break;
            }
            at = c.end;
        }
        if !tfhd {
            ctx.diags.report("mp4.traf-without-tfhd", h.start);
            return Ok(false);
        }
        let t = self
            .tracks
            .get(self.frag.track)
            .ok_or(Error::malformed(h.start, "track"))?;
        self.frag.dts = tfdt.unwrap_or(t.next_dts);
        self.frag.traf_child = h.body;
        self.frag.traf_end = h.end;
        self.frag.in_traf = true;
        self.frag.trun_left = 0;
        Ok(true)
    }

    /// Reads a `trun` header (§8.8.8).
    fn enter_trun<S: Source>(&mut self, src: &mut S, ctx: &mut Context, h: &BoxHeader) -> Result<()> {
        let vf = src.u32_be(h.body)?;
        let flags = vf & 0xFF_FFFF;
        let count = src.u32_be(h.body + 4)?;
        let mut p = h.body + 8;
        let mut pos = self.frag.implicit;
        if flags & trun_flags::DATA_OFFSET != 0 {
            let off = src.u32_be(p)? as i32 as i64;
            pos = (self.frag.base as i64).saturating_add(off).max(0) as u64;
            p += 4;
        }
        self.frag.first_flags = None;
        if flags & trun_flags::FIRST_FLAGS != 0 {
            self.frag.first_flags = Some(src.u32_be(p)?);
            p += 4;
        }
        let entry = Self::trun_entry_size(flags);
        let room = match h.end.saturating_sub(p).checked_div(entry) {
            Some(room) => room,
            // No per-sample fields: every sample has the default size, so no
            // more of them than the rest of the input can hold (empty ones
            // count a byte each, so a count of 2^32 cannot make unbounded
            // work); one more may be cut by the end of the input.
            None => src.len().saturating_sub(pos) / self.frag.def_size.max(1) as u64 + 1,
        };
        let fit = (count as u64).min(room) as u32;
        if fit < count {
            ctx.diags.report("mp4.trun-count-mismatch", h.start);
        }
        self.frag.trun_left = fit;
        self.frag.trun_entry = p;
        self.frag.trun_flags = flags;
        self.frag.pos = pos;
        Ok(())
    }

    fn trun_entry_size(flags: u32) -> u64 {
        [
            trun_flags::DURATION,
            trun_flags::SIZE,
            trun_flags::FLAGS,
            trun_flags::CTS,
        ]
        .iter()
        .filter(|&&f| flags & f != 0)
        .count() as u64
            * 4
    }

    /// The next sample from fragments.
    fn next_fragment_sample<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<Option<(usize, Sample)>> {
        let mut guard = 0u64;
        loop {
            guard += 1;
            if guard > 1 << 24 {
                return Err(Error::malformed(self.frag.top, "fragment walk does not advance"));
            }
            if self.frag.trun_left > 0 {
                let f = self.frag.trun_flags;
                let mut p = self.frag.trun_entry;
                let mut duration = self.frag.def_duration;
                let mut size = self.frag.def_size;
                let mut sflags = self.frag.first_flags.take().unwrap_or(self.frag.def_flags);
                let mut cts = 0i64;
                if f & trun_flags::DURATION != 0 {
                    duration = src.u32_be(p)?;
                    p += 4;
                }
                if f & trun_flags::SIZE != 0 {
                    size = src.u32_be(p)?;
                    p += 4;
                }
                if f & trun_flags::FLAGS != 0 {
                    sflags = src.u32_be(p)?;
                    p += 4;
                }
                if f & trun_flags::CTS != 0 {
                    cts = src.u32_be(p)? as i32 as i64;
                    p += 4;
                }
                self.frag.trun_entry = p;
                self.frag.trun_left -= 1;
                let t = self
                    .tracks
                    .get_mut(self.frag.track)
                    .ok_or(Error::malformed(p, "track"))?;
                let key = t.audio || sflags & (SAMPLE_NON_SYNC | SAMPLE_DEPENDS_YES) == 0;
                let s = Sample {
                    pos: self.frag.pos,
                    size,
                    dts: self.frag.dts,
                    cts,
                    duration,
                    key,
                };
                self.frag.pos = self.frag.pos.saturating_add(size as u64);
                self.frag.implicit = self.frag.pos;
                self.frag.dts = self.frag.dts.saturating_add(duration as i64);
                t.next_dts = self.frag.dts;
                return Ok(Some((self.frag.track, s)));
            }
            if self.frag.in_traf {
                let (mut at, end) = (self.frag.traf_child, self.frag.traf_end);
                let child = next_child(src, &mut at, end)?;
                self.frag.traf_child = at;
                match child {
                    None => self.frag.in_traf = false,
                    Some(h) if &h.kind == b"trun" => self.enter_trun(src, ctx, &h)?,
                    Some(_) => {}
                }
                continue;
            }
            if self.frag.in_moof {
                let (mut at, end) = (self.frag.moof_child, self.frag.moof_end);
                let child = next_child(src, &mut at, end)?;
                self.frag.moof_child = at;
                match child {
                    None => self.frag.in_moof = false,
                    Some(h) if &h.kind == b"traf" => {
                        self.enter_traf(src, ctx, &h)?;
                    }
                    Some(_) => {}
                }
                continue;
            }
            if !self.next_moof(src, ctx)? {
                return Ok(None);
            }
        }
    }

    /// Positions `t`'s cursor at sample `n` (0-based) by walking `stsc`,
    /// `stts`, `ctts` and `stss` in place. Returns the sample's decode time.
    fn position<S: Source>(src: &mut S, ctx: &mut Context, t: &mut Mp4Track, n: u32) -> Result<()> {
        Self::reset_cursor(src, t)?;
        if t.chunk.is_some() {
            // Chunk reading: step whole chunks until the one holding `n`.
            let mut guard = 0u32;
            while t.cur.sample < n {
                guard += 1;
                if guard > 1 << 24 || !Self::enter_chunk(src, ctx, t)? {
                    break;
                }
                let spc = t.cur.left_in_chunk;
                if t.cur.sample.saturating_add(spc) > n {
                    // Inside this chunk: skip whole packets before the one
                    // holding `n`, on the grid a read from the start uses.
                    let Some(mode) = t.chunk else { break };
                    // Every packet but a chunk's last has the same number of
                    // samples: skip the whole ones in one step (a chunk may
                    // claim 2^32 samples, 4 million packets).
                    let (group, group_size) = chunk_group(mode, u32::MAX);
                    if let (Some(a), Some(b)) = (
                        (n - t.cur.sample).checked_div(group),
                        t.cur.left_in_chunk.checked_div(group),
                    ) {
                        let k = a.min(b);
                        if k > 1 {
                            let skip = (k - 1) * group;
                            Self::advance_stts(src, t, skip)?;
                            t.cur.left_in_chunk -= skip;
                            t.cur.sample += skip;
                            t.cur.offset = t
                                .cur
                                .offset
                                .saturating_add(((k - 1) as u64).saturating_mul(group_size as u64));
                        }
                    }
                    while t.cur.left_in_chunk > 0 {
                        let (samples, size) = chunk_group(mode, t.cur.left_in_chunk);
                        if t.cur.sample.saturating_add(samples) > n || samples == 0 {
                            break;
                        }
                        Self::advance_stts(src, t, samples)?;
                        t.cur.left_in_chunk -= samples;
                        t.cur.sample += samples;
                        t.cur.offset = t.cur.offset.saturating_add(size as u64);
                    }
                    break;
                }
                t.cur.sample += spc;
                t.cur.left_in_chunk = 0;
                Self::advance_stts(src, t, spc)?;
            }
            return Ok(());
        }
        // Find the chunk holding sample n through stsc runs: each entry's
        // run ends where the next entry starts (the last one's at the last
        // chunk), so an entry is judged when the next one is read.
        let mut first_sample = 0u32;
        let mut prev: Option<(u32, u32, u32)> = None;
        let mut hit: Option<(u32, u32, u32, u32, u32)> = None;
        let count = t.stsc.count;
        scan_entries::<S, 12>(src, t.stsc.off, 0, count, |i, e| {
            if let Some((pi, pfirst, pspc)) = prev {
                let next_first = be32(&e, 0);
                let samples = next_first.saturating_sub(pfirst).saturating_mul(pspc);
                if pspc > 0 && n < first_sample.saturating_add(samples) {
                    hit = Some((pi, pfirst, pspc, next_first, first_sample));
                    return false;
                }
                first_sample = first_sample.saturating_add(samples);
            }
            prev = Some((i, be32(&e, 0).max(1), be32(&e, 4)));
            true
        })?;
        if let (None, Some((pi, pfirst, pspc))) = (hit, prev) {
            let next_first = t.stco.count.saturating_add(1);
            let samples = next_first.saturating_sub(pfirst).saturating_mul(pspc);
            if pspc > 0 && n < first_sample.saturating_add(samples) {
                hit = Some((pi, pfirst, pspc, next_first, first_sample));
            }
        }
        if let Some((i, first_chunk, spc, next_first, first_sample)) = hit {
            let k = (n - first_sample) / spc;
            let chunk = first_chunk - 1 + k;
            let within = (n - first_sample) % spc;
            t.cur.stsc_i = i;
            t.cur.spc = spc;
            t.cur.stsc_next_first = if i + 1 < t.stsc.count { next_first } else { 0 };
            t.cur.next_chunk = chunk + 1;
            t.cur.left_in_chunk = spc - within;
            let base = if t.co64 {
                src.u64_be(t.stco.off + chunk as u64 * 8)?
            } else {
                src.u32_be(t.stco.off + chunk as u64 * 4)? as u64
            };
            let mut off = base;
            if t.stsz_const != 0 {
                // Constant sizes: no table to walk, and `within` may be
                // up to 2^32 (a chunk of that many samples).
                off = off.saturating_add((within as u64).saturating_mul(t.stsz_const as u64));
            } else {
                for s in (n - within)..n {
                    off = off.saturating_add(Self::sample_size(src, t, s)? as u64);
                }
            }
            t.cur.offset = off;
            t.cur.sample = n;
        }
        if t.cur.sample != n {
            t.cur.sample = t.sample_count;
            return Ok(());
        }
        Self::advance_stts(src, t, n)?;
        // ctts: skip n entries' worth.
        let mut left = n;
        if left > 0 {
            let (mut off, mut rest) = (t.cur.ctts_off, t.cur.ctts_left);
            let i = scan_entries::<S, 8>(src, t.ctts.off, t.cur.ctts_i, t.ctts.count, |_, e| {
                let c = be32(&e, 0);
                off = be32(&e, 4) as i32;
                if c > left {
                    rest = c - left;
                    left = 0;
                    return false;
                }
                left -= c;
                left > 0
            })?;
            // The entry that ended the skip was consumed too.
            t.cur.ctts_i = if i < t.ctts.count { i + 1 } else { i };
            t.cur.ctts_off = off;
            t.cur.ctts_left = rest;
        }
        if t.has_stss {
            let mut next = u32::MAX;
            let i = scan_entries::<S, 4>(src, t.stss.off, t.cur.stss_i, t.stss.count, |_, e| {
                let s = u32::from_be_bytes(e);
                if s > n {
                    next = s;
                    return false;
                }
                true
            })?;
            t.cur.stss_i = i;
            t.cur.next_sync = next;
        }
        Ok(())
    }

    /// The sample index at or before decode time `ts` (raw units) and, for
    /// tracks with `stss`, the sync sample at or before it.
    fn sample_at<S: Source>(src: &mut S, t: &Mp4Track, ts: i64, want_key: bool) -> Result<u32> {
        let mut dts = 0i64;
        let mut n = 0u32;
        scan_entries::<S, 8>(src, t.stts.off, 0, t.stts.count, |_, e| {
            let count = be32(&e, 0);
            let delta = be32(&e, 4) as i64;
            let span = (count as i64).saturating_mul(delta);
            if dts.saturating_add(span) > ts {
                let k = if delta > 0 {
                    ((ts - dts) / delta).clamp(0, count as i64) as u32
                } else {
                    0
                };
                n = n.saturating_add(k);
                return false;
            }
            dts = dts.saturating_add(span);
            n = n.saturating_add(count);
            true
        })?;
        n = n.min(t.sample_count.saturating_sub(1));
        if want_key && t.has_stss {
            n = Self::sample_at_key_before(src, t, n)?;
        }
        Ok(n)
    }
}

impl Mp4Demuxer {
    /// Finds `covr` images in `ilst` and adds an attached-picture track for
    /// each, as ffmpeg does (`mov_read_covr`).
    fn find_covers<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        let Some((mut at, end)) = self.tag_boxes.ilst else {
            return Ok(());
        };
        let mut guard = 0;
        while at.saturating_add(8) <= end && guard < 1024 {
            guard += 1;
            let Some(item) = soft(read_box_header(src, at, end))? else {
                break;
            };
            if &item.kind == b"covr" {
                let mut d = item.body;
                while d.saturating_add(16) <= item.end && !self.covers.is_full() {
                    let Some(data) = soft(read_box_header(src, d, item.end))? else {
                        break;
                    };
                    if &data.kind == b"data" && data.body_len() > 8 {
                        let ty = src.u32_be(data.body)? & 0xFF_FFFF;
                        let codec = match ty {
                            14 => Codec::Png,
                            27 => Codec::Bmp,
                            _ => Codec::Mjpeg,
                        };
                        let len = (data.body_len() - 8).min(u32::MAX as u64) as u32;
                        let t = Track {
                            id: 0,
                            kind: TrackKind::Video,
                            codec,
                            time_base: Rational::new(1, 90_000),
                            frames: Some(1),
                            attached_picture: true,
                            ..Track::default()
                        };
                        if let Some(i) = ctx.add_track(t, data.start) {
                            let _ = self.covers.push((i, data.body + 8, len));
                        }
                    }
                    if data.end <= d {
                        break;
                    }
                    d = data.end;
                }
            }
            if item.end <= at {
                break;
            }
            at = item.end;
        }
        Ok(())
    }
}

impl FormatDemuxer for Mp4Demuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let mut d = Mp4Demuxer {
            tracks: heapless::Vec::new(),
            frag: Frag::default(),
            fragmented: false,
            in_fragments: false,
            tag_boxes: TagBoxes::default(),
            key_buf: heapless::String::new(),
            max_sample: 0,
            cut: None,
            covers: heapless::Vec::new(),
            next_cover: 0,
            frag_skip: None,
        };
        let len = src.len();
        let mut at = 0u64;
        let mut moov_seen = false;
        let mut first_moof: Option<u64> = None;
        let mut count = 0u32;
        while at.saturating_add(8) <= len {
            count += 1;
            if count > ctx.limits.max_top_level {
                ctx.diags.report("mp4.too-many-boxes", at);
                break;
            }
            let h = match read_box_header(src, at, len) {
                Ok(h) => h,
                Err(e) if moov_seen && !source_fault(&e) => {
                    ctx.diags.report("mp4.bad-top-level-box", e.offset());
                    break;
                }
                Err(e) => return Err(e),
            };
            match &h.kind {
                b"ftyp" => {
                    d.tag_boxes.ftyp = Some(ByteRange {
                        offset: h.body,
                        len: h.body_len().min(1024) as u32,
                    });
                }
                b"moov" if !moov_seen => {
                    if h.clamped {
                        // A cut movie box has cut sample tables: what they
                        // would give is not the file's samples.
                        ctx.diags.report("mp4.moov-truncated", h.start);
                        return Err(Error::truncated(
                            src.len(),
                            "moov runs past the end of the file (§8.2.1)",
                        ));
                    }
                    d.parse_moov(src, ctx, &h)?;
                    moov_seen = true;
                    if !d.fragmented {
                        break;
                    }
                }
                b"moof" => {
                    if first_moof.is_none() {
                        first_moof = Some(h.start);
                    }
                    if moov_seen {
                        break;
                    }
                }
                b"mdat" if h.clamped => ctx.diags.report("mp4.mdat-truncated", h.start),
                _ => {}
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        if !moov_seen {
            return Err(Error::malformed(at, "no moov box (ISO/IEC 14496-12 §8.2.1)"));
        }
        d.find_covers(src, ctx)?;
        d.frag.top = first_moof.unwrap_or(0);
        if first_moof.is_some() {
            d.fragmented = true;
        }
        for t in d.tracks.iter_mut() {
            Self::reset_cursor(src, t)?;
            if t.stsz_const != 0 {
                d.max_sample = d.max_sample.max(t.stsz_const);
            }
        }
        for i in 0..d.tracks.len() {
            if let Some(t) = d.tracks.get_mut(i) {
                Self::restart(src, ctx, t)?;
            }
        }
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        let max = ctx.limits.max_packet;
        if let Some(at) = self.cut {
            return Err(Error::truncated(at, "the input ends inside a sample"));
        }
        let p = self.next_packet_inner(src, ctx, max)?;
        if let Some(p) = &p {
            if p.flags.truncated {
                self.cut = Some(src_len_hint(p));
            }
        }
        Ok(p)
    }

    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        self.cut = None;
        self.seek_inner(src, ctx, track, ts)
    }

    fn next_tag<'s, S: Source>(
        &'s mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        tags::next_tag(&self.tag_boxes, &mut self.key_buf, src, ctx, cur)
    }

    fn max_packet_size(&self) -> Option<usize> {
        None
    }
}

/// Calls `f` with each `N`-byte entry of the table at `off`, from entry
/// `from` up to `count`, reading up to 512 bytes a call instead of one read
/// per entry (a seek's walk over `stts`, `ctts` or `stss` in a long file
/// touches hundreds of thousands of entries). Stops when `f` returns
/// `false`, and returns the index of that entry, or `count`. A table that
/// the input cuts fails at the first entry that is not all there, as reading
/// entry by entry would.
fn scan_entries<S: Source, const N: usize>(
    src: &mut S,
    off: u64,
    from: u32,
    count: u32,
    mut f: impl FnMut(u32, [u8; N]) -> bool,
) -> Result<u32> {
    let mut buf = [0u8; 512];
    let per = (buf.len() / N).max(1);
    let mut i = from;
    while i < count {
        let n = ((count - i) as usize).min(per);
        let at = off.saturating_add(u64::from(i).saturating_mul(N as u64));
        let want = buf.get_mut(..n * N).unwrap_or(&mut []);
        let got = src.read_at(at, want)?;
        let whole = got / N;
        for e in want.get(..whole * N).unwrap_or(&[]).chunks_exact(N) {
            let mut a = [0u8; N];
            a.copy_from_slice(e);
            if !f(i, a) {
                return Ok(i);
            }
            i += 1;
        }
        if whole < n {
            return Err(Error::truncated(
                at.saturating_add(got as u64),
                "input ends inside a sample table",
            ));
        }
    }
    Ok(i)
}

/// Where a truncated packet's bytes end.
fn src_len_hint(p: &Packet<'_>) -> u64 {
    p.pos.unwrap_or(0).saturating_add(p.data.len() as u64)
}

impl Mp4Demuxer {
    fn next_packet_inner<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &mut Context,
        max: u32,
    ) -> Result<Option<Packet<'s>>> {
        if let Some(&(track, offset, len)) = self.covers.get(self.next_cover) {
            self.next_cover += 1;
            let data = src.bytes(offset, len as usize)?;
            return Ok(Some(Packet {
                track,
                pts: None,
                dts: None,
                duration: None,
                flags: PacketFlags {
                    keyframe: true,
                    ..PacketFlags::default()
                },
                pos: Some(offset),
                contiguous: true,
                data,
            }));
        }
        if !self.in_fragments {
            if let Some(i) = self.pick() {
                let t = self.tracks.get_mut(i).ok_or(Error::malformed(0, "track"))?;
                let s = t.pending.take().ok_or(Error::malformed(0, "pending sample"))?;
                t.next_dts = s.dts.saturating_add(s.duration as i64);
                // Read the following sample before borrowing the source for
                // this one's payload.
                t.pending = Self::next_sample(src, ctx, t)?;
                let t = self.tracks.get(i).ok_or(Error::malformed(0, "track"))?;
                return Self::packet(src, t, s, max).map(Some);
            }
            if !self.fragmented {
                return Ok(None);
            }
            self.in_fragments = true;
        }
        loop {
            let fragments = self.frag.fragments;
            let Some((i, s)) = self.next_fragment_sample(src, ctx)? else {
                return Ok(None);
            };
            if let Some((anchor, left, landing_us)) = self.frag_skip {
                // After a seek: skip the anchor's samples before its landing
                // sample, and other tracks' samples that end before it.
                if self.frag.fragments != fragments && fragments != 0 {
                    self.frag_skip = None;
                } else if i == anchor && left > 0 {
                    self.frag_skip = Some((anchor, left - 1, landing_us));
                    continue;
                } else if i != anchor {
                    let t = self.tracks.get(i).ok_or(Error::malformed(0, "track"))?;
                    let end = s.dts.saturating_add(s.duration as i64).saturating_sub(t.shift);
                    let end_us = rescale(end, Rational::new(1, t.timescale), Rational::new(1, 1_000_000));
                    if end_us <= landing_us {
                        continue;
                    }
                }
            }
            let t = self.tracks.get(i).ok_or(Error::malformed(0, "track"))?;
            return Self::packet(src, t, s, max).map(Some);
        }
    }

    fn seek_inner<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        let Some(anchor) = self.tracks.iter().find(|t| t.index == track) else {
            return Err(Error::new(crate::error::ErrorKind::InvalidArgument, 0, "no such track"));
        };
        let base = Rational::new(1, anchor.timescale);
        let anchor_shift = anchor.shift;
        if self.tracks.iter().any(|t| t.sample_count > 0) && ts <= anchor.start {
            // At or before the start: every track restarts where a read from
            // the beginning starts (including samples before an edit).
            for t in self.tracks.iter_mut() {
                Self::position(src, ctx, t, 0)?;
                Self::restart(src, ctx, t)?;
            }
            self.in_fragments = false;
            self.next_cover = 0;
            return Ok(());
        }
        if self.tracks.iter().any(|t| t.sample_count > 0) {
            // Seek the anchor track to its keyframe, then every other track to
            // the anchor's resulting time.
            let raw = ts.saturating_add(anchor.shift);
            let anchor_video = !anchor.audio;
            let ai = self.tracks.iter().position(|t| t.index == track).unwrap_or(0);
            let mut target_us = 0i64;
            if let Some(t) = self.tracks.get_mut(ai) {
                let n = Self::sample_at(src, t, raw, anchor_video)?;
                Self::position(src, ctx, t, n)?;
                target_us = rescale(t.cur.dts.saturating_sub(t.shift), base, Rational::new(1, 1_000_000));
                t.pending = Self::next_sample(src, ctx, t)?;
            }
            for (i, t) in self.tracks.iter_mut().enumerate() {
                if i == ai {
                    continue;
                }
                let tb = Rational::new(1, t.timescale);
                let raw = rescale(target_us, Rational::new(1, 1_000_000), tb).saturating_add(t.shift);
                let n = Self::sample_at(src, t, raw, !t.audio)?;
                Self::position(src, ctx, t, n)?;
                t.pending = Self::next_sample(src, ctx, t)?;
            }
            self.in_fragments = false;
            return Ok(());
        }
        // Fragmented: restart at the last fragment that starts at or before
        // the target, found by walking moof headers (bounded by the limits).
        let start = self.frag.top;
        let first = self.first_moof(src, ctx)?;
        self.frag = Frag {
            top: first,
            ..Frag::default()
        };
        let mut best = first;
        let mut guard = 0u32;
        let raw = ts.saturating_add(anchor_shift);
        while self.next_moof(src, ctx)? {
            guard += 1;
            if guard > ctx.limits.max_fragments {
                break;
            }
            let moof = self.frag.moof_start;
            let mut at = self.frag.moof_child;
            let mut found = None;
            while at.saturating_add(8) <= self.frag.moof_end {
                let h = read_box_header(src, at, self.frag.moof_end)?;
                if &h.kind == b"traf"
                    && self.enter_traf(src, ctx, &h)?
                    && self.tracks.get(self.frag.track).map(|t| t.index) == Some(track)
                {
                    found = Some(self.frag.dts);
                }
                if h.end <= at {
                    break;
                }
                at = h.end;
            }
            match found {
                Some(dts) if dts <= raw => best = moof,
                Some(_) => break,
                None => {}
            }
        }
        let _ = start;
        self.frag = Frag {
            top: best,
            ..Frag::default()
        };
        self.in_fragments = true;
        for t in self.tracks.iter_mut() {
            t.pending = None;
        }
        // Within that fragment, find the anchor's landing sample: the last
        // keyframe (video) or sample (audio) starting at or before the
        // target. Headers only; the state is restored afterwards.
        let saved = self.frag;
        let saved_dts: heapless::Vec<i64, MAX_TRACKS> = self.tracks.iter().map(|t| t.next_dts).collect();
        let ai = self.tracks.iter().position(|t| t.index == track).unwrap_or(0);
        let audio = self.tracks.get(ai).map(|t| t.audio).unwrap_or(true);
        let (mut seen, mut land, mut land_dts) = (0u32, 0u32, None);
        let mut first_fragment = None;
        while let Some((i, s)) = self.next_fragment_sample(src, ctx)? {
            let frag_no = *first_fragment.get_or_insert(self.frag.fragments);
            if self.frag.fragments != frag_no {
                break;
            }
            if i == ai {
                if s.dts <= raw && (audio || s.key) {
                    land = seen;
                    land_dts = Some(s.dts);
                }
                seen += 1;
            }
        }
        self.frag = saved;
        for (t, d) in self.tracks.iter_mut().zip(saved_dts) {
            t.next_dts = d;
        }
        self.frag_skip = land_dts.map(|d| {
            let us = self
                .tracks
                .get(ai)
                .map(|t| {
                    rescale(
                        d.saturating_sub(t.shift),
                        Rational::new(1, t.timescale),
                        Rational::new(1, 1_000_000),
                    )
                })
                .unwrap_or(0);
            (ai, land, us)
        });
        Ok(())
    }

    /// The first `moof` after the movie box.
    fn first_moof<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<u64> {
        let len = src.len();
        let mut at = 0u64;
        let mut guard = 0u32;
        while at.saturating_add(8) <= len {
            guard += 1;
            if guard > ctx.limits.max_top_level {
                break;
            }
            let h = read_box_header(src, at, len)?;
            if &h.kind == b"moof" {
                return Ok(h.start);
            }
            if h.end <= at {
                break;
            }
            at = h.end;
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::scan_entries;
    use crate::{SliceSource, Source};
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn table_scan_reads_in_blocks_and_stops_where_told() {
        // 200 eight-byte entries (1600 bytes: the 512-byte reads cross
        // entries' boundaries in no case, and the table spans four reads).
        let mut t = vec![0xEEu8; 3];
        for i in 0..200u32 {
            t.extend_from_slice(&i.to_be_bytes());
            t.extend_from_slice(&(i * 2).to_be_bytes());
        }
        let mut src = SliceSource::new(&t);
        let mut seen = Vec::new();
        let stop = scan_entries::<_, 8>(&mut src, 3, 5, 200, |i, e| {
            assert_eq!(u32::from_be_bytes([e[0], e[1], e[2], e[3]]), i);
            seen.push(i);
            i < 150
        })
        .unwrap();
        assert_eq!(stop, 150);
        assert_eq!(seen, (5..=150).collect::<Vec<_>>());
        let all = scan_entries::<_, 8>(&mut src, 3, 0, 200, |_, _| true).unwrap();
        assert_eq!(all, 200);
        assert!(src.stats().reads <= 2 + 4 + 4, "{:?}", src.stats());
        // A table the input cuts: the entries before the cut are visited,
        // then the walk fails as an entry-by-entry read would.
        let cut = &t[..3 + 8 * 70 + 5];
        let mut src = SliceSource::new(cut);
        let mut n = 0;
        let err = scan_entries::<_, 8>(&mut src, 3, 0, 200, |_, _| {
            n += 1;
            true
        })
        .unwrap_err();
        assert!(err.is_truncation());
        assert_eq!(n, 70);
        // ... unless the walk stops before the cut entry.
        let mut src = SliceSource::new(cut);
        assert_eq!(scan_entries::<_, 8>(&mut src, 3, 0, 200, |i, _| i < 69).unwrap(), 69);
    }
}

#[cfg(test)]
mod codec_tests {
    use super::*;

    #[test]
    fn sample_entry_codecs() {
        use TrackKind::{Audio, Subtitle, Video};
        assert_eq!(codec_for(b"avc1", 24), (Codec::H264, Video));
        assert_eq!(codec_for(b"raw ", 24), (Codec::RawVideo, Video));
        assert_eq!(codec_for(b"raw ", 0), (Codec::RawVideo, Video));
        assert_eq!(codec_for(b"raw ", 8), (Codec::PcmU8, Audio));
        assert_eq!(codec_for(b"NONE", 16), (Codec::PcmU8, Audio));
        assert_eq!(codec_for(b"sowt", 8), (Codec::PcmS8, Audio));
        assert_eq!(codec_for(b"sowt", 16), (Codec::PcmS16Le, Audio));
        assert_eq!(codec_for(b"twos", 8), (Codec::PcmS8, Audio));
        assert_eq!(codec_for(b"twos", 16), (Codec::PcmS16Be, Audio));
        assert_eq!(codec_for(b"ms\x00\x55", 16), (Codec::Mp3, Audio));
        assert_eq!(codec_for(b"mha1", 16), (Codec::Unknown, Audio));
        assert_eq!(codec_for(b"wvtt", 0), (Codec::WebVtt, Subtitle));
        assert_eq!(codec_for(b"zzzz", 0), (Codec::Unknown, TrackKind::Unknown));
    }
}
