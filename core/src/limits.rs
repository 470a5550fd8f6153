//! Limits that bound the work any input can cause. Every default is
//! documented here and in `docs/limits.md`.

/// Bounds on sizes, counts and scans, checked before any size read from the
/// input is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Limits {
    /// Largest packet accepted, in bytes. Default 64 MiB.
    pub max_packet: u32,
    /// Most bytes a probe (open) may examine while looking for headers and
    /// tables before giving up. Default 6 MiB (the MPEG-TS table search
    /// reports `ts.tables-not-found` when it runs out).
    pub probe_bytes: u64,
    /// Most top-level boxes or chunks walked while opening. Default 100 000.
    pub max_top_level: u32,
    /// Most bytes scanned to find the next sync point after damage. Default
    /// 1 MiB.
    pub resync_bytes: u64,
    /// Largest single tag value returned, in bytes. Larger values (cover art)
    /// are reported by range only. Default 1 MiB.
    pub max_tag_bytes: u32,
    /// Most fragments (`moof`) or equivalent units walked by a seek. Default
    /// 1 000 000.
    pub max_fragments: u32,
    /// Most payload bytes one pass over the packets may deliver, as a
    /// multiple of the input's length (plus `max_packet`): an index that
    /// names the same bytes again and again (an MP4 `stco` of one sample
    /// repeated, an AVI `idx1` pointing at one chunk) stops with
    /// `LimitExceeded` instead of delivering terabytes. A seek starts a new
    /// pass. Default 64.
    pub max_delivery_ratio: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_packet: 64 << 20,
            probe_bytes: 6 << 20,
            max_top_level: 100_000,
            resync_bytes: 1 << 20,
            max_tag_bytes: 1 << 20,
            max_fragments: 1_000_000,
            max_delivery_ratio: 64,
        }
    }
}

/// Most tracks a demuxer keeps: 16, or 4 with the `few-tracks` feature
/// (firmware that reads files of a known shape: it cuts the demuxer state by
/// about two thirds). Tracks beyond it are skipped with the diagnostic
/// `track-capacity`.
#[cfg(not(feature = "few-tracks"))]
pub const MAX_TRACKS: usize = 16;
/// Most tracks a demuxer keeps with the `few-tracks` feature: 4 (16
/// without it; docs.rs builds with every feature, so it shows this one).
#[cfg(feature = "few-tracks")]
pub const MAX_TRACKS: usize = 4;
