//! FLV: Flash Video, and enhanced FLV (FourCC video).
//!
//! References: Adobe "Video File Format Specification" version 10.1, Annex E
//! (E.2 the FLV header, E.3 the FLV file body, E.4.1 FLV tags, E.4.2 audio
//! tags, E.4.3 video tags, E.4.4 data tags, E.5 `onMetaData`); Adobe "Action
//! Message Format -- AMF 0" (§2.2–§2.12, the script data values); Veovera
//! "Enhanced RTMP" v1/v2 (the extended video tag header: `IsExHeader`,
//! `PacketType`, `FourCC` for `hvc1`, `av01`, `vp09`).
//!
//! Packets follow ffmpeg's `flv` demuxer (`flvdec.c`) so that they match
//! ffprobe: one packet per audio or video tag, timestamps in milliseconds,
//! AAC and AVC sequence headers taken as codec configuration (the first one
//! becomes `Track::config`; later ones are dropped), composition time offsets
//! giving `pts = dts + cts`, video info/command frames and empty tags
//! skipped, and a script tag other than the header metadata becoming a
//! subtitle or data packet. Every packet is a slice of the input.

use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor, TagKey, TagScope, TagValue};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Rational, Track, TrackKind};

/// FLV timestamps are milliseconds (Annex E.4.1).
const MS: Rational = Rational::new(1, 1000);
/// Size of a tag header (Annex E.4.1).
const TAG_HEADER: u64 = 11;
/// Deepest AMF nesting followed when skipping values.
const MAX_AMF_DEPTH: u32 = 16;

/// The kinds of tracks FLV carries, in ffmpeg's stream-type order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Video = 0,
    Audio = 1,
    Subtitle = 2,
    Data = 3,
}

/// What a script data tag is, by its name (ffmpeg's `flv_read_metabody`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    /// `onMetaData`: read at time 0, a subtitle packet otherwise.
    MetaData,
    /// `onCuePoint`, `|RtmpSampleAccess`: skipped at time 0, a subtitle
    /// packet otherwise.
    Header,
    /// `onCaptionInfo`: a subtitle packet.
    CaptionInfo,
    /// Anything else (and `onTextData`/`onCaption`, whose text ffmpeg
    /// extracts): a data packet.
    Other,
}

/// One tag header (Annex E.4.1).
#[derive(Debug, Clone, Copy)]
struct TagHead {
    at: u64,
    kind: u8,
    size: u32,
    dts: i64,
    body: u64,
}

impl TagHead {
    fn end(&self) -> u64 {
        self.body + self.size as u64
    }
}

/// What a tag carries, after its audio or video tag header.
#[derive(Debug, Clone, Copy)]
enum Content {
    /// A media packet: the payload range, pts, keyframe.
    Packet {
        kind: Kind,
        data: u64,
        len: u32,
        pts: i64,
        key: bool,
    },
    /// Codec configuration (a sequence header).
    Config { kind: Kind, data: u64, len: u32 },
    /// Nothing to deliver.
    Skip,
}

/// The `keyframes` index of `onMetaData` (a convention of flvtool/flvmeta
/// and FFmpeg's `flvflags=add_keyframe_index`): arrays of times (seconds)
/// and file positions, read in place.
#[derive(Debug, Clone, Copy)]
struct KeyframeIndex {
    times: u64,
    positions: u64,
    count: u32,
}

/// Demuxer state for FLV.
#[derive(Debug, Clone)]
pub struct FlvDemuxer {
    first_tag: u64,
    pos: u64,
    tracks: [Option<usize>; 4],
    /// The audio and video codec of the first tag of each (tag header bits),
    /// to tell later tags apart as ffmpeg does.
    metadata: Option<ByteRange>,
    keyframes: Option<KeyframeIndex>,
    skip_to_key: bool,
    sum_tag_sizes: u64,
    /// The last tag was cut by the end of the input.
    cut: bool,
    /// `open` has returned: no more tracks are added.
    sealed: bool,
    /// Stream parameters `onMetaData` gives, applied to the tracks at the
    /// end of `open` (the metadata comes before the tracks' first tags).
    meta: MetaParams,
}

/// Picture size and data rates from `onMetaData` (Annex E.5).
#[derive(Debug, Clone, Copy, Default)]
struct MetaParams {
    width: u32,
    height: u32,
    video_rate: u32,
    audio_rate: u32,
}

fn u24(b: &[u8]) -> u32 {
    b.iter().take(3).fold(0u32, |a, &x| a << 8 | x as u32)
}

/// Reads the tag header at `at`, or `None` at the end of the input.
fn read_tag<S: Source>(src: &mut S, at: u64) -> Result<Option<TagHead>> {
    if at.saturating_add(TAG_HEADER) > src.len() {
        return Ok(None);
    }
    let h: [u8; 11] = src.array(at)?;
    let size = u24(h.get(1..4).unwrap_or(&[]));
    let ts = u24(h.get(4..7).unwrap_or(&[])) | (h[7] as u32) << 24;
    Ok(Some(TagHead {
        at,
        kind: h[0] & 0x1F,
        size,
        dts: ts as i64,
        body: at + TAG_HEADER,
    }))
}

/// The codec of an audio tag's SoundFormat (Annex E.4.2.1), as ffmpeg maps it.
fn audio_codec(flags: u8) -> Codec {
    let bits16 = flags & 0x02 != 0;
    match flags >> 4 {
        0 | 3 => {
            if bits16 {
                Codec::PcmS16Le
            } else {
                Codec::PcmU8
            }
        }
        1 => Codec::AdpcmSwf,
        2 | 14 => Codec::Mp3,
        4..=6 => Codec::Nellymoser,
        7 => Codec::PcmAlaw,
        8 => Codec::PcmMulaw,
        10 => Codec::Aac,
        11 => Codec::Speex,
        _ => Codec::Unknown,
    }
}

