//! Uncompressed audio in MOV output: the QuickTime sound sample
//! descriptions and the frame-per-sample tables (QuickTime File Format,
//! "Sound Sample Descriptions" versions 0, 1 and 2; ISO/IEC 14496-12
//! §8.6.1.2, §8.7.3, §8.7.4 for the tables).
//!
//! In QuickTime a sample of uncompressed audio is one frame (a sample of
//! every channel): `stsz` gives the frame size once and the frame count,
//! `stts` one run of frames lasting one tick each (the media time scale is
//! the sample rate), and `stsc` counts the frames of each chunk. The
//! packets the muxer is given are runs of whole frames, written as they
//! are; each run of packets of the track with no other track's between
//! them is one chunk. Readers cut chunks into packets themselves (ffmpeg:
//! at most 1,024 frames).
//!
//! Which description, as QuickTime and ffmpeg's MOV writer choose it: a
//! rate over 65,535 Hz needs version 2 (`lpcm`, the rate as a double and
//! the format in flags); samples over 16 bits need version 1 (`in24`,
//! `in32`, `fl32`, `fl64`), with a `wave` box holding `enda` when they are
//! little-endian; the rest is version 0 (`raw `, `twos`, `sowt`, `alaw`,
//! `ulaw`). MP4 (ISO) output refuses uncompressed audio, as ffmpeg 5.1's
//! `mp4` muxer does.

use super::boxes::{AudioSampleEntry, SoundDescriptionV1, SoundDescriptionV2};
use super::muxer_box::BoxWriter;
use super::muxer_records::Index;
use super::sample_entry::pcm_bits;
use crate::error::{Error, Result};
use crate::sink::Sink;
use crate::types::{Codec, Track};
use zerocopy::big_endian::{I16, U16, U32, U64};
use zerocopy::IntoBytes;

/// How one uncompressed codec is described in MOV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QtPcm {
    /// Sample entry type of versions 0 and 1.
    pub fourcc: [u8; 4],
    /// Bytes of one channel's sample.
    pub bytes: u16,
    /// Little-endian samples over 16 bits: version 1 with `enda`.
    pub little_wide: bool,
    /// `lpcm` format flags for version 2 (1 float, 2 big-endian, 4 signed
    /// integer, 8 packed); 0 where `lpcm` cannot describe the codec.
    pub lpcm_flags: u32,
}

/// The MOV description of `codec` when it is uncompressed audio.
pub fn qt_pcm(codec: Codec) -> Option<QtPcm> {
    use Codec as C;
    let (fourcc, lpcm_flags) = match codec {
        C::PcmU8 => (*b"raw ", 8),
        C::PcmS8 => (*b"twos", 12),
        C::PcmS16Le => (*b"sowt", 12),
        C::PcmS16Be => (*b"twos", 14),
        C::PcmS24Le | C::PcmS24Be => (*b"in24", if codec == C::PcmS24Le { 12 } else { 14 }),
        C::PcmS32Le | C::PcmS32Be => (*b"in32", if codec == C::PcmS32Le { 12 } else { 14 }),
        C::PcmF32Le | C::PcmF32Be => (*b"fl32", if codec == C::PcmF32Le { 9 } else { 11 }),
        C::PcmF64Le | C::PcmF64Be => (*b"fl64", if codec == C::PcmF64Le { 9 } else { 11 }),
        C::PcmAlaw => (*b"alaw", 0),
        C::PcmMulaw => (*b"ulaw", 0),
        _ => return None,
    };
    let bits = pcm_bits(codec);
    let little = matches!(codec, C::PcmS24Le | C::PcmS32Le | C::PcmF32Le | C::PcmF64Le);
    Some(QtPcm {
        fourcc,
        bytes: u16::try_from(bits / 8).unwrap_or(0),
        little_wide: little,
        lpcm_flags,
    })
}

/// Bytes of one frame of track `t` (all channels), 0 when it is not
/// uncompressed audio or has no channel count.
pub fn frame_bytes(t: &Track) -> u64 {
    qt_pcm(t.codec).map_or(0, |p| u64::from(p.bytes) * u64::from(t.channels))
}

