//! Tracks (RFC 9559 §5.1.4) and attached pictures (§5.1.6).

use super::codec_id;
use super::ebml::{read_float, read_str, read_uint, Children, Element};
use super::reorder::{self, reorder_depth};
use super::{ids, range_of, time_base, Encoding, MkvDemuxer, TrackState, MAX_STRIPPED};
use crate::codec::riff_layout::{BitmapInfoHeader, WaveFormat};
use crate::codec::riff_tags::{bmp_codec, wave_codec};
use crate::error::Result;
use crate::format::traits::Context;
use crate::ieee754::Float;
use crate::source::Source;
use crate::types::{rescale, ByteRange, Codec, Language, Rational, Track, TrackKind};

/// Longest CodecID kept (the registry's longest is 21 bytes).
const CODEC_ID_BYTES: usize = 32;

/// What a TrackEntry says, before it becomes a [`Track`].
struct Entry {
    number: u64,
    uid: u64,
    track_type: u64,
    default: bool,
    forced: bool,
    default_duration: u64,
    codec_delay: u64,
    name: Option<ByteRange>,
    language: Language,
    bcp47: Language,
    codec_id: [u8; CODEC_ID_BYTES],
    codec_id_len: usize,
    private: Option<ByteRange>,
    width: u64,
    height: u64,
    /// SamplingFrequency; `None` when not finite.
    rate: Option<Float>,
    /// OutputSamplingFrequency; zero when absent.
    out_rate: Option<Float>,
    channels: u64,
    bit_depth: u64,
    encoding: Encoding,
}

impl MkvDemuxer {
    /// Tracks (RFC 9559 §5.1.4): every TrackEntry becomes a [`Track`].
    pub(super) fn read_tracks<S: Source>(&mut self, src: &mut S, ctx: &mut Context, e: &Element) -> Result<()> {
        let mut kids = Children::of(e, self.segment_end);
        // A Tracks element cut by the end of the input (a truncated file with
        // Tracks at the end): only the entries wholly present are used.
        let cut = e.end().is_none_or(|end| end > src.len());
        loop {
            let c = match kids.next(src) {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(err) if cut && err.is_truncation() => break,
                Err(err) => return Err(err),
            };
            if c.id != ids::TRACK_ENTRY {
                continue;
            }
            if cut && c.end_within(kids.end) >= kids.end {
                ctx.diags.report("mkv.cut-track-entry", c.start);
                break;
            }
            let entry = match read_entry(src, ctx, &c, kids.end) {
                Ok(x) => x,
                Err(err) if err.is_truncation() => return Err(err),
                Err(_) => {
                    ctx.diags.report("mkv.bad-track-entry", c.start);
                    continue;
                }
            };
            if entry.number == 0 || self.tracks.iter().any(|t| t.number == entry.number) {
                ctx.diags.report("mkv.bad-track-number", c.start);
                continue;
            }
            self.add_entry(src, ctx, entry, c.start)?;
        }
        Ok(())
    }