/// The codec of a video tag's CodecID (Annex E.4.3.1), as ffmpeg maps it.
fn video_codec(id: u8) -> Codec {
    match id {
        2 => Codec::Flv1,
        3 => Codec::FlashSv,
        4 => Codec::Vp6f,
        5 => Codec::Vp6a,
        6 => Codec::FlashSv2,
        7 => Codec::H264,
        8 => Codec::H263,
        9 => Codec::Mpeg4,
        _ => Codec::Unknown,
    }
}

/// The codec of an enhanced-FLV video FourCC (Enhanced RTMP v1 §"ExVideoTagHeader").
fn fourcc_codec(f: &[u8; 4]) -> Codec {
    match f {
        b"hvc1" => Codec::Hevc,
        b"av01" => Codec::Av1,
        b"vp09" => Codec::Vp9,
        b"avc1" => Codec::H264,
        b"vp08" => Codec::Vp8,
        _ => Codec::Unknown,
    }
}

/// Sample rates of an AAC AudioSpecificConfig's samplingFrequencyIndex
/// (ISO/IEC 14496-3 §1.6.3.4).
const AAC_RATES: [u32; 13] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
];

/// Names of the `onMetaData` keys that ffmpeg turns into stream parameters
/// rather than tags.
const TECHNICAL_KEYS: [&str; 13] = [
    "duration",
    "filesize",
    "width",
    "height",
    "videodatarate",
    "framerate",
    "videocodecid",
    "audiodatarate",
    "audiosamplerate",
    "audiosamplesize",
    "stereo",
    "audiocodecid",
    "datastream",
];

impl FlvDemuxer {
    /// A tag position at or before time `ts` (ms): the last `keyframes`
    /// entry at or before it, else the first tag.
    fn tag_before<S: Source>(&self, src: &mut S, ctx: &mut Context, ts: i64) -> Result<u64> {
        let Some(k) = self.keyframes else {
            return Ok(self.first_tag);
        };
        if ts <= 0 {
            return Ok(self.first_tag);
        }
        let mut best = None;
        for i in 0..k.count.min(1 << 20) as u64 {
            let (Ok(tb), Ok(pb)) = (src.array::<9>(k.times + i * 9), src.array::<9>(k.positions + i * 9)) else {
                break;
            };
            let time = f64::from_be_bytes([tb[1], tb[2], tb[3], tb[4], tb[5], tb[6], tb[7], tb[8]]);
            let pos = f64::from_be_bytes([pb[1], pb[2], pb[3], pb[4], pb[5], pb[6], pb[7], pb[8]]);
            if !(time.is_finite() && pos.is_finite()) || tb[0] != 0 || pb[0] != 0 || time * 1000.0 > ts as f64 {
                break;
            }
            best = Some(pos as u64);
        }
        if let Some(p) = best {
            if p >= self.first_tag && p < src.len() {
                if let Some(t) = read_tag(src, p)? {
                    if matches!(t.kind, 8 | 9 | 18) {
                        return Ok(p);
                    }
                }
            }
            ctx.diags.report("flv.bad-keyframe-index", p);
        }
        Ok(self.first_tag)
    }

    /// Walks tag headers from `from` for the last tag of `kind` that gives
    /// a packet at or before `ts` (a key frame for video).
    fn find_tag<S: Source>(&self, src: &mut S, from: u64, kind: Kind, ts: i64) -> Result<Option<u64>> {
        let mut at = from;
        let mut best = None;
        let mut walked = 0u64;
        while let Some(t) = read_tag(src, at)? {
            walked += 1;
            if walked > 100_000_000 || t.end() > src.len() {
                break;
            }
            let hit = match t.kind {
                8 | 9 => match self.content(src, &t)? {
                    Content::Packet { kind: k, key, .. } if k == kind => Some(key || kind != Kind::Video),
                    _ => None,
                },
                _ => None,
            };
            if let Some(ok) = hit {
                if t.dts > ts {
                    break;
                }
                if ok {
                    best = Some(at);
                }
            }
            let next = t.end().saturating_add(4);
            if next <= at {
                break;
            }
            at = next;
        }
        Ok(best)
    }

    /// The track index of `kind`, once it exists.
    fn track_of(&self, kind: Kind) -> Option<usize> {
        self.tracks.get(kind as usize).copied().flatten()
    }

