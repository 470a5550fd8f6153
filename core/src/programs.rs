//! Programs of an MPEG transport stream (cargo feature `programs`): the
//! PAT's programs (ISO/IEC 13818-1 §2.4.4.3) with their PMT (§2.4.4.8) and
//! DVB service names (SDT, ETSI EN 300 468 §5.2.3), and the SDT's services
//! that the PAT does not list, walked with `Demuxer::next_program`. Other
//! formats have none.
//!
//! The walk reads the tables again from the start of the stream, within
//! `Limits::probe_bytes`, for each program: nothing is kept from the open,
//! so the demuxer itself carries no program state.

use crate::limits::MAX_TRACKS;

/// Longest service or provider name kept (a DVB name's length is one byte).
pub const MAX_NAME: usize = 255;

/// One program: one the PAT lists (with its PMT), or a service that only
/// the SDT lists (as ffmpeg makes one, with no PMT and no tracks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Program<'a> {
    /// program_number, as the PAT lists it (the SDT's service_id for a
    /// service the PAT does not list).
    pub number: u16,
    /// PID of its PMT; 0 when the PAT does not list it.
    pub pmt_pid: u16,
    /// PCR_PID of its PMT; `None` when the PMT was not found.
    pub pcr_pid: Option<u16>,
    /// Indices of its tracks (its PMT's elementary PIDs that are tracks),
    /// in PMT order.
    pub tracks: &'a [usize],
    /// The SDT service descriptor's service_name, when it is UTF-8 (or a
    /// byte 0x15, "UTF-8", then UTF-8) with no other character-table byte.
    pub service_name: Option<&'a str>,
    /// The same descriptor's service_provider_name, on the same terms.
    pub service_provider: Option<&'a str>,
    /// Whether the PAT lists it; `false` for a service of the SDT only.
    pub in_pat: bool,
}

/// Position of the program walk, and the storage a [`Program`] borrows;
/// opaque to callers.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct ProgramCursor {
    pub(crate) index: usize,
    pub(crate) tracks: [usize; MAX_TRACKS],
    pub(crate) names: [u8; 2 * MAX_NAME],
}

impl Default for ProgramCursor {
    fn default() -> Self {
        ProgramCursor {
            index: 0,
            tracks: [0; MAX_TRACKS],
            names: [0; 2 * MAX_NAME],
        }
    }
}

/// A DVB string (EN 300 468 Annex A) as text: bytes from 0x20 are taken as
/// they are (ffmpeg copies them so), a leading 0x15 selects UTF-8; any
/// other character-table selector gives `None`, as does invalid UTF-8.
pub(crate) fn dvb_text(b: &[u8]) -> Option<&str> {
    let b = match b.first() {
        Some(0x15) => b.get(1..)?,
        Some(&c) if c < 0x20 => return None,
        _ => b,
    };
    core::str::from_utf8(b).ok()
}

#[cfg(test)]
mod tests {
    use super::dvb_text;

    #[test]
    fn dvb_strings() {
        assert_eq!(dvb_text(b"FFmpeg"), Some("FFmpeg"));
        assert_eq!(dvb_text(b"\x15caf\xC3\xA9"), Some("café"));
        assert_eq!(dvb_text(b"\x05x"), None);
        assert_eq!(dvb_text(b"\xFF"), None);
        assert_eq!(dvb_text(b""), Some(""));
    }
}
