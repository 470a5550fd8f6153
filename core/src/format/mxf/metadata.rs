//! The header metadata's structure (SMPTE ST 377-1 §9, Annex A) as far as
//! streams need it: the material package's tracks in order, each followed
//! through its sequence's first source clip to the file (source) package's
//! track of the same ID, whose TrackNumber names its essence elements
//! (ST 379-1 §7.3), and whose descriptor (or, inside a multiple
//! descriptor, the sub-descriptor linked to that track) gives the codec and
//! the picture or sound parameters. Timecode and data tracks give no
//! stream, as in ffmpeg's reader.

use super::essence::{self, Wrapping};
use super::klv::{self, Ul};
use super::local::{self, Region, Set};
use crate::error::Result;
use crate::source::Source;
use crate::types::{Codec, Rational, Track, TrackKind};

/// Set kinds (byte 14 of the key, ST 377-1 Annex A).
const MATERIAL_PACKAGE: u8 = 0x36;
const SOURCE_PACKAGE: u8 = 0x37;
const SOURCE_CLIP: u8 = 0x11;
const MULTIPLE_DESCRIPTOR: u8 = 0x44;
/// Local tags (ST 377-1 Annex A).
const PACKAGE_UID: u16 = 0x4401;
const TRACKS: u16 = 0x4403;
const DESCRIPTOR: u16 = 0x4701;
const TRACK_ID: u16 = 0x4801;
const TRACK_NUMBER: u16 = 0x4804;
const EDIT_RATE: u16 = 0x4b01;
const SEQUENCE: u16 = 0x4803;
const DATA_DEFINITION: u16 = 0x0201;
const DURATION: u16 = 0x0202;
const COMPONENTS: u16 = 0x1001;
const SOURCE_PACKAGE_ID: u16 = 0x1101;
const SOURCE_TRACK_ID: u16 = 0x1102;
const SUB_DESCRIPTORS: u16 = 0x3f01;
const LINKED_TRACK_ID: u16 = 0x3006;
const ESSENCE_CONTAINER: u16 = 0x3004;
const PICTURE_CODING: u16 = 0x3201;
const STORED_HEIGHT: u16 = 0x3202;
const STORED_WIDTH: u16 = 0x3203;
const DISPLAY_HEIGHT: u16 = 0x3208;
const DISPLAY_WIDTH: u16 = 0x3209;
const SAMPLING_RATE: u16 = 0x3d03;
const QUANTIZATION_BITS: u16 = 0x3d01;
const CHANNEL_COUNT: u16 = 0x3d07;
const SOUND_COMPRESSION: u16 = 0x3d06;
const BLOCK_ALIGN: u16 = 0x3d0a;

/// Data definitions (SMPTE RP 224): picture and sound essence tracks.
const DATA_DEF_PREFIX: [u8; 12] = [0x06, 0x0e, 0x2b, 0x34, 0x04, 0x01, 0x01, 0x01, 0x01, 0x03, 0x02, 0x02];

/// What the packet walk keeps per stream.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct StreamInfo {
    /// TrackNumber of the file package track: bytes 12..16 of its essence
    /// element keys.
    pub number: u32,
    pub wrapping: Wrapping,
    pub video: bool,
    /// Every packet is a keyframe (intra-only codecs and PCM).
    pub intra: bool,
    /// Bytes per sample frame (audio), 0 for video.
    pub block_align: u32,
    /// Samples per second (audio).
    pub sample_rate: u32,
    /// Channels and bits per sample (audio).
    pub channels: u16,
    pub bits: u16,
    pub codec: Codec,
    /// Duration of the material track in edit units, 0 when unknown.
    pub duration: u64,
}

/// A stream found in the metadata: the public track and the walk's facts.
pub(crate) struct Found {
    pub track: Track,
    pub info: StreamInfo,
}