    /// Classifies the tag at `t`: a media packet, a sequence header, or
    /// nothing (Annex E.4.2, E.4.3; Enhanced RTMP). Script tags are handled
    /// by the caller.
    fn content<S: Source>(&self, src: &mut S, t: &TagHead) -> Result<Content> {
        if t.size == 0 {
            return Ok(Content::Skip);
        }
        let take = (t.size as usize).min(8);
        let mut hb = [0u8; 8];
        src.read_exact_at(t.body, hb.get_mut(..take).unwrap_or(&mut []))?;
        let h = hb.get(..take).unwrap_or(&[]);
        let b0 = h.first().copied().unwrap_or(0);
        let end = t.end();
        let packet = |kind, hdr: u64, pts: i64, key: bool| {
            let data = t.body + hdr;
            if data >= end {
                // Nothing after the headers (an AVC end of sequence, an empty
                // tag): ffprobe shows no packet.
                return Content::Skip;
            }
            Content::Packet {
                kind,
                data: data.min(end),
                len: end.saturating_sub(data) as u32,
                pts,
                key,
            }
        };
        match t.kind {
            8 => {
                if t.size < 2 && b0 >> 4 == 10 {
                    return Ok(Content::Skip);
                }
                if b0 >> 4 == 10 {
                    // AACPacketType (Annex E.4.2.2): 0 = AudioSpecificConfig.
                    let kind = h.get(1).copied().unwrap_or(1);
                    if kind == 0 {
                        return Ok(Content::Config {
                            kind: Kind::Audio,
                            data: t.body + 2,
                            len: t.size.saturating_sub(2),
                        });
                    }
                    return Ok(packet(Kind::Audio, 2, t.dts, true));
                }
                Ok(packet(Kind::Audio, 1, t.dts, true))
            }
            9 => {
                if b0 & 0x80 != 0 {
                    // Enhanced RTMP ExVideoTagHeader: IsExHeader, FrameType (3
                    // bits), PacketType (4 bits), then a FourCC.
                    let frame = (b0 >> 4) & 7;
                    let ptype = b0 & 0x0F;
                    let key = frame == 1;
                    if frame == 5 {
                        return Ok(Content::Skip);
                    }
                    let mut f = [0u8; 4];
                    if let Some(s) = h.get(1..5) {
                        f.copy_from_slice(s);
                    } else {
                        return Ok(Content::Skip);
                    }
                    return Ok(match ptype {
                        0 | 5 => Content::Config {
                            kind: Kind::Video,
                            data: t.body + 5,
                            len: t.size.saturating_sub(5),
                        },
                        1 => {
                            // CodedFrames: hvc1 and avc1 carry a composition
                            // time offset (SI24).
                            if &f == b"hvc1" || &f == b"avc1" {
                                let cts = h.get(5..8).map(|c| ((u24(c) << 8) as i32 >> 8) as i64).unwrap_or(0);
                                packet(Kind::Video, 8, t.dts.saturating_add(cts), key)
                            } else {
                                packet(Kind::Video, 5, t.dts, key)
                            }
                        }
                        3 => packet(Kind::Video, 5, t.dts, key),
                        _ => Content::Skip,
                    });
                }
                let frame = b0 >> 4;
                if frame == 5 {
                    // Video info / command frame (Annex E.4.3.1).
                    return Ok(Content::Skip);
                }
                let key = frame == 1;
                match b0 & 0x0F {
                    7 | 9 => {
                        // AVCPacketType and CompositionTime (Annex E.4.3.2).
                        if t.size < 2 {
                            return Ok(Content::Skip);
                        }
                        let ptype = h.get(1).copied().unwrap_or(1);
                        let cts = h.get(2..5).map(|c| ((u24(c) << 8) as i32 >> 8) as i64).unwrap_or(0);
                        if ptype == 0 {
                            return Ok(Content::Config {
                                kind: Kind::Video,
                                data: t.body + 5,
                                len: t.size.saturating_sub(5),
                            });
                        }
                        let mut pts = t.dts.saturating_add(cts);
                        if (pts - t.dts).abs() > 1000 * 60 * 15 && cts >= 0 {
                            pts = t.dts;
                        }
                        Ok(packet(Kind::Video, 5, pts, key))
                    }
                    4 | 5 => Ok(packet(Kind::Video, 2, t.dts, key)),
                    _ => Ok(packet(Kind::Video, 1, t.dts, key)),
                }
            }
            _ => Ok(Content::Skip),
        }
    }

    /// The track for `kind`, added on first use (ffmpeg creates FLV streams
    /// as their first tags appear).
    fn track<S: Source>(&mut self, src: &mut S, ctx: &mut Context, kind: Kind, t: &TagHead) -> Result<Option<usize>> {
        if let Some(i) = self.tracks.get(kind as usize).copied().flatten() {
            return Ok(Some(i));
        }
        if self.sealed {
            // The track list is fixed once open returns.
            ctx.diags.report("flv.late-stream", t.at);
            return Ok(None);
        }
        let mut track = Track {
            id: kind as u32,
            time_base: MS,
            ..Track::default()
        };
        match kind {
            Kind::Audio => {
                let f: [u8; 1] = src.array(t.body)?;
                let f = f[0];
                track.kind = TrackKind::Audio;
                track.codec = audio_codec(f);
                track.channels = if f & 1 != 0 { 2 } else { 1 };
                track.bits_per_sample = if f & 2 != 0 { 16 } else { 8 };
                track.sample_rate = match f >> 4 {
                    4 | 11 => 16000,
                    5 | 7 | 8 | 14 => 8000,
                    _ => 44100 << ((f >> 2) & 3) >> 3,
                };
            }
            Kind::Video => {
                let f: [u8; 5] = {
                    let mut b = [0u8; 5];
                    let n = (t.size as usize).min(5);
                    src.read_exact_at(t.body, b.get_mut(..n).unwrap_or(&mut []))?;
                    b
                };
                track.kind = TrackKind::Video;
                track.codec = if f[0] & 0x80 != 0 {
                    fourcc_codec(&[f[1], f[2], f[3], f[4]])
                } else {
                    video_codec(f[0] & 0x0F)
                };
            }
            Kind::Subtitle => {
                track.kind = TrackKind::Subtitle;
                track.codec = Codec::Text;
            }
            Kind::Data => {
                track.kind = TrackKind::Data;
            }
        }
        let index = ctx.add_track(track, t.at);
        if let (Some(slot), Some(i)) = (self.tracks.get_mut(kind as usize), index) {
            *slot = Some(i);
        }
        Ok(index)
    }

