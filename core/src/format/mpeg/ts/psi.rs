//! Program-specific information (ISO/IEC 13818-1 §2.4.4): PSI sections
//! joined across TS packets, their CRC (Annex A), the PAT (§2.4.4.3), the
//! PMT (§2.4.4.8) with its descriptors (§2.6), and the stream types that
//! name a codec (Table 2-34).

use super::demuxer::TsDemuxer;
use super::packet::{TsPacket, TS_PACKET};
use crate::bytes;
use crate::error::{Error, Result};
use crate::format::mpeg::pes::crc32_mpeg2;
use crate::format::traits::Context;
use crate::limits::MAX_TRACKS;
use crate::source::Source;
use crate::types::{Codec, Rational, Track, TrackKind};

/// Most PMT PIDs followed.
pub(super) const MAX_PROGRAMS: usize = 8;
/// Largest PSI section (§2.4.4.2: section_length ≤ 1021, plus 3 header bytes).
pub(super) const MAX_SECTION: usize = 1024;
/// table_id of a program_association_section (§2.4.4.4, Table 2-31).
pub(super) const TABLE_PAT: u8 = 0;
/// table_id of a TS_program_map_section (Table 2-31).
pub(super) const TABLE_PMT: u8 = 2;
/// Bytes of a PAT section before its program loop (§2.4.4.3).
const PAT_HEADER: usize = 8;
/// Bytes of a PMT section before its program_info descriptors (§2.4.4.8).
const PMT_HEADER: usize = 12;
/// Bytes of a PMT stream entry before its ES_info descriptors (§2.4.4.8).
const PMT_ENTRY: usize = 5;
/// Bytes of the CRC_32 that ends a section (§2.4.4.3, Annex A).
const CRC_LEN: usize = 4;

/// The tracks the PMTs describe, by elementary PID.
pub(super) type PidTracks = heapless::Vec<(u16, Track), MAX_TRACKS>;

/// Maps a PMT stream_type and its descriptors to a codec (ISO/IEC 13818-1
/// Table 2-34; ATSC A/52 Annex A; ETSI EN 300 468 Annex D; the HDMV types).
fn codec_for(stream_type: u8, reg: Option<[u8; 4]>, desc: Option<u8>, hdmv: bool) -> (Codec, TrackKind) {
    use Codec as C;
    use TrackKind::{Audio as A, Data as D, Subtitle as T, Video as V};
    if let Some(r) = reg {
        match &r {
            b"AC-3" => return (C::Ac3, A),
            b"EAC3" => return (C::Eac3, A),
            b"DTS1" | b"DTS2" | b"DTS3" => return (C::Dts, A),
            b"HEVC" => return (C::Hevc, V),
            b"VC-1" => return (C::Vc1, V),
            b"Opus" => return (C::Opus, A),
            b"ID3 " if stream_type == 0x15 => return (C::TimedId3, D),
            _ => {}
        }
    }
    match (stream_type, hdmv) {
        (0x01 | 0x02, _) => (C::Mpeg2Video, V),
        (0x03 | 0x04, _) => (C::Mp3, A),
        (0x0F, _) => (C::Aac, A),
        (0x10, _) => (C::Mpeg4, V),
        (0x11, _) => (C::AacLatm, A),
        (0x1B, _) => (C::H264, V),
        (0x24, _) => (C::Hevc, V),
        (0x33, _) => (C::Vvc, V),
        (0xEA, _) => (C::Vc1, V),
        (0x80, true) => (C::PcmS16Be, A),
        (0x81, _) => (C::Ac3, A),
        (0x82 | 0x85 | 0x86 | 0xA2, true) => (C::Dts, A),
        (0x83, true) => (C::TrueHd, A),
        (0x84 | 0xA1, true) => (C::Eac3, A),
        (0x87, _) => (C::Eac3, A),
        (0x82 | 0x8A, false) => (C::Dts, A),
        (0x2D | 0x2E, _) => (C::Unknown, A),
        (0x90, true) => (C::Pgs, T),
        (0x86, false) => (C::Unknown, D),
        (0x06, _) => match desc {
            Some(0x6A) => (C::Ac3, A),
            Some(0x7A) => (C::Eac3, A),
            Some(0x7B) => (C::Dts, A),
            #[cfg(feature = "dvb-subtitles")]
            Some(0x59) => (C::DvbSub, T),
            #[cfg(feature = "dvb-subtitles")]
            Some(0x56) => (C::DvbTeletext, T),
            #[cfg(not(feature = "dvb-subtitles"))]
            Some(0x59) => (C::Unknown, T),
            _ => (C::Unknown, D),
        },
        _ => (C::Unknown, D),
    }
}

