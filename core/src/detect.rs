//! Format detection from the first bytes of the input.
//!
//! [`detect`] looks at magic bytes only; the extension hint breaks ties for
//! formats without a reliable signature. It never claims a file it cannot
//! account for: when nothing matches, it returns `None`.

/// A container or stream format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum FormatKind {
    /// ISO base media file format: MP4, MOV, M4A, 3GP, fragmented MP4.
    Mp4,
    /// RIFF WAVE.
    Wav,
    /// RF64 / BW64 (WAVE with a `ds64` chunk for sizes over 4 GiB).
    Rf64,
    /// Sony Wave64.
    Wave64,
    /// ASF: WMV, WMA.
    Asf,
    /// Flash Video.
    Flv,
    /// Matroska, WebM and MKA (EBML DocType `matroska` or `webm`).
    Matroska,
    /// MPEG transport stream (188, 192 or 204-byte packets).
    MpegTs,
    /// MPEG program stream (PS, VOB, MPEG-1 system stream).
    MpegPs,
    /// AVI (RIFF `AVI `), including OpenDML.
    Avi,
    /// AIFF and AIFF-C.
    Aiff,
    /// Apple Core Audio Format.
    Caf,
    /// Ogg (RFC 3533): Vorbis, Opus, Theora, FLAC, Speex.
    Ogg,
    /// Native FLAC (RFC 9639).
    Flac,
    /// MPEG audio elementary stream (MP1, MP2, MP3) with ID3 tags.
    Mp3,
    /// AAC in ADTS frames.
    Aac,
    /// AC-3 (ATSC A/52) elementary stream.
    Ac3,
    /// E-AC-3 (ATSC A/52 Annex E) elementary stream.
    Eac3,
    /// AMR-NB or AMR-WB storage format (RFC 4867 §5).
    Amr,
    /// H.264 Annex B byte stream.
    H264,
    /// H.265 Annex B byte stream.
    Hevc,
    /// IVF (VP8, VP9, AV1 frames with a 32-byte header).
    Ivf,
    /// AV1 low-overhead bitstream format (OBUs with size fields).
    Obu,
    /// AV1 Annex B length-delimited bitstream (AV1 spec Annex B).
    Av1AnnexB,
    /// DV (IEC 61834 / SMPTE 314M DIF stream).
    Dv,
    /// MPEG-1/2 video elementary stream.
    MpegVideo,
    /// MPEG-4 Part 2 video elementary stream.
    M4v,
}