    /// Records a sequence header as the track's codec configuration (the
    /// first one only, as ffmpeg keeps the first extradata).
    fn config<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        kind: Kind,
        t: &TagHead,
        data: u64,
        len: u32,
    ) -> Result<()> {
        let Some(i) = self.track(src, ctx, kind, t)? else {
            return Ok(());
        };
        let Some(track) = ctx.tracks.get_mut(i) else {
            return Ok(());
        };
        if track.config.is_some() || len == 0 {
            return Ok(());
        }
        track.config = Some(ByteRange { offset: data, len });
        if track.codec == Codec::Aac && len >= 2 {
            // AudioSpecificConfig: objectType (5 bits), frequency index (4),
            // channel configuration (4).
            let b: [u8; 2] = src.array(data)?;
            let v = u16::from_be_bytes(b);
            let fi = ((v >> 7) & 0x0F) as usize;
            let ch = (v >> 3) & 0x0F;
            if let Some(&r) = AAC_RATES.get(fi) {
                track.sample_rate = r;
            }
            if (1..=7).contains(&ch) {
                track.channels = if ch == 7 { 8 } else { ch };
            }
        }
        Ok(())
    }

    /// Checks the PreviousTagSize after tag `t` (Annex E.3) as ffmpeg
    /// accepts it: the tag size plus 11 (or 10), the data size itself, or
    /// the running sum of tag sizes.
    fn check_previous_size<S: Source>(&mut self, src: &mut S, ctx: &mut Context, t: &TagHead) -> Result<()> {
        self.sum_tag_sizes = self.sum_tag_sizes.saturating_add(t.size as u64 + TAG_HEADER);
        let at = t.end();
        if at.saturating_add(4) > src.len() {
            return Ok(());
        }
        let last = src.u32_be(at)? as u64;
        let size = t.size as u64;
        if last != size + 11 && last != size + 10 && (last != size || last == 0) && last != self.sum_tag_sizes {
            ctx.diags.report("flv.previous-tag-size-mismatch", at);
        }
        Ok(())
    }

    /// The track a script data tag's packet goes to, or `None` when it
    /// gives no packet (ffmpeg's rules: header metadata at time 0 is read,
    /// not delivered).
    fn script_kind<S: Source>(src: &mut S, t: &TagHead) -> Result<Option<Kind>> {
        if t.size == 0 {
            return Ok(None);
        }
        if t.size <= 13 + 1 + 4 {
            return Ok(Some(Kind::Subtitle));
        }
        Ok(match Self::script_name(src, t)? {
            Script::MetaData | Script::Header if t.dts == 0 => None,
            Script::MetaData | Script::Header | Script::CaptionInfo => Some(Kind::Subtitle),
            Script::Other => Some(Kind::Data),
        })
    }

    /// Names a script data tag (Annex E.4.4) by its first AMF0 value, as
    /// ffmpeg's `flv_read_metabody` sorts them.
    fn script_name<S: Source>(src: &mut S, t: &TagHead) -> Result<Script> {
        let h: [u8; 3] = src.array(t.body)?;
        if h[0] != 2 {
            return Ok(Script::Other);
        }
        let len = u16::from_be_bytes([h[1], h[2]]) as usize;
        if len > 64 || t.body + 3 + len as u64 > t.end() {
            return Ok(Script::Other);
        }
        let mut name = [0u8; 64];
        let n = name.get_mut(..len).unwrap_or(&mut []);
        src.read_exact_at(t.body + 3, n)?;
        Ok(match &*n {
            b"onMetaData" => Script::MetaData,
            b"onCuePoint" | b"|RtmpSampleAccess" => Script::Header,
            b"onCaptionInfo" => Script::CaptionInfo,
            _ => Script::Other,
        })
    }

    /// Reads what ffmpeg reads from `onMetaData` (Annex E.5): the duration,
    /// the picture size and the keyframes index; the tags are walked later
    /// by `next_tag`.
    fn metadata<S: Source>(&mut self, src: &mut S, ctx: &mut Context, t: &TagHead) -> Result<()> {
        let name_len: [u8; 2] = src.array(t.body + 1)?;
        let value = t.body + 3 + u16::from_be_bytes(name_len) as u64;
        let end = t.end().min(src.len());
        if self.metadata.is_none() && value < end {
            self.metadata = Some(ByteRange {
                offset: value,
                len: (end - value).min(u32::MAX as u64) as u32,
            });
        }
        let mut w = Amf::new(value, end);
        let mut guard = 0u32;
        let Some(mut entries) = w.open_map(src)? else {
            return Ok(());
        };
        while let Some((key, klen, vat)) = entries.next_key(src, &mut w)? {
            guard += 1;
            if guard > 100_000 {
                break;
            }
            let mut kb = [0u8; 16];
            let short = klen <= 16;
            if short {
                src.read_exact_at(key, kb.get_mut(..klen as usize).unwrap_or(&mut []))?;
            }
            let k = kb.get(..klen as usize).unwrap_or(&[]);
            let ty: [u8; 1] = src.array(vat)?;
            if short && ty[0] == 0 {
                let n: [u8; 8] = src.array(vat + 1)?;
                let v = f64::from_be_bytes(n);
                match k {
                    b"duration" if v.is_finite() && v >= 0.0 => {
                        ctx.info.duration_us = Some((v * 1e6) as u64);
                    }
                    b"width" if (0.0..1e6).contains(&v) => self.meta.width = v as u32,
                    b"height" if (0.0..1e6).contains(&v) => self.meta.height = v as u32,
                    b"videodatarate" if (0.0..4e6).contains(&v) => self.meta.video_rate = (v * 1024.0) as u32,
                    b"audiodatarate" if (0.0..4e6).contains(&v) => self.meta.audio_rate = (v * 1024.0) as u32,
                    _ => {}
                }
            }
            if short && k == b"keyframes" && ty[0] == 3 && self.keyframes.is_none() {
                self.keyframes = Self::keyframes(src, vat, end)?;
            }
            w.at = vat;
            if !w.skip_value(src, 0)? {
                break;
            }
        }
        Ok(())
    }

    /// Finds the `times` and `filepositions` arrays of a keyframes object.
    fn keyframes<S: Source>(src: &mut S, at: u64, end: u64) -> Result<Option<KeyframeIndex>> {
        let mut w = Amf::new(at + 1, end);
        let mut times = None;
        let mut positions = None;
        let mut guard = 0;
        loop {
            guard += 1;
            if guard > 64 || w.at.saturating_add(3) > end {
                break;
            }
            let Some((key, klen)) = w.read_key(src)? else { break };
            let ty: [u8; 5] = src.array(w.at)?;
            if ty[0] == 10 && klen <= 16 {
                let mut kb = [0u8; 16];
                src.read_exact_at(key, kb.get_mut(..klen as usize).unwrap_or(&mut []))?;
                let n = u32::from_be_bytes([ty[1], ty[2], ty[3], ty[4]]);
                match kb.get(..klen as usize) {
                    Some(b"times") => times = Some((w.at + 5, n)),
                    Some(b"filepositions") => positions = Some((w.at + 5, n)),
                    _ => {}
                }
            }
            if !w.skip_value(src, 0)? {
                break;
            }
        }
        Ok(match (times, positions) {
            (Some((t, n)), Some((p, m))) if n == m && n > 0 => Some(KeyframeIndex {
                times: t,
                positions: p,
                count: n,
            }),
            _ => None,
        })
    }
}

