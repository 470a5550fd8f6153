//! The walk over the chunks of a `FORM`, gathering what the stream needs,
//! with ffmpeg's `iff_read_header` checks: every chunk to the end of the
//! file is looked at, the last header or body of each kind counts, so a
//! `BODY` before its `BMHD` is read as well as after.

use super::chunk::{self, FormType, FIRST_CHUNK, MAX_CHUNKS};
use super::header::{Bmhd, Dgbl, PixelLayout, Vhdr, BMHD_LEN, VHDR_LEN};
use crate::error::{Description, Error, Result};
use crate::source::Source;
use zerocopy::big_endian::{U16, U32};
use zerocopy::FromBytes;

/// What the walk found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scan {
    pub form: FormType,
    /// `Some(true)` after a picture header (`BMHD`, `DGBL`), `Some(false)`
    /// after a sound header (`VHDR`): the last one decides, as in ffmpeg.
    pub video: Option<bool>,
    pub width: u16,
    pub height: u16,
    /// Bits per coded pixel: `BMHD` planes, 24 after `DGBL`.
    pub bits: u8,
    pub masking: u8,
    pub sar: Option<(u8, u8)>,
    pub camg: u32,
    pub cmap_len: u32,
    pub deep: Option<PixelLayout>,
    pub rate: u16,
    /// `VHDR` compression, `None` without a `VHDR` of 16 bytes or more.
    pub compression: Option<u8>,
    pub stereo: bool,
    /// The last body chunk (`BODY`, `ABIT`, `DBOD`): data offset and size.
    pub body: Option<(u64, u64)>,
    /// The walk stopped at [`MAX_CHUNKS`] before the end of the file.
    pub stopped: bool,
}

/// `DPEL` pixel element descriptions ffmpeg maps (TV Paint "DEEP":
/// count, then type and bit depth per element; 1 red, 2 green, 3 blue,
/// 17 alpha).
const DEEP_FORMATS: [([u8; 16], PixelLayout); 5] = [
    (*b"\0\0\0\x03\0\x01\0\x08\0\x02\0\x08\0\x03\0\x08", PixelLayout::Rgb24),
    (*b"\0\0\0\x04\0\x01\0\x08\0\x02\0\x08\0\x03\0\x08", PixelLayout::Rgba),
    (*b"\0\0\0\x04\0\x03\0\x08\0\x02\0\x08\0\x01\0\x08", PixelLayout::Bgra),
    (*b"\0\0\0\x04\0\x11\0\x08\0\x01\0\x08\0\x02\0\x08", PixelLayout::Argb),
    (*b"\0\0\0\x04\0\x11\0\x08\0\x03\0\x08\0\x02\0\x08", PixelLayout::Abgr),
];

/// Reads up to `N` bytes of a chunk's data, the rest zero.
fn head<const N: usize, S: Source>(src: &mut S, at: u64, size: u64) -> Result<[u8; N]> {
    let mut b = [0u8; N];
    let n = usize::try_from(size).unwrap_or(N).min(N);
    if let Some(part) = b.get_mut(..n) {
        let got = src.read_at(at, part)?;
        if got < n {
            return Err(Error::truncated(at, &"iff: the input ends inside a header chunk"));
        }
    }
    Ok(b)
}

fn short(at: u64, what: Description) -> Error {
    Error::malformed(at, what)
}