/// The streams of the material package in its track order; `add` gets
/// each and returns `false` to stop (capacity).
pub(crate) fn streams<S: Source>(src: &mut S, region: Region, mut add: impl FnMut(Found) -> bool) -> Result<()> {
    let Some(material) = local::scan(src, region, |_, s| Ok((s.kind == MATERIAL_PACKAGE).then_some(*s)))? else {
        return Ok(());
    };
    let Some(tracks) = local::batch(src, &material, TRACKS)? else {
        return Ok(());
    };
    for i in 0..tracks.1 {
        let Some(uid) = local::batch_uid(src, tracks, i)? else {
            break;
        };
        if let Some(found) = material_track(src, region, &uid)? {
            if !add(found) {
                break;
            }
        }
    }
    Ok(())
}

/// A set by strong reference.
fn deref<S: Source>(src: &mut S, region: Region, set: &Set, tag: u16) -> Result<Option<Set>> {
    match local::fixed::<S, 16>(src, set, tag)? {
        Some(uid) => local::find_by_uid(src, region, &uid),
        None => Ok(None),
    }
}

/// A material package track followed to its essence, or `None` when it
/// is not a picture or sound track or does not resolve.
fn material_track<S: Source>(src: &mut S, region: Region, uid: &Ul) -> Result<Option<Found>> {
    let Some(track) = local::find_by_uid(src, region, uid)? else {
        return Ok(None);
    };
    let Some(seq) = deref(src, region, &track, SEQUENCE)? else {
        return Ok(None);
    };
    let Some(def) = local::fixed::<S, 16>(src, &seq, DATA_DEFINITION)? else {
        return Ok(None);
    };
    if !klv::matches(&def, &DATA_DEF_PREFIX) || !matches!(def[12], 1 | 2) {
        return Ok(None);
    }
    let video = def[12] == 1;
    let duration = local::uint(src, &seq, DURATION)?.filter(|&d| d < 1 << 62);
    let material_rate = local::rational(src, &track, EDIT_RATE)?;
    // The first source clip of the sequence (or the sequence itself when
    // it is one).
    let clip = if seq.kind == SOURCE_CLIP {
        Some(seq)
    } else {
        first_clip(src, region, &seq)?
    };
    let Some(clip) = clip else {
        return Ok(None);
    };
    let Some(package_id) = local::fixed::<S, 32>(src, &clip, SOURCE_PACKAGE_ID)? else {
        return Ok(None);
    };
    let Some(source_track_id) = local::uint(src, &clip, SOURCE_TRACK_ID)? else {
        return Ok(None);
    };
    let Some(package) = local::scan(src, region, |src, s| {
        Ok((s.kind == SOURCE_PACKAGE && local::fixed::<S, 32>(src, s, PACKAGE_UID)? == Some(package_id)).then_some(*s))
    })?
    else {
        return Ok(None);
    };
    let Some(tracks) = local::batch(src, &package, TRACKS)? else {
        return Ok(None);
    };
    let mut source = None;
    for i in 0..tracks.1 {
        let Some(uid) = local::batch_uid(src, tracks, i)? else {
            break;
        };
        if let Some(t) = local::find_by_uid(src, region, &uid)? {
            if local::uint(src, &t, TRACK_ID)? == Some(source_track_id) {
                source = Some(t);
                break;
            }
        }
    }
    let Some(source) = source else {
        return Ok(None);
    };
    let number = local::uint(src, &source, TRACK_NUMBER)?.unwrap_or(0) as u32;
    let rate = local::rational(src, &source, EDIT_RATE)?
        .or(material_rate)
        .filter(|r| r.0 > 0 && r.1 > 0)
        .unwrap_or((25, 1));
    let Some(desc) = descriptor(src, region, &package, source_track_id)? else {
        return Ok(None);
    };
    Ok(Some(describe(src, &desc, video, number, rate, duration)?))
}

/// The first source clip among a sequence's components.
fn first_clip<S: Source>(src: &mut S, region: Region, seq: &Set) -> Result<Option<Set>> {
    let Some(components) = local::batch(src, seq, COMPONENTS)? else {
        return Ok(None);
    };
    for i in 0..components.1.min(16) {
        let Some(uid) = local::batch_uid(src, components, i)? else {
            break;
        };
        if let Some(c) = local::find_by_uid(src, region, &uid)? {
            if c.kind == SOURCE_CLIP {
                return Ok(Some(c));
            }
        }
    }
    Ok(None)
}

