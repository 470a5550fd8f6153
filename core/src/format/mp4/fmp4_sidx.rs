//! What the fragmented MP4 muxer may write before each fragment's `moof`
//! when [`Fragmenting::styp`] or [`Fragmenting::sidx`] asks: a segment
//! type box and a segment index, so that each fragment is a DASH media
//! segment that names itself and can be indexed.
//!
//! * `styp` (ISO/IEC 14496-12 §8.16.2): major brand `msdh` (a DASH media
//!   segment, ISO/IEC 23009-1 §6.3.4.2), compatible `msdh`, and `msix`
//!   (an indexed media segment, §6.3.4.3) when the `sidx` follows.
//! * `sidx` (§8.16.3), version 1, one reference of type 0 (media): the
//!   `moof` and `mdat` that follow it (`first_offset` 0), the reference
//!   track's earliest presentation time in the fragment (decode time plus
//!   composition offset, on the media timeline as `tfdt`), the sum of its
//!   samples' durations, and whether its first sample is a sync sample.
//!   The reference track is the one whose keyframes cut the fragments
//!   (the first video track, else the first track); a fragment with no
//!   sample of it gets no `sidx`. `SAP_type` is 1 for a track whose
//!   samples are all sync samples (audio), and 0 ("unknown") for video,
//!   whose keyframes may be closed (type 1) or open (type 2 or 3) GOPs
//!   the container does not tell apart.
//!
//! Both are of fixed size, so a sink that patches reserves their room
//! with the `moof`'s and writes them when the fragment closes.

use super::muxer_box::BoxWriter;
use crate::error::{Error, Result};
use crate::kind::Fragmenting;
use crate::sink::{Sink, SliceSink};

/// Bytes of the `sidx` written: version 1, one reference.
const SIDX_LEN: usize = 52;

/// Most bytes written before a `moof`.
pub(super) const HEAD_MAX: usize = 28 + SIDX_LEN;

/// The segment index of one fragment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sidx {
    /// `reference_ID`: the reference track's ID.
    pub track_id: u32,
    /// Its media time scale.
    pub timescale: u32,
    /// Earliest presentation time of its samples in the fragment.
    pub earliest: u64,
    /// Sum of their durations.
    pub duration: u64,
    /// The first of them is a sync sample.
    pub starts_with_sap: bool,
    /// Every sample of the track is a sync sample (audio): SAP type 1.
    pub all_sync: bool,
    /// Bytes of the `moof` and the `mdat` that follow.
    pub referenced: u64,
}

/// Bytes `head` writes for `opts` before each `moof`, at most (0 when
/// neither box is asked for).
pub(super) fn head_room(opts: &Fragmenting) -> u64 {
    let styp = if opts.styp { styp_len(opts.sidx) } else { 0 };
    let sidx = if opts.sidx { SIDX_LEN } else { 0 };
    (styp + sidx) as u64
}

fn styp_len(indexed: bool) -> usize {
    20 + 4 * usize::from(indexed)
}

