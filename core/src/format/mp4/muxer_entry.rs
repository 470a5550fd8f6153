//! The MP4 muxer's sample entries (`stsd`, ISO/IEC 14496-12 §8.5.2) and
//! their configuration boxes, with the fixed layouts of the demuxer
//! ([`super::boxes::VisualSampleEntry`], [`super::boxes::AudioSampleEntry`]).
//! The four-character codes are those the demuxer maps back to the same
//! codec (`sample_entry.rs`).

use super::boxes::{AudioSampleEntry, VisualSampleEntry};
use super::muxer_box::BoxWriter;
use super::muxer_pcm::{qt_pcm, write_entry};
use crate::error::{Error, Result};
use crate::sink::Sink;
use crate::types::{Codec, Track};
use zerocopy::big_endian::{I16, U16, U32};
use zerocopy::IntoBytes;

/// How a codec is stored: its sample entry type, its configuration box and
/// whether the track is video.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryKind {
    /// Sample entry type.
    pub fourcc: [u8; 4],
    /// Configuration box.
    pub config: ConfigBox,
    /// A `VisualSampleEntry` (§12.1.3) rather than an `AudioSampleEntry`
    /// (§12.2.3).
    pub video: bool,
}

/// The configuration box of a sample entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigBox {
    /// A plain box holding the configuration record as it is (`avcC`,
    /// `hvcC`, `av1C`, `dac3`, `dec3`).
    Plain([u8; 4]),
    /// A full box, version and flags, then the record (`vpcC` version 1,
    /// `dfLa` version 0).
    Full([u8; 4], u8),
    /// `esds` with an ES descriptor of this object type (ISO/IEC 14496-14
    /// §5.6, ISO/IEC 14496-1 §7.2.6.5).
    Esds(u8),
    /// Opus `dOps` (Opus in ISOBMFF §4.3.2), from a `dOps` body or an
    /// `OpusHead` (RFC 7845 §5.1).
    Dops,
    /// `dfLa` (FLAC in ISOBMFF §3.3.2) from metadata blocks, with or
    /// without the `fLaC` marker.
    Dfla,
}

/// The sample entry of `codec`, or `Unsupported`.
pub fn entry_kind(codec: Codec) -> Result<EntryKind> {
    use ConfigBox::{Dfla, Dops, Esds, Full, Plain};
    let (fourcc, config, video) = match codec {
        Codec::H264 => (*b"avc1", Plain(*b"avcC"), true),
        Codec::Hevc => (*b"hvc1", Plain(*b"hvcC"), true),
        Codec::Av1 => (*b"av01", Plain(*b"av1C"), true),
        Codec::Vp9 => (*b"vp09", Full(*b"vpcC", 1), true),
        Codec::Mpeg4 => (*b"mp4v", Esds(0x20), true),
        Codec::Aac => (*b"mp4a", Esds(0x40), false),
        Codec::Mp3 => (*b"mp4a", Esds(0x6B), false),
        Codec::Opus => (*b"Opus", Dops, false),
        Codec::Flac => (*b"fLaC", Dfla, false),
        Codec::Ac3 => (*b"ac-3", Plain(*b"dac3"), false),
        Codec::Eac3 => (*b"ec-3", Plain(*b"dec3"), false),
        _ => {
            return Err(Error::unsupported(
                0,
                &"mp4 muxer: no sample entry for this codec (supported: H.264, HEVC, AV1, VP9, MPEG-4 Part 2, AAC, MP3, Opus, FLAC, AC-3, E-AC-3) (ISO/IEC 14496-12 8.5.2)",
            ))
        }
    };
    Ok(EntryKind { fourcc, config, video })
}

/// Whether `codec` needs its configuration record to be written (a sample
/// entry without one is not decodable).
pub fn needs_config(codec: Codec) -> bool {
    !matches!(codec, Codec::Mp3 | Codec::Mpeg4 | Codec::Vp9 | Codec::Av1) && qt_pcm(codec).is_none()
}