impl FormatKind {
    /// ffprobe's `format_name` for this format.
    pub const fn ffmpeg_name(self) -> &'static str {
        match self {
            FormatKind::Mp4 => "mov,mp4,m4a,3gp,3g2,mj2",
            FormatKind::Wav | FormatKind::Rf64 => "wav",
            FormatKind::Wave64 => "w64",
            FormatKind::Asf => "asf",
            FormatKind::Flv => "flv",
            FormatKind::Matroska => "matroska,webm",
            FormatKind::MpegTs => "mpegts",
            FormatKind::MpegPs => "mpeg",
            FormatKind::Avi => "avi",
            FormatKind::Aiff => "aiff",
            FormatKind::Caf => "caf",
            FormatKind::Ogg => "ogg",
            FormatKind::Flac => "flac",
            FormatKind::Mp3 => "mp3",
            FormatKind::Aac => "aac",
            FormatKind::Ac3 => "ac3",
            FormatKind::Eac3 => "eac3",
            FormatKind::Amr => "amr",
            FormatKind::H264 => "h264",
            FormatKind::Hevc => "hevc",
            FormatKind::Ivf => "ivf",
            FormatKind::Obu => "obu",
            FormatKind::Av1AnnexB => "av1",
            FormatKind::Dv => "dv",
            FormatKind::MpegVideo => "mpegvideo",
            FormatKind::M4v => "m4v",
        }
    }

    /// A short name for people.
    pub const fn name(self) -> &'static str {
        match self {
            FormatKind::Mp4 => "ISO BMFF (MP4/MOV)",
            FormatKind::Wav => "WAV",
            FormatKind::Rf64 => "RF64",
            FormatKind::Wave64 => "Wave64",
            FormatKind::Asf => "ASF (WMV/WMA)",
            FormatKind::Flv => "FLV",
            FormatKind::Matroska => "Matroska / WebM",
            FormatKind::MpegTs => "MPEG-TS",
            FormatKind::MpegPs => "MPEG-PS",
            FormatKind::Avi => "AVI",
            FormatKind::Aiff => "AIFF",
            FormatKind::Caf => "CAF",
            FormatKind::Ogg => "Ogg",
            FormatKind::Flac => "FLAC",
            FormatKind::Mp3 => "MPEG audio",
            FormatKind::Aac => "AAC (ADTS)",
            FormatKind::Ac3 => "AC-3",
            FormatKind::Eac3 => "E-AC-3",
            FormatKind::Amr => "AMR",
            FormatKind::H264 => "H.264 (Annex B)",
            FormatKind::Hevc => "H.265 (Annex B)",
            FormatKind::Ivf => "IVF",
            FormatKind::Obu => "AV1 (OBU)",
            FormatKind::Av1AnnexB => "AV1 (Annex B)",
            FormatKind::Dv => "DV",
            FormatKind::MpegVideo => "MPEG-1/2 video",
            FormatKind::M4v => "MPEG-4 Part 2 video",
        }
    }
}

/// How many leading bytes [`detect`] wants (it works with fewer).
pub const DETECT_BYTES: usize = 1024;

/// The Wave64 `riff` GUID (the first 16 bytes of a Wave64 file).
pub(crate) const W64_RIFF_GUID: [u8; 16] = [
    0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00,
];

/// The ASF Header Object GUID (ASF Specification rev 1.20 §3.1).
const ASF_HEADER_GUID: [u8; 16] = [
    0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C,
];

fn is_mp4_box_type(t: &[u8]) -> bool {
    matches!(
        t,
        b"ftyp" | b"moov" | b"mdat" | b"free" | b"skip" | b"wide" | b"styp" | b"moof" | b"sidx" | b"pnot" | b"uuid"
    )
}

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
/// when that finds nothing, the bounded elementary-stream probes (which skip
/// ID3v2 tags and look for runs of valid frames; see `format::es`).
///
/// Errors: a read error of the source.
pub fn detect_source<S: crate::source::Source>(
    src: &mut S,
    ext: Option<&str>,
    limits: &crate::limits::Limits,
) -> crate::error::Result<Option<FormatKind>> {
    let mut head = [0u8; DETECT_BYTES];
    let n = src.read_at(0, &mut head)?;
    if let Some(k) = detect(head.get(..n).unwrap_or(&[]), ext) {
        return Ok(Some(k));
    }
    crate::format::es::probe(src, limits)
}

