//! Elementary streams: one demuxer per format, each behind its own Cargo
//! feature and [`FormatKind`](crate::FormatKind), over the frame scanners in
//! [`crate::codec`].
//!
//! | module | format | feature |
//! |---|---|---|
//! | [`mp3`] | MPEG audio layers I–III with ID3v2/ID3v1/APE/Lyrics3 | `mp3` |
//! | [`adts`] | AAC in ADTS frames | `aac` |
//! | [`ac3`] | AC-3 and E-AC-3 | `ac3` |
//! | [`annexb`] | H.264 and H.265 Annex B byte streams | `h264`, `hevc` |
//! | [`amr`] | AMR-NB / AMR-WB storage format | `amr` |
//! | [`ivf`] | IVF (VP8, VP9, AV1) | `ivf` |
//! | [`obu`] | AV1 low-overhead OBU stream | `obu` |
//! | [`mpegvideo`] | MPEG-1/2 video | `mpegvideo` |
//! | [`dv`] | DV (DIF) with PCM audio | `dv` |
//! | [`m4v`] | MPEG-4 Part 2 video | `m4v` |
//!
//! Packet boundaries follow ffmpeg's raw demuxers and their parsers, so that
//! packets match ffprobe's: see `docs/formats/<format>.md` for each.
//!
//! The ID3v2/ID3v1/APEv2 module `id3` lives here and is also the ID3
//! reader of FLAC, AIFF, TTA, DSF, WavPack, Monkey's Audio and Musepack (compiled with any of `mp3`, `aac`, `ac3`,
//! `flac`, `aiff`, `tta`, `dsf`, `wavpack`, `ape`, `musepack`; with `ogg` too, for the picture types FLAC's PICTURE
//! shares).
//!
//! The APEv2 item reader `ape` gives the items of the tag that `id3`'s
//! `find_trailer` finds (the format tags of WavPack, Monkey's Audio and
//! Musepack; features `wavpack`, `ape`, `musepack`).
//!
//! Shared here: a bounded forward scanner over a [`Source`] and the probe
//! itself ([`probe`]); detection keeps the probe off files that start with
//! another container's signature (`crate::signature::is_foreign`).

#[cfg(feature = "ac3")]
pub mod ac3;
#[cfg(feature = "aac")]
pub mod adts;
#[cfg(feature = "amr")]
pub mod amr;
#[cfg(any(feature = "h264", feature = "hevc"))]
pub mod annexb;
#[cfg(any(feature = "wavpack", feature = "ape", feature = "musepack"))]
pub mod ape;
#[cfg(feature = "dv")]
pub mod dv;
#[cfg(any(
    feature = "mp3",
    feature = "aac",
    feature = "ac3",
    feature = "flac",
    feature = "aiff",
    feature = "ogg",
    feature = "tta",
    feature = "dsf",
    feature = "wavpack",
    feature = "ape",
    feature = "musepack"
))]
pub mod id3;
#[cfg(all(feature = "chapters", feature = "mp3"))]
pub(crate) mod id3_chap;
#[cfg(any(feature = "ivf", feature = "obu"))]
pub mod ivf;
#[cfg(feature = "m4v")]
pub mod m4v;
#[cfg(feature = "mp3")]
pub mod mp3;
#[cfg(feature = "mpegvideo")]
pub mod mpegvideo;
#[cfg(feature = "obu")]
pub mod obu;

use crate::error::Result;
use crate::kind::FormatKind;
use crate::limits::Limits;
use crate::source::Source;

/// One audio frame found by a demuxer's `advance`: where it is, its
/// timestamp and duration, and whether the input cuts it.
#[cfg_attr(not(any(feature = "mp3", feature = "aac", feature = "ac3")), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Frame {
    pub at: u64,
    pub len: u64,
    pub pts: i64,
    pub dur: u64,
    pub cut: bool,
}

#[cfg_attr(not(any(feature = "mp3", feature = "aac", feature = "ac3")), allow(dead_code))]
impl Frame {
    /// The packet of this frame over `data`, its bytes.
    pub(crate) fn packet(self, data: &[u8]) -> crate::types::Packet<'_> {
        let flags = crate::types::PacketFlags {
            truncated: self.cut,
            ..crate::types::PacketFlags::keyframe(true)
        };
        crate::types::Packet::contiguous(0, self.at, data)
            .with_times(Some(self.pts), Some(self.pts), Some(self.dur))
            .with_flags(flags)
    }
}