/// Writes the `stsd` box of a track (§8.5.2) with its one sample entry.
pub fn write_stsd<K: Sink>(w: &mut BoxWriter<'_, K>, t: &Track, track_id: u32, config: &[u8]) -> Result<()> {
    if let Some(p) = qt_pcm(t.codec) {
        // Only MOV output takes uncompressed audio (`Mp4Muxer::add_track`).
        w.open_full(b"stsd", 0, 0)?;
        w.u32(1)?;
        write_entry(w, t, p)?;
        return w.close();
    }
    let kind = entry_kind(t.codec)?;
    w.open_full(b"stsd", 0, 0)?;
    w.u32(1)?;
    w.open(&kind.fourcc)?;
    if kind.video {
        w.put(visual(t).as_bytes())?;
    } else {
        w.put(audio(t).as_bytes())?;
    }
    write_config(w, kind.config, t, track_id, config)?;
    w.close()?;
    w.close()
}

fn visual(t: &Track) -> VisualSampleEntry {
    let mut rest = [0u8; 50];
    // horizresolution, vertresolution 72 dpi (0x00480000), reserved,
    // frame_count 1, compressorname (32 bytes, empty), depth 0x0018,
    // pre_defined -1 (§12.1.3.2).
    let fixed: [(usize, &[u8]); 5] = [
        (0, &[0, 0x48, 0, 0]),
        (4, &[0, 0x48, 0, 0]),
        (12, &[0, 1]),
        (46, &[0, 0x18]),
        (48, &[0xFF, 0xFF]),
    ];
    for (at, b) in fixed {
        if let Some(dst) = rest.get_mut(at..at + b.len()) {
            dst.copy_from_slice(b);
        }
    }
    VisualSampleEntry {
        reserved: [0; 6],
        data_reference_index: U16::new(1),
        pre_defined: [0; 16],
        width: U16::new(u16::try_from(t.width).unwrap_or(u16::MAX)),
        height: U16::new(u16::try_from(t.height).unwrap_or(u16::MAX)),
        rest,
    }
}

fn audio(t: &Track) -> AudioSampleEntry {
    // Opus is always 48 kHz in the entry (Opus in ISOBMFF §4.3.1); a rate
    // over 65535 Hz does not fit the 16.16 field and is written 0 (the
    // configuration record has the real one).
    let rate = if t.codec == Codec::Opus { 48_000 } else { t.sample_rate };
    let rate = if rate > 0xFFFF { 0 } else { rate << 16 };
    let bits = if t.bits_per_sample == 0 { 16 } else { t.bits_per_sample };
    AudioSampleEntry {
        reserved: [0; 6],
        data_reference_index: U16::new(1),
        version: U16::new(0),
        revision_vendor: [0; 6],
        channels: U16::new(if t.channels == 0 { 2 } else { t.channels }),
        sample_size: U16::new(bits),
        compression_id: I16::new(0),
        packet_size: U16::new(0),
        sample_rate: U32::new(rate),
    }
}

fn write_config<K: Sink>(
    w: &mut BoxWriter<'_, K>,
    kind: ConfigBox,
    t: &Track,
    track_id: u32,
    config: &[u8],
) -> Result<()> {
    match kind {
        ConfigBox::Plain(fourcc) if !config.is_empty() => {
            w.open(&fourcc)?;
            w.put(config)?;
            w.close()
        }
        ConfigBox::Full(fourcc, version) if !config.is_empty() => {
            w.open_full(&fourcc, version, 0)?;
            w.put(config)?;
            w.close()
        }
        ConfigBox::Plain(_) | ConfigBox::Full(..) => Ok(()),
        ConfigBox::Esds(object_type) => write_esds(w, object_type, t, track_id, config),
        ConfigBox::Dops => write_dops(w, config),
        ConfigBox::Dfla => write_dfla(w, config),
    }
}

/// A descriptor's tag and its size in the four-byte form ffmpeg writes
/// (ISO/IEC 14496-1 §8.3.3).
fn descriptor<K: Sink>(w: &mut BoxWriter<'_, K>, tag: u8, len: usize) -> Result<()> {
    let len = u32::try_from(len)
        .ok()
        .filter(|&l| l < 1 << 28)
        .ok_or(Error::unsupported(
            w.position(),
            &"mp4 muxer: a descriptor over 256 MiB (ISO/IEC 14496-1 8.3.3)",
        ))?;
    w.put(&[
        tag,
        0x80 | (len >> 21) as u8 & 0x7F,
        0x80 | (len >> 14) as u8 & 0x7F,
        0x80 | (len >> 7) as u8 & 0x7F,
        len as u8 & 0x7F,
    ])
}

