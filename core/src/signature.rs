//! The one table of magic numbers: what the first bytes of each container
//! look like. Detection ([`crate::detect`]) matches it in order; the
//! elementary-stream probe stays away from any input that it matches, even
//! for a format left out of the build; and a format's reader takes its own
//! constants from here (the Wave64 GUID, the ASF header GUID, the ISO BMFF
//! top-level box types), so each lives once.
//!
//! They live here rather than in their format's folder because detection
//! needs them when that format's feature is off (a build without `mp4` must
//! still keep an MP4 file away from the MP3 probe), and a format folder is
//! compiled only with its feature. This file imports only [`FormatKind`].

use crate::kind::FormatKind;

/// The Wave64 `riff` GUID: the first 16 bytes of a Wave64 file (Sony Wave64
/// specification, "riff" chunk).
pub(crate) const W64_RIFF_GUID: [u8; 16] = [
    0x72, 0x69, 0x66, 0x66, 0x2E, 0x91, 0xCF, 0x11, 0xA5, 0xD6, 0x28, 0xDB, 0x04, 0xC1, 0x00, 0x00,
];

/// The ASF Header Object GUID (ASF Specification rev 1.20 §3.1).
pub(crate) const ASF_HEADER_GUID: [u8; 16] = [
    0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11, 0xA6, 0xD9, 0x00, 0xAA, 0x00, 0x62, 0xCE, 0x6C,
];

/// The EBML Element ID that starts every EBML document (RFC 8794 §11.2.1).
pub(crate) const EBML_MAGIC: [u8; 4] = [0x1A, 0x45, 0xDF, 0xA3];

/// Box types that may start an ISO BMFF or QuickTime file (ISO/IEC
/// 14496-12 §4.2, §8.1, §8.16; QuickTime `wide` and `pnot`).
pub(crate) const MP4_TOP_LEVEL_BOXES: [[u8; 4]; 11] = [
    *b"ftyp", *b"moov", *b"mdat", *b"free", *b"skip", *b"wide", *b"styp", *b"moof", *b"sidx", *b"pnot", *b"uuid",
];

/// One signature: every `(offset, bytes)` part must match.
pub(crate) struct Signature {
    /// The format it names.
    pub kind: FormatKind,
    /// Whether that format is compiled in (detection skips it otherwise;
    /// the foreign check does not).
    pub enabled: bool,
    /// The parts, all of which must match; the first is the one the foreign
    /// check looks at.
    pub parts: &'static [(usize, &'static [u8])],
    /// A further check on the head, for the signatures whose fields must
    /// also be plausible (FLV's header size, an ISO BMFF box size).
    pub check: Option<fn(&[u8]) -> bool>,
}

impl Signature {
    const fn new(kind: FormatKind, enabled: bool, parts: &'static [(usize, &'static [u8])]) -> Self {
        Signature {
            kind,
            enabled,
            parts,
            check: None,
        }
    }

    /// Whether every part (and the check) matches `head`.
    pub(crate) fn matches(&self, head: &[u8]) -> bool {
        self.parts
            .iter()
            .all(|&(at, bytes)| head.get(at..at + bytes.len()) == Some(bytes))
            && self.check.is_none_or(|c| c(head))
    }

    /// Whether the first part matches `head`: enough to say the input is
    /// this container, though perhaps not a version this crate reads.
    fn first_part_matches(&self, head: &[u8]) -> bool {
        self.parts
            .first()
            .is_some_and(|&(at, bytes)| head.get(at..at + bytes.len()) == Some(bytes))
    }
}

/// The EA IFF 85 form types ffmpeg's `iff` demuxer takes (at offset 8,
/// after `FORM` and its size): ILBM, PBM, ACBM, DEEP, RGB8, RGBN and ANIM
/// pictures, 8SVX, 16SV and MAUD sounds.
#[cfg(feature = "iff")]
pub(crate) const IFF_FORM_TYPES: [[u8; 4]; 10] = [
    *b"ILBM", *b"PBM ", *b"ACBM", *b"DEEP", *b"RGB8", *b"RGBN", *b"ANIM", *b"8SVX", *b"16SV", *b"MAUD",
];

