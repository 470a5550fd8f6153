//! The fixed layouts of the Microsoft RIFF family that several containers
//! store (WAV/RF64/Wave64 `fmt `, AVI `strf`, ASF stream properties,
//! Matroska's `A_MS/ACM` and `V_MS/VFW/FOURCC` CodecPrivate), read with
//! [`crate::source::Source::read`]. Their codec fields are looked up in
//! [`super::riff_tags`].

use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// WAVEFORMATEX without `cbSize` (Microsoft RIFF specification, "WAVE Form
/// Type", `fmt ` chunk): the 16 bytes every WAVE format starts with.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct WaveFormat {
    /// wFormatTag.
    pub format_tag: U16,
    /// nChannels.
    pub channels: U16,
    /// nSamplesPerSec.
    pub sample_rate: U32,
    /// nAvgBytesPerSec.
    pub byte_rate: U32,
    /// nBlockAlign.
    pub block_align: U16,
    /// wBitsPerSample.
    pub bits_per_sample: U16,
}

/// WAVEFORMATEXTENSIBLE (`mmreg.h`): a [`WaveFormat`], `cbSize` (at least
/// 22) and the extension whose SubFormat GUID starts with the format tag.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct WaveFormatExtensible {
    /// The WAVEFORMATEX fields.
    pub format: WaveFormat,
    /// cbSize.
    pub extra_size: U16,
    /// wValidBitsPerSample (or wSamplesPerBlock).
    pub valid_bits: U16,
    /// dwChannelMask.
    pub channel_mask: U32,
    /// SubFormat GUID; its first two bytes (little-endian) are the format tag.
    pub sub_format: [u8; 16],
}

impl WaveFormatExtensible {
    /// The format tag the SubFormat GUID names.
    pub fn sub_format_tag(&self) -> u16 {
        let [a, b, ..] = self.sub_format;
        u16::from_le_bytes([a, b])
    }
}

/// BITMAPINFOHEADER (Microsoft RIFF specification, AVI `strf` of a video
/// stream; Windows GDI).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct BitmapInfoHeader {
    /// biSize.
    pub size: U32,
    /// biWidth.
    pub width: U32,
    /// biHeight (negative for top-down pictures).
    pub height: U32,
    /// biPlanes.
    pub planes: U16,
    /// biBitCount.
    pub bit_count: U16,
    /// biCompression: a FourCC or one of the `BI_*` numbers.
    pub compression: [u8; 4],
    /// biSizeImage.
    pub size_image: U32,
    /// biXPelsPerMeter.
    pub x_pels_per_meter: U32,
    /// biYPelsPerMeter.
    pub y_pels_per_meter: U32,
    /// biClrUsed.
    pub clr_used: U32,
    /// biClrImportant.
    pub clr_important: U32,
}