    fn add_entry<S: Source>(&mut self, src: &mut S, ctx: &mut Context, e: Entry, at: u64) -> Result<()> {
        let id = e.codec_id.get(..e.codec_id_len).unwrap_or(&[]);
        let (c, codec_tag) = private_codec(src, id, e.private, codec_id::from_codec_id(id, e.bit_depth))?;
        if c == Codec::Unknown {
            ctx.diags.report("mkv.unknown-codec", at);
        }
        let kind = match e.track_type {
            1 => TrackKind::Video,
            2 => TrackKind::Audio,
            0x11 => TrackKind::Subtitle,
            0x21 => TrackKind::Data,
            _ => codec_id::kind_of(c),
        };
        let tb = time_base(self.scale);
        let mut language = if e.bcp47.is_empty() { e.language } else { e.bcp47 };
        if language.as_str() == "und" {
            language.clear();
        }
        let audio = kind == TrackKind::Audio;
        let rate = match e.out_rate {
            Some(out) if out.is_positive() && c == Codec::Aac => Some(out),
            _ => e.rate,
        };
        let sample_rate = rate
            .filter(|r| audio && r.is_positive() && r.cmp_i64(u32::MAX.into()).is_lt())
            .and_then(|r| u32::try_from(r.round_u64()?).ok())
            .unwrap_or(0);
        let track = Track {
            id: u32::try_from(e.number).unwrap_or(u32::MAX),
            kind,
            codec: c,
            codec_tag,
            time_base: tb,
            width: if audio { 0 } else { e.width.min(u32::MAX as u64) as u32 },
            height: if audio { 0 } else { e.height.min(u32::MAX as u64) as u32 },
            sample_rate,
            channels: if audio {
                e.channels.min(u16::MAX as u64) as u16
            } else {
                0
            },
            bits_per_sample: if audio {
                e.bit_depth.min(u16::MAX as u64) as u16
            } else {
                0
            },
            language,
            config: e.private,
            default: e.default,
            forced: e.forced,
            ..Track::default()
        };
        let delay = rescale(
            e.codec_delay.min(i64::MAX as u64) as i64,
            Rational::new(1, 1_000_000_000),
            tb,
        );
        let depth = match (c, e.private) {
            (Codec::H264, Some(p)) if id == b"V_MPEG4/ISO/AVC" => reorder_depth(src, p, reorder::avcc),
            #[cfg(feature = "mkv-hevc-dts")]
            (Codec::Hevc, Some(p)) if id == b"V_MPEGH/ISO/HEVC" => reorder_depth(src, p, reorder::hvcc),
            (Codec::Mpeg4, Some(p)) if id.starts_with(b"V_MPEG4/ISO/") => mpeg4_depth(src, p),
            _ => None,
        };
        if e.encoding == Encoding::Unsupported {
            ctx.diags.report("mkv.compression-unsupported", at);
        }
        let state = TrackState {
            number: e.number,
            uid: e.uid,
            codec: c,
            default_duration: e.default_duration,
            codec_delay: delay,
            encoding: e.encoding,
            name: e.name,
            subtitle: kind == TrackKind::Subtitle,
            intra_only: codec_id::intra_only(c),
            reorders: codec_id::may_reorder(c),
            depth,
            pts_buffer: [i64::MIN; super::reorder::MAX_REORDER + 1],
            vorbis: match (c, e.private) {
                (Codec::Vorbis, Some(p)) => super::vorbis::Vorbis::from_private(src, p, sample_rate),
                _ => None,
            },
            next_ts: None,
            end_ts: i64::MIN,
            picture: None,
            webm_vtt: id.starts_with(b"D_WEBVTT/"),
            #[cfg(feature = "mkv-fast")]
            fast: false,
        };
        if ctx.add_track(track, at).is_some() {
            // Same capacity as ctx.tracks, so this push cannot fail.
            let _ = self.tracks.push(state);
        }
        Ok(())
    }

    /// Attachments (RFC 9559 §5.1.6) whose media type is a picture become
    /// tracks of one packet each, as ffmpeg's attached pictures (time base
    /// 1/90000).
    pub(super) fn add_pictures<S: Source>(&mut self, src: &mut S, ctx: &mut Context) -> Result<()> {
        let Some((start, end)) = self.attachments else {
            return Ok(());
        };
        let mut kids = Children { pos: start, end };
        let cut_at = if self.attachments_cut { end } else { u64::MAX };
        loop {
            let file = match kids.next(src) {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(_) => {
                    ctx.diags.report("mkv.bad-attachment", kids.pos);
                    break;
                }
            };
            if file.id != ids::ATTACHED_FILE {
                continue;
            }
            let mut mime = [0u8; 32];
            let mut mime_len = 0;
            let mut data = None;
            if read_file_entry(src, &file, end, &mut mime, &mut mime_len, &mut data).is_err() {
                // A cut or damaged attachment: the file is still readable.
                ctx.diags.report("mkv.bad-attachment", file.start);
                break;
            }
            let Some(c) = codec_id::from_image_mime(mime.get(..mime_len).unwrap_or(&[])) else {
                continue;
            };
            // A picture cut by the end of the input is left out.
            let Some(data) = data.filter(|d| d.len > 0 && d.offset.saturating_add(d.len as u64) < cut_at) else {
                continue;
            };
            let track = Track {
                id: 0,
                kind: TrackKind::Video,
                codec: c,
                time_base: Rational::new(1, 90_000),
                frames: Some(1),
                attached_picture: true,
                ..Track::default()
            };
            let state = TrackState {
                number: 0,
                uid: 0,
                codec: c,
                default_duration: 0,
                codec_delay: 0,
                encoding: Encoding::Plain,
                name: None,
                subtitle: false,
                intra_only: true,
                reorders: false,
                depth: None,
                pts_buffer: [i64::MIN; super::reorder::MAX_REORDER + 1],
                vorbis: None,
                next_ts: None,
                end_ts: i64::MIN,
                picture: Some(data),
                webm_vtt: false,
                #[cfg(feature = "mkv-fast")]
                fast: false,
            };
            if ctx.add_track(track, file.start).is_some() {
                let _ = self.tracks.push(state);
            }
        }
        Ok(())
    }
}

/// An AttachedFile's media type and data range.
fn read_file_entry<S: Source>(
    src: &mut S,
    file: &Element,
    end: u64,
    mime: &mut [u8; 32],
    mime_len: &mut usize,
    data: &mut Option<ByteRange>,
) -> Result<()> {
    let mut inner = Children::of(file, end);
    while let Some(c) = inner.next(src)? {
        match c.id {
            ids::FILE_MEDIA_TYPE => *mime_len = read_str(src, &c, mime)?.len(),
            ids::FILE_DATA => *data = range_of(&c),
            _ => {}
        }
    }
    Ok(())
}