/// An IFF form type this crate's IFF reader takes.
#[cfg(feature = "iff")]
fn iff_form_type(head: &[u8]) -> bool {
    head.get(8..12).is_some_and(|t| IFF_FORM_TYPES.iter().any(|f| f == t))
}

/// FLV (Adobe FLV spec v10.1 Annex E.2): a header size of at least 9.
fn flv_header_size_ok(head: &[u8]) -> bool {
    head.get(8).is_some_and(|&b| b >= 9)
}

/// An ISO BMFF first box whose size is 0 (to the end), 1 (64-bit) or at
/// least a header (ISO/IEC 14496-12 §4.2).
fn mp4_first_box(head: &[u8]) -> bool {
    let typ = head.get(4..8).unwrap_or(&[]);
    let size = head
        .get(0..4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_be_bytes);
    MP4_TOP_LEVEL_BOXES.iter().any(|t| t == typ) && (size == 0 || size == 1 || size >= 8)
}

/// A WavPack block header as ffmpeg's probe wants it (WavPack 5 file
/// format, block header): a block size of 24 to 1 MiB and a stream version
/// of 0x402 to 0x410.
fn wavpack_block(head: &[u8]) -> bool {
    let size = head
        .get(4..8)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(0, u32::from_le_bytes);
    let version = head
        .get(8..10)
        .and_then(|b| <[u8; 2]>::try_from(b).ok())
        .map_or(0, u16::from_le_bytes);
    (24..=1 << 20).contains(&size) && (0x402..=0x410).contains(&version)
}

/// A Musepack SV7 stream version byte as ffmpeg's `mpc_probe` wants it
/// (SV7 header, byte 3): 0x07 or 0x17.
fn musepack7_version(head: &[u8]) -> bool {
    matches!(head.get(3), Some(0x07 | 0x17))
}

