//! A cover picture to embed (`mediaslice tags IN --picture FILE`): its
//! bytes, read in bounded memory, its kind (JPEG or PNG, from the bytes,
//! never the file name) and the facts a FLAC PICTURE block records (RFC
//! 9639 §8.8): width, height, colour depth and, for an indexed PNG, its
//! number of colours.

use std::io::{self, Read};
use std::path::Path;

/// Largest picture file taken: the bytes are held in memory while the tag
/// is built, and a FLAC metadata block holds at most 16 MiB.
pub const MAX_PICTURE: u64 = 16 << 20;

/// JPEG or PNG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureKind {
    /// Starts with the SOI marker FF D8 FF (ITU-T T.81 B.1.1.2).
    Jpeg,
    /// Starts with the PNG signature (ISO/IEC 15948 §5.2).
    Png,
}

impl PictureKind {
    /// The MIME type written in FLAC PICTURE and ID3v2 APIC.
    pub fn mime(self) -> &'static str {
        match self {
            PictureKind::Jpeg => "image/jpeg",
            PictureKind::Png => "image/png",
        }
    }

    /// The MP4 `data` atom type of a `covr` item (Apple's well-known
    /// types: 13 JPEG, 14 PNG).
    pub fn mp4_data_type(self) -> u32 {
        match self {
            PictureKind::Jpeg => 13,
            PictureKind::Png => 14,
        }
    }
}

/// A front-cover picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    /// JPEG or PNG.
    pub kind: PictureKind,
    /// The file's bytes, unchanged.
    pub data: Vec<u8>,
    /// Width in pixels (0 when the header does not say).
    pub width: u32,
    /// Height in pixels (0 when the header does not say).
    pub height: u32,
    /// Colour depth in bits per pixel (0 when the header does not say).
    pub depth: u32,
    /// Number of colours of an indexed PNG, else 0.
    pub colors: u32,
}

const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

impl Picture {
    /// Reads the picture at `path`. Errors: `InvalidInput` for a file over
    /// [`MAX_PICTURE`] (checked while reading, so a growing file or a pipe
    /// cannot make it bigger) or one that is neither JPEG nor PNG.
    pub fn read(path: &Path) -> io::Result<Picture> {
        let f = std::fs::File::open(path)?;
        let mut data = Vec::new();
        f.take(MAX_PICTURE + 1).read_to_end(&mut data)?;
        if data.len() as u64 > MAX_PICTURE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "--picture {}: over {} MiB, not embedded",
                    path.display(),
                    MAX_PICTURE >> 20
                ),
            ));
        }
        Picture::from_bytes(data).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("--picture {}: neither JPEG nor PNG", path.display()),
            )
        })
    }

    /// The picture in `data`, or `None` when it is neither JPEG nor PNG.
    pub fn from_bytes(data: Vec<u8>) -> Option<Picture> {
        let mut p = Picture {
            kind: PictureKind::Png,
            data,
            width: 0,
            height: 0,
            depth: 0,
            colors: 0,
        };
        if p.data.starts_with(PNG_SIGNATURE) {
            p.png_header();
        } else if p.data.starts_with(&[0xFF, 0xD8, 0xFF]) {
            p.kind = PictureKind::Jpeg;
            p.jpeg_header();
        } else {
            return None;
        }
        Some(p)
    }

    /// PNG: IHDR, the first chunk (§11.2.2: width, height, bit depth,
    /// colour type), and PLTE's size for an indexed picture (§11.2.3).
    fn png_header(&mut self) {
        let d = &self.data;
        let be = |at: usize| {
            d.get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_be_bytes)
        };
        if d.get(12..16) != Some(b"IHDR") {
            return;
        }
        let (Some(w), Some(h), Some(&bits), Some(&colour)) = (be(16), be(20), d.get(24), d.get(25)) else {
            return;
        };
        let samples = match colour {
            0 | 3 => 1,
            2 => 3,
            4 => 2,
            6 => 4,
            _ => 0,
        };
        (self.width, self.height, self.depth) = (w, h, u32::from(bits) * samples);
        if colour == 3 {
            // Chunks after IHDR (8 + 25 bytes) until PLTE.
            let mut at = 33usize;
            while let (Some(len), Some(kind)) = (be(at), d.get(at + 4..at + 8)) {
                if kind == b"PLTE" {
                    self.colors = len / 3;
                    break;
                }
                if kind == b"IDAT" {
                    break;
                }
                at = at.saturating_add(12).saturating_add(len as usize);
            }
        }
    }

    /// JPEG: the first start-of-frame marker (T.81 B.2.2: precision,
    /// height, width, components), walking the marker segments by their
    /// lengths.
    fn jpeg_header(&mut self) {
        let d = &self.data;
        let mut at = 2usize;
        while let (Some(&0xFF), Some(&m)) = (d.get(at), d.get(at + 1)) {
            if m == 0xFF {
                at += 1;
                continue;
            }
            let Some(len) = d
                .get(at + 2..at + 4)
                .map(|b| usize::from(u16::from_be_bytes([b[0], b[1]])))
            else {
                return;
            };
            let sof = matches!(m, 0xC0..=0xCF) && !matches!(m, 0xC4 | 0xC8 | 0xCC);
            if sof {
                if let Some(s) = d.get(at + 4..at + 10) {
                    self.height = u32::from(u16::from_be_bytes([s[1], s[2]]));
                    self.width = u32::from(u16::from_be_bytes([s[3], s[4]]));
                    self.depth = u32::from(s[0]) * u32::from(s[5]);
                }
                return;
            }
            if m == 0xDA {
                return;
            }
            at += 2 + len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_sizes_from_the_bytes() {
        let mut png = PNG_SIGNATURE.to_vec();
        png.extend_from_slice(&[0, 0, 0, 13]);
        png.extend_from_slice(b"IHDR");
        png.extend_from_slice(&[0, 0, 1, 0, 0, 0, 0, 200, 8, 3, 0, 0, 0, 1, 2, 3, 4]);
        png.extend_from_slice(&[0, 0, 0, 12]);
        png.extend_from_slice(b"PLTE");
        png.extend_from_slice(&[0; 16]);
        let p = Picture::from_bytes(png).unwrap();
        assert_eq!(
            (p.kind, p.width, p.height, p.depth, p.colors),
            (PictureKind::Png, 256, 200, 8, 4)
        );
        // SOI, an APP0 of 4 bytes, SOF0: 8 bits, 120 high, 160 wide, 3 components.
        let jpeg = vec![
            0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 17, 8, 0, 120, 0, 160, 3,
        ];
        let p = Picture::from_bytes(jpeg).unwrap();
        assert_eq!((p.kind, p.width, p.height, p.depth), (PictureKind::Jpeg, 160, 120, 24));
        assert!(Picture::from_bytes(b"GIF89a".to_vec()).is_none());
        // Cut anywhere: no panic.
        for cut in 0..18 {
            let _ = Picture::from_bytes(
                vec![
                    0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 17, 8, 0, 120, 0, 160, 3,
                ][..cut]
                    .to_vec(),
            );
        }
    }
}
