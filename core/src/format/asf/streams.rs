//! Streams: the Stream Properties Object (ASF Specification rev 1.20 §3.3)
//! with its audio (WAVEFORMATEX, §9.1) and video (BITMAPINFOHEADER, §9.2)
//! type-specific data, and the Extended Stream Properties Object (§4.1).

use super::codec_ids;
use super::data_packet::{read_small, Rd};
use super::demuxer::{AsfDemuxer, MS};
use super::guids;
use super::header::{self, StreamType};
use super::layout::{
    ExtendedStreamPropertiesFixed, PayloadExtensionSystem, SpreadAudio, StreamName, StreamPropertiesFixed,
    VideoTypeSpecific, STREAM_PROPERTIES_FIXED, VIDEO_TYPE_SPECIFIC,
};
use super::reassembly::{Pending, Spread};
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::source::Source;
use crate::types::{ByteRange, Codec, Track, TrackKind};
use zerocopy::FromBytes;

/// Most ASF media streams kept; further streams are reported with
/// `asf.stream-capacity` and their payloads skipped.
pub const MAX_STREAMS: usize = 16;
/// Stream states held by the demuxer: a stream gets one only once it has a
/// track, so never more than [`crate::MAX_TRACKS`] (4 with `few-tracks`,
/// which keeps the state under 4 KiB).
pub(super) const KEPT_STREAMS: usize = if MAX_STREAMS < crate::MAX_TRACKS {
    MAX_STREAMS
} else {
    crate::MAX_TRACKS
};

/// The state of one stream that has a track.
#[derive(Debug, Clone)]
pub(super) struct StreamState {
    pub number: u8,
    pub track: usize,
    pub audio: bool,
    pub video: bool,
    /// Sample rate and bit rate, for the duration of a WMA packet.
    pub wma: Option<(u32, u32)>,
    /// Audio spread interleaving to undo, as ffmpeg does.
    pub spread: Option<Spread>,
    pub last_obj_size: u32,
    pub skip_to_key: bool,
    pub pending: Pending,
}

/// What an Extended Stream Properties Object says of its stream (§4.1):
/// stream number, leak data rate and Maximum Object Size.
#[derive(Debug, Clone, Copy)]
pub(super) struct Leak {
    pub number: u8,
    pub rate: u32,
    pub max_object: u32,
}

/// What the audio type-specific data adds to a stream's state.
struct AudioState {
    wma: Option<(u32, u32)>,
    spread: Option<Spread>,
}

/// Where a stream's type-specific and error correction data are.
#[derive(Clone, Copy)]
struct TypeSpecific {
    /// Start of the type-specific data.
    at: u64,
    /// Its length (Type-Specific Data Length).
    len: u32,
    /// Its end: where the error correction data starts.
    end: u64,
    /// Error Correction Data Length.
    ecc_len: u32,
    /// End of the Stream Properties Object.
    obj_end: u64,
}

impl AsfDemuxer {
    /// Reads one Stream Properties Object (§3.3) of `size` bytes whose body
    /// is at `body`, and adds its track.
    pub(super) fn stream_properties<S: Source>(
        &mut self,
        src: &mut S,
        ctx: &mut Context,
        body: u64,
        size: u64,
    ) -> Result<()> {
        let (b, n) = read_small::<S, 54>(src, body)?;
        let Ok((fixed, _)) = StreamPropertiesFixed::ref_from_prefix(b.get(..n).unwrap_or(&[])) else {
            return Err(Error::truncated(
                body,
                &"asf stream properties: shorter than its fields (ASF 1.20 §3.3)",
            ));
        };
        let number = (fixed.flags.get() & 0x7F) as u8;
        let ts_len = fixed.type_specific_len.get();
        let ts = body + STREAM_PROPERTIES_FIXED;
        let Some(mut stype) = header::stream_type(&fixed.stream_type) else {
            ctx.diags.report("asf.unknown-stream-type", body);
            return Ok(());
        };
        if self.streams.iter().any(|s| s.number == number) {
            ctx.diags.report("asf.duplicate-stream", body);
            return Ok(());
        }
        let mut track = Track {
            id: number as u32,
            time_base: MS,
            ..Track::default()
        };
        let mut wave_at = ts;
        if stype == StreamType::Binary {
            // DVR-MS: a major type GUID, and for audio a media type block
            // (subtype, three DWORDs, format type, DWORD) before WAVEFORMATEX.
            let g: [u8; 16] = src.array(ts)?;
            if g == guids::BINARY_AUDIO {
                stype = StreamType::Audio;
                wave_at = ts + 64;
            }
        }
        let tsd = TypeSpecific {
            at: ts,
            len: ts_len,
            end: ts.saturating_add(ts_len as u64),
            ecc_len: fixed.error_correction_len.get(),
            obj_end: body.saturating_add(size.saturating_sub(24)),
        };
        let mut audio_state = AudioState {
            wma: None,
            spread: None,
        };
        match stype {
            StreamType::Audio => audio_state = audio_track(src, &mut track, wave_at, tsd)?,
            StreamType::Video | StreamType::Jfif => video_track(src, ctx, &mut track, stype, tsd)?,
            StreamType::Command | StreamType::Binary => {
                track.kind = TrackKind::Data;
            }
        }
        self.add_stream(ctx, track, body, number, audio_state);
        Ok(())
    }

