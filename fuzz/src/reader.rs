//! The reader of the stream side.

use super::*;

/// What a [`FuzzReader`] does with a seek.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekMode {
    /// Any seek succeeds.
    Full,
    /// Seeks forward (or to the current position) succeed, backward ones
    /// fail with `Unsupported`, like a pipe that can skip.
    ForwardOnly,
    /// Only a seek to the current position succeeds.
    None,
}

/// An `embedded_io` reader over a byte slice that returns at most `chunk`
/// bytes per `read` and restricts seeking as `seek` says.
#[derive(Debug)]
pub struct FuzzReader<'a> {
    data: &'a [u8],
    pos: u64,
    chunk: usize,
    seek: SeekMode,
    reads: u64,
    fail_from: Option<u64>,
}

impl<'a> FuzzReader<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8], chunk: usize, seek: SeekMode) -> Self {
        FuzzReader {
            data,
            pos: 0,
            chunk: chunk.max(1),
            seek,
            reads: 0,
            fail_from: None,
        }
    }

    /// Makes every `read` from the `n`th on (counting from 1) fail with
    /// `ErrorKind::Other`, like a device that goes away.
    pub fn failing_from(mut self, n: Option<u64>) -> Self {
        self.fail_from = n;
        self
    }
}

impl embedded_io::ErrorType for FuzzReader<'_> {
    type Error = embedded_io::ErrorKind;
}

impl embedded_io::Read for FuzzReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.reads += 1;
        if self.fail_from.is_some_and(|n| self.reads >= n) {
            return Err(embedded_io::ErrorKind::Other);
        }
        let start = usize::try_from(self.pos).unwrap_or(usize::MAX).min(self.data.len());
        let n = buf.len().min(self.chunk).min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for FuzzReader<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        let target = match pos {
            embedded_io::SeekFrom::Start(n) => Some(n),
            embedded_io::SeekFrom::End(d) => (self.data.len() as u64).checked_add_signed(d),
            embedded_io::SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        }
        .ok_or(embedded_io::ErrorKind::InvalidInput)?;
        let allowed = match self.seek {
            SeekMode::Full => true,
            SeekMode::ForwardOnly => target >= self.pos,
            SeekMode::None => target == self.pos,
        };
        if !allowed {
            return Err(embedded_io::ErrorKind::Unsupported);
        }
        self.pos = target;
        Ok(target)
    }
}

/// How the stream side of [`run_slice_vs_stream`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamConfig {
    /// Most bytes per `read` call.
    pub chunk: usize,
    /// Seekability of the reader.
    pub seek: SeekMode,
    /// Reads fail from this one on (I/O fault injection), if set.
    pub fail_from: Option<u64>,
    /// How the source learns the length.
    pub len: LenMode,
    /// Blocks in the `ReaderSource` header cache (0, 1, 2 or 8).
    pub blocks: usize,
    /// `None`: detect the format; `Some(k)`: force it.
    pub kind: Option<FormatKind>,
    /// The stream run takes packets in pieces ([`Plan::pieces`]).
    pub pieces: bool,
}

/// How the stream side learns the input's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LenMode {
    /// `ReaderSource::with_known_len` with the true length.
    Known,
    /// `ReaderSource::new`, which seeks to the end.
    SeekEnd,
    /// The reader has more bytes than the length claimed: the result must be
    /// that of the slice cut at the claimed length.
    Shorter(u64),
    /// The claimed length exceeds the bytes the reader has: reads past them
    /// fail; checked for invariants only.
    Longer(u64),
}

pub(crate) const CHUNKS: [usize; 16] = [
    1,
    2,
    3,
    5,
    7,
    13,
    31,
    64,
    100,
    511,
    512,
    513,
    1000,
    4096,
    65536,
    usize::MAX,
];

impl StreamConfig {
    /// Reads the configuration from the input's last [`TRAILER`] bytes, as
    /// FFmpeg's `target_dem_fuzzer` lets its input choose the I/O pattern:
    ///
    /// * byte 0: bits 0-3 chunk size (1, 2, 3, 5, 7, 13, 31, 64, 100, 511,
    ///   512, 513, 1000, 4096, 65536, unlimited); bits 4-5 cache blocks
    ///   (8, 1, 2, 0); bit 6: the stream run takes its packets in pieces
    ///   (`next_packet_pieces`, [`Plan::pieces`]) while the slice run joins
    ///   them, so the two ways must agree too;
    /// * byte 1: bits 0-1 seek mode (full, forward only, none, full with
    ///   every read from the (byte 2 + 1)th on failing);
    ///   bits 2-3 length mode (known, seek to end, shorter, longer);
    /// * byte 2: the length difference for shorter/longer, minus one;
    /// * byte 3: below 128 detect the format, else force `KINDS[b % n]`.
    pub fn from_trailer(t: [u8; TRAILER]) -> Self {
        let delta = t[2] as u64 + 1;
        StreamConfig {
            chunk: CHUNKS[(t[0] & 15) as usize],
            blocks: [8, 1, 2, 0][((t[0] >> 4) & 3) as usize],
            pieces: t[0] & 0x40 != 0,
            seek: [SeekMode::Full, SeekMode::ForwardOnly, SeekMode::None, SeekMode::Full][(t[1] & 3) as usize],
            fail_from: if t[1] & 3 == 3 { Some(delta) } else { None },
            len: [
                LenMode::Known,
                LenMode::SeekEnd,
                LenMode::Shorter(delta),
                LenMode::Longer(delta),
            ][((t[1] >> 2) & 3) as usize],
            kind: if t[3] < 128 {
                None
            } else {
                Some(KINDS[t[3] as usize % KINDS.len()])
            },
        }
    }

    /// Splits `data` into the media bytes and the configuration.
    pub fn split(data: &[u8]) -> (&[u8], StreamConfig) {
        let mut t = [0u8; TRAILER];
        if data.len() < TRAILER {
            return (data, StreamConfig::from_trailer(t));
        }
        let (media, tail) = data.split_at(data.len() - TRAILER);
        t.copy_from_slice(tail);
        (media, StreamConfig::from_trailer(t))
    }
}