/// `esds` (ISO/IEC 14496-14 §5.6): an ES_Descriptor with a
/// DecoderConfigDescriptor (object type, stream type, rates), the
/// DecoderSpecificInfo when there is one, and an SLConfigDescriptor.
fn write_esds<K: Sink>(w: &mut BoxWriter<'_, K>, object_type: u8, t: &Track, track_id: u32, dsi: &[u8]) -> Result<()> {
    let dsi_len = if dsi.is_empty() { 0 } else { 5 + dsi.len() };
    let dcd_len = 13 + dsi_len;
    let es_len = 3 + 5 + dcd_len + 5 + 1;
    w.open_full(b"esds", 0, 0)?;
    descriptor(w, 0x03, es_len)?;
    w.u16(u16::try_from(track_id).unwrap_or(0))?;
    w.put(&[0])?;
    descriptor(w, 0x04, dcd_len)?;
    let stream_type = if entry_kind(t.codec).map(|k| k.video).unwrap_or(false) {
        4
    } else {
        5
    };
    w.put(&[object_type, stream_type << 2 | 1, 0, 0, 0])?;
    w.u32(t.bit_rate)?;
    w.u32(t.bit_rate)?;
    if !dsi.is_empty() {
        descriptor(w, 0x05, dsi.len())?;
        w.put(dsi)?;
    }
    descriptor(w, 0x06, 1)?;
    w.put(&[0x02])?;
    w.close()
}

/// `dOps` from an `OpusHead` (little-endian fields, RFC 7845 §5.1) or a
/// `dOps` body (big-endian, kept as it is).
fn write_dops<K: Sink>(w: &mut BoxWriter<'_, K>, config: &[u8]) -> Result<()> {
    w.open(b"dOps")?;
    match config.strip_prefix(b"OpusHead") {
        Some(h) if h.len() >= 11 => {
            let le16 = |i: usize| {
                h.get(i..i + 2)
                    .and_then(|b| b.try_into().ok())
                    .map_or(0, u16::from_le_bytes)
            };
            let rate = h
                .get(4..8)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u32::from_le_bytes);
            w.put(&[0, h.get(1).copied().unwrap_or(2)])?;
            w.u16(le16(2))?;
            w.u32(rate)?;
            w.u16(le16(8))?;
            w.put(h.get(10..).unwrap_or(&[]))?;
        }
        Some(_) => {
            return Err(Error::malformed(
                w.position(),
                &"mp4 muxer: an OpusHead shorter than 19 bytes (RFC 7845 5.1)",
            ))
        }
        None if config.is_empty() => {
            return Err(Error::unsupported(
                w.position(),
                &"mp4 muxer: Opus without an OpusHead or dOps (Opus in ISOBMFF 4.3.2)",
            ))
        }
        None => w.put(config)?,
    }
    w.close()
}

/// `dfLa` version 0 from FLAC metadata blocks; a leading `fLaC` marker is
/// dropped (FLAC in ISOBMFF §3.3.2). A bare 34-byte STREAMINFO (what the
/// FLAC and Ogg FLAC demuxers give) gets its block header: last block,
/// type 0, length 34 (RFC 9639 8.1).
fn write_dfla<K: Sink>(w: &mut BoxWriter<'_, K>, config: &[u8]) -> Result<()> {
    if config.len() == 34 {
        w.open_full(b"dfLa", 0, 0)?;
        w.put(&[0x80, 0, 0, 34])?;
        w.put(config)?;
        return w.close();
    }
    let blocks = config.strip_prefix(b"fLaC").unwrap_or(config);
    let Some((&first, rest)) = blocks.split_first() else {
        return Err(Error::unsupported(
            w.position(),
            &"mp4 muxer: FLAC without its STREAMINFO (FLAC in ISOBMFF 3.3.2)",
        ));
    };
    w.open_full(b"dfLa", 0, 0)?;
    // A STREAMINFO alone (4 + 34 bytes) is the last metadata block.
    let last = if blocks.len() == 38 { 0x80 } else { 0 };
    w.put(&[first | last])?;
    w.put(rest)?;
    w.close()
}