/// A cursor over AMF0 values (AMF 0 §2), bounded by `end`.
struct Amf {
    at: u64,
    end: u64,
}

/// The entries of an ECMA array or object.
struct Entries {
    left: u32,
}

impl Amf {
    fn new(at: u64, end: u64) -> Self {
        Amf { at, end }
    }

    /// Opens the ECMA array (§2.10) or object (§2.5) at the cursor.
    fn open_map<S: Source>(&mut self, src: &mut S) -> Result<Option<Entries>> {
        if self.at >= self.end {
            return Ok(None);
        }
        let t: [u8; 1] = src.array(self.at)?;
        match t[0] {
            8 => {
                self.at += 5;
                Ok(Some(Entries { left: u32::MAX }))
            }
            3 => {
                self.at += 1;
                Ok(Some(Entries { left: u32::MAX }))
            }
            _ => Ok(None),
        }
    }

    /// Reads a property name (UTF-8 with a 16-bit length); `None` at the
    /// object end marker or the end of the range.
    fn read_key<S: Source>(&mut self, src: &mut S) -> Result<Option<(u64, u16)>> {
        if self.at.saturating_add(2) > self.end {
            return Ok(None);
        }
        let l: [u8; 2] = src.array(self.at)?;
        let len = u16::from_be_bytes(l);
        if len == 0 {
            return Ok(None);
        }
        let key = self.at + 2;
        self.at = key + len as u64;
        if self.at >= self.end {
            return Ok(None);
        }
        Ok(Some((key, len)))
    }

