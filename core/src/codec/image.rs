//! What a still picture's own header says (cover art, a Motion JPEG
//! frame): its size, sample layout and pixel aspect, read once at probe
//! time from the picture's bytes, never per packet.
//!
//! - JPEG (ITU-T T.81 §B.2.2 frame header, JFIF 1.02 APP0 density);
//! - PNG (ISO/IEC 15948 §11.2.2 IHDR, §11.3.5.3 pHYs);
//! - BMP (the `BITMAPINFOHEADER` and its colour masks);
//! - GIF (GIF89a logical screen descriptor).
//!
//! No names here, as in [`facts`](super::facts): the CLI names the layout
//! as ffmpeg's decoders do.

use crate::types::Codec;

/// How a picture's samples are laid out, as its header states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageLayout {
    /// A JPEG frame header.
    Jpeg {
        /// The SOF marker's low nibble: 0 baseline, 1 extended sequential,
        /// 2 progressive, 3 lossless (arithmetic coding adds 8).
        process: u8,
        /// Sample precision in bits.
        precision: u8,
        /// Number of components (1 grey, 3 colour).
        components: u8,
        /// Sampling factors of the first three components (H << 4 | V).
        sampling: [u8; 3],
    },
    /// A PNG image header.
    Png {
        /// IHDR colour type (0 grey, 2 RGB, 3 palette, 4 grey + alpha,
        /// 6 RGBA).
        color_type: u8,
        /// IHDR bit depth.
        depth: u8,
    },
    /// A GIF logical screen (palette pictures, decoded to 32-bit colour
    /// with alpha).
    Gif,
    /// A BMP info header.
    Bmp {
        /// Bits per pixel.
        bits: u16,
        /// The red, green and blue masks of a `BI_BITFIELDS` picture,
        /// else zero.
        masks: [u32; 3],
    },
}

/// What a picture's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageFacts {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The pixel aspect the file states (JFIF density, PNG `pHYs`), when
    /// both terms are non-zero.
    pub sar: Option<(u32, u32)>,
    /// The sample layout.
    pub layout: ImageLayout,
}

