//! Musepack SV7 (`MP+`): the header and the frame walk of ffmpeg's `mpc.c`.
//!
//! The stream is 32-bit little-endian words read from their most
//! significant bit. After the header's 24 bytes and 8 bits (the encoder
//! version) come the frames, packed without gaps: a 20-bit length in bits,
//! then that many bits. A packet is the whole words that hold one frame's
//! length and bits, after 4 bytes that ffmpeg adds (the bit at which the
//! frame's bits start in its first word plus 20, a last-frame flag, two
//! zeros); consecutive packets share the word where one frame ends and the
//! next begins.

use crate::error::{Error, Result};
use crate::source::Source;

/// Bytes of the header before the first frame's word.
pub const HEADER: u64 = 24;
/// Bits of the first word before the first frame (the encoder version).
pub const FIRST_BITS: u32 = 8;
/// Bytes ffmpeg puts before each frame.
pub const PREFIX: usize = 4;
/// Most frames ffmpeg reads (`fcount × sizeof(MPCFrame)` below 4 GiB).
const MAX_FRAMES: u32 = (u32::MAX / 16) + 1;
/// Sample rates by the header's two-bit index (SV7 header, word 2).
const RATES: [u32; 4] = [44100, 48000, 37800, 32000];

/// The SV7 header's facts.
#[derive(Debug, Clone, Copy)]
pub struct Sv7Header {
    /// Frames, 0 when the header does not say.
    pub frames: u32,
    /// Sample rate.
    pub rate: u32,
}

/// Reads the SV7 header at 0 (ffmpeg `mpc_read_header`).
pub fn header<S: Source>(src: &mut S) -> Result<Sv7Header> {
    let h: [u8; 24] = src.array(0)?;
    let [m, p, plus, version, f0, f1, f2, f3, _, _, r, ..] = h;
    if [m, p, plus] != *b"MP+" {
        return Err(Error::malformed(0, &"musepack: no MP+ magic (SV7 header)"));
    }
    if version & 0x0F < 7 {
        return Err(Error::unsupported(
            3,
            &"musepack: a stream version before 7 (SV4 to SV6)",
        ));
    }
    let frames = u32::from_le_bytes([f0, f1, f2, f3]);
    if frames >= MAX_FRAMES {
        return Err(Error::limit(4, &"musepack: too many frames (SV7 header)"));
    }
    let rate = RATES.get(usize::from(r & 3)).copied().unwrap_or(44100);
    Ok(Sv7Header { frames, rate })
}

/// Where a frame is: the word-aligned byte `pos` and the bit `bits` of its
/// first word at which its 20-bit length starts.
#[derive(Debug, Clone, Copy)]
pub struct Cursor {
    /// Byte offset of the word holding the frame's first bit.
    pub pos: u64,
    /// Bits of that word before the frame.
    pub bits: u32,
}

/// One frame as ffmpeg's `mpc_read_packet` reads it: `size` bytes from the
/// cursor's word, the prefix's first byte, and the next frame's cursor.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Bytes read.
    pub size: u64,
    /// The cursor's bits + 20 (the prefix's first byte).
    pub start_bit: u8,
    /// The next frame's cursor.
    pub next: Cursor,
}

/// The frame at `c`; `Err` (truncated) when its length word lies past the
/// input.
pub fn frame<S: Source>(src: &mut S, c: Cursor) -> Result<Frame> {
    let word = |src: &mut S, at: u64| -> Result<u32> {
        if at.saturating_add(4) > src.len() {
            return Err(Error::truncated(at, &"musepack: the input ends inside an SV7 frame"));
        }
        let b: [u8; 4] = src.array(at)?;
        Ok(u32::from_le_bytes(b))
    };
    let tmp = word(src, c.pos)?;
    let len = if c.bits <= 12 {
        (tmp >> (12 - c.bits)) & 0xF_FFFF
    } else {
        let next = word(src, c.pos + 4)?;
        ((tmp << (c.bits - 12)) | (next >> (44 - c.bits))) & 0xF_FFFF
    };
    let bits = c.bits + 20;
    let size = u64::from((len + bits + 31) & !31) >> 3;
    let rest = (bits + len) & 31;
    let mut pos = c.pos + size;
    if rest != 0 {
        pos -= 4;
    }
    Ok(Frame {
        size,
        start_bit: bits as u8,
        next: Cursor { pos, bits: rest },
    })
}
