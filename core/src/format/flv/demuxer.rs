//! The FLV demuxer: the file header (Annex E.2), the stream probe of
//! `open`, the tag walk that gives packets (E.3, E.4), and seeking.

use super::script::{script_kind, script_name, MetaData, Script, SHORT_SCRIPT_TAG};
use super::tag::TAG_HEADER;
use super::tag::{audio_codec, audio_rate, content, fourcc_codec, read_tag, video_codec, Content, Kind, TagHead, MS};
use crate::error::{Error, Result};
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::Source;
use crate::tags::{Tag, TagCursor};
use crate::types::{ByteRange, Codec, Packet, PacketFlags, Track, TrackKind};

/// Size of the FLV header (Annex E.2) read by `open`: signature, version,
/// flags, DataOffset.
const FILE_HEADER: usize = 9;

/// Tags one `next_packet` call may pass over without giving a packet, as a
/// multiple of `Limits::max_top_level`: a bound on the work of a file of
/// skipped tags (script data at time 0, empty tags, sequence headers).
const SKIPPED_TAGS_PER_TOP_LEVEL: u64 = 16;

/// Tag headers a seek walks at most looking for its target: a bound that a
/// real file does not reach (about 13 days of 60 audio and video tags a
/// second) and that keeps a seek over a forged file finite.
const MAX_SEEK_TAGS: u64 = 100_000_000;

/// How far before the target (ms) a seek starts its walk from the
/// `keyframes` index at first.
const SEEK_MARGIN_MS: i64 = 10_000;

/// Factor by which a seek that found no tag widens its margin.
const SEEK_MARGIN_GROWTH: i64 = 8;

/// Margins a seek tries (each [`SEEK_MARGIN_GROWTH`] times the last)
/// before it starts from the first tag.
const MAX_SEEK_WIDENINGS: u32 = 8;

/// Sample rates of an AAC AudioSpecificConfig's samplingFrequencyIndex
/// (ISO/IEC 14496-3 §1.6.3.4).
const AAC_RATES: [u32; 13] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
];

/// A packet a tag gives: its track kind, the payload's offset and length,
/// pts and key flag.
struct Payload {
    kind: Kind,
    data: u64,
    len: u32,
    pts: i64,
    key: bool,
}

/// The error of a tag whose body the end of the input (at `len`) cuts.
const fn body_cut(len: u64) -> Error {
    Error::truncated(len, &"flv tag: body runs past the end of the input (FLV 10.1 E.4.1)")
}

/// Demuxer state for FLV.
#[derive(Debug, Clone)]
pub struct FlvDemuxer {
    /// Offset of the first tag (after PreviousTagSize0).
    first_tag: u64,
    /// Offset of the next tag to read.
    pos: u64,
    /// The track index of each [`Kind`], once it exists.
    tracks: [Option<usize>; 4],
    /// What the header `onMetaData` gave.
    meta: MetaData,
    /// After a seek: video tags are skipped up to the next key frame.
    skip_to_key: bool,
    /// Running sum of tag sizes (one of the PreviousTagSize values ffmpeg
    /// accepts).
    sum_tag_sizes: u64,
    /// The last tag was cut by the end of the input.
    cut: bool,
    /// `open` has returned: no more tracks are added.
    sealed: bool,
}

