//! Raw ISO BMFF layouts: box headers and the fixed parts of full boxes
//! (ISO/IEC 14496-12), as unaligned big-endian zerocopy structs; and how a
//! box walk tells damage in the input from a failing source.

use crate::error::{Error, ErrorKind, Result};
use crate::source::Source;
use zerocopy::big_endian::{I16, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// A four-character code as a big-endian `u32`.
pub type FourCc = [u8; 4];

/// A parsed box header (ISO/IEC 14496-12 §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxHeader {
    /// The box type.
    pub kind: FourCc,
    /// Offset of the box's first byte.
    pub start: u64,
    /// Offset of the payload (after size, type and any 64-bit size or
    /// `uuid` user type).
    pub body: u64,
    /// Offset one past the box's last byte (clamped to `limit`).
    pub end: u64,
    /// Whether the box claimed more bytes than its parent or the file has.
    pub clamped: bool,
}

impl BoxHeader {
    /// Payload length.
    pub fn body_len(&self) -> u64 {
        self.end.saturating_sub(self.body)
    }
}

/// Reads the box header at `at`, where the parent ends at `limit`.
///
/// A size of 0 means "to the end of the parent" (§4.2); 1 means a 64-bit
/// size follows. A size that runs past `limit` is clamped and flagged.
///
/// Errors: `Truncated` when fewer than 8 bytes remain; `Malformed` for a
/// size smaller than the header.
pub fn read_box_header<S: Source>(src: &mut S, at: u64, limit: u64) -> Result<BoxHeader> {
    if at.saturating_add(8) > limit {
        return Err(Error::truncated(
            at,
            &"box header runs past its parent (ISO/IEC 14496-12 §4.2)",
        ));
    }
    let h: [u8; 8] = src.array(at)?;
    let size32 = u32::from_be_bytes([h[0], h[1], h[2], h[3]]);
    let kind = [h[4], h[5], h[6], h[7]];
    let (size, mut header) = match size32 {
        0 => (limit - at, 8u64),
        1 => {
            let big = src.u64_be(at + 8)?;
            (big, 16)
        }
        n => (n as u64, 8),
    };
    if &kind == b"uuid" {
        header += 16;
    }
    if size < header {
        return Err(Error::malformed(
            at,
            &"box size smaller than its header (ISO/IEC 14496-12 §4.2)",
        ));
    }
    let claimed_end = at.saturating_add(size);
    let end = claimed_end.min(limit);
    Ok(BoxHeader {
        kind,
        start: at,
        body: at + header,
        end,
        clamped: claimed_end > limit,
    })
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

/// Calls `f` with each child box from `at` of a parent ending at `end`, at
/// most `max` of them. The walk ends at a header that is damage; a
/// [`source_fault`] and any error of `f` propagate.
pub(crate) fn for_each_child<S: Source>(
    src: &mut S,
    mut at: u64,
    end: u64,
    max: u32,
    mut f: impl FnMut(&mut S, &BoxHeader) -> Result<()>,
) -> Result<()> {
    let mut guard = 0;
    while at.saturating_add(8) <= end && guard < max {
        guard += 1;
        let Some(c) = soft(read_box_header(src, at, end))? else {
            break;
        };
        f(src, &c)?;
        if c.end <= at {
            break;
        }
        at = c.end;
    }
    Ok(())
}

/// `mvhd` version 0 fields up to the duration (§8.2.2).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct MvhdV0 {
    /// Version and flags.
    pub version_flags: U32,
    /// Creation time.
    pub creation: U32,
    /// Modification time.
    pub modification: U32,
    /// Movie timescale.
    pub timescale: U32,
    /// Movie duration.
    pub duration: U32,
}

/// `mvhd` version 1 fields up to the duration (§8.2.2).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct MvhdV1 {
    /// Version and flags.
    pub version_flags: U32,
    /// Creation time.
    pub creation: U64,
    /// Modification time.
    pub modification: U64,
    /// Movie timescale.
    pub timescale: U32,
    /// Movie duration.
    pub duration: U64,
}

/// `mdhd` version 0 (§8.4.2).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct MdhdV0 {
    /// Version and flags.
    pub version_flags: U32,
    /// Creation time.
    pub creation: U32,
    /// Modification time.
    pub modification: U32,
    /// Media timescale.
    pub timescale: U32,
    /// Media duration.
    pub duration: U32,
    /// Packed ISO 639-2/T language.
    pub language: U16,
}

/// `mdhd` version 1 (§8.4.2).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct MdhdV1 {
    /// Version and flags.
    pub version_flags: U32,
    /// Creation time.
    pub creation: U64,
    /// Modification time.
    pub modification: U64,
    /// Media timescale.
    pub timescale: U32,
    /// Media duration.
    pub duration: U64,
    /// Packed ISO 639-2/T language.
    pub language: U16,
}

/// The common start of a `VisualSampleEntry` after the 8-byte box header
/// (§12.1.3).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct VisualSampleEntry {
    /// Reserved.
    pub reserved: [u8; 6],
    /// Data reference index.
    pub data_reference_index: U16,
    /// Pre-defined and reserved.
    pub pre_defined: [u8; 16],
    /// Width in pixels.
    pub width: U16,
    /// Height in pixels.
    pub height: U16,
    /// Resolutions, reserved, frame count, compressor name, depth,
    /// pre-defined.
    pub rest: [u8; 50],
}