/// The boxes to write before a fragment's `moof`, in `out`; their length.
/// `sidx` is `None` when the fragment has no sample of the reference
/// track or `opts` asks for none.
pub(super) fn head(opts: &Fragmenting, sidx: Option<Sidx>, out: &mut [u8; HEAD_MAX]) -> Result<usize> {
    let sidx = sidx.filter(|_| opts.sidx);
    let mut sink = SliceSink::new(out);
    let mut w = BoxWriter::new(&mut sink);
    if opts.styp {
        w.open(b"styp")?;
        w.put(b"msdh")?;
        w.u32(0)?;
        w.put(b"msdh")?;
        if sidx.is_some() {
            w.put(b"msix")?;
        }
        w.close()?;
    }
    if let Some(s) = sidx {
        let referenced = u32::try_from(s.referenced).ok().filter(|n| n >> 31 == 0).ok_or(Error::unsupported(
            0,
            &"fmp4 muxer: a fragment of 2 GiB or more cannot be indexed (sidx referenced_size, ISO/IEC 14496-12 8.16.3)",
        ))?;
        let duration = u32::try_from(s.duration).map_err(|_| {
            Error::unsupported(
                0,
                &"fmp4 muxer: a fragment lasting 2^32 ticks or more cannot be indexed (sidx subsegment_duration, ISO/IEC 14496-12 8.16.3)",
            )
        })?;
        w.open_full(b"sidx", 1, 0)?;
        w.u32(s.track_id)?;
        w.u32(s.timescale)?;
        w.u64(s.earliest)?;
        // first_offset: the moof follows the sidx directly.
        w.u64(0)?;
        // reserved, reference_count 1
        w.u32(1)?;
        // reference_type 0 (media), referenced_size
        w.u32(referenced)?;
        w.u32(duration)?;
        let sap_type = u32::from(s.starts_with_sap && s.all_sync);
        w.u32(u32::from(s.starts_with_sap) << 31 | sap_type << 28)?;
        w.close()?;
    }
    w.flush()?;
    Ok(sink.position() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(styp: bool, sidx: bool) -> Fragmenting {
        Fragmenting {
            styp,
            sidx,
            ..Fragmenting::DEFAULT
        }
    }

    const S: Sidx = Sidx {
        track_id: 1,
        timescale: 90_000,
        earliest: 0x1_0000_0002,
        duration: 180_000,
        starts_with_sap: true,
        all_sync: false,
        referenced: 1000,
    };

    #[test]
    fn lengths_match_the_room_reserved() {
        for (styp, sidx) in [(false, false), (true, false), (false, true), (true, true)] {
            let o = opts(styp, sidx);
            let mut out = [0u8; HEAD_MAX];
            let n = head(&o, Some(S), &mut out).unwrap_or(usize::MAX);
            assert_eq!(n as u64, head_room(&o), "styp {styp} sidx {sidx}");
            // Without a reference sample, no sidx and an unindexed styp.
            let n = head(&o, None, &mut out).unwrap_or(usize::MAX);
            assert_eq!(n, if styp { 20 } else { 0 });
        }
    }

    #[test]
    fn sidx_fields_as_the_spec_lays_them_out() {
        let mut out = [0u8; HEAD_MAX];
        let n = head(&opts(true, true), Some(S), &mut out).unwrap_or(0);
        assert_eq!(n, 24 + 52);
        assert_eq!(out.get(..24), Some(&b"\0\0\0\x18stypmsdh\0\0\0\0msdhmsix"[..]));
        let sidx = out.get(24..76).unwrap_or(&[]);
        assert_eq!(sidx.get(4..8), Some(&b"sidx"[..]));
        assert_eq!(sidx.get(8..12), Some(&[1, 0, 0, 0][..]));
        assert_eq!(sidx.get(16..20), Some(&90_000u32.to_be_bytes()[..]));
        assert_eq!(sidx.get(20..28), Some(&0x1_0000_0002u64.to_be_bytes()[..]));
        assert_eq!(sidx.get(36..40), Some(&[0, 0, 0, 1][..]));
        assert_eq!(sidx.get(40..44), Some(&1000u32.to_be_bytes()[..]));
        assert_eq!(sidx.get(44..48), Some(&180_000u32.to_be_bytes()[..]));
        // starts_with_SAP, SAP_type 0 for video
        assert_eq!(sidx.get(48..52), Some(&[0x80, 0, 0, 0][..]));
        let audio = Sidx { all_sync: true, ..S };
        head(&opts(false, true), Some(audio), &mut out).unwrap_or(0);
        assert_eq!(out.get(48..52), Some(&[0x90, 0, 0, 0][..]));
    }

    #[test]
    fn what_a_sidx_cannot_say_is_an_error() {
        let mut out = [0u8; HEAD_MAX];
        let big = Sidx {
            referenced: 1 << 31,
            ..S
        };
        assert!(head(&opts(false, true), Some(big), &mut out).is_err());
        let long = Sidx { duration: 1 << 32, ..S };
        assert!(head(&opts(false, true), Some(long), &mut out).is_err());
        // Not asked for: nothing to say, no error.
        assert_eq!(head(&opts(false, false), Some(big), &mut out).ok(), Some(0));
    }
}