    /// Skips the value at the cursor. Returns `false` when it cannot be
    /// skipped (unknown type, too deep, past the end).
    fn skip_value<S: Source>(&mut self, src: &mut S, depth: u32) -> Result<bool> {
        if depth > MAX_AMF_DEPTH || self.at >= self.end {
            return Ok(false);
        }
        let t: [u8; 1] = src.array(self.at)?;
        self.at += 1;
        match t[0] {
            0 => self.at += 8,
            1 => self.at += 1,
            2 | 4 => {
                // String, MovieClip (reserved, laid out like a string).
                let l: [u8; 2] = src.array(self.at)?;
                self.at += 2 + u16::from_be_bytes(l) as u64;
            }
            5 | 6 | 13 => {}
            7 => self.at += 2,
            12 | 15 => {
                let l: [u8; 4] = src.array(self.at)?;
                self.at += 4 + u32::from_be_bytes(l) as u64;
            }
            11 => self.at += 10,
            3 | 8 => {
                if t[0] == 8 {
                    self.at += 4;
                }
                let mut guard = 0u32;
                while let Some(_k) = self.read_key(src)? {
                    guard += 1;
                    if guard > 1_000_000 || !self.skip_value(src, depth + 1)? {
                        return Ok(false);
                    }
                }
                // The object end marker: an empty name and type 9.
                self.at += 3;
            }
            10 => {
                let l: [u8; 4] = src.array(self.at)?;
                self.at += 4;
                let n = u32::from_be_bytes(l);
                for _ in 0..n {
                    if !self.skip_value(src, depth + 1)? {
                        return Ok(false);
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(self.at <= self.end)
    }
}

impl Entries {
    /// The next property: its name range and the position of its value.
    fn next_key<S: Source>(&mut self, src: &mut S, w: &mut Amf) -> Result<Option<(u64, u16, u64)>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let Some((key, len)) = w.read_key(src)? else {
            return Ok(None);
        };
        Ok(Some((key, len, w.at)))
    }
}

impl FormatDemuxer for FlvDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let h: [u8; 9] = src.array(0)?;
        if h.get(..3) != Some(&b"FLV"[..]) {
            return Err(Error::malformed(0, "no FLV signature (FLV spec Annex E.2)"));
        }
        let offset = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) as u64;
        if offset < 9 {
            return Err(Error::malformed(5, "FLV header size below 9 (Annex E.2)"));
        }
        if offset.saturating_add(4) <= src.len() && src.u32_be(offset)? != 0 {
            ctx.diags.report("flv.previous-tag-size-0", offset);
        }
        let first_tag = offset + 4;
        let mut d = FlvDemuxer {
            first_tag,
            pos: first_tag,
            tracks: [None; 4],
            metadata: None,
            keyframes: None,
            skip_to_key: false,
            sum_tag_sizes: 0,
            cut: false,
            sealed: false,
            meta: MetaParams::default(),
        };
        // Find the streams as ffmpeg's probing does: walk the tags until the
        // audio and video the header announces have appeared (or the probe
        // budget is spent), taking the first sequence headers as codec
        // configuration and reading onMetaData.
        let flags = h[4];
        let want_audio = flags & 4 != 0 || flags & 5 == 0;
        let want_video = flags & 1 != 0 || flags & 5 == 0;
        let mut at = first_tag;
        let mut walked = 0u32;
        let budget = first_tag.saturating_add(ctx.limits.probe_bytes);
        while at < budget {
            walked += 1;
            if walked > ctx.limits.max_top_level {
                break;
            }
            let Some(t) = read_tag(src, at)? else { break };
            let next = t.end().saturating_add(4);
            if t.end() > src.len() {
                // A cut tag still names its stream when its headers are there.
                if matches!(t.kind, 8 | 9) {
                    if let Ok(Content::Packet { kind, .. } | Content::Config { kind, .. }) = d.content(src, &t) {
                        d.track(src, ctx, kind, &t)?;
                    }
                }
                break;
            }
            match t.kind {
                18 if t.size > 13 + 1 + 4 && t.dts == 0 && Self::script_name(src, &t)? == Script::MetaData => {
                    d.metadata(src, ctx, &t)?;
                }
                18 => {
                    if let Some(kind) = Self::script_kind(src, &t)? {
                        d.track(src, ctx, kind, &t)?;
                    }
                }
                8 | 9 => match d.content(src, &t)? {
                    Content::Config { kind, data, len } => d.config(src, ctx, kind, &t, data, len)?,
                    Content::Packet { kind, .. } => {
                        d.track(src, ctx, kind, &t)?;
                    }
                    Content::Skip => {}
                },
                _ => {}
            }
            let have_audio = d.track_of(Kind::Audio).is_some();
            let have_video = d.track_of(Kind::Video).is_some();
            let configs_ok = [Kind::Audio, Kind::Video].iter().all(|&k| {
                d.track_of(k).and_then(|i| ctx.tracks.get(i)).is_none_or(|tr| {
                    tr.config.is_some()
                        || !matches!(
                            tr.codec,
                            Codec::Aac | Codec::H264 | Codec::Hevc | Codec::Av1 | Codec::Vp9
                        )
                })
            });
            if (!want_audio || have_audio) && (!want_video || have_video) && configs_ok {
                break;
            }
            if next <= at {
                break;
            }
            at = next;
        }
        if ctx.tracks.is_empty() {
            ctx.diags.report("flv.no-streams-found", first_tag);
        }
        d.sealed = true;
        let m = d.meta;
        if let Some(t) = d.track_of(Kind::Video).and_then(|i| ctx.tracks.get_mut(i)) {
            t.width = m.width;
            t.height = m.height;
            t.bit_rate = m.video_rate;
        }
        if let Some(t) = d.track_of(Kind::Audio).and_then(|i| ctx.tracks.get_mut(i)) {
            if m.audio_rate > 0 {
                t.bit_rate = m.audio_rate;
            }
        }
        for t in ctx.tracks.iter_mut() {
            if let Some(us) = ctx.info.duration_us {
                t.duration = Some(us / 1000);
            }
        }
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(Error::truncated(
                src.len(),
                "FLV tag body runs past the end of input (Annex E.4.1)",
            ));
        }
        let mut guard = 0u64;
        loop {
            guard += 1;
            if guard > ctx.limits.max_top_level as u64 * 16 {
                return Err(Error::limit(self.pos, "too many FLV tags without a packet"));
            }
            let at = self.pos;
            let Some(t) = read_tag(src, at)? else {
                if at < src.len() {
                    return Err(Error::truncated(at, "FLV tag header cut short (Annex E.4.1)"));
                }
                return Ok(None);
            };
            let cut = t.end() > src.len();
            let cut_err = Error::truncated(src.len(), "FLV tag body runs past the end of input (Annex E.4.1)");
            if cut && !matches!(t.kind, 8 | 9) {
                return Err(cut_err);
            }
            self.pos = t.end().saturating_add(4);
            if !cut {
                self.check_previous_size(src, ctx, &t)?;
            }
            let (kind, data, len, pts, key) = match t.kind {
                8 | 9 => match self.content(src, &t)? {
                    Content::Packet {
                        kind,
                        data,
                        len,
                        pts,
                        key,
                    } => (kind, data, len, pts, key),
                    Content::Config { .. } | Content::Skip if cut => return Err(cut_err),
                    Content::Config { kind, data, len } => {
                        self.config(src, ctx, kind, &t, data, len)?;
                        continue;
                    }
                    Content::Skip => continue,
                },
                18 => {
                    let Some(kind) = Self::script_kind(src, &t)? else {
                        continue;
                    };
                    (kind, t.body, t.size, t.dts, true)
                }
                _ => continue,
            };
            if kind == Kind::Video && self.skip_to_key && !key {
                continue;
            }
            if kind == Kind::Video {
                self.skip_to_key = false;
            }
            let Some(track) = self.track(src, ctx, kind, &t)? else {
                continue;
            };
            if len > ctx.limits.max_packet {
                return Err(Error::limit(data, "FLV tag larger than Limits::max_packet"));
            }
            let mut len = len;
            if cut {
                // ffmpeg delivers the bytes of the last tag before the cut;
                // the next call reports the truncation.
                let avail = src.len().saturating_sub(data);
                if avail == 0 {
                    return Err(cut_err);
                }
                len = len.min(avail.min(u32::MAX as u64) as u32);
                self.cut = true;
            }
            let data_ref = src.bytes(data, len as usize)?;
            return Ok(Some(Packet {
                track,
                pts: Some(pts),
                dts: Some(t.dts),
                duration: None,
                flags: PacketFlags {
                    keyframe: key,
                    discard: false,
                    truncated: cut,
                },
                pos: Some(data),
                contiguous: true,
                data: data_ref,
            }));
        }
    }

    /// Lands on the tag of `track` that holds `ts` (audio) or on the last
    /// key frame at or before `ts` (video): a start found with the
    /// `keyframes` index when there is one, then a walk over tag headers.
    fn seek<S: Source>(&mut self, src: &mut S, ctx: &mut Context, track: usize, ts: i64) -> Result<()> {
        self.cut = false;
        self.skip_to_key = false;
        self.pos = self.first_tag;
        let Some(kind) = [Kind::Video, Kind::Audio, Kind::Subtitle, Kind::Data]
            .into_iter()
            .find(|&k| self.track_of(k) == Some(track))
            .filter(|_| ts > 0)
        else {
            return Ok(());
        };
        let mut margin = 10_000i64;
        let mut guard = 0;
        loop {
            guard += 1;
            let start = self.tag_before(src, ctx, ts.saturating_sub(margin))?;
            if let Some(p) = self.find_tag(src, start, kind, ts)? {
                self.pos = p;
                // The other video resumes at a key frame.
                self.skip_to_key = kind != Kind::Video && self.track_of(Kind::Video).is_some();
                return Ok(());
            }
            if start <= self.first_tag || guard > 8 {
                self.pos = self.first_tag;
                self.skip_to_key = kind == Kind::Video;
                return Ok(());
            }
            margin = margin.saturating_mul(8);
        }
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        // onMetaData entries (Annex E.5): `offset` is the next property.
        let Some(r) = self.metadata else {
            return Ok(None);
        };
        let end = r.offset + r.len as u64;
        if cur.stage == 0 {
            let mut w = Amf::new(r.offset, end);
            if w.open_map(src)?.is_none() {
                return Ok(None);
            }
            cur.stage = 1;
            cur.offset = w.at;
        }
        if cur.stage != 1 {
            return Ok(None);
        }
        let mut guard = 0u32;
        loop {
            guard += 1;
            if guard > 100_000 {
                cur.stage = 2;
                return Ok(None);
            }
            let mut w = Amf::new(cur.offset, end);
            let Some((key, klen)) = w.read_key(src)? else {
                cur.stage = 2;
                return Ok(None);
            };
            let vat = w.at;
            if !w.skip_value(src, 0)? {
                cur.stage = 2;
                return Ok(None);
            }
            cur.offset = w.at;
            let ty: [u8; 1] = src.array(vat)?;
            let scalar = match ty[0] {
                0 => {
                    let n: [u8; 8] = src.array(vat + 1)?;
                    let v = f64::from_be_bytes(n);
                    if !v.is_finite() {
                        continue;
                    }
                    Some(TagValue::Int(
                        libm::round(v).clamp(i64::MIN as f64, i64::MAX as f64) as i64
                    ))
                }
                1 => {
                    let b: [u8; 1] = src.array(vat + 1)?;
                    Some(TagValue::Text(if b[0] != 0 { "true" } else { "false" }))
                }
                2 => None,
                _ => continue,
            };
            let mut kb = [0u8; 16];
            if klen as usize <= kb.len() {
                src.read_exact_at(key, kb.get_mut(..klen as usize).unwrap_or(&mut []))?;
                let k = kb.get(..klen as usize).unwrap_or(&[]);
                if TECHNICAL_KEYS.iter().any(|t| t.as_bytes() == k) {
                    continue;
                }
            }
            let span = match scalar {
                Some(_) => klen as u64,
                None => {
                    let l: [u8; 2] = src.array(vat + 1)?;
                    vat + 3 + u16::from_be_bytes(l) as u64 - key
                }
            };
            if span > ctx.limits.max_tag_bytes as u64 {
                continue;
            }
            // Decide first, then borrow once for the returned tag.
            let key_ok = core::str::from_utf8(src.bytes(key, klen as usize)?).is_ok();
            if !key_ok {
                continue;
            }
            let all = src.bytes(key, span as usize)?;
            let (k, rest) = all.split_at((klen as usize).min(all.len()));
            let k = core::str::from_utf8(k).unwrap_or("");
            let value = match scalar {
                Some(v) => v,
                None => {
                    let v = rest.get(3..).unwrap_or(&[]);
                    match core::str::from_utf8(v) {
                        Ok(s) => TagValue::Text(s),
                        Err(_) => TagValue::Bytes(v),
                    }
                }
            };
            return Ok(Some(Tag {
                scope: TagScope::Format,
                key: TagKey::Text(k),
                name: None,
                value,
            }));
        }
    }
}

