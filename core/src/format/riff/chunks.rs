//! The chunk walk of WAV, RF64 and Wave64: chunk headers (RIFF MCI "RIFF
//! chunk"; Sony Wave64 GUID headers) and what `open` keeps of each chunk.

use crate::bytes::{array, le32, le64};
use crate::codec::riff_layout::WaveFormat;
use crate::error::{Error, Result};
use crate::format::traits::Context;
use crate::signature::W64_RIFF_GUID;
use crate::source::Source;
use crate::types::ByteRange;
use zerocopy::little_endian::U64;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The `ds64` chunk's leading fields (EBU Tech 3306 §3).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct Ds64 {
    /// Size of the RF64 form.
    pub riff_size: U64,
    /// Size of the `data` chunk.
    pub data_size: U64,
    /// Sample frames in the file.
    pub sample_count: U64,
}

/// The tail shared by every Wave64 GUID after its first four bytes
/// (except `riff`, see [`W64_RIFF_GUID`]).
const W64_GUID_TAIL: [u8; 12] = [0xF3, 0xAC, 0xD3, 0x11, 0x8C, 0xD1, 0x00, 0xC0, 0x4F, 0x8E, 0xDB, 0x8A];
/// Size of a Wave64 chunk header: GUID (16) and 64-bit size (8).
const W64_HEADER: u64 = 24;
/// Size of a RIFF chunk header: id (4) and 32-bit size (4).
const RIFF_HEADER: u64 = 8;
/// Smallest `bext` chunk read: the fixed fields up to and including
/// `TimeReference` and `Version` (EBU Tech 3285 §2.3).
const BEXT_MIN_SIZE: u64 = 602;
/// `data` chunk size of an RF64 file whose real size is in `ds64`
/// (EBU Tech 3306 §3).
const RF64_SIZE_IN_DS64: u64 = 0xFFFF_FFFF;

/// Which member of the family a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavor {
    Riff,
    Rf64,
    W64,
}

/// A chunk header.
struct Chunk {
    id: [u8; 4],
    body: u64,
    size: u64,
    next: u64,
}

/// What the walk found: the `fmt ` body and size, the `data` range, and the
/// optional `LIST`/`INFO`, `bext` and `fact` chunks.
pub(super) struct Found {
    pub(super) fmt: Option<(WaveFormat, u64, u64)>,
    pub(super) data: Option<(u64, u64)>,
    pub(super) info: Option<ByteRange>,
    pub(super) bext: Option<ByteRange>,
    pub(super) fact: Option<u64>,
}

/// The flavor from the file's first bytes and the offset of its first chunk.
#[inline]
pub(super) fn flavor<S: Source>(src: &mut S) -> Result<(Flavor, u64)> {
    let head: [u8; 12] = src.array(0)?;
    Ok(match head.get(0..4) {
        Some(b"RIFF") => (Flavor::Riff, 12u64),
        Some(b"RF64") | Some(b"BW64") => (Flavor::Rf64, 12),
        _ => {
            let g: [u8; 16] = src.array(0)?;
            if g != W64_RIFF_GUID {
                return Err(Error::malformed(
                    0,
                    &"wav: not a RIFF, RF64 or Wave64 file (RIFF MCI form header, EBU Tech 3306 §2, Sony Wave64 riff GUID)",
                ));
            }
            (Flavor::W64, 40)
        }
    })
}

#[inline]
fn read_chunk<S: Source>(src: &mut S, at: u64, flavor: Flavor) -> Result<Chunk> {
    if flavor == Flavor::W64 {
        let h: [u8; 24] = src.array(at)?;
        let mut id = array::<4>(&h, 0).unwrap_or([0; 4]);
        if array::<12>(&h, 4) != Some(W64_GUID_TAIL) {
            // Unknown GUID family: keep it skippable, name it with its bytes.
            id = [b'?'; 4];
        }
        let total = le64(&h, 16).unwrap_or(0);
        if total < W64_HEADER {
            return Err(Error::malformed(
                at,
                &"w64 chunk: size smaller than its 24-byte header (Sony Wave64, chunk header)",
            ));
        }
        let next = at.saturating_add(total).saturating_add(7) & !7;
        Ok(Chunk {
            id,
            body: at + W64_HEADER,
            size: total - W64_HEADER,
            next,
        })
    } else {
        let h: [u8; 8] = src.array(at)?;
        let id = array::<4>(&h, 0).unwrap_or([0; 4]);
        let size = le32(&h, 4).unwrap_or(0) as u64;
        let next = at
            .saturating_add(RIFF_HEADER)
            .saturating_add(size)
            .saturating_add(size & 1);
        Ok(Chunk {
            id,
            body: at + RIFF_HEADER,
            size,
            next,
        })
    }
}