/// Whether `t` can be written as uncompressed audio in MOV: a channel
/// count, and the sample rate as its time base (one tick a frame).
pub fn check_track(t: &Track) -> Result<()> {
    let p = qt_pcm(t.codec).ok_or(Error::unsupported(0, &"mov muxer: not uncompressed audio"))?;
    if t.channels == 0 || t.sample_rate == 0 {
        return Err(Error::unsupported(
            0,
            &"mov muxer: uncompressed audio without a channel count or sample rate (QuickTime File Format, Sound Sample Descriptions)",
        ));
    }
    if t.time_base.num != 1 || t.time_base.den != t.sample_rate {
        return Err(Error::unsupported(
            0,
            &"mov muxer: uncompressed audio needs the sample rate as its time base (one stts tick a frame, ISO/IEC 14496-12 8.6.1.2)",
        ));
    }
    if t.sample_rate > 0xFFFF && p.lpcm_flags == 0 {
        return Err(Error::unsupported(
            0,
            &"mov muxer: A-law/mu-law over 65,535 Hz has no sound description (QuickTime File Format, lpcm)",
        ));
    }
    Ok(())
}

/// Writes the sound sample description of uncompressed track `t`.
pub fn write_entry<K: Sink>(w: &mut BoxWriter<'_, K>, t: &Track, p: QtPcm) -> Result<()> {
    let frame = u32::from(p.bytes).saturating_mul(u32::from(t.channels));
    let v2 = t.sample_rate > 0xFFFF;
    let v1 = !v2 && p.bytes > 2;
    w.open(if v2 { b"lpcm" } else { &p.fourcc })?;
    let head = AudioSampleEntry {
        reserved: [0; 6],
        data_reference_index: U16::new(1),
        version: U16::new(if v2 { 2 } else { u16::from(v1) }),
        revision_vendor: [0; 6],
        // Version 2 puts fixed values here and the real ones after.
        channels: U16::new(if v2 { 3 } else { t.channels }),
        sample_size: U16::new(if p.bytes == 1 && !v2 && p.lpcm_flags != 0 {
            8
        } else {
            16
        }),
        compression_id: I16::new(if v2 { -2 } else { 0 }),
        packet_size: U16::new(0),
        sample_rate: U32::new(if v2 { 0x0001_0000 } else { t.sample_rate << 16 }),
    };
    w.put(head.as_bytes())?;
    if v2 {
        let rest = SoundDescriptionV2 {
            size_of_struct_only: U32::new(72),
            sample_rate: U64::new(f64::from(t.sample_rate).to_bits()),
            channels: U32::new(u32::from(t.channels)),
            always_7f000000: U32::new(0x7F00_0000),
            const_bits_per_channel: U32::new(u32::from(p.bytes) * 8),
            format_specific_flags: U32::new(p.lpcm_flags),
            const_bytes_per_audio_packet: U32::new(frame),
            const_lpcm_frames_per_audio_packet: U32::new(1),
        };
        w.put(rest.as_bytes())?;
    } else if v1 {
        let rest = SoundDescriptionV1 {
            samples_per_packet: U32::new(1),
            bytes_per_packet: U32::new(u32::from(p.bytes)),
            bytes_per_frame: U32::new(frame),
            bytes_per_sample: U32::new(2),
        };
        w.put(rest.as_bytes())?;
        if p.little_wide {
            // `wave` { `frma`, `enda` = 1 (little-endian), terminator }.
            w.open(b"wave")?;
            w.open(b"frma")?;
            w.put(&p.fourcc)?;
            w.close()?;
            w.open(b"enda")?;
            w.u16(1)?;
            w.close()?;
            w.u32(8)?;
            w.u32(0)?;
            w.close()?;
        }
    }
    w.close()
}

/// Writes `stts` and `stsz` of an uncompressed track of `frames` frames of
/// `frame` bytes each: one sample a frame, one tick a sample. (`stsc` and
/// `stco` count frames per chunk: `muxer_moov::write_chunks`.)
pub fn write_frame_tables<K: Sink>(w: &mut BoxWriter<'_, K>, frame: u64, frames: u64) -> Result<()> {
    let count = u32::try_from(frames).map_err(|_| {
        Error::unsupported(
            w.position(),
            &"mov muxer: more than 2^32 audio frames in a track (ISO/IEC 14496-12 8.7.3)",
        )
    })?;
    w.open_full(b"stts", 0, 0)?;
    if count > 0 {
        w.u32(1)?;
        w.u32(count)?;
        w.u32(1)?;
    } else {
        w.u32(0)?;
    }
    w.close()?;
    w.open_full(b"stsz", 0, 0)?;
    w.u32(u32::try_from(frame).unwrap_or(0))?;
    w.u32(count)?;
    w.close()
}

/// Frames of uncompressed track `tr` in the index: its bytes over the
/// frame size.
pub fn frames(index: Index<'_>, tr: u8, frame: u64) -> u64 {
    let bytes: u64 = super::muxer_times::samples(index, tr).map(|s| s.size).sum();
    bytes / frame.max(1)
}
