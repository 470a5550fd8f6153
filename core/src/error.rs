//! The one error type of the crate.
//!
//! [`Error`] is small and `Copy`: a kind, the byte offset in the input where
//! parsing stopped, and a static description. It never allocates.

use core::fmt;

/// What went wrong, in categories a caller can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input is not in any format this build recognises.
    UnknownFormat,
    /// The format is recognised but this feature of it is not supported.
    Unsupported,
    /// The input breaks the format's rules in a way that stops reading.
    Malformed,
    /// The input ends before a structure that it announces.
    Truncated,
    /// A configured limit (see [`crate::Limits`]) was reached.
    LimitExceeded,
    /// A fixed-capacity table (tracks, lacing, nesting) is full.
    CapacityExceeded,
    /// The caller-supplied scratch buffer is smaller than a packet needs.
    ScratchTooSmall,
    /// An offset does not fit in this target's address space (slice mode on a
    /// 32-bit target).
    OffsetOverflow,
    /// The caller asked for something that does not exist (a track index, a
    /// seek target before any data).
    InvalidArgument,
    /// A sink has no room for the bytes a write gives it (a
    /// [`crate::sink::SliceSink`] whose buffer is full). Nothing of that
    /// write was stored; the offset is the sink's position.
    SinkFull,
    /// The underlying reader or writer failed; its kind is kept, not
    /// flattened.
    Io(embedded_io::ErrorKind),
}

/// A static description of an error, as a thin reference: write
/// `&"mp4 mdhd: shorter than its fields (ISO/IEC 14496-12 8.4.2.2)"` (the
/// compiler places the string's reference in a static). One pointer where a
/// `&'static str` is two: see [`Error`].
pub type Description = &'static &'static str;

/// An error with the offset where parsing (or, on the write side, writing)
/// stopped and a static description.
///
/// 12 bytes on 32-bit targets: a thin reference to the description
/// ([`Description`]) and two 32-bit words, the low 32 bits of the offset
/// and then bits 32..48 of the offset with the kind's code in the top 16
/// bits. A `Result` carrying it is returned in memory, so every `?` that
/// passes one on copies it: each word less is kilobytes of flash on
/// thumbv7em (docs/embedded.md). Offsets from 2^48 (256 TiB) up are kept as
/// 2^48 - 1 ([`Error::OFFSET_MAX`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error {
    what: Description,
    lo: u32,
    hi: u32,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind())
            .field("offset", &self.offset())
            .field("what", &self.what)
            .finish()
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Error {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Error {{ kind: {}, offset: {=u64}, what: {=str} }}",
            self.kind(),
            self.offset(),
            *self.what
        )
    }
}

impl Error {
    /// The largest offset an error keeps; larger ones are clamped to it.
    pub const OFFSET_MAX: u64 = (1 << 48) - 1;

    /// Builds an error of `kind` at byte `offset` (clamped to
    /// [`Error::OFFSET_MAX`]) with a static description.
    pub const fn new(kind: ErrorKind, offset: u64, what: Description) -> Self {
        let offset = if offset > Self::OFFSET_MAX {
            Self::OFFSET_MAX
        } else {
            offset
        };
        Error {
            what,
            lo: offset as u32,
            hi: (offset >> 32) as u32 | (kind_code(kind) as u32) << 16,
        }
    }
    /// `Malformed` at `offset`.
    pub const fn malformed(offset: u64, what: Description) -> Self {
        Self::new(ErrorKind::Malformed, offset, what)
    }
    /// `Truncated` at `offset`.
    pub const fn truncated(offset: u64, what: Description) -> Self {
        Self::new(ErrorKind::Truncated, offset, what)
    }
    /// `Unsupported` at `offset`.
    pub const fn unsupported(offset: u64, what: Description) -> Self {
        Self::new(ErrorKind::Unsupported, offset, what)
    }
    /// `LimitExceeded` at `offset`.
    pub const fn limit(offset: u64, what: Description) -> Self {
        Self::new(ErrorKind::LimitExceeded, offset, what)
    }
    /// `CapacityExceeded` at `offset`.
    pub const fn capacity(offset: u64, what: Description) -> Self {
        Self::new(ErrorKind::CapacityExceeded, offset, what)
    }
    /// The category of the error.
    pub const fn kind(&self) -> ErrorKind {
        kind_of((self.hi >> 16) as u16)
    }
    /// The byte offset in the input where parsing stopped.
    pub const fn offset(&self) -> u64 {
        self.lo as u64 | ((self.hi & 0xFFFF) as u64) << 32
    }
    /// A static, human-readable description (often citing the spec).
    pub const fn description(&self) -> &'static str {
        self.what
    }
    /// Whether the error only says the input ended early. Every complete
    /// packet before the cut has been delivered when this is returned from
    /// `next_packet`.
    pub const fn is_truncation(&self) -> bool {
        matches!(self.kind(), ErrorKind::Truncated)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind() {
            ErrorKind::UnknownFormat => "unknown format",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Malformed => "malformed input",
            ErrorKind::Truncated => "truncated input",
            ErrorKind::LimitExceeded => "limit exceeded",
            ErrorKind::CapacityExceeded => "capacity exceeded",
            ErrorKind::ScratchTooSmall => "scratch buffer too small",
            ErrorKind::OffsetOverflow => "offset beyond address space",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::SinkFull => "sink full",
            ErrorKind::Io(_) => "I/O error",
        };
        if let ErrorKind::Io(k) = self.kind() {
            write!(f, "{kind} ({k:?}) at byte {}: {}", self.offset(), self.what)
        } else {
            write!(f, "{kind} at byte {}: {}", self.offset(), self.what)
        }
    }
}

