//! Vorbis packet durations (Vorbis I specification §4.3.1: a packet's
//! samples are a quarter of the previous and the current window sizes), so
//! that frames of a Xiph lace get timestamps and durations as ffprobe gives
//! them (its Vorbis parser does this).
//!
//! The window sizes come from the identification header (§4.2.2) and the
//! mode block flags from the end of the setup header (§4.2.4: the modes are
//! the last fields before the framing bit). Like ffmpeg, the modes are found
//! by reading the setup header backwards rather than by parsing the whole
//! codebook and floor configuration.

use crate::source::Source;
use crate::types::ByteRange;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// The Vorbis identification header (Vorbis I §4.2.2), 30 bytes.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct IdHeader {
    /// packet_type: 1.
    packet_type: u8,
    /// "vorbis".
    magic: [u8; 6],
    /// vorbis_version.
    version: U32,
    /// audio_channels.
    channels: u8,
    /// audio_sample_rate.
    sample_rate: U32,
    /// bitrate_maximum, bitrate_nominal, bitrate_minimum.
    bitrates: [U32; 3],
    /// blocksize_0 (low 4 bits) and blocksize_1 (high 4 bits), as log2.
    blocksizes: u8,
    /// framing_flag (bit 0).
    framing: u8,
}

/// Bytes read from the end of the setup header: enough for 64 modes of 41
/// bits, the mode count and some padding before the framing bit.
const TAIL: usize = 1024;
/// Most modes the backward scan of the setup header tries (Vorbis I
/// §4.2.4: `vorbis_mode_count` is 6 bits plus one, at most 64).
const MAX_MODES: u32 = 64;

/// What a track needs to time its Vorbis packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Vorbis {
    /// Short and long window sizes.
    short: u32,
    long: u32,
    /// Bit `i` set: mode `i` uses the long window.
    long_modes: u64,
    mode_count: u8,
    mode_mask: u8,
    prev_mask: u8,
    /// Window size of the previous packet.
    previous: u32,
    /// Sample rate, to convert samples to track ticks.
    pub rate: u32,
}

/// Reads bits from the end of a byte string towards its start, each byte
/// from its most significant bit (ffmpeg reverses the bytes and reads
/// forward; this is the same order).
struct Backwards<'a> {
    tail: &'a [u8],
    /// Total length of the header in bits (for the bounds ffmpeg uses).
    total_bits: usize,
    pos: usize,
}

impl Backwards<'_> {
    fn bit(&mut self) -> Option<u32> {
        let byte = self.tail.len().checked_sub(1 + self.pos / 8)?;
        let b = *self.tail.get(byte)?;
        let v = (b >> (7 - self.pos % 8)) & 1;
        self.pos += 1;
        Some(v as u32)
    }

    fn bits(&mut self, n: u32) -> Option<u32> {
        let mut v = 0;
        for _ in 0..n {
            v = (v << 1) | self.bit()?;
        }
        Some(v)
    }

    fn left(&self) -> usize {
        self.total_bits.saturating_sub(self.pos)
    }
}

impl Vorbis {
    /// Reads the headers from a Matroska Vorbis CodecPrivate (Xiph-laced
    /// identification, comment and setup headers, RFC 9559 codec mapping).
    /// `None` when they are not as expected.
    pub(super) fn from_private<S: Source>(src: &mut S, private: ByteRange, rate: u32) -> Option<Self> {
        let mut head = [0u8; 64];
        let n = (private.len as usize).min(head.len());
        let h = head.get_mut(..n)?;
        src.read_exact_at(private.offset, h).ok()?;
        if *h.first()? != 2 {
            return None;
        }
        // Two Xiph-laced sizes (runs of 255), then the three headers.
        let mut at = 1usize;
        let mut sizes = [0usize; 2];
        for s in sizes.iter_mut() {
            loop {
                let b = *h.get(at)?;
                at += 1;
                *s += b as usize;
                if b != 255 {
                    break;
                }
            }
        }
        let id_start = private.offset + at as u64;
        let setup_start = id_start + (sizes[0] + sizes[1]) as u64;
        let setup_len = (private.offset + private.len as u64).checked_sub(setup_start)? as usize;
        let id = src.read::<IdHeader>(id_start).ok()?;
        if sizes[0] < 30 || id.packet_type != 1 || &id.magic != b"vorbis" || id.framing & 1 == 0 {
            return None;
        }
        let (short, long) = (1u32 << (id.blocksizes & 0xF), 1u32 << (id.blocksizes >> 4));
        let setup_head: [u8; 7] = src.array(setup_start).ok()?;
        if setup_head[0] != 5 || setup_head.get(1..7)? != b"vorbis" {
            return None;
        }
        let mut tail = [0u8; TAIL];
        let t = setup_len.min(TAIL);
        let tail = tail.get_mut(..t)?;
        src.read_exact_at(setup_start + (setup_len - t) as u64, tail).ok()?;
        let total_bits = setup_len * 8;
        // The framing bit: the first set bit from the end.
        let mut r = Backwards {
            tail,
            total_bits,
            pos: 0,
        };
        let mut framing = None;
        while r.left() > 97 {
            if r.bit()? == 1 {
                framing = Some(r.pos);
                break;
            }
        }
        let framing = framing?;
        // Modes, backwards: mapping (8 bits, < 64), transform type (16, 0),
        // window type (16, 0), block flag (1); the count before them says
        // how many there are.
        let mut count = 0u32;
        let mut found = 0u32;
        while r.left() >= 97 {
            if r.bits(8)? > 63 || r.bits(16)? != 0 || r.bits(16)? != 0 {
                break;
            }
            r.bit()?;
            count += 1;
            if count > MAX_MODES {
                break;
            }
            let mut peek = Backwards { ..r };
            if peek.bits(6)? + 1 == count {
                found = count;
            }
        }
        if found == 0 || found > 63 {
            return None;
        }
        let mut r = Backwards {
            tail,
            total_bits,
            pos: framing,
        };
        let mut long_modes = 0u64;
        for i in (0..found).rev() {
            r.bits(32)?;
            r.bits(8)?;
            if r.bit()? == 1 {
                long_modes |= 1 << i;
            }
        }
        let below = found - 1;
        let log2 = if below == 0 { 0 } else { 31 - below.leading_zeros() };
        let mode_mask = (((1u32 << (log2 + 1)) - 1) << 1) as u8;
        let prev_mask = (mode_mask | 1).wrapping_add(1);
        let mut v = Vorbis {
            short,
            long,
            long_modes,
            mode_count: found as u8,
            mode_mask,
            prev_mask,
            previous: 0,
            rate,
        };
        v.reset();
        Some(v)
    }

    fn size(&self, long: bool) -> u32 {
        if long {
            self.long
        } else {
            self.short
        }
    }

    /// Back to the state before the first packet (after a seek).
    pub(super) fn reset(&mut self) {
        self.previous = self.size(self.long_modes & 1 == 1);
    }

    /// The samples of the audio packet starting with `first`, updating the
    /// previous window size; 0 for a header packet or a bad mode.
    pub(super) fn samples(&mut self, first: u8) -> u32 {
        if first & 1 == 1 {
            return 0;
        }
        let mode = if self.mode_count == 1 {
            0
        } else {
            (first & self.mode_mask) >> 1
        };
        if mode >= self.mode_count {
            return 0;
        }
        let long = (self.long_modes >> mode) & 1 == 1;
        let mut previous = self.previous;
        if long {
            previous = self.size(first & self.prev_mask != 0);
        }
        let current = self.size(long);
        self.previous = current;
        (previous + current) >> 2
    }
}