/// Standalone fuzz entry for the AMF0 reader (`fuzz/fuzz_targets/shared_parsers.rs`):
/// `data` as a script tag body, its map opened and every key and value
/// walked (AMF 0 §2), and as a single value skipped. Built only under
/// `cfg(fuzzing)`.
#[cfg(fuzzing)]
pub fn fuzz_amf0(data: &[u8]) {
    let mut src = crate::source::SliceSource::new(data);
    let end = data.len() as u64;
    for start in [0u64, 1] {
        let mut a = Amf::new(start, end);
        if let Ok(Some(_)) = a.open_map(&mut src) {
            for _ in 0..10_000 {
                match a.read_key(&mut src) {
                    Ok(Some(_)) => {}
                    _ => break,
                }
                if !a.skip_value(&mut src, 0).unwrap_or(false) {
                    break;
                }
            }
        }
        let mut b = Amf::new(start, end);
        let _ = b.skip_value(&mut src, 0);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::{Demuxer, SliceSource};
    use std::vec::Vec;

    fn tag(out: &mut Vec<u8>, kind: u8, ts: u32, body: &[u8]) {
        let start = out.len();
        out.push(kind);
        out.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
        out.extend_from_slice(&ts.to_be_bytes()[1..]);
        out.push((ts >> 24) as u8);
        out.extend_from_slice(&[0, 0, 0]);
        out.extend_from_slice(body);
        out.extend_from_slice(&((out.len() - start) as u32).to_be_bytes());
    }

    fn amf_str(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    }

    fn header(flags: u8) -> Vec<u8> {
        let mut f = Vec::from(*b"FLV\x01");
        f.push(flags);
        f.extend_from_slice(&9u32.to_be_bytes());
        f.extend_from_slice(&0u32.to_be_bytes());
        f
    }

    #[test]
    fn enhanced_hevc_with_composition_time() {
        let mut f = header(1);
        // SequenceStart (hvcC), then CodedFrames with a cts of 40, then
        // CodedFramesX.
        tag(&mut f, 9, 0, &[0x90, b'h', b'v', b'c', b'1', 1, 2, 3]);
        tag(&mut f, 9, 0, &[0x91, b'h', b'v', b'c', b'1', 0, 0, 40, 0xAA, 0xBB]);
        tag(&mut f, 9, 40, &[0xA3, b'h', b'v', b'c', b'1', 0xCC]);
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        assert_eq!(d.tracks()[0].codec, Codec::Hevc);
        assert_eq!(d.tracks()[0].config.unwrap().len, 3);
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!(
            (p.pts, p.dts, p.flags.keyframe, p.data),
            (Some(40), Some(0), true, &[0xAA, 0xBB][..])
        );
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.pts, p.flags.keyframe, p.data), (Some(40), false, &[0xCC][..]));
        assert!(d.next_packet().unwrap().is_none());
    }

    fn with_metadata() -> (Vec<u8>, u64) {
        let mut f = header(5);
        let mut m = Vec::new();
        m.push(2);
        amf_str(&mut m, "onMetaData");
        m.push(8);
        m.extend_from_slice(&3u32.to_be_bytes());
        amf_str(&mut m, "duration");
        m.push(0);
        m.extend_from_slice(&2.5f64.to_be_bytes());
        amf_str(&mut m, "encoder");
        m.push(2);
        amf_str(&mut m, "Lavf");
        amf_str(&mut m, "keyframes");
        m.push(3);
        amf_str(&mut m, "times");
        m.push(10);
        m.extend_from_slice(&2u32.to_be_bytes());
        for t in [0.0f64, 1.0] {
            m.push(0);
            m.extend_from_slice(&t.to_be_bytes());
        }
        amf_str(&mut m, "filepositions");
        m.push(10);
        m.extend_from_slice(&2u32.to_be_bytes());
        let pos_at = m.len();
        for _ in 0..2 {
            m.push(0);
            m.extend_from_slice(&0f64.to_be_bytes());
        }
        m.extend_from_slice(&[0, 0, 9]);
        m.extend_from_slice(&[0, 0, 9]);
        let meta_at = f.len() + 11;
        tag(&mut f, 18, 0, &m);
        let mut second_key = 0;
        for i in 0..4u32 {
            let key = i % 2 == 0;
            if i == 2 {
                second_key = f.len();
            }
            tag(&mut f, 9, i * 500, &[if key { 0x12 } else { 0x22 }, i as u8]);
            tag(&mut f, 8, i * 500, &[0x2F, 0xFF, i as u8]);
        }
        // Patch the file positions: the first and third video tags.
        let first = 13 + 11 + m.len() + 4;
        for (k, p) in [first, second_key].iter().enumerate() {
            let at = meta_at + pos_at + k * 9 + 1;
            f[at..at + 8].copy_from_slice(&(*p as f64).to_be_bytes());
        }
        (f, second_key as u64)
    }

    #[test]
    fn metadata_tags_and_keyframe_seek() {
        let (f, second_key) = with_metadata();
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        assert_eq!(d.info().duration_us, Some(2_500_000));
        assert_eq!(d.tracks().len(), 2);
        let t = d.next_tag().unwrap().unwrap();
        assert_eq!((t.key, t.value), (TagKey::Text("encoder"), TagValue::Text("Lavf")));
        assert!(d.next_tag().unwrap().is_none());
        let mut n = 0;
        while d.next_packet().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 8);
        d.seek(0, 1200).unwrap();
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!((p.track, p.dts, p.pos), (0, Some(1000), Some(second_key + 12)));
        assert!(p.flags.keyframe);
    }

    #[test]
    fn previous_tag_size_mismatch_is_reported() {
        let mut f = header(1);
        tag(&mut f, 9, 0, &[0x12, 1, 2]);
        let n = f.len();
        f[n - 1] ^= 0x55;
        tag(&mut f, 9, 33, &[0x22, 3]);
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        while d.next_packet().unwrap().is_some() {}
        assert!(d.diagnostics().contains("flv.previous-tag-size-mismatch"));
    }

    #[test]
    fn aac_sequence_header_is_config() {
        let mut f = header(4);
        tag(&mut f, 8, 0, &[0xAF, 0, 0x12, 0x10]);
        tag(&mut f, 8, 0, &[0xAF, 1, 0x21, 0x22]);
        tag(&mut f, 8, 23, &[0xAF, 0, 0x12, 0x10]);
        tag(&mut f, 8, 23, &[0xAF, 1, 0x23]);
        let mut d = Demuxer::open(SliceSource::new(&f), None).unwrap();
        let t = &d.tracks()[0];
        assert_eq!((t.codec, t.sample_rate, t.channels), (Codec::Aac, 44100, 2));
        assert_eq!(d.codec_config(0).unwrap(), &[0x12, 0x10]);
        let mut sizes = Vec::new();
        while let Some(p) = d.next_packet().unwrap() {
            sizes.push(p.data.len());
        }
        assert_eq!(sizes, [2, 1]);
    }
}
