//! Fragmented MP4 for the command line: the muxer setup `remux` uses for
//! `--fragmented` / `--format fmp4` (`--fragment-ms`), kept apart from
//! `remux.rs` so that its format table stays a table.

use mediaslice::{Fragmenting, MuxFormat};

/// Scratch given to the fragmented MP4 muxer: 64 MiB, allocated zeroed
/// (so the pages the muxer never touches are never resident). On a file it
/// holds the sample records and the `moof` being built (a few hundred KiB
/// at most), and the first fragment when a codec configuration is still to
/// come from the packets; on standard output it holds one fragment's
/// payload, so a fragment over about 60 MiB (270 Mbit/s for 2 s) is
/// refused with `CapacityExceeded`.
pub const FRAGMENT_SCRATCH: usize = 64 << 20;

/// The muxer format and scratch for `format`: fragmented MP4 with the
/// fragment duration `fragment_ms` (2000 ms when not given), with `styp`
/// and `sidx` before each fragment when `sidx` (not in hybrid MP4), and
/// [`FRAGMENT_SCRATCH`] bytes; hybrid MP4 the same and `index` bytes more
/// for its progressive index (about 4 a sample; zeroed pages never
/// touched cost no memory); other formats as they are, with none.
pub fn mux_setup(format: MuxFormat, fragment_ms: Option<u32>, sidx: bool, index: usize) -> (MuxFormat, Vec<u8>) {
    let cut = |f: Fragmenting| Fragmenting {
        duration_ms: fragment_ms.unwrap_or(f.duration_ms),
        styp: f.styp || sidx,
        sidx: f.sidx || sidx,
        ..f
    };
    match format {
        MuxFormat::Fmp4(f) => (MuxFormat::Fmp4(cut(f)), vec![0u8; FRAGMENT_SCRATCH]),
        MuxFormat::HybridMp4(f) => (
            MuxFormat::HybridMp4(cut(f)),
            vec![0u8; FRAGMENT_SCRATCH.saturating_add(index)],
        ),
        other => (other, Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fragment_duration_is_the_option_or_the_default() {
        let (f, s) = mux_setup(MuxFormat::Fmp4(Fragmenting::DEFAULT), Some(500), false, 7);
        assert_eq!(f, MuxFormat::Fmp4(Fragmenting::with_duration_ms(500)));
        assert_eq!(s.len(), FRAGMENT_SCRATCH);
        let (f, _) = mux_setup(MuxFormat::Fmp4(Fragmenting::DEFAULT), None, false, 7);
        assert_eq!(f, MuxFormat::Fmp4(Fragmenting::DEFAULT));
        let (f, s) = mux_setup(MuxFormat::HybridMp4(Fragmenting::DEFAULT), Some(500), false, 7);
        assert_eq!(f, MuxFormat::HybridMp4(Fragmenting::with_duration_ms(500)));
        assert_eq!(s.len(), FRAGMENT_SCRATCH + 7);
        let (f, s) = mux_setup(MuxFormat::Matroska, Some(500), false, 7);
        assert_eq!((f, s.len()), (MuxFormat::Matroska, 0));
    }
}