/// The package's descriptor for track `track_id`: the sub-descriptor of a
/// multiple descriptor linked to it, else the descriptor itself.
fn descriptor<S: Source>(src: &mut S, region: Region, package: &Set, track_id: u64) -> Result<Option<Set>> {
    let Some(desc) = deref(src, region, package, DESCRIPTOR)? else {
        return Ok(None);
    };
    if desc.kind != MULTIPLE_DESCRIPTOR {
        return Ok(Some(desc));
    }
    let Some(subs) = local::batch(src, &desc, SUB_DESCRIPTORS)? else {
        return Ok(None);
    };
    for i in 0..subs.1 {
        let Some(uid) = local::batch_uid(src, subs, i)? else {
            break;
        };
        if let Some(d) = local::find_by_uid(src, region, &uid)? {
            if local::uint(src, &d, LINKED_TRACK_ID)? == Some(track_id) {
                return Ok(Some(d));
            }
        }
    }
    Ok(None)
}

/// The track a descriptor describes.
fn describe<S: Source>(
    src: &mut S,
    d: &Set,
    video: bool,
    number: u32,
    rate: (u32, u32),
    duration: Option<u64>,
) -> Result<Found> {
    let container = local::fixed::<S, 16>(src, d, ESSENCE_CONTAINER)?.unwrap_or_default();
    let wrapping = essence::wrapping(&container);
    let mut track = Track {
        id: number,
        kind: if video { TrackKind::Video } else { TrackKind::Audio },
        time_base: Rational::new(rate.1, rate.0),
        duration,
        ..Track::default()
    };
    let mut info = StreamInfo {
        number,
        wrapping,
        video,
        ..StreamInfo::default()
    };
    if video {
        let coding = local::fixed::<S, 16>(src, d, PICTURE_CODING)?;
        track.codec = essence::picture_codec(coding.as_ref(), &container);
        info.intra = essence::intra_only(track.codec);
        let w = local::uint(src, d, DISPLAY_WIDTH)?.or(local::uint(src, d, STORED_WIDTH)?);
        let h = local::uint(src, d, DISPLAY_HEIGHT)?.or(local::uint(src, d, STORED_HEIGHT)?);
        track.width = w.unwrap_or(0).min(u64::from(u32::MAX)) as u32;
        track.height = h.unwrap_or(0).min(u64::from(u32::MAX)) as u32;
    } else {
        let bits = local::uint(src, d, QUANTIZATION_BITS)?.unwrap_or(0).min(64) as u16;
        let channels = local::uint(src, d, CHANNEL_COUNT)?
            .unwrap_or(0)
            .min(u64::from(u16::MAX)) as u16;
        let compression = local::fixed::<S, 16>(src, d, SOUND_COMPRESSION)?;
        track.codec = essence::sound_codec(compression.as_ref(), &container, bits);
        let sr = local::rational(src, d, SAMPLING_RATE)?
            .filter(|r| r.1 > 0)
            .unwrap_or((0, 1));
        let sample_rate = sr.0 / sr.1;
        track.sample_rate = sample_rate;
        track.channels = channels;
        track.bits_per_sample = bits;
        let align = local::uint(src, d, BLOCK_ALIGN)?
            .filter(|&a| a > 0)
            .unwrap_or(u64::from(channels) * u64::from(bits).div_ceil(8));
        track.block_align = align.min(u64::from(u32::MAX)) as u32;
        info.block_align = track.block_align;
        info.sample_rate = sample_rate;
        info.channels = channels;
        info.bits = bits;
        info.intra = true;
        if sample_rate > 0 {
            track.time_base = Rational::new(1, sample_rate);
            // Edit units to samples (ffmpeg rescales the same way).
            track.duration = duration.map(|d| {
                let num = u128::from(d) * u128::from(sample_rate) * u128::from(rate.1);
                let den = u128::from(rate.0).max(1);
                ((num + den / 2) / den).min(u128::from(u64::MAX)) as u64
            });
        }
        track.bit_rate =
            (u64::from(sample_rate) * u64::from(channels) * u64::from(bits)).min(u64::from(u32::MAX)) as u32;
    }
    info.codec = track.codec;
    info.duration = duration.unwrap_or(0);
    Ok(Found { track, info })
}