impl FlvDemuxer {
    /// Walks tag headers from `from` for the last tag of `kind` that gives
    /// a packet at or before `ts` (a key frame for video).
    fn find_tag<S: Source>(&self, src: &mut S, from: u64, kind: Kind, ts: i64) -> Result<Option<u64>> {
        let mut at = from;
        let mut best = None;
        let mut walked = 0u64;
        while let Some(t) = read_tag(src, at)? {
            walked += 1;
            if walked > MAX_SEEK_TAGS || t.end() > src.len() {
                break;
            }
            let hit = match t.kind {
                8 | 9 => match content(src, &t)? {
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
                // SoundFormat, SoundRate, SoundSize, SoundType (Annex E.4.2.1).
                let [f]: [u8; 1] = src.array(t.body)?;
                track.kind = TrackKind::Audio;
                track.codec = audio_codec(f);
                track.channels = if f & 1 != 0 { 2 } else { 1 };
                track.bits_per_sample = if f & 2 != 0 { 16 } else { 8 };
                track.sample_rate = audio_rate(f);
            }
            Kind::Video => {
                // FrameType and CodecID (Annex E.4.3.1), or an enhanced
                // header's FourCC.
                let mut f = [0u8; 5];
                let n = (t.size as usize).min(f.len());
                src.read_exact_at(t.body, f.get_mut(..n).unwrap_or(&mut []))?;
                let [b0, fourcc @ ..] = f;
                track.kind = TrackKind::Video;
                track.codec = if b0 & 0x80 != 0 {
                    fourcc_codec(&fourcc)
                } else {
                    video_codec(b0 & 0x0F)
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
            let v = u16::from_be_bytes(src.array(data)?);
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

    /// Reads the FLV header (Annex E.2): the flags byte and the offset of
    /// the first tag. Reports a PreviousTagSize0 that is not 0 (E.3).
    fn read_file_header<S: Source>(src: &mut S, ctx: &mut Context) -> Result<(u8, u64)> {
        let h: [u8; FILE_HEADER] = src.array(0)?;
        if h.get(..3) != Some(&b"FLV"[..]) {
            return Err(Error::malformed(0, &"flv header: no FLV signature (FLV 10.1 E.2)"));
        }
        let [_, _, _, _, flags, o @ ..] = h;
        let offset = u32::from_be_bytes(o) as u64;
        if offset < 9 {
            return Err(Error::malformed(5, &"flv header: DataOffset below 9 (FLV 10.1 E.2)"));
        }
        if offset.saturating_add(4) <= src.len() && src.u32_be(offset)? != 0 {
            ctx.diags.report("flv.previous-tag-size-0", offset);
        }
        Ok((flags, offset + 4))
    }

    /// Finds the streams as ffmpeg's probing does: walks the tags until
    /// the audio and video the header `flags` announce have appeared (or
    /// the probe budget is spent), taking the first sequence headers as
    /// codec configuration and reading onMetaData.
    fn probe_streams<S: Source>(&mut self, src: &mut S, ctx: &mut Context, flags: u8) -> Result<()> {
        let want_audio = flags & 4 != 0 || flags & 5 == 0;
        let want_video = flags & 1 != 0 || flags & 5 == 0;
        let mut at = self.first_tag;
        let mut walked = 0u32;
        let budget = self.first_tag.saturating_add(ctx.limits.probe_bytes);
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
                    if let Ok(Content::Packet { kind, .. } | Content::Config { kind, .. }) = content(src, &t) {
                        self.track(src, ctx, kind, &t)?;
                    }
                }
                break;
            }
            self.probe_tag(src, ctx, &t)?;
            if self.streams_found(ctx, want_audio, want_video) {
                break;
            }
            if next <= at {
                break;
            }
            at = next;
        }
        Ok(())
    }

    /// One whole tag met by [`FlvDemuxer::probe_streams`]: the header
    /// metadata is read, other tags name their streams.
    fn probe_tag<S: Source>(&mut self, src: &mut S, ctx: &mut Context, t: &TagHead) -> Result<()> {
        match t.kind {
            18 if t.size > SHORT_SCRIPT_TAG && t.dts == 0 && script_name(src, t)? == Script::MetaData => {
                self.meta.read(src, ctx, t)?;
            }
            18 => {
                if let Some(kind) = script_kind(src, t)? {
                    self.track(src, ctx, kind, t)?;
                }
            }
            8 | 9 => match content(src, t)? {
                Content::Config { kind, data, len } => self.config(src, ctx, kind, t, data, len)?,
                Content::Packet { kind, .. } => {
                    self.track(src, ctx, kind, t)?;
                }
                Content::Skip => {}
            },
            _ => {}
        }
        Ok(())
    }

    /// Whether the probe is done: the wanted streams exist, and those of a
    /// codec that needs a sequence header have one.
    fn streams_found(&self, ctx: &Context, want_audio: bool, want_video: bool) -> bool {
        let have_audio = self.track_of(Kind::Audio).is_some();
        let have_video = self.track_of(Kind::Video).is_some();
        let configs_ok = [Kind::Audio, Kind::Video].iter().all(|&k| {
            self.track_of(k).and_then(|i| ctx.tracks.get(i)).is_none_or(|tr| {
                tr.config.is_some()
                    || !matches!(
                        tr.codec,
                        Codec::Aac | Codec::H264 | Codec::Hevc | Codec::Av1 | Codec::Vp9
                    )
            })
        });
        (!want_audio || have_audio) && (!want_video || have_video) && configs_ok
    }

    /// Sets what `onMetaData` gave on the tracks found (picture size, data
    /// rates, duration in ms).
    fn apply_metadata(&self, ctx: &mut Context) {
        let m = self.meta.params;
        if let Some(t) = self.track_of(Kind::Video).and_then(|i| ctx.tracks.get_mut(i)) {
            t.width = m.width;
            t.height = m.height;
            t.bit_rate = m.video_rate;
        }
        if let Some(t) = self.track_of(Kind::Audio).and_then(|i| ctx.tracks.get_mut(i)) {
            if m.audio_rate > 0 {
                t.bit_rate = m.audio_rate;
            }
        }
        for t in ctx.tracks.iter_mut() {
            if let Some(us) = ctx.info.duration_us {
                t.duration = Some(us / 1000);
            }
        }
    }

    /// What tag `t` gives to `next_packet`: the kind, payload range, pts
    /// and key flag of a packet, or `None` to go on to the next tag (a
    /// sequence header is recorded). `cut_err` is returned for a tag the
    /// end of the input cuts (`cut`) that gives no packet.
    fn tag_payload<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        t: &TagHead,
        cut: bool,
        cut_err: Error,
    ) -> Result<Option<Payload>> {
        Ok(match t.kind {
            8 | 9 => match content(src, t)? {
                Content::Packet {
                    kind,
                    data,
                    len,
                    pts,
                    key,
                } => Some(Payload {
                    kind,
                    data,
                    len,
                    pts,
                    key,
                }),
                Content::Config { .. } | Content::Skip if cut => return Err(cut_err),
                Content::Config { kind, data, len } => {
                    self.config(src, ctx, kind, t, data, len)?;
                    None
                }
                Content::Skip => None,
            },
            18 => script_kind(src, t)?.map(|kind| Payload {
                kind,
                data: t.body,
                len: t.size,
                pts: t.dts,
                key: true,
            }),
            _ => None,
        })
    }
}

impl FormatDemuxer for FlvDemuxer {
    fn open<S: Source>(src: &mut S, ctx: &mut Context) -> Result<Self> {
        let (flags, first_tag) = Self::read_file_header(src, ctx)?;
        let mut d = FlvDemuxer {
            first_tag,
            pos: first_tag,
            tracks: [None; 4],
            meta: MetaData::default(),
            skip_to_key: false,
            sum_tag_sizes: 0,
            cut: false,
            sealed: false,
        };
        d.probe_streams(src, ctx, flags)?;
        if ctx.tracks.is_empty() {
            ctx.diags.report("flv.no-streams-found", first_tag);
        }
        d.sealed = true;
        d.apply_metadata(ctx);
        Ok(d)
    }

