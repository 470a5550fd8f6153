//! Musepack SV8 (`MPCK`): packets of a two-letter key and a size, after
//! the SV8 specification (musepack.net, "Musepack SV8 stream
//! specification") and ffmpeg's `mpc8.c`.
//!
//! A packet's size is a variable-length integer (7 bits a byte, high bit
//! set on all bytes but the last) that counts the key, itself and the
//! payload. `SH` (stream header: CRC, version 8, samples, silence, rate
//! and band byte, channels and frames byte) comes first; `AP` holds audio;
//! `SE` ends a stream, but ffmpeg 5.1 reads on after it (the packets of a
//! chained stream), as we do; `RG`, `EI`, `SO`, `ST` and unknown keys are
//! skipped.

use crate::error::{Error, Result};
use crate::source::Source;

/// Most bytes of a variable-length integer read (a 64-bit value).
const MAX_VARINT: u64 = 10;
/// Sample rates by the stream header's three-bit index (4 to 7 unused).
const RATES: [u32; 4] = [44100, 48000, 37800, 32000];

/// One packet header: its key, where its payload starts and how long it is.
#[derive(Debug, Clone, Copy)]
pub struct Chunk {
    /// The two-letter key.
    pub key: [u8; 2],
    /// Where the payload starts.
    pub payload: u64,
    /// Bytes of the payload.
    pub len: u64,
}

/// The variable-length integer at `at`: its value and its length.
pub fn varint<S: Source>(src: &mut S, at: u64) -> Result<(u64, u64)> {
    let mut v = 0u64;
    for i in 0..MAX_VARINT {
        let p = at + i;
        if p >= src.len() {
            return Err(Error::truncated(
                p,
                &"musepack: the input ends inside an SV8 packet header",
            ));
        }
        let [b]: [u8; 1] = src.array(p)?;
        v = (v << 7) | u64::from(b & 0x7F);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err(Error::malformed(
        at,
        &"musepack: a size of more than 10 bytes (SV8 packet header)",
    ))
}

/// The packet header at `at` (ffmpeg `mpc8_get_chunk_header`).
pub fn chunk<S: Source>(src: &mut S, at: u64) -> Result<Chunk> {
    if at.saturating_add(2) > src.len() {
        return Err(Error::truncated(
            at,
            &"musepack: the input ends inside an SV8 packet header",
        ));
    }
    let key: [u8; 2] = src.array(at)?;
    let (size, n) = varint(src, at + 2)?;
    let len = size
        .checked_sub(2 + n)
        .ok_or(Error::malformed(at, &"musepack: an SV8 packet smaller than its header"))?;
    Ok(Chunk {
        key,
        payload: at + 2 + n,
        len,
    })
}

/// Whether an APEv2 tag (`APETAGEX`, its header) starts at `at`: the end
/// of the packets even when the tag's footer is missing, so that a tag
/// whose `APETAGEX` reads as an `AP` key is not taken for audio.
pub fn at_ape_tag<S: Source>(src: &mut S, at: u64) -> Result<bool> {
    if at.saturating_add(8) > src.len() {
        return Ok(false);
    }
    let b: [u8; 8] = src.array(at)?;
    Ok(&b == b"APETAGEX")
}

/// The stream header's facts.
#[derive(Debug, Clone, Copy)]
pub struct StreamHeader {
    /// Samples per channel.
    pub samples: u64,
    /// Sample rate.
    pub rate: u32,
    /// Channels.
    pub channels: u16,
    /// Samples per packet: 1152 × 4^(frames field & 3), as ffmpeg.
    pub per_packet: u32,
    /// Where the rate and channel bytes are (ffmpeg's 2 bytes of extradata).
    pub extradata: u64,
}

/// Reads the `SH` payload at `c` (SV8 specification, "Stream Header").
pub fn stream_header<S: Source>(src: &mut S, c: &Chunk) -> Result<StreamHeader> {
    // CRC (4 bytes), then the version.
    let at = c.payload + 4;
    let [version]: [u8; 1] = src.array(at)?;
    if version != 8 {
        return Err(Error::unsupported(
            at,
            &"musepack: an SV8 stream header of a version other than 8",
        ));
    }
    let (samples, n) = varint(src, at + 1)?;
    if samples > i64::MAX as u64 {
        return Err(Error::malformed(
            at + 1,
            &"musepack: a negative sample count (SV8 stream header)",
        ));
    }
    let (_silence, m) = varint(src, at + 1 + n)?;
    let [rate_band, channels_frames]: [u8; 2] = src.array(at + 1 + n + m)?;
    let rate = RATES.get(usize::from(rate_band >> 5)).copied().ok_or(Error::malformed(
        at + 1 + n + m,
        &"musepack: a sample rate index of 4 to 7 (SV8 stream header)",
    ))?;
    Ok(StreamHeader {
        samples,
        rate,
        channels: u16::from(channels_frames >> 4) + 1,
        per_packet: 1152 << (u32::from(channels_frames & 3) * 2),
        extradata: at + 1 + n + m,
    })
}