#[cfg_attr(not(any(feature = "mp3", feature = "aac", feature = "ac3")), allow(dead_code))]
/// Seeks an audio demuxer exactly: from its start state, frames are
/// walked with `advance` until the one holding `ts`; the state before it is
/// kept. Bounded by `MAX_SEEK_STEPS` frames.
pub(crate) fn seek_audio<D: Clone, S: Source>(
    d: &mut D,
    src: &mut S,
    ctx: &mut crate::format::traits::Context,
    ts: i64,
    mut advance: impl FnMut(&mut D, &mut S, &mut crate::format::traits::Context) -> Result<Option<Frame>>,
) -> Result<()> {
    for _ in 0..MAX_SEEK_STEPS {
        let saved = d.clone();
        match advance(d, src, ctx) {
            Ok(Some(f)) if f.pts.saturating_add(f.dur as i64) <= ts => {}
            _ => {
                *d = saved;
                break;
            }
        }
    }
    Ok(())
}

#[cfg_attr(
    not(any(feature = "mp3", feature = "aac", feature = "ac3", feature = "ivf", feature = "obu")),
    allow(dead_code)
)]
/// Most frames a seek walks (audio demuxers through [`seek_audio`], IVF
/// over its frame headers): bounds the walk (over 46 hours of 60-fps video,
/// 3 days of MP3 frames).
pub(crate) const MAX_SEEK_STEPS: u32 = 10_000_000;

/// Where a frame header that the end of the input (`end`) cuts could begin
/// at or after `from`: the first place in the last `hdr - 1` bytes (at most
/// 15) whose bytes pass `could_start` (the format's sync word, as far as
/// they go). A longer input could hold a frame there.
#[cfg_attr(not(any(feature = "mp3", feature = "ac3")), allow(dead_code))]
pub(crate) fn cut_header_at<S: Source>(
    src: &mut S,
    from: u64,
    end: u64,
    hdr: usize,
    could_start: impl Fn(&[u8]) -> bool,
) -> Result<Option<u64>> {
    let keep = hdr.clamp(1, 16) as u64 - 1;
    let start = from.max(end.saturating_sub(keep));
    let mut b = [0u8; 15];
    let want = end.saturating_sub(start).min(keep) as usize;
    let n = src.read_at(start, b.get_mut(..want).unwrap_or(&mut []))?;
    let tail = b.get(..n).unwrap_or(&[]);
    Ok((0..n)
        .find(|&k| could_start(tail.get(k..).unwrap_or(&[])))
        .map(|k| start + k as u64))
}

/// How many bytes at the end of `at..end` are a cut start code prefix
/// (`00`, `00 00` or `00 00 01`): 0 to 3.
#[cfg_attr(not(any(feature = "mpegvideo", feature = "m4v")), allow(dead_code))]
pub(crate) fn cut_start_code<S: Source>(src: &mut S, at: u64, end: u64) -> Result<u64> {
    let n = (end - at).min(3);
    let mut b = [0u8; 3];
    let tail = b.get_mut(..n as usize).unwrap_or(&mut []);
    src.read_exact_at(end - n, tail)?;
    for k in (1..=n as usize).rev() {
        if tail.get(n as usize - k..) == [0u8, 0, 1].get(..k) {
            return Ok(k as u64);
        }
    }
    Ok(0)
}

/// Bytes a scan reads at a time.
#[cfg_attr(
    not(any(
        feature = "mp3",
        feature = "aac",
        feature = "ac3",
        feature = "h264",
        feature = "hevc",
        feature = "mpegvideo"
    )),
    allow(dead_code)
)]
pub(crate) const SCAN_CHUNK: usize = 512;
/// Largest pattern a scan predicate may look at.
#[cfg_attr(
    not(any(
        feature = "mp3",
        feature = "aac",
        feature = "ac3",
        feature = "h264",
        feature = "hevc",
        feature = "mpegvideo"
    )),
    allow(dead_code)
)]
pub(crate) const SCAN_NEED_MAX: usize = 16;