/// Walks every chunk of the file.
///
/// Errors: `Malformed` for a header chunk shorter than ffmpeg takes
/// (`BMHD` of 8 bytes or less, `VHDR` under 14, `CAMG`, `CHAN`, `DLOC`
/// under 4, `DGBL` under 8, a `DPEL` not of whole 4-byte elements, a
/// `TVDC` under 32) or a `CMAP` not of 1 to 256 whole colours;
/// `Unsupported` for a `DPEL` layout ffmpeg does not map; `Truncated`
/// when the input ends inside a header chunk.
pub(crate) fn scan<S: Source>(src: &mut S) -> Result<Scan> {
    let form = chunk::form_type(src)?;
    let mut s = Scan {
        form,
        video: None,
        width: 0,
        height: 0,
        bits: 0,
        masking: 0,
        sar: None,
        camg: 0,
        cmap_len: 0,
        deep: None,
        rate: 0,
        compression: None,
        stereo: false,
        body: None,
        stopped: false,
    };
    let mut pos = FIRST_CHUNK;
    let mut walked = 0u32;
    while let Some((c, next)) = chunk::next_chunk(src, pos)? {
        if walked == MAX_CHUNKS {
            s.stopped = true;
            break;
        }
        walked += 1;
        let at = c.data;
        match &c.id {
            b"BMHD" => {
                if c.size <= 8 {
                    return Err(short(at, &"iff: BMHD of 8 bytes or less (ILBM: BitMapHeader)"));
                }
                let b = Bmhd::read_from_bytes(&head::<BMHD_LEN, _>(src, at, c.size)?).unwrap_or_default();
                s.video = Some(true);
                s.width = b.width.get();
                s.height = b.height.get();
                s.bits = b.planes;
                s.masking = if c.size >= 10 { b.masking } else { 0 };
                if c.size >= 16 {
                    s.sar = Some((b.x_aspect, b.y_aspect));
                }
            }
            b"DGBL" => {
                if c.size < 8 {
                    return Err(short(at, &"iff: DGBL under 8 bytes (DEEP: DeepGlobals)"));
                }
                let d: Dgbl = src.read(at)?;
                s.video = Some(true);
                s.width = d.width.get();
                s.height = d.height.get();
                s.bits = 24;
                s.sar = Some((d.x_aspect, d.y_aspect));
            }
            b"DLOC" => {
                if c.size < 4 {
                    return Err(short(at, &"iff: DLOC under 4 bytes (DEEP: DeepLocation)"));
                }
                s.width = src.read::<U16>(at)?.get();
                s.height = src.read::<U16>(at + 2)?.get();
            }
            b"DPEL" => {
                if c.size < 4 || c.size & 3 != 0 {
                    return Err(short(at, &"iff: DPEL not of whole 4-byte elements (DEEP: DeepPixel)"));
                }
                let d = head::<16, _>(src, at, c.size)?;
                // ffmpeg compares the first 16 bytes of a DPEL of 16 bytes or more.
                let found = DEEP_FORMATS.iter().find(|(f, _)| c.size >= 16 && *f == d);
                s.deep = Some(found.map(|&(_, l)| l).ok_or(Error::unsupported(
                    at,
                    &"iff: a DEEP pixel layout other than RGB, RGBA, BGRA, ARGB, ABGR",
                ))?);
            }
            b"TVDC" if c.size < 32 => {
                return Err(short(at, &"iff: TVDC under 32 bytes (DEEP: TVDC table)"));
            }
            b"CAMG" => {
                if c.size < 4 {
                    return Err(short(at, &"iff: CAMG under 4 bytes (ILBM: Amiga view mode)"));
                }
                s.camg = src.read::<U32>(at)?.get();
            }
            b"CMAP" => {
                if c.size < 3 || c.size > 768 || c.size % 3 != 0 {
                    return Err(short(at, &"iff: CMAP not of 1 to 256 colours (ILBM: ColorMap)"));
                }
                s.cmap_len = c.size as u32;
            }
            b"VHDR" => {
                if c.size < 14 {
                    return Err(short(at, &"iff: VHDR under 14 bytes (8SVX: Voice8Header)"));
                }
                let v = Vhdr::read_from_bytes(&head::<VHDR_LEN, _>(src, at, c.size)?).unwrap_or_default();
                s.video = Some(false);
                s.rate = v.rate.get();
                if c.size >= 16 {
                    s.compression = Some(v.compression);
                }
            }
            b"CHAN" => {
                if c.size < 4 {
                    return Err(short(at, &"iff: CHAN under 4 bytes (8SVX: channel)"));
                }
                // 2 left, 4 right, 6 both (8SVX "CHAN"); ffmpeg reads
                // anything from 6 on as stereo.
                s.stereo = src.read::<U32>(at)?.get() >= 6;
            }
            b"BODY" | b"ABIT" | b"DBOD" => s.body = Some((at, c.size)),
            _ => {}
        }
        pos = next;
    }
    Ok(s)
}