/// Reads a complete PSI section for `first.pid`, starting in the TS packet
/// at `at`, into `buf`; returns its length, or `None` when it is not whole
/// before `limit` (or its pointer_field or section_length is out of range).
/// Sections that continue in later TS packets of the same PID are followed
/// (§2.4.4.1, §2.4.4.2).
///
/// Errors: the input ends inside a TS packet read.
pub(super) fn read_section<S: Source>(
    d: &TsDemuxer,
    src: &mut S,
    first: TsPacket,
    at: u64,
    buf: &mut [u8; MAX_SECTION],
    limit: u64,
) -> Result<Option<usize>> {
    // pointer_field, then the section.
    let ptr: [u8; 1] = src.array(first.payload)?;
    let start = first.payload + 1 + ptr[0] as u64;
    let in_first = (first.payload + first.payload_len).saturating_sub(start);
    if start >= first.payload + first.payload_len {
        return Ok(None);
    }
    // table_id, then the 12-bit section_length.
    let h: [u8; 3] = src.array(start)?;
    let total = 3 + (u16::from_be_bytes([h[1] & 0x0F, h[2]]) as usize);
    if !(8..=MAX_SECTION).contains(&total) {
        return Ok(None);
    }
    let take = (in_first as usize).min(total);
    src.read_exact_at(
        start,
        buf.get_mut(..take).ok_or(Error::malformed(
            start,
            &"mpegts PSI: section longer than its buffer (ISO/IEC 13818-1 §2.4.4.2)",
        ))?,
    )?;
    let mut have = take;
    let mut p = at + d.packet_size;
    let len = src.len();
    // Whole packets only: one that the end of the input cuts cannot carry
    // the rest (reading its header failed the open with `Truncated`, where
    // the input without that byte opened).
    while have < total && p < limit && p + d.prefix + TS_PACKET <= len {
        if let Some(tp) = d.read_packet(src, p)? {
            if tp.pid == first.pid && tp.has_payload && !tp.pusi {
                let n = (tp.payload_len as usize).min(total - have);
                src.read_exact_at(
                    tp.payload,
                    buf.get_mut(have..have + n).ok_or(Error::malformed(
                        p,
                        &"mpegts PSI: section longer than its buffer (ISO/IEC 13818-1 §2.4.4.2)",
                    ))?,
                )?;
                have += n;
            }
        }
        p += d.packet_size;
    }
    if have < total {
        return Ok(None);
    }
    Ok(Some(total))
}

/// Whether a section's CRC_32 checks (Annex A: the CRC over the whole
/// section is 0); always when fuzzing. Reports `ts.psi-crc-mismatch`.
pub(super) fn check_crc(sec: &[u8], ctx: &mut Context, at: u64) -> bool {
    if cfg!(fuzzing) || crc32_mpeg2(sec) == 0 {
        true
    } else {
        ctx.diags.report("ts.psi-crc-mismatch", at);
        false
    }
}

/// Adds the PMT PIDs of a PAT section (§2.4.4.3: program_number and PID
/// pairs after the 8-byte header; program 0 names the network PID) to
/// `pmts`, each not read yet. Reports `ts.program-capacity` past
/// [`MAX_PROGRAMS`].
pub(super) fn parse_pat(sec: &[u8], pmts: &mut heapless::Vec<(u16, bool), MAX_PROGRAMS>, ctx: &mut Context, at: u64) {
    let body = sec.get(PAT_HEADER..sec.len().saturating_sub(CRC_LEN)).unwrap_or(&[]);
    for e in body.chunks_exact(4) {
        let program = bytes::be16(e, 0).unwrap_or(0);
        let pid = bytes::be16(e, 2).unwrap_or(0) & 0x1FFF;
        if program != 0 && !pmts.iter().any(|p| p.0 == pid) && pmts.push((pid, false)).is_err() {
            ctx.diags.report("ts.program-capacity", at);
        }
    }
}