impl core::error::Error for Error {}

/// The first code of the `Io` kinds.
const IO: u16 = 16;

/// The 16-bit code of a kind (the inverse of [`kind_of`]).
const fn kind_code(kind: ErrorKind) -> u16 {
    use embedded_io::ErrorKind as K;
    match kind {
        ErrorKind::UnknownFormat => 0,
        ErrorKind::Unsupported => 1,
        ErrorKind::Malformed => 2,
        ErrorKind::Truncated => 3,
        ErrorKind::LimitExceeded => 4,
        ErrorKind::CapacityExceeded => 5,
        ErrorKind::ScratchTooSmall => 6,
        ErrorKind::OffsetOverflow => 7,
        ErrorKind::InvalidArgument => 8,
        ErrorKind::SinkFull => 9,
        ErrorKind::Io(k) => {
            IO + match k {
                K::NotFound => 1,
                K::PermissionDenied => 2,
                K::ConnectionRefused => 3,
                K::ConnectionReset => 4,
                K::ConnectionAborted => 5,
                K::NotConnected => 6,
                K::AddrInUse => 7,
                K::AddrNotAvailable => 8,
                K::BrokenPipe => 9,
                K::AlreadyExists => 10,
                K::InvalidInput => 11,
                K::InvalidData => 12,
                K::TimedOut => 13,
                K::Interrupted => 14,
                K::Unsupported => 15,
                K::OutOfMemory => 16,
                K::WriteZero => 17,
                _ => 0,
            }
        }
    }
}

/// The kind of a 16-bit code made by [`kind_code`]; a code it never makes
/// reads as `Malformed`, an `Io` code for a reader kind added to
/// `embedded_io` later as `Io(Other)`.
const fn kind_of(code: u16) -> ErrorKind {
    use embedded_io::ErrorKind as K;
    match code {
        0 => ErrorKind::UnknownFormat,
        1 => ErrorKind::Unsupported,
        2 => ErrorKind::Malformed,
        3 => ErrorKind::Truncated,
        4 => ErrorKind::LimitExceeded,
        5 => ErrorKind::CapacityExceeded,
        6 => ErrorKind::ScratchTooSmall,
        7 => ErrorKind::OffsetOverflow,
        8 => ErrorKind::InvalidArgument,
        9 => ErrorKind::SinkFull,
        c if c >= IO => ErrorKind::Io(match c - IO {
            1 => K::NotFound,
            2 => K::PermissionDenied,
            3 => K::ConnectionRefused,
            4 => K::ConnectionReset,
            5 => K::ConnectionAborted,
            6 => K::NotConnected,
            7 => K::AddrInUse,
            8 => K::AddrNotAvailable,
            9 => K::BrokenPipe,
            10 => K::AlreadyExists,
            11 => K::InvalidInput,
            12 => K::InvalidData,
            13 => K::TimedOut,
            14 => K::Interrupted,
            15 => K::Unsupported,
            16 => K::OutOfMemory,
            17 => K::WriteZero,
            _ => K::Other,
        }),
        _ => ErrorKind::Malformed,
    }
}

/// The crate's result type.
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_round_trips_and_debug_is_unchanged() {
        for off in [0u64, 1, u32::MAX as u64, 1 << 32, 0x1234_5678_9ABC, Error::OFFSET_MAX] {
            assert_eq!(Error::malformed(off, &"x").offset(), off);
        }
        let e = Error::truncated(5_000_000_000, &"cut");
        extern crate std;
        assert_eq!(
            std::format!("{e:?}"),
            "Error { kind: Truncated, offset: 5000000000, what: \"cut\" }"
        );
        assert_eq!(std::format!("{e}"), "truncated input at byte 5000000000: cut");
    }

    #[test]
    fn every_kind_and_offset_round_trips() {
        use embedded_io::ErrorKind as K;
        let io = [
            K::Other,
            K::NotFound,
            K::PermissionDenied,
            K::ConnectionRefused,
            K::ConnectionReset,
            K::ConnectionAborted,
            K::NotConnected,
            K::AddrInUse,
            K::AddrNotAvailable,
            K::BrokenPipe,
            K::AlreadyExists,
            K::InvalidInput,
            K::InvalidData,
            K::TimedOut,
            K::Interrupted,
            K::Unsupported,
            K::OutOfMemory,
            K::WriteZero,
        ];
        let plain = [
            ErrorKind::UnknownFormat,
            ErrorKind::Unsupported,
            ErrorKind::Malformed,
            ErrorKind::Truncated,
            ErrorKind::LimitExceeded,
            ErrorKind::CapacityExceeded,
            ErrorKind::ScratchTooSmall,
            ErrorKind::OffsetOverflow,
            ErrorKind::InvalidArgument,
            ErrorKind::SinkFull,
        ];
        let kinds = plain.into_iter().chain(io.into_iter().map(ErrorKind::Io));
        for kind in kinds {
            for off in [0u64, 7, u32::MAX as u64 + 1, Error::OFFSET_MAX] {
                let e = Error::new(kind, off, &"w");
                assert_eq!((e.kind(), e.offset(), e.description()), (kind, off, "w"));
            }
        }
        // Offsets past 2^48 are clamped, and do not spill into the kind.
        let e = Error::truncated(u64::MAX, &"far");
        assert_eq!((e.kind(), e.offset()), (ErrorKind::Truncated, Error::OFFSET_MAX));
        // A thin description reference and two words: 12 bytes on 32-bit targets.
        assert_eq!(core::mem::size_of::<Error>(), core::mem::size_of::<usize>() + 8);
    }
}
