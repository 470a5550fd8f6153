//! The fixed chunk layouts (`BMHD`, `VHDR`, `DGBL`) and what a picture's
//! headers say about its pixels: the layout ffmpeg's `iff_ilbm` decoder
//! gives and the pixel aspect.

use super::chunk::FormType;
use super::scan::{self, Scan};
use crate::error::Result;
use crate::source::Source;
use zerocopy::big_endian::{I16, U16, U32};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The bitmap header, `BMHD` ("ILBM IFF Interleaved Bitmap", BitMapHeader;
/// also in `PBM `, `ACBM`, `RGB8`, `RGBN`).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Bmhd {
    /// Raster width in pixels.
    pub width: U16,
    /// Raster height in pixels.
    pub height: U16,
    /// Position on the page (x).
    pub x: I16,
    /// Position on the page (y).
    pub y: I16,
    /// Bitplanes (bits per pixel).
    pub planes: u8,
    /// 0 none, 1 a mask plane, 2 a transparent colour, 3 lasso.
    pub masking: u8,
    /// 0 none, 1 ByteRun1 (`RGB8`/`RGBN`: 4, their run-length code).
    pub compression: u8,
    /// Unused.
    pub pad: u8,
    /// The transparent colour index.
    pub transparent: U16,
    /// Pixel aspect, width term.
    pub x_aspect: u8,
    /// Pixel aspect, height term.
    pub y_aspect: u8,
    /// Source page width.
    pub page_width: I16,
    /// Source page height.
    pub page_height: I16,
}

/// Bytes of [`Bmhd`].
pub(crate) const BMHD_LEN: usize = 20;

/// The voice header, `VHDR` ("8SVX IFF 8-Bit Sampled Voice",
/// Voice8Header; also in `16SV`).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Vhdr {
    /// Samples in the one-shot part of the highest octave.
    pub one_shot: U32,
    /// Samples in the repeat part of the highest octave.
    pub repeat: U32,
    /// Samples per cycle of the highest octave (0 unknown).
    pub per_cycle: U32,
    /// Samples per second.
    pub rate: U16,
    /// Octaves of waveforms.
    pub octaves: u8,
    /// 0 none, 1 Fibonacci-delta, 2 exponential-delta.
    pub compression: u8,
    /// Playback volume, 16.16 fixed point.
    pub volume: U32,
}

/// Bytes of [`Vhdr`].
pub(crate) const VHDR_LEN: usize = 20;

/// The deep global header, `DGBL` (TV Paint "DEEP": DeepGlobals).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Dgbl {
    /// Display width in pixels.
    pub width: U16,
    /// Display height in pixels.
    pub height: U16,
    /// 0 none, 1 run-length, 2 Huffman, 3 dynamic Huffman, 4 JPEG,
    /// 5 TV Paint's own.
    pub compression: U16,
    /// Pixel aspect, width term.
    pub x_aspect: u8,
    /// Pixel aspect, height term.
    pub y_aspect: u8,
}

/// The pixel layout ffmpeg's `iff_ilbm` decoder outputs (in memory byte
/// order, as ffmpeg names them on a little-endian machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PixelLayout {
    /// Palette indices.
    Pal8,
    /// 8-bit grey (eight planes, no palette).
    Gray8,
    /// B, G, R, A bytes (`RGB8`, or a picture with a mask plane).
    Bgra,
    /// R, G, B, unused (HAM, 24 planes).
    Rgb0,
    /// R, G, B, A bytes (32 planes).
    Rgba,
    /// 4 bits each of R, G, B in a little-endian 16-bit word (`RGBN`).
    Rgb444Le,
    /// `DEEP` pixels as `DPEL` states them: R, G, B.
    Rgb24,
    /// `DEEP`: A, R, G, B.
    Argb,
    /// `DEEP`: A, B, G, R.
    Abgr,
}

/// What a picture's headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PictureFacts {
    /// The decoder's pixel layout, `None` where ffmpeg's decoder refuses
    /// the picture or `DEEP` names no pixel format.
    pub layout: Option<PixelLayout>,
    /// The pixel aspect (`BMHD` from 16 bytes on, `DGBL`) when both terms
    /// are non-zero.
    pub sar: Option<(u32, u32)>,
}

/// The `CAMG` display mode bit of hold-and-modify.
const CAMG_HAM: u32 = 0x800;
/// `BMHD` masking: a mask plane follows the bitplanes.
const MASK_PLANE: u8 = 1;

/// The decoder's pixel layout for what the walk found (ffmpeg
/// `libavcodec/iff.c` `decode_init` and `extract_header`): up to 8 coded
/// bits a palette when there are fewer than 8 planes or a `CMAP`, else
/// grey; HAM is coded as 24 bits; 24 and 32 planes direct colour; `RGB8`
/// and `RGBN` their own formats; `DEEP` what `DPEL` says; a mask plane on 8
/// or more planes gives B, G, R, A.
pub(crate) fn layout(s: &Scan) -> Option<PixelLayout> {
    if s.width == 0 || s.height == 0 {
        return None;
    }
    let bpp = u32::from(s.bits);
    let ham = s.camg & CAMG_HAM != 0 && bpp <= 8;
    let coded = if ham { 24 } else { bpp };
    if s.masking > 2 || bpp == 0 {
        return None;
    }
    let mut l = if coded <= 8 {
        if coded < 8 || s.cmap_len > 0 {
            PixelLayout::Pal8
        } else {
            PixelLayout::Gray8
        }
    } else if coded <= 32 {
        match s.form {
            FormType::Rgb8 => PixelLayout::Bgra,
            FormType::Rgbn => PixelLayout::Rgb444Le,
            FormType::Deep => s.deep?,
            _ if coded == 24 => PixelLayout::Rgb0,
            _ if coded == 32 => PixelLayout::Rgba,
            _ => return None,
        }
    } else {
        return None;
    };
    if s.masking == MASK_PLANE && bpp >= 8 && !ham {
        if bpp > 16 {
            return None;
        }
        l = PixelLayout::Bgra;
    }
    Some(l)
}

/// The picture facts of an IFF picture in `src` (the CLI's `pix_fmt` and
/// `sample_aspect_ratio`); `None` for sound.
///
/// Errors: those of the chunk walk (see [`super::IffDemuxer`]).
pub fn picture_facts<S: Source>(src: &mut S) -> Result<Option<PictureFacts>> {
    let s = scan::scan(src)?;
    if s.video != Some(true) {
        return Ok(None);
    }
    let sar = s
        .sar
        .filter(|&(n, d)| n > 0 && d > 0)
        .map(|(n, d)| (u32::from(n), u32::from(d)));
    Ok(Some(PictureFacts {
        layout: layout(&s),
        sar,
    }))
}
