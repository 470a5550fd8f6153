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
    /// The underlying reader failed; its kind is kept, not flattened.
    Io(embedded_io::ErrorKind),
}

/// An error with the offset where parsing stopped and a static description.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    /// The offset as two 32-bit halves (low first): 4-byte rather than
    /// 8-byte alignment makes the error 20 bytes instead of 24 on 32-bit
    /// targets, and every `?` that passes one on copies a word less (about
    /// 5 KiB of flash on thumbv7em). [`Error::offset`] joins them.
    offset: [u32; 2],
    what: &'static str,
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.kind)
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
            self.kind,
            self.offset(),
            self.what
        )
    }
}

impl Error {
    /// Builds an error of `kind` at byte `offset` with a static description.
    pub const fn new(kind: ErrorKind, offset: u64, what: &'static str) -> Self {
        Error {
            kind,
            offset: [offset as u32, (offset >> 32) as u32],
            what,
        }
    }
    /// `Malformed` at `offset`.
    pub const fn malformed(offset: u64, what: &'static str) -> Self {
        Self::new(ErrorKind::Malformed, offset, what)
    }
    /// `Truncated` at `offset`.
    pub const fn truncated(offset: u64, what: &'static str) -> Self {
        Self::new(ErrorKind::Truncated, offset, what)
    }
    /// `Unsupported` at `offset`.
    pub const fn unsupported(offset: u64, what: &'static str) -> Self {
        Self::new(ErrorKind::Unsupported, offset, what)
    }
    /// `LimitExceeded` at `offset`.
    pub const fn limit(offset: u64, what: &'static str) -> Self {
        Self::new(ErrorKind::LimitExceeded, offset, what)
    }
    /// `CapacityExceeded` at `offset`.
    pub const fn capacity(offset: u64, what: &'static str) -> Self {
        Self::new(ErrorKind::CapacityExceeded, offset, what)
    }
    /// The category of the error.
    pub const fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The byte offset in the input where parsing stopped.
    pub const fn offset(&self) -> u64 {
        self.offset[0] as u64 | (self.offset[1] as u64) << 32
    }
    /// A static, human-readable description (often citing the spec).
    pub const fn description(&self) -> &'static str {
        self.what
    }
    /// Whether the error only says the input ended early. Every complete
    /// packet before the cut has been delivered when this is returned from
    /// `next_packet`.
    pub const fn is_truncation(&self) -> bool {
        matches!(self.kind, ErrorKind::Truncated)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ErrorKind::UnknownFormat => "unknown format",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Malformed => "malformed input",
            ErrorKind::Truncated => "truncated input",
            ErrorKind::LimitExceeded => "limit exceeded",
            ErrorKind::CapacityExceeded => "capacity exceeded",
            ErrorKind::ScratchTooSmall => "scratch buffer too small",
            ErrorKind::OffsetOverflow => "offset beyond address space",
            ErrorKind::InvalidArgument => "invalid argument",
            ErrorKind::Io(_) => "I/O error",
        };
        if let ErrorKind::Io(k) = self.kind {
            write!(f, "{kind} ({k:?}) at byte {}: {}", self.offset(), self.what)
        } else {
            write!(f, "{kind} at byte {}: {}", self.offset(), self.what)
        }
    }
}

impl core::error::Error for Error {}

/// The crate's result type.
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_round_trips_and_debug_is_unchanged() {
        for off in [0u64, 1, u32::MAX as u64, 1 << 32, 0x1234_5678_9ABC_DEF0, u64::MAX] {
            assert_eq!(Error::malformed(off, "x").offset(), off);
        }
        let e = Error::truncated(5_000_000_000, "cut");
        extern crate std;
        assert_eq!(
            std::format!("{e:?}"),
            "Error { kind: Truncated, offset: 5000000000, what: \"cut\" }"
        );
        assert_eq!(std::format!("{e}"), "truncated input at byte 5000000000: cut");
    }
}