/// Parses a PMT section (§2.4.4.8) into tracks, one per elementary PID not
/// already in `out`. Reports `track-capacity` past [`MAX_TRACKS`].
pub(super) fn parse_pmt(sec: &[u8], d: &mut TsDemuxer, out: &mut PidTracks, ctx: &mut Context, at: u64) {
    let n = sec.len().saturating_sub(CRC_LEN);
    // program_info_length, 12 bits.
    let Some(pil) = bytes::be16(sec, PMT_HEADER - 2).map(|v| (v & 0x0FFF) as usize) else {
        return;
    };
    // Program-level descriptors: an HDMV registration marks Blu-ray types.
    let prog = sec.get(PMT_HEADER..(PMT_HEADER + pil).min(n)).unwrap_or(&[]);
    if find_registration(prog) == Some(*b"HDMV") {
        d.hdmv = true;
    }
    let mut i = PMT_HEADER + pil;
    while i + PMT_ENTRY <= n {
        // stream_type, elementary_PID (13 bits), ES_info_length (12 bits).
        let Some(&[stream_type, p0, p1, l0, l1]) = sec.get(i..i + PMT_ENTRY) else {
            break;
        };
        let pid = u16::from_be_bytes([p0 & 0x1F, p1]);
        let eil = u16::from_be_bytes([l0 & 0x0F, l1]) as usize;
        let descs = sec.get(i + PMT_ENTRY..(i + PMT_ENTRY + eil).min(n)).unwrap_or(&[]);
        i += PMT_ENTRY + eil;
        if out.iter().any(|(p, _)| *p == pid) {
            continue;
        }
        let t = stream_track(stream_type, pid, descs, d.hdmv);
        if out.push((pid, t)).is_err() {
            ctx.diags.report("track-capacity", at);
        }
    }
}

/// The track of one PMT stream entry: its codec from the stream_type, the
/// registration descriptor and the first descriptor that names a codec
/// (AC-3, E-AC-3, DTS, subtitling, teletext); its language from the ISO
/// 639 descriptor (§2.6.18).
fn stream_track(stream_type: u8, pid: u16, descs: &[u8], hdmv: bool) -> Track {
    let reg = find_registration(descs);
    let mut key_desc = None;
    let mut lang = crate::types::Language::EMPTY;
    walk_descriptors(descs, |tag, body| {
        if matches!(tag, 0x6A | 0x7A | 0x7B | 0x59 | 0x56) && key_desc.is_none() {
            key_desc = Some(tag);
        }
        // ISO 639 (§2.6.18), and the first language of a subtitling or
        // teletext descriptor (ETSI EN 300 468 §6.2.41, §6.2.43).
        // ffmpeg refuses a teletext descriptor that is not whole entries.
        let whole = tag != 0x56 || body.len() % 5 == 0;
        let named = tag == 0x0A || (cfg!(feature = "dvb-subtitles") && matches!(tag, 0x59 | 0x56));
        if named && whole && lang.is_empty() {
            for &c in body.iter().take(3) {
                if c.is_ascii_alphabetic() {
                    let _ = lang.push_ascii(c);
                }
            }
        }
    });
    let (codec, kind) = codec_for(stream_type, reg, key_desc, hdmv);
    Track {
        id: pid as u32,
        kind,
        codec,
        codec_tag: stream_type as u32,
        time_base: Rational::new(1, 90_000),
        language: lang,
        ..Track::default()
    }
}

/// Calls `f` with the tag and body of each descriptor in `b` (§2.6: tag,
/// length, body); a body cut by the end of `b` is given as empty.
fn walk_descriptors(mut b: &[u8], mut f: impl FnMut(u8, &[u8])) {
    while let Some(&[tag, len]) = b.get(..2) {
        let len = len as usize;
        let body = b.get(2..2 + len).unwrap_or(&[]);
        f(tag, body);
        b = b.get(2 + len..).unwrap_or(&[]);
    }
}

/// The format_identifier of the first registration descriptor (tag 0x05,
/// §2.6.8) in `descs`.
fn find_registration(descs: &[u8]) -> Option<[u8; 4]> {
    let mut r = None;
    walk_descriptors(descs, |tag, body| {
        if tag == 0x05 && r.is_none() {
            r = bytes::array::<4>(body, 0);
        }
    });
    r
}

/// Standalone fuzz entry for the PSI parsers (`fuzz/fuzz_targets/shared_parsers.rs`):
/// `data` as one PMT section (§2.4.4.8) with its CRC checked, then parsed
/// into tracks (as a 188- and as a 192-byte stream, whose HDMV rules
/// differ), and its descriptors walked. Built only under `cfg(fuzzing)`.
#[cfg(fuzzing)]
pub fn fuzz_psi(data: &[u8]) {
    let mut ctx = Context::default();
    let _ = check_crc(data, &mut ctx, 0);
    for packet_size in [188u64, 192] {
        let mut d = TsDemuxer::fresh(packet_size, packet_size - 188, 0);
        let mut out = PidTracks::new();
        parse_pmt(data, &mut d, &mut out, &mut ctx, 0);
    }
    walk_descriptors(data, |_, _| {});
    let _ = find_registration(data);
}