    /// Adds the track of stream `number` and, when it has one, the stream's
    /// state.
    fn add_stream(&mut self, ctx: &mut Context, track: Track, body: u64, number: u8, a: AudioState) {
        let audio = track.kind == TrackKind::Audio;
        let video = track.kind == TrackKind::Video;
        let Some(index) = ctx.add_track(track, body) else {
            return;
        };
        let st = StreamState {
            number,
            track: index,
            audio,
            video,
            wma: a.wma,
            spread: a.spread,
            last_obj_size: 0,
            skip_to_key: false,
            pending: Pending::default(),
        };
        if self.streams.push(st).is_err() {
            ctx.diags.report("asf.stream-capacity", body);
        }
    }
}

/// Fills an audio track from the WAVEFORMATEX at `wave_at` (§9.1) and reads
/// the audio spread error correction data (§3.3, §9.1.1).
fn audio_track<S: Source>(src: &mut S, track: &mut Track, wave_at: u64, tsd: TypeSpecific) -> Result<AudioState> {
    let (wb, wn) = read_small::<S, 40>(src, wave_at)?;
    let f = parse_wave_format(wb.get(..wn).unwrap_or(&[]), wave_at, tsd.len).ok_or(Error::malformed(
        tsd.at,
        &"asf stream properties: audio type-specific data is not a WAVEFORMATEX (ASF 1.20 §9.1)",
    ))?;
    track.kind = TrackKind::Audio;
    track.codec = codec_ids::audio_codec(f.tag, f.bits);
    track.codec_tag = f.tag as u32;
    track.sample_rate = f.sample_rate;
    track.channels = f.channels;
    track.bits_per_sample = f.bits;
    track.block_align = f.block_align as u32;
    track.bit_rate = f.byte_rate.saturating_mul(8);
    track.config = f.extra.filter(|e| e.offset.saturating_add(e.len as u64) <= tsd.end);
    let mut wma = None;
    if matches!(track.codec, Codec::Wmav1 | Codec::Wmav2)
        && f.block_align > 1
        && track.bit_rate > 0
        && f.sample_rate > 0
    {
        wma = Some((f.sample_rate, track.bit_rate));
    }
    // Audio spread error correction (§3.3, §9.1.1): ffmpeg descrambles when
    // the span is above 1.
    let mut spread = None;
    if tsd.ecc_len >= 8 && tsd.end.saturating_add(8) <= tsd.obj_end {
        let e = src.read::<SpreadAudio>(tsd.end)?;
        let span = e.span;
        let psize = e.packet.get();
        let chunk = e.chunk.get();
        if span > 1 && chunk > 0 && psize / chunk > 1 && psize % chunk == 0 {
            spread = Some(Spread {
                span: span as u32,
                packet: psize as u32,
                chunk: chunk as u32,
            });
        }
    }
    Ok(AudioState { wma, spread })
}

/// Fills a video track from its type-specific data (§9.2): picture size,
/// FourCC, and the codec-specific bytes after the BITMAPINFOHEADER.
fn video_track<S: Source>(
    src: &mut S,
    ctx: &mut Context,
    track: &mut Track,
    stype: StreamType,
    tsd: TypeSpecific,
) -> Result<()> {
    track.kind = TrackKind::Video;
    if stype == StreamType::Jfif {
        track.codec = Codec::Mjpeg;
    }
    let ts = tsd.at;
    if tsd.obj_end.saturating_sub(ts) < VIDEO_TYPE_SPECIFIC {
        return Ok(());
    }
    let (vb, vn) = read_small::<S, 51>(src, ts)?;
    let Ok((v, _)) = VideoTypeSpecific::ref_from_prefix(vb.get(..vn).unwrap_or(&[])) else {
        return Ok(());
    };
    let bi_size = v.bi_size.get();
    track.width = v.width.get();
    track.height = v.height.get();
    track.bits_per_sample = v.bit_count.get();
    let fourcc = v.compression;
    track.codec_tag = u32::from_be_bytes(fourcc);
    if stype == StreamType::Video {
        track.codec = codec_ids::video_codec(fourcc);
    }
    if bi_size > 40 {
        let len = bi_size - 40;
        let at = ts + VIDEO_TYPE_SPECIFIC;
        if at.saturating_add(len as u64) <= tsd.obj_end {
            track.config = Some(ByteRange { offset: at, len });
        } else {
            ctx.diags.report("asf.bad-codec-data", at);
        }
    }
    Ok(())
}