/// Reads one TrackEntry's children (RFC 9559 §5.1.4.1), with the defaults
/// of the specification (FlagDefault 1, Language `eng`, SamplingFrequency
/// 8000, Channels 1).
fn read_entry<S: Source>(src: &mut S, ctx: &mut Context, e: &Element, limit: u64) -> Result<Entry> {
    let mut t = Entry {
        number: 0,
        uid: 0,
        track_type: 0,
        default: true,
        forced: false,
        default_duration: 0,
        codec_delay: 0,
        name: None,
        language: Language::EMPTY,
        bcp47: Language::EMPTY,
        codec_id: [0; CODEC_ID_BYTES],
        codec_id_len: 0,
        private: None,
        width: 0,
        height: 0,
        rate: Some(Float::from_u64(8000)),
        out_rate: Some(Float::ZERO),
        channels: 1,
        bit_depth: 0,
        encoding: Encoding::Plain,
    };
    let _ = t.language.push_str("eng");
    let mut kids = Children::of(e, limit);
    while let Some(c) = kids.next(src)? {
        match c.id {
            ids::TRACK_NUMBER => t.number = read_uint(src, &c)?,
            ids::TRACK_UID => t.uid = read_uint(src, &c)?,
            ids::TRACK_TYPE => t.track_type = read_uint(src, &c)?,
            ids::FLAG_DEFAULT => t.default = read_uint(src, &c)? != 0,
            ids::FLAG_FORCED => t.forced = read_uint(src, &c)? != 0,
            ids::DEFAULT_DURATION => t.default_duration = read_uint(src, &c)?,
            ids::CODEC_DELAY => t.codec_delay = read_uint(src, &c)?,
            ids::NAME => t.name = range_of(&c),
            ids::LANGUAGE => t.language = read_language(src, &c)?,
            ids::LANGUAGE_BCP47 => t.bcp47 = read_language(src, &c)?,
            ids::CODEC_ID => t.codec_id_len = read_str(src, &c, &mut t.codec_id)?.len(),
            ids::CODEC_PRIVATE => t.private = range_of(&c).filter(|r| r.len > 0),
            ids::VIDEO => {
                let mut v = Children::of(&c, kids.end);
                while let Some(x) = v.next(src)? {
                    match x.id {
                        ids::PIXEL_WIDTH => t.width = read_uint(src, &x)?,
                        ids::PIXEL_HEIGHT => t.height = read_uint(src, &x)?,
                        _ => {}
                    }
                }
            }
            ids::AUDIO => {
                let mut a = Children::of(&c, kids.end);
                while let Some(x) = a.next(src)? {
                    match x.id {
                        ids::SAMPLING_FREQUENCY => t.rate = read_float(src, &x)?,
                        ids::OUTPUT_SAMPLING_FREQUENCY => t.out_rate = read_float(src, &x)?,
                        ids::CHANNELS => t.channels = read_uint(src, &x)?,
                        ids::BIT_DEPTH => t.bit_depth = read_uint(src, &x)?,
                        _ => {}
                    }
                }
            }
            ids::CONTENT_ENCODINGS => t.encoding = read_encodings(src, ctx, &c, kids.end)?,
            _ => {}
        }
    }
    Ok(t)
}

/// A Language or LanguageBCP47 string; one too long for [`Language`] is
/// left out.
fn read_language<S: Source>(src: &mut S, e: &Element) -> Result<Language> {
    let mut b = [0u8; 16];
    let s = read_str(src, e, &mut b)?;
    let mut l = Language::EMPTY;
    if e.size.unwrap_or(0) <= 16 {
        if let Ok(s) = core::str::from_utf8(s) {
            let _ = l.push_str(s);
        }
    }
    Ok(l)
}