/// Finds the first offset `p` in `from..limit` (and with `p + need` within
/// the input) where `pred` accepts the bytes from `p` on (at least `need` of
/// them). Reads the input in [`SCAN_CHUNK`] pieces; bounded by `limit`.
#[cfg_attr(
    not(any(
        feature = "mp3",
        feature = "aac",
        feature = "ac3",
        feature = "h264",
        feature = "hevc",
        feature = "mpegvideo"
    )),
    allow(dead_code)
)]
pub(crate) fn scan<S: Source>(
    src: &mut S,
    from: u64,
    limit: u64,
    need: usize,
    mut pred: impl FnMut(&[u8]) -> bool,
) -> Result<Option<u64>> {
    let need = need.clamp(1, SCAN_NEED_MAX);
    let mut buf = [0u8; SCAN_CHUNK + SCAN_NEED_MAX];
    let limit = limit.min(src.len().saturating_sub(need as u64 - 1));
    let mut at = from;
    while at < limit {
        let want = ((limit - at) as usize).min(SCAN_CHUNK) + need - 1;
        let n = src.read_at(at, buf.get_mut(..want).unwrap_or(&mut []))?;
        if n < need {
            return Ok(None);
        }
        let positions = n + 1 - need;
        for i in 0..positions {
            if pred(buf.get(i..n).unwrap_or(&[])) {
                return Ok(Some(at + i as u64));
            }
        }
        at += positions as u64;
    }
    Ok(None)
}

/// Probes the input for an elementary stream when the magic-byte detection
/// found nothing and the head is no container's: skips leading ID3v2 tags, then asks each compiled-in
/// format for a run of valid frames. Bounded by `limits.probe_bytes`.
pub fn probe<S: Source>(src: &mut S, limits: &Limits) -> Result<Option<FormatKind>> {
    // Both unused when no elementary-stream format is compiled in.
    let _ = (&src, limits);
    #[cfg(feature = "dv")]
    if dv::probe(src)? {
        return Ok(Some(FormatKind::Dv));
    }
    #[cfg(feature = "obu")]
    if obu::probe(src, limits)? {
        return Ok(Some(FormatKind::Obu));
    }
    #[cfg(feature = "obu")]
    if obu::probe_annexb(src, limits)? {
        return Ok(Some(FormatKind::Av1AnnexB));
    }
    #[cfg(feature = "mpegvideo")]
    if mpegvideo::probe(src, limits)? {
        return Ok(Some(FormatKind::MpegVideo));
    }
    #[cfg(feature = "h264")]
    if annexb::probe(src, limits, annexb::AnnexBCodec::H264)? {
        return Ok(Some(FormatKind::H264));
    }
    #[cfg(feature = "hevc")]
    if annexb::probe(src, limits, annexb::AnnexBCodec::Hevc)? {
        return Ok(Some(FormatKind::Hevc));
    }
    #[cfg(feature = "m4v")]
    if m4v::probe(src, limits)? {
        return Ok(Some(FormatKind::M4v));
    }
    // ADTS and AC-3 frames right at the start are answered before the MP3
    // probe scans its whole window for MPEG audio frame chains.
    #[cfg(feature = "aac")]
    if adts::probe_at_start(src)? {
        return Ok(Some(FormatKind::Aac));
    }
    #[cfg(feature = "ac3")]
    if let Some(e) = ac3::probe_at_start(src)? {
        return Ok(Some(if e { FormatKind::Eac3 } else { FormatKind::Ac3 }));
    }
    #[cfg(feature = "mp3")]
    if mp3::probe(src, limits)? {
        return Ok(Some(FormatKind::Mp3));
    }
    #[cfg(feature = "aac")]
    if adts::probe(src, limits)? {
        return Ok(Some(FormatKind::Aac));
    }
    #[cfg(feature = "ac3")]
    if let Some(e) = ac3::probe(src, limits)? {
        return Ok(Some(if e { FormatKind::Eac3 } else { FormatKind::Ac3 }));
    }
    Ok(None)
}
