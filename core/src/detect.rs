//! Format detection from the first bytes of the input.
//!
//! [`detect`] matches the signature table (`signature.rs`) in order,
//! then the formats found by a pattern rather than a magic number (MPEG-TS,
//! MPEG-PS, a bare FLAC frame), each asked through its own format module.
//! The extension hint breaks ties for formats without a reliable signature.
//! It never claims a file it cannot account for: when nothing matches, it
//! returns `None`. [`detect_source`] then runs the bounded elementary-stream
//! probes, unless the head matches a container's signature.

use crate::error::Result;
use crate::kind::FormatKind;
use crate::limits::Limits;
use crate::signature::{is_foreign, SIGNATURES};
use crate::source::Source;

/// How many leading bytes [`detect`] wants (it works with fewer).
pub const DETECT_BYTES: usize = 1024;

/// Whether the extension hint names native FLAC.
fn is_flac_ext(ext: Option<&str>) -> bool {
    ext.is_some_and(|e| e.eq_ignore_ascii_case("flac") || e.eq_ignore_ascii_case("fla"))
}

/// Native FLAC without `fLaC` (checked after every other format): a frame
/// header with a valid CRC-8 (RFC 9639 §9.1) unless the extension names
/// another format, or anything with a FLAC extension (the demuxer then looks
/// for the first frame, as ffmpeg does).
fn is_raw_flac(head: &[u8], ext: Option<&str>) -> bool {
    if is_flac_ext(ext) {
        return true;
    }
    #[cfg(feature = "flac")]
    if ext.is_none() && crate::format::xiph::flac::FrameHeader::parse(head).is_some() {
        return true;
    }
    let _ = head;
    false
}

/// Detects the format of a whole input: [`detect`] on its first bytes, then,
/// when that finds nothing and the head is no container's, the bounded
/// elementary-stream probes (which skip ID3v2 tags and look for runs of
/// valid frames; see `format::es`).
///
/// Errors: a read error of the source.
pub fn detect_source<S: Source>(src: &mut S, ext: Option<&str>, limits: &Limits) -> Result<Option<FormatKind>> {
    let mut head = [0u8; DETECT_BYTES];
    let n = src.read_at(0, &mut head)?;
    let head = head.get(..n).unwrap_or(&[]);
    if let Some(k) = detect(head, ext) {
        return Ok(Some(k));
    }
    if is_foreign(head) {
        return Ok(None);
    }
    crate::format::es::probe(src, limits)
}

/// Detects the format from `head`, the first bytes of the input (ideally
/// [`DETECT_BYTES`] of them), with an optional file-name extension hint.
pub fn detect(head: &[u8], ext: Option<&str>) -> Option<FormatKind> {
    if let Some(s) = SIGNATURES.iter().find(|s| s.enabled && s.matches(head)) {
        return Some(s.kind);
    }
    // An ID3v2 tag in front of native FLAC, named by the extension.
    if cfg!(feature = "flac") && is_flac_ext(ext) && head.starts_with(b"ID3") {
        return Some(FormatKind::Flac);
    }
    // Formats found by a pattern rather than a magic number come last.
    #[cfg(feature = "ts")]
    if crate::format::mpeg::ts::looks_like_ts(head) {
        return Some(FormatKind::MpegTs);
    }
    #[cfg(feature = "ps")]
    if crate::format::mpeg::ps::looks_like_ps(head) {
        return Some(FormatKind::MpegPs);
    }
    if cfg!(feature = "flac") && is_raw_flac(head, ext) {
        return Some(FormatKind::Flac);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `feature` compiles in, else nothing: a format left out of the
    /// build is not claimed.
    fn when(feature: bool, kind: FormatKind) -> Option<FormatKind> {
        feature.then_some(kind)
    }

    /// Each magic number is detected when its format is compiled in and
    /// claims nothing when it is not (`--no-default-features` builds none).
    #[test]
    fn detects_by_magic() {
        let mut mp4 = [0u8; 16];
        mp4[..8].copy_from_slice(b"\0\0\0\x18ftyp");
        assert_eq!(detect(&mp4, None), when(cfg!(feature = "mp4"), FormatKind::Mp4));
        let wav = *b"RIFF\x24\0\0\0WAVEfmt ";
        assert_eq!(detect(&wav, None), when(cfg!(feature = "riff"), FormatKind::Wav));
        let rf64 = b"RF64\xff\xff\xff\xffWAVEds64";
        assert_eq!(detect(rf64, None), when(cfg!(feature = "riff"), FormatKind::Rf64));
        assert_eq!(
            detect(b"OggS\0\x02", None),
            when(cfg!(feature = "ogg"), FormatKind::Ogg)
        );
        let flac = when(cfg!(feature = "flac"), FormatKind::Flac);
        assert_eq!(detect(b"fLaC\0\0\0\x22", None), flac);
        assert_eq!(detect(b"ID3\x04\0\0", Some("flac")), flac);
        assert_eq!(detect(b"junk junk", Some("FLAC")), flac);
        // Whatever is compiled in: no claim without a signature.
        assert_eq!(detect(b"hello world, not media", None), None);
        assert_eq!(detect(&[], None), None);
    }

    #[test]
    fn detects_asf_and_flv() {
        let asf = detect(&crate::signature::ASF_HEADER_GUID, None);
        assert_eq!(asf, when(cfg!(feature = "asf"), FormatKind::Asf));
        let flv = detect(b"FLV\x01\x05\0\0\0\x09\0\0\0\0", None);
        assert_eq!(flv, when(cfg!(feature = "flv"), FormatKind::Flv));
        // A header whose data offset is under 9 is no FLV.
        assert_eq!(detect(b"FLV\x01\x05\0\0\0\x03", None), None);
    }
}