/// ContentEncodings (RFC 9559 §5.1.4.1.31): header stripping is kept;
/// compression of frames (zlib, bzlib, LZO) and chains of several encodings
/// are unsupported. Encryption is passed through, as ffmpeg does.
fn read_encodings<S: Source>(src: &mut S, ctx: &mut Context, e: &Element, limit: u64) -> Result<Encoding> {
    let mut out = Encoding::Plain;
    let mut count = 0;
    let mut kids = Children::of(e, limit);
    while let Some(enc) = kids.next(src)? {
        if enc.id != ids::CONTENT_ENCODING {
            continue;
        }
        count += 1;
        let (mut scope, mut kind, mut algo, mut settings) = (1u64, 0u64, 0u64, None);
        let mut inner = Children::of(&enc, kids.end);
        while let Some(c) = inner.next(src)? {
            match c.id {
                ids::CONTENT_ENCODING_SCOPE => scope = read_uint(src, &c)?,
                ids::CONTENT_ENCODING_TYPE => kind = read_uint(src, &c)?,
                ids::CONTENT_COMPRESSION => {
                    let mut comp = Children::of(&c, inner.end);
                    while let Some(x) = comp.next(src)? {
                        match x.id {
                            ids::CONTENT_COMP_ALGO => algo = read_uint(src, &x)?,
                            ids::CONTENT_COMP_SETTINGS => settings = Some(x),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if kind != 0 {
            // Encryption (ContentEncodingType 1): frames are passed as stored.
            ctx.diags.report("mkv.encrypted", enc.start);
            continue;
        }
        if scope & 1 == 0 {
            // Only CodecPrivate is compressed; frames are plain.
            if algo != 3 {
                ctx.diags.report("mkv.private-compressed", enc.start);
            }
            continue;
        }
        out = match algo {
            #[cfg(feature = "mkv-zlib")]
            0 => Encoding::Zlib,
            3 => {
                let mut v = heapless::Vec::<u8, MAX_STRIPPED>::new();
                if let Some(s) = settings {
                    let n = s.size.unwrap_or(0);
                    if n > MAX_STRIPPED as u64 {
                        ctx.diags.report("mkv.strip-too-long", s.start);
                        return Ok(Encoding::Unsupported);
                    }
                    let mut b = [0u8; MAX_STRIPPED];
                    let buf = b.get_mut(..n as usize).unwrap_or(&mut []);
                    src.read_exact_at(s.data, buf)?;
                    let _ = v.extend_from_slice(buf);
                }
                Encoding::Strip(v)
            }
            _ => Encoding::Unsupported,
        };
    }
    if count > 1 && out != Encoding::Plain {
        ctx.diags.report("mkv.multiple-encodings", e.start);
        return Ok(Encoding::Unsupported);
    }
    Ok(out)
}

/// Smallest `A_MS/ACM` CodecPrivate read: WAVEFORMAT (16 bytes).
const ACM_PRIVATE_MIN: u32 = 16;
/// Smallest `V_MS/VFW/FOURCC` CodecPrivate read: BITMAPINFOHEADER (40 bytes).
const VFW_PRIVATE_MIN: u32 = 40;
/// Smallest `V_QUICKTIME` CodecPrivate read: size (4) and sample entry type (4).
const QT_PRIVATE_MIN: u32 = 8;

/// The codec and codec tag of the CodecIDs whose codec is in CodecPrivate
/// (RFC 9559 §5.1.4.1.21; Matroska codec registry: `A_MS/ACM` holds a
/// WAVEFORMATEX, `V_MS/VFW/FOURCC` a BITMAPINFOHEADER, `V_QUICKTIME` a
/// sample description), looked up in the RIFF registry; otherwise `by_id`.
fn private_codec<S: Source>(src: &mut S, id: &[u8], private: Option<ByteRange>, by_id: Codec) -> Result<(Codec, u32)> {
    let Some(p) = private else {
        return Ok((by_id, 0));
    };
    Ok(if id == b"A_MS/ACM" && p.len >= ACM_PRIVATE_MIN {
        let f = src.read::<WaveFormat>(p.offset)?;
        let tag = f.format_tag.get();
        (wave_codec(tag, f.bits_per_sample.get()), tag as u32)
    } else if id == b"V_MS/VFW/FOURCC" && p.len >= VFW_PRIVATE_MIN {
        let f = src.read::<BitmapInfoHeader>(p.offset)?.compression;
        (bmp_codec(f), u32::from_le_bytes(f))
    } else if id == b"V_QUICKTIME" && p.len >= QT_PRIVATE_MIN {
        let f: [u8; 4] = src.array(p.offset + 4)?;
        (codec_id::from_quicktime(f), u32::from_le_bytes(f))
    } else {
        (by_id, 0)
    })
}

/// The reorder depth ffmpeg gives MPEG-4 Part 2 (`has_b_frames`, 0 or 1)
/// from the VOL in CodecPrivate: 0 when it is `low_delay` (ISO/IEC 14496-2
/// §6.3.3, from the control parameters or, as ffmpeg guesses, the simple
/// and advanced simple object types), else 1. `None` without a VOL.
fn mpeg4_depth<S: Source>(src: &mut S, config: ByteRange) -> Option<u8> {
    let mut buf = [0u8; 64];
    let n = (config.len as usize).min(buf.len());
    let head = buf.get_mut(..n)?;
    src.read_exact_at(config.offset, head).ok()?;
    let mut state = crate::codec::mpeg4v::Mpeg4State::default();
    let _ = state.parse_frame(head);
    (state.resolution != 0).then_some(u8::from(!state.low_delay))
}