/// Walks the chunks from `first` (bounded by `Limits::max_top_level`),
/// keeping what `open` needs.
#[inline]
pub(super) fn walk<S: Source>(src: &mut S, ctx: &mut Context, flavor: Flavor, first: u64) -> Result<Found> {
    let file_len = src.len();
    let mut found = Found {
        fmt: None,
        data: None,
        info: None,
        bext: None,
        fact: None,
    };
    let mut ds64_data: Option<u64> = None;
    let mut at = first;
    let mut walked = 0u32;
    while at.saturating_add(8) <= file_len {
        walked += 1;
        if walked > ctx.limits.max_top_level {
            ctx.diags.report("wav.too-many-chunks", at);
            break;
        }
        let c = match read_chunk(src, at, flavor) {
            Ok(c) => c,
            Err(e) if e.is_truncation() => break,
            Err(e) => return Err(e),
        };
        match &c.id {
            b"ds64" if flavor == Flavor::Rf64 => {
                ds64_data = Some(src.read::<Ds64>(c.body)?.data_size.get());
            }
            b"fmt " => {
                if c.size < 16 {
                    return Err(Error::malformed(
                        c.body,
                        &"wav fmt: shorter than WAVEFORMAT (RIFF MCI, fmt chunk)",
                    ));
                }
                found.fmt = Some((src.read::<WaveFormat>(c.body)?, c.body, c.size));
            }
            b"data" => {
                let Some(next) = found.data_chunk(&c, flavor, ds64_data, file_len, ctx) else {
                    break;
                };
                at = next;
                continue;
            }
            b"LIST" if c.size >= 4 => {
                let kind: [u8; 4] = src.array(c.body)?;
                if &kind == b"INFO" && found.info.is_none() {
                    let len = c.size.min(file_len.saturating_sub(c.body));
                    found.info = Some(ByteRange {
                        offset: c.body + 4,
                        len: len.saturating_sub(4).min(u32::MAX as u64) as u32,
                    });
                }
            }
            b"fact" if c.size >= 4 => {
                let n = u32::from_le_bytes(src.array(c.body)?);
                if n > 0 {
                    found.fact = Some(n as u64);
                }
            }
            b"bext" if c.size >= BEXT_MIN_SIZE => {
                found.bext = Some(ByteRange {
                    offset: c.body,
                    len: c.size.min(u32::MAX as u64) as u32,
                });
            }
            _ => {}
        }
        if c.next <= at {
            break;
        }
        at = c.next;
    }
    Ok(found)
}

impl Found {
    /// Keeps the first `data` chunk (its size from `ds64` in RF64, to the
    /// end of the input when a RIFF one says 0, clamped to the input) and
    /// returns where the walk goes on, or `None` when the
    /// data runs to the end of the input.
    #[inline]
    fn data_chunk(
        &mut self,
        c: &Chunk,
        flavor: Flavor,
        ds64_data: Option<u64>,
        file_len: u64,
        ctx: &mut Context,
    ) -> Option<u64> {
        let mut size = c.size;
        if flavor == Flavor::Rf64 && c.size == RF64_SIZE_IN_DS64 {
            size = ds64_data.unwrap_or(u64::MAX);
        }
        // A RIFF size of 0 is a streaming writer's placeholder: ffmpeg
        // reads such data to the end of the input.
        let end = if flavor == Flavor::Riff && size == 0 {
            file_len
        } else {
            c.body.saturating_add(size)
        };
        if end > file_len {
            ctx.diags.report("wav.data-beyond-eof", c.body);
        }
        if self.data.is_none() {
            self.data = Some((c.body, end.min(file_len)));
        }
        if end >= file_len {
            return None;
        }
        // Keep walking past the data for LIST/bext chunks after it, as
        // ffmpeg does on seekable input.
        Some(if flavor == Flavor::W64 {
            c.next
        } else {
            end.saturating_add(size & 1)
        })
    }
}
