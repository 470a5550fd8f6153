//! Diagnostics: non-fatal findings with stable dotted codes.
//!
//! The codes are listed in `docs/diagnostics.md`. They are reported into a
//! fixed-capacity sink; when it is full, further findings are counted, not
//! stored.

/// A stable diagnostic code such as `mp4.stsz-count-mismatch`.
pub type Code = &'static str;

/// One finding: its code and the byte offset it concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Diagnostic {
    /// The stable code.
    pub code: Code,
    /// The byte offset in the input.
    pub offset: u64,
}

/// How many distinct findings are kept.
pub const DIAG_CAPACITY: usize = 16;

/// A fixed-capacity sink of diagnostics. A code already present is counted,
/// not stored again.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    items: heapless::Vec<(Diagnostic, u32), DIAG_CAPACITY>,
    dropped: u32,
}

impl Diagnostics {
    /// Records `code` at `offset` (the format parsers' side).
    #[doc(hidden)]
    pub fn report(&mut self, code: Code, offset: u64) {
        // The same `&'static str` usually comes back (one literal per call
        // site): compare pointers before bytes, since some readers report a
        // code per packet (AVI's empty chunks).
        let same = |d: &Diagnostic| core::ptr::eq(d.code, code) || d.code == code;
        if let Some((_, n)) = self.items.iter_mut().find(|(d, _)| same(d)) {
            *n = n.saturating_add(1);
            return;
        }
        if self.items.push((Diagnostic { code, offset }, 1)).is_err() {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// The findings with how many times each was reported; the offset is the
    /// first occurrence's.
    pub fn iter(&self) -> impl Iterator<Item = (Diagnostic, u32)> + '_ {
        self.items.iter().copied()
    }

    /// Whether `code` was reported.
    pub fn contains(&self, code: Code) -> bool {
        self.items.iter().any(|(d, _)| d.code == code)
    }

    /// Findings not stored because the sink was full.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }
}

/// The findings with their counts and the dropped count (written by hand
/// so that the storage type stays out of the public API).
#[cfg(feature = "defmt")]
impl defmt::Format for Diagnostics {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(
            f,
            "Diagnostics {{ items: {}, dropped: {=u32} }}",
            self.items.as_slice(),
            self.dropped
        )
    }
}