    fn next_packet<'s, S: Source>(&mut self, src: &'s mut S, ctx: &mut Context) -> Result<Option<Packet<'s>>> {
        if self.cut {
            return Err(body_cut(src.len()));
        }
        let mut guard = 0u64;
        loop {
            guard += 1;
            if guard > ctx.limits.max_top_level as u64 * SKIPPED_TAGS_PER_TOP_LEVEL {
                return Err(Error::limit(
                    self.pos,
                    &"flv tag: too many tags without a packet (FLV 10.1 E.3; Limits::max_top_level)",
                ));
            }
            let at = self.pos;
            let Some(t) = read_tag(src, at)? else {
                if at < src.len() {
                    return Err(Error::truncated(at, &"flv tag: header cut short (FLV 10.1 E.4.1)"));
                }
                return Ok(None);
            };
            let cut = t.end() > src.len();
            let cut_err = body_cut(src.len());
            if cut && !matches!(t.kind, 8 | 9) {
                return Err(cut_err);
            }
            self.pos = t.end().saturating_add(4);
            if !cut {
                self.check_previous_size(src, ctx, &t)?;
            }
            let Some(Payload {
                kind,
                data,
                len,
                pts,
                key,
            }) = self.tag_payload(src, ctx, &t, cut, cut_err)?
            else {
                continue;
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
                return Err(Error::limit(
                    data,
                    &"flv tag: DataSize larger than Limits::max_packet (FLV 10.1 E.4.1)",
                ));
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
            let flags = PacketFlags {
                truncated: cut,
                ..PacketFlags::keyframe(key)
            };
            let data_ref = src.bytes(data, len as usize)?;
            return Ok(Some(
                Packet::contiguous(track, data, data_ref)
                    .with_times(Some(pts), Some(t.dts), None)
                    .with_flags(flags),
            ));
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
        let mut margin = SEEK_MARGIN_MS;
        let mut guard = 0;
        loop {
            guard += 1;
            let start = self
                .meta
                .tag_before(src, ctx, self.first_tag, ts.saturating_sub(margin))?;
            if let Some(p) = self.find_tag(src, start, kind, ts)? {
                self.pos = p;
                // The other video resumes at a key frame.
                self.skip_to_key = kind != Kind::Video && self.track_of(Kind::Video).is_some();
                return Ok(());
            }
            if start <= self.first_tag || guard > MAX_SEEK_WIDENINGS {
                self.pos = self.first_tag;
                self.skip_to_key = kind == Kind::Video;
                return Ok(());
            }
            margin = margin.saturating_mul(SEEK_MARGIN_GROWTH);
        }
    }

    fn next_tag<'s, S: Source>(
        &mut self,
        src: &'s mut S,
        ctx: &Context,
        cur: &mut TagCursor,
    ) -> Result<Option<Tag<'s>>> {
        self.meta.next_tag(src, ctx, cur)
    }
}