/// The common start of an `AudioSampleEntry` (§12.2.3) with the QuickTime
/// sound description version in the first reserved field.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct AudioSampleEntry {
    /// Reserved.
    pub reserved: [u8; 6],
    /// Data reference index.
    pub data_reference_index: U16,
    /// QuickTime sound description version (0, 1 or 2).
    pub version: U16,
    /// Revision and vendor.
    pub revision_vendor: [u8; 6],
    /// Channel count.
    pub channels: U16,
    /// Sample size in bits.
    pub sample_size: U16,
    /// Compression id (QuickTime).
    pub compression_id: I16,
    /// Packet size (QuickTime).
    pub packet_size: U16,
    /// Sample rate, 16.16 fixed point.
    pub sample_rate: U32,
}

/// The QuickTime sound description version 1 fields that follow an
/// [`AudioSampleEntry`] (QuickTime File Format, "Sound Sample Description
/// (Version 1)").
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SoundDescriptionV1 {
    /// Samples per packet (per compressed frame).
    pub samples_per_packet: U32,
    /// Bytes per packet (per channel).
    pub bytes_per_packet: U32,
    /// Bytes per frame (all channels).
    pub bytes_per_frame: U32,
    /// Bytes per sample.
    pub bytes_per_sample: U32,
}

/// The QuickTime sound description version 2 fields that follow an
/// [`AudioSampleEntry`] (QuickTime File Format, "Sound Sample Description
/// (Version 2)").
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SoundDescriptionV2 {
    /// Size of this structure.
    pub size_of_struct_only: U32,
    /// Sample rate, an IEEE 754 double.
    pub sample_rate: U64,
    /// Channel count.
    pub channels: U32,
    /// Always 0x7F000000.
    pub always_7f000000: U32,
    /// Bits per channel when constant.
    pub const_bits_per_channel: U32,
    /// Format-specific flags (`lpcm`: float, big-endian, ...).
    pub format_specific_flags: U32,
    /// Bytes per audio packet when constant.
    pub const_bytes_per_audio_packet: U32,
    /// LPCM frames per audio packet when constant.
    pub const_lpcm_frames_per_audio_packet: U32,
}

/// `trex` (§8.8.3): a track's fragment sample defaults.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Trex {
    /// Version and flags.
    pub version_flags: U32,
    /// The track these defaults are for.
    pub track_id: U32,
    /// Default sample description index.
    pub default_sample_description_index: U32,
    /// Default sample duration.
    pub default_sample_duration: U32,
    /// Default sample size.
    pub default_sample_size: U32,
    /// Default sample flags.
    pub default_sample_flags: U32,
}

/// The fixed start of `stsz` (§8.7.3.2).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Stsz {
    /// Version and flags.
    pub version_flags: U32,
    /// The size of every sample, or 0 when a table of sizes follows.
    pub sample_size: U32,
    /// Number of samples.
    pub sample_count: U32,
}

/// The fixed start of `stz2` (§8.7.3.3).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Stz2 {
    /// Version and flags.
    pub version_flags: U32,
    /// Reserved.
    pub reserved: [u8; 3],
    /// Bits per entry: 4, 8 or 16.
    pub field_size: u8,
    /// Number of samples.
    pub sample_count: U32,
}

/// An `stts` entry (§8.6.1.2).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SttsEntry {
    /// Number of consecutive samples with this delta.
    pub sample_count: U32,
    /// Their decode duration.
    pub sample_delta: U32,
}

/// A `ctts` entry (§8.6.1.3): the offset is signed in version 1, and read
/// as signed in both (as ffmpeg does).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CttsEntry {
    /// Number of consecutive samples with this offset.
    pub sample_count: U32,
    /// Their composition offset.
    pub sample_offset: U32,
}

/// An `stsc` entry (§8.7.4.2).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct StscEntry {
    /// The first chunk of the run (1-based).
    pub first_chunk: U32,
    /// Samples in each chunk of the run.
    pub samples_per_chunk: U32,
    /// The sample description of the run.
    pub sample_description_index: U32,
}

/// The `tfhd` flags (§8.8.7).
pub mod tfhd_flags {
    /// base-data-offset-present.
    pub const BASE_DATA_OFFSET: u32 = 0x1;
    /// sample-description-index-present.
    pub const DESCRIPTION_INDEX: u32 = 0x2;
    /// default-sample-duration-present.
    pub const DEFAULT_DURATION: u32 = 0x8;
    /// default-sample-size-present.
    pub const DEFAULT_SIZE: u32 = 0x10;
    /// default-sample-flags-present.
    pub const DEFAULT_FLAGS: u32 = 0x20;
    /// default-base-is-moof.
    pub const DEFAULT_BASE_IS_MOOF: u32 = 0x20000;
}

/// The `trun` flags (§8.8.8).
pub mod trun_flags {
    /// data-offset-present.
    pub const DATA_OFFSET: u32 = 0x1;
    /// first-sample-flags-present.
    pub const FIRST_FLAGS: u32 = 0x4;
    /// sample-duration-present.
    pub const DURATION: u32 = 0x100;
    /// sample-size-present.
    pub const SIZE: u32 = 0x200;
    /// sample-flags-present.
    pub const FLAGS: u32 = 0x400;
    /// sample-composition-time-offsets-present.
    pub const CTS: u32 = 0x800;
}

/// sample_is_non_sync_sample in sample flags (§8.8.3.1).
pub const SAMPLE_NON_SYNC: u32 = 0x0001_0000;
/// sample_depends_on == 1 (depends on others) in sample flags (§8.8.3.1).
pub const SAMPLE_DEPENDS_YES: u32 = 0x0100_0000;