/// The formats found by magic bytes, in the order detection tries them.
/// Formats found by a pattern (MPEG-TS sync bytes, MPEG-PS pack headers, a
/// FLAC frame header) come after these, in [`crate::detect::detect`].
pub(crate) static SIGNATURES: [Signature; 28 + cfg!(feature = "iff") as usize] = [
    Signature::new(FormatKind::Wav, cfg!(feature = "riff"), &[(0, b"RIFF"), (8, b"WAVE")]),
    Signature::new(FormatKind::Rf64, cfg!(feature = "riff"), &[(0, b"RF64"), (8, b"WAVE")]),
    Signature::new(FormatKind::Rf64, cfg!(feature = "riff"), &[(0, b"BW64"), (8, b"WAVE")]),
    Signature::new(
        FormatKind::Wave64,
        cfg!(feature = "riff"),
        &[(0, &W64_RIFF_GUID), (24, b"wave")],
    ),
    Signature::new(FormatKind::Matroska, cfg!(feature = "mkv"), &[(0, &EBML_MAGIC)]),
    Signature::new(FormatKind::Avi, cfg!(feature = "avi"), &[(0, b"RIFF"), (8, b"AVI ")]),
    Signature::new(FormatKind::Avi, cfg!(feature = "avi"), &[(0, b"RIFF"), (8, b"AVIX")]),
    Signature::new(FormatKind::Avi, cfg!(feature = "avi"), &[(0, b"RIFF"), (8, b"AVI\x19")]),
    Signature::new(FormatKind::Asf, cfg!(feature = "asf"), &[(0, &ASF_HEADER_GUID)]),
    Signature {
        check: Some(flv_header_size_ok),
        ..Signature::new(
            FormatKind::Flv,
            cfg!(feature = "flv"),
            &[(0, b"FLV"), (3, &[1]), (5, &[0, 0, 0])],
        )
    },
    Signature::new(FormatKind::Aiff, cfg!(feature = "aiff"), &[(0, b"FORM"), (8, b"AIFF")]),
    Signature::new(FormatKind::Aiff, cfg!(feature = "aiff"), &[(0, b"FORM"), (8, b"AIFC")]),
    // EA IFF 85 pictures and sounds, after AIFF (whose `FORM` rows come
    // first). Only with the feature: the AIFF rows' `FORM` already keeps
    // the elementary-stream probes off these files, and the firmware image
    // leaves IFF out.
    #[cfg(feature = "iff")]
    Signature {
        check: Some(iff_form_type),
        ..Signature::new(FormatKind::Iff, true, &[(0, b"FORM")])
    },
    Signature::new(FormatKind::Caf, cfg!(feature = "caf"), &[(0, b"caff"), (4, &[0, 1])]),
    Signature::new(FormatKind::Au, cfg!(feature = "au"), &[(0, b".snd")]),
    Signature::new(FormatKind::Tta, cfg!(feature = "tta"), &[(0, b"TTA1")]),
    Signature::new(
        FormatKind::Dsf,
        cfg!(feature = "dsf"),
        &[(0, b"DSD "), (4, &[28, 0, 0, 0, 0, 0, 0, 0])],
    ),
    Signature::new(FormatKind::Dff, cfg!(feature = "dff"), &[(0, b"FRM8"), (12, b"DSD ")]),
    Signature {
        check: Some(wavpack_block),
        ..Signature::new(FormatKind::WavPack, cfg!(feature = "wavpack"), &[(0, b"wvpk")])
    },
    Signature::new(FormatKind::Ape, cfg!(feature = "ape"), &[(0, b"MAC ")]),
    Signature {
        check: Some(musepack7_version),
        ..Signature::new(FormatKind::Musepack7, cfg!(feature = "musepack"), &[(0, b"MP+")])
    },
    Signature::new(FormatKind::Musepack8, cfg!(feature = "musepack"), &[(0, b"MPCK")]),
    // The header partition pack key (ST 377-1 §7.1), byte 7 (version) free.
    Signature::new(
        FormatKind::Mxf,
        cfg!(feature = "mxf"),
        &[(0, b"\x06\x0e\x2b\x34\x02\x05\x01"), (8, b"\x0d\x01\x02\x01\x01\x02")],
    ),
    Signature::new(FormatKind::Ogg, cfg!(feature = "ogg"), &[(0, b"OggS\0")]),
    Signature::new(FormatKind::Flac, cfg!(feature = "flac"), &[(0, b"fLaC")]),
    Signature::new(FormatKind::Ivf, cfg!(feature = "ivf"), &[(0, b"DKIF"), (4, &[0, 0])]),
    Signature::new(FormatKind::Amr, cfg!(feature = "amr"), &[(0, b"#!AMR\n")]),
    Signature::new(FormatKind::Amr, cfg!(feature = "amr"), &[(0, b"#!AMR-WB\n")]),
    Signature {
        check: Some(mp4_first_box),
        ..Signature::new(FormatKind::Mp4, cfg!(feature = "mp4"), &[])
    },
];

/// Signatures of inputs this crate does not read as such but which carry
/// audio frames that would fool the elementary-stream probes: the MPEG-PS
/// pack header, MIDI, and common non-media files.
static FOREIGN_AT_0: [[u8; 4]; 5] = [*b"\x00\x00\x01\xBA", *b"MThd", *b"\x89PNG", *b"GIF8", *b"%PDF"];

/// Whether `head` starts like a container (any in [`SIGNATURES`], compiled
/// in or not, or an MPEG-TS, RIFF or IFF file) or a known non-media file:
/// the elementary-stream probes then stay away from it.
pub(crate) fn is_foreign(head: &[u8]) -> bool {
    let word = |at: usize| head.get(at..at + 4);
    SIGNATURES.iter().any(|s| s.first_part_matches(head))
        || word(4).is_some_and(|w| MP4_TOP_LEVEL_BOXES.iter().any(|t| t == w))
        || word(0).is_some_and(|w| FOREIGN_AT_0.iter().any(|t| t == w))
        || (head.first() == Some(&0x47) && head.get(188) == Some(&0x47))
        || (head.get(4) == Some(&0x47) && head.get(196) == Some(&0x47))
}