/// The facts of a picture of `codec` held in `data`; `None` when the
/// header is missing, cut or not of that codec.
pub fn parse(codec: Codec, data: &[u8]) -> Option<ImageFacts> {
    match codec {
        Codec::Mjpeg => jpeg(data),
        Codec::Png => png(data),
        Codec::Bmp => bmp(data),
        Codec::Gif => gif(data),
        _ => None,
    }
    .filter(|f| f.width > 0 && f.height > 0)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn ratio(n: u32, d: u32) -> Option<(u32, u32)> {
    (n > 0 && d > 0).then_some((n, d))
}

/// Walks the marker segments from SOI to the first frame header (SOFn),
/// taking the JFIF density on the way. Each step moves forward by a
/// segment's stated length, so the walk is bounded by `data`.
fn jpeg(data: &[u8]) -> Option<ImageFacts> {
    if data.get(..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut at = 2;
    let mut sar = None;
    loop {
        // Fill bytes (0xFF) may precede a marker (T.81 §B.1.1.2).
        while data.get(at) == Some(&0xFF) && data.get(at + 1) == Some(&0xFF) {
            at += 1;
        }
        if *data.get(at)? != 0xFF {
            return None;
        }
        let marker = *data.get(at + 1)?;
        let len = usize::from(be16(data, at + 2)?);
        let body = data.get(at + 4..(at + 2).checked_add(len)?)?;
        match marker {
            0xE0 if body.get(..5) == Some(b"JFIF\0") => {
                sar = ratio(u32::from(be16(body, 8)?), u32::from(be16(body, 10)?));
            }
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                let components = *body.get(5)?;
                let mut sampling = [0u8; 3];
                for (i, s) in sampling.iter_mut().enumerate() {
                    *s = body.get(7 + 3 * i).copied().unwrap_or(0);
                }
                return Some(ImageFacts {
                    width: u32::from(be16(body, 3)?),
                    height: u32::from(be16(body, 1)?),
                    sar,
                    layout: ImageLayout::Jpeg {
                        process: marker & 0x0F,
                        precision: *body.first()?,
                        components,
                        sampling,
                    },
                });
            }
            0xD9 | 0xDA => return None,
            _ => {}
        }
        at += 2 + len.max(2);
    }
}

/// The IHDR chunk, then the chunks up to the first IDAT for `pHYs`.
fn png(data: &[u8]) -> Option<ImageFacts> {
    if data.get(..8)? != b"\x89PNG\r\n\x1a\n" || data.get(12..16)? != b"IHDR" {
        return None;
    }
    let mut f = ImageFacts {
        width: be32(data, 16)?,
        height: be32(data, 20)?,
        sar: None,
        layout: ImageLayout::Png {
            depth: *data.get(24)?,
            color_type: *data.get(25)?,
        },
    };
    let mut at: usize = 8;
    // Each chunk: length, type, data, CRC.
    while let (Some(len), Some(kind)) = (be32(data, at), data.get(at + 4..at + 8)) {
        match kind {
            b"pHYs" => {
                f.sar = ratio(be32(data, at + 8)?, be32(data, at + 12)?);
                break;
            }
            b"IDAT" | b"IEND" => break,
            _ => {}
        }
        at = at.checked_add(12)?.checked_add(usize::try_from(len).ok()?)?;
    }
    Some(f)
}

/// The signature and the logical screen's size.
fn gif(data: &[u8]) -> Option<ImageFacts> {
    if !matches!(data.get(..6)?, b"GIF87a" | b"GIF89a") {
        return None;
    }
    let le16 = |at: usize| Some(u32::from(u16::from_le_bytes([*data.get(at)?, *data.get(at + 1)?])));
    Some(ImageFacts {
        width: le16(6)?,
        height: le16(8)?,
        sar: None,
        layout: ImageLayout::Gif,
    })
}

/// The file header and the info header's size, depth and masks.
fn bmp(data: &[u8]) -> Option<ImageFacts> {
    if data.get(..2)? != b"BM" {
        return None;
    }
    let info = le32(data, 14)?;
    if info < 40 {
        return None;
    }
    let height = le32(data, 22)? as i32;
    let bits = u16::from_le_bytes([*data.get(28)?, *data.get(29)?]);
    let compression = le32(data, 30)?;
    // BI_BITFIELDS: the masks follow a 40-byte header or sit in a larger one.
    let masks = if compression == 3 {
        [le32(data, 54)?, le32(data, 58)?, le32(data, 62)?]
    } else {
        [0; 3]
    };
    Some(ImageFacts {
        width: le32(data, 18)?,
        height: height.unsigned_abs(),
        sar: None,
        layout: ImageLayout::Bmp { bits, masks },
    })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;

    #[test]
    fn jpeg_frame_header_after_jfif() {
        let mut j = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 16];
        j.extend_from_slice(b"JFIF\0\x01\x01\x00\x00\x48\x00\x48\x00\x00");
        // SOF2, precision 8, 100x60, 3 components 2x2, 1x1, 1x1.
        j.extend_from_slice(&[
            0xFF, 0xC2, 0, 17, 8, 0, 60, 0, 100, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1,
        ]);
        let f = parse(Codec::Mjpeg, &j).unwrap();
        assert_eq!((f.width, f.height, f.sar), (100, 60, Some((72, 72))));
        assert_eq!(
            f.layout,
            ImageLayout::Jpeg {
                process: 2,
                precision: 8,
                components: 3,
                sampling: [0x22, 0x11, 0x11]
            }
        );
        // Cut inside the frame header, or no SOI: nothing.
        assert_eq!(parse(Codec::Mjpeg, &j[..j.len() - 12]), None);
        assert_eq!(parse(Codec::Mjpeg, &j[2..]), None);
    }

    #[test]
    fn png_header_and_physical_size() {
        let mut p = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        p.extend_from_slice(&[0, 0, 1, 0x73, 0, 0, 1, 0x40, 8, 2, 0, 0, 0]);
        p.extend_from_slice(&[0; 4]); // CRC
        p.extend_from_slice(b"\0\0\0\x09pHYs\0\0\x0b\x13\0\0\x0b\x13\x01");
        let f = parse(Codec::Png, &p).unwrap();
        assert_eq!((f.width, f.height, f.sar), (371, 320, Some((2835, 2835))));
        assert_eq!(
            f.layout,
            ImageLayout::Png {
                color_type: 2,
                depth: 8
            }
        );
    }

    #[test]
    fn bmp_masks() {
        let mut b = vec![0u8; 66];
        b[..2].copy_from_slice(b"BM");
        b[14] = 40;
        b[18] = 30;
        b[22..26].copy_from_slice(&(-30i32).to_le_bytes());
        b[28] = 16;
        b[30] = 3;
        b[54..58].copy_from_slice(&0xF800u32.to_le_bytes());
        let f = parse(Codec::Bmp, &b).unwrap();
        assert_eq!((f.width, f.height), (30, 30));
        assert_eq!(
            f.layout,
            ImageLayout::Bmp {
                bits: 16,
                masks: [0xF800, 0, 0]
            }
        );
    }

    #[test]
    fn gif_screen() {
        let g = *b"GIF89a\x1e\x00\x14\x00\x80\x00\x00";
        let f = parse(Codec::Gif, &g).unwrap();
        assert_eq!((f.width, f.height, f.layout), (30, 20, ImageLayout::Gif));
        assert_eq!(parse(Codec::Gif, &g[..8]), None);
    }
}