/// The fixed part of an Extended Stream Properties Object (§4.1): what
/// it says of its stream, and how many stream names and payload extension
/// systems follow.
pub(super) struct Extended {
    pub leak: Leak,
    /// Stream Number as stored (a leak is kept only below 128).
    pub number: u16,
    names: u16,
    extensions: u16,
}

/// Reads the fixed part of the Extended Stream Properties Object (§4.1)
/// whose body is at `body`.
pub(super) fn extended_stream_properties<S: Source>(src: &mut S, body: u64) -> Result<Extended> {
    let (b, n) = read_small::<S, 64>(src, body)?;
    let Ok((fixed, _)) = ExtendedStreamPropertiesFixed::ref_from_prefix(b.get(..n).unwrap_or(&[])) else {
        return Err(Error::truncated(
            body,
            &"asf extended stream properties: shorter than its fields (ASF 1.20 §4.1)",
        ));
    };
    let number = fixed.stream_number.get();
    Ok(Extended {
        leak: Leak {
            number: number as u8,
            rate: fixed.data_bitrate.get(),
            max_object: fixed.max_object_size.get(),
        },
        number,
        names: fixed.name_count.get(),
        extensions: fixed.extension_count.get(),
    })
}

/// Where the optional Stream Properties Object of an Extended Stream
/// Properties Object (§4.1) whose body is at `body` starts: after the
/// fixed part, the stream names and the payload extension systems.
pub(super) fn embedded_stream_properties<S: Source>(src: &mut S, body: u64, ext: &Extended) -> Result<u64> {
    let mut p = body + core::mem::size_of::<ExtendedStreamPropertiesFixed>() as u64;
    for _ in 0..ext.names {
        let name = src.read::<StreamName>(p)?;
        p = p.saturating_add(4 + name.len.get() as u64);
    }
    for _ in 0..ext.extensions {
        let sys = src.read::<PayloadExtensionSystem>(p)?;
        p = p.saturating_add(22 + sys.info_len.get() as u64);
    }
    Ok(p)
}

/// WAVEFORMATEX as found in an audio stream's type-specific data (§9.1).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct WaveFormat {
    pub tag: u16,
    pub channels: u16,
    pub sample_rate: u32,
    pub byte_rate: u32,
    pub block_align: u16,
    pub bits: u16,
    /// The codec-specific bytes after the structure (cbSize of them).
    pub extra: Option<ByteRange>,
}

/// Parses WAVEFORMATEX (and WAVEFORMATEXTENSIBLE) of `size` bytes at file
/// offset `at`, given its first bytes in `b`.
pub(super) fn parse_wave_format(b: &[u8], at: u64, size: u32) -> Option<WaveFormat> {
    if size < 14 {
        return None;
    }
    let mut r = Rd::new(b);
    let mut f = WaveFormat {
        tag: r.u16()?,
        channels: r.u16()?,
        sample_rate: r.u32()?,
        byte_rate: r.u32()?,
        block_align: r.u16()?,
        bits: 8,
        extra: None,
    };
    if size >= 16 {
        f.bits = r.u16()?;
    }
    if size >= 18 {
        let cb = r.u16()? as u32;
        let mut cb = cb.min(size - 18);
        let mut start = at + 18;
        if f.tag == 0xFFFE && cb >= 22 {
            r.u16()?; // wValidBitsPerSample
            r.u32()?; // dwChannelMask
            f.tag = r.u16()?; // first two bytes of the SubFormat GUID
            start += 22;
            cb -= 22;
        }
        if cb > 0 {
            f.extra = Some(ByteRange { offset: start, len: cb });
        }
    }
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wave_format_extra() {
        let mut b = [0u8; 28];
        b[0..2].copy_from_slice(&0x161u16.to_le_bytes());
        b[16..18].copy_from_slice(&10u16.to_le_bytes());
        let f = parse_wave_format(&b, 100, 28).unwrap();
        assert_eq!(codec_ids::audio_codec(f.tag, f.bits), Codec::Wmav2);
        assert_eq!(f.extra, Some(ByteRange { offset: 118, len: 10 }));
        // cbSize larger than the structure is clamped.
        b[16..18].copy_from_slice(&999u16.to_le_bytes());
        assert_eq!(parse_wave_format(&b, 0, 28).unwrap().extra.unwrap().len, 10);
    }
}