/// Detects the format from `head`, the first bytes of the input (ideally
/// [`DETECT_BYTES`] of them), with an optional file-name extension hint.
pub fn detect(head: &[u8], ext: Option<&str>) -> Option<FormatKind> {
    let _ = ext;
    let at = |r: core::ops::Range<usize>| head.get(r).unwrap_or(&[]);
    if cfg!(feature = "riff") {
        let tag = at(0..4);
        let form = at(8..12);
        if tag == b"RIFF" && form == b"WAVE" {
            return Some(FormatKind::Wav);
        }
        if (tag == b"RF64" || tag == b"BW64") && form == b"WAVE" {
            return Some(FormatKind::Rf64);
        }
        if at(0..16) == W64_RIFF_GUID && at(24..28) == b"wave" {
            return Some(FormatKind::Wave64);
        }
    }
    // RFC 8794 §11.2.1: every EBML document starts with the EBML Element ID.
    if cfg!(feature = "mkv") && at(0..4) == [0x1A, 0x45, 0xDF, 0xA3] {
        return Some(FormatKind::Matroska);
    }
    if cfg!(feature = "avi") && at(0..4) == b"RIFF" && matches!(at(8..12), b"AVI " | b"AVIX" | b"AVI\x19") {
        return Some(FormatKind::Avi);
    }
    if cfg!(feature = "asf") && at(0..16) == ASF_HEADER_GUID {
        return Some(FormatKind::Asf);
    }
    // FLV (Adobe FLV spec v10.1 Annex E.2): "FLV", version 1, header size >= 9.
    if cfg!(feature = "flv") && at(0..3) == b"FLV" && at(3..4) == [1] && at(5..8) == [0, 0, 0] && at(8..9) >= &[9][..] {
        return Some(FormatKind::Flv);
    }
    if cfg!(feature = "aiff") && at(0..4) == b"FORM" && matches!(at(8..12), b"AIFF" | b"AIFC") {
        return Some(FormatKind::Aiff);
    }
    if cfg!(feature = "caf") && at(0..4) == b"caff" && at(4..6) == [0, 1] {
        return Some(FormatKind::Caf);
    }
    if cfg!(feature = "ogg") && at(0..5) == b"OggS\0" {
        return Some(FormatKind::Ogg);
    }
    if cfg!(feature = "flac") && (head.starts_with(b"fLaC") || (is_flac_ext(ext) && head.starts_with(b"ID3"))) {
        return Some(FormatKind::Flac);
    }
    if cfg!(feature = "ivf") && at(0..4) == b"DKIF" && at(4..6) == [0, 0] {
        return Some(FormatKind::Ivf);
    }
    if cfg!(feature = "amr") && (head.starts_with(b"#!AMR\n") || head.starts_with(b"#!AMR-WB\n")) {
        return Some(FormatKind::Amr);
    }
    if cfg!(feature = "mp4") && is_mp4_box_type(at(4..8)) {
        let size = u32::from_be_bytes(at(0..4).try_into().unwrap_or([0; 4]));
        // A plausible first box: size 0 (to end), 1 (64-bit) or at least a header.
        if size == 0 || size == 1 || size >= 8 {
            return Some(FormatKind::Mp4);
        }
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

    #[test]
    fn detects_by_magic() {
        let mut mp4 = [0u8; 16];
        mp4[..8].copy_from_slice(b"\0\0\0\x18ftyp");
        if cfg!(feature = "mp4") {
            assert_eq!(detect(&mp4, None), Some(FormatKind::Mp4));
        }
        let wav = *b"RIFF\x24\0\0\0WAVEfmt ";
        assert_eq!(detect(&wav, None), Some(FormatKind::Wav));
        assert_eq!(detect(b"RF64\xff\xff\xff\xffWAVEds64", None), Some(FormatKind::Rf64));
        assert_eq!(detect(b"hello world, not media", None), None);
        assert_eq!(detect(&[], None), None);
        if cfg!(feature = "ogg") {
            assert_eq!(detect(b"OggS\0\x02", None), Some(FormatKind::Ogg));
        }
        if cfg!(feature = "flac") {
            assert_eq!(detect(b"fLaC\0\0\0\x22", None), Some(FormatKind::Flac));
            assert_eq!(detect(b"ID3\x04\0\0", Some("flac")), Some(FormatKind::Flac));
            assert_eq!(detect(b"junk junk", Some("FLAC")), Some(FormatKind::Flac));
        }
    }

    #[test]
    fn detects_asf_and_flv() {
        if cfg!(feature = "asf") {
            assert_eq!(detect(&ASF_HEADER_GUID, None), Some(FormatKind::Asf));
        }
        if cfg!(feature = "flv") {
            assert_eq!(detect(b"FLV\x01\x05\0\0\0\x09\0\0\0\0", None), Some(FormatKind::Flv));
            assert_eq!(detect(b"FLV\x01\x05\0\0\0\x03", None), None);
        }
    }
}
