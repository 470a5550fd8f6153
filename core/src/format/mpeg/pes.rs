//! PES packet headers and the MPEG-2 systems CRC (ISO/IEC 13818-1 §2.4.3.6,
//! §2.4.3.7, Annex A).

use zerocopy::big_endian::U16;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

#[cfg(feature = "ts")]
/// CRC-32/MPEG-2 (polynomial 0x04C11DB7, not reflected, initial value
/// 0xFFFFFFFF, no final XOR; ISO/IEC 13818-1 Annex A): the crate's one
/// table for that polynomial, shared with the Ogg page checksum.
pub(crate) fn crc32_mpeg2(data: &[u8]) -> u32 {
    crate::crc::crc32_poly04c11db7(0xFFFF_FFFF, data)
}

/// The fixed start of every PES packet (§2.4.3.6, Table 2-21).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub(crate) struct PesStart {
    /// packet_start_code_prefix: `00 00 01`.
    pub prefix: [u8; 3],
    /// stream_id.
    pub stream_id: u8,
    /// PES_packet_length: bytes after this field (0: unbounded, video in TS).
    pub packet_length: U16,
}

impl PesStart {
    /// Whether it starts with the packet_start_code_prefix.
    pub(crate) fn is_start(&self) -> bool {
        self.prefix == [0, 0, 1]
    }
}

/// The flags and length that follow [`PesStart`] in an MPEG-2 PES header
/// (§2.4.3.6: every stream_id but those of [`has_no_extension`]).
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
struct PesFlags {
    /// '10', scrambling, priority, alignment, copyright, original.
    marker: u8,
    /// PTS_DTS_flags (2 bits), then ESCR, ES rate, trick mode, additional
    /// copy info, CRC, extension flags.
    flags: u8,
    /// PES_header_data_length: header bytes after this field.
    header_data_length: u8,
}

/// Most stuffing bytes before the fields of an MPEG-1 packet header
/// (ISO/IEC 11172-1 §2.4.3.3: "up to 16"); a longer run of 0xFF ends the
/// skip there.
const MAX_MPEG1_STUFFING: u32 = 16;

/// What a PES header says (ISO/IEC 13818-1 §2.4.3.7).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PesHeader {
    /// stream_id.
    pub stream_id: u8,
    /// PES_packet_length (0: unbounded, video in TS).
    pub packet_length: u16,
    /// Bytes from the start of the PES packet to its payload.
    pub header_len: usize,
    /// Presentation time stamp, 33 bits.
    pub pts: Option<i64>,
    /// Decoding time stamp, 33 bits.
    pub dts: Option<i64>,
}

/// Reads a 33-bit time stamp from 5 bytes with marker bits (§2.4.3.7).
fn timestamp(b: &[u8]) -> Option<i64> {
    let b0 = *b.first()? as i64;
    let b1 = *b.get(1)? as i64;
    let b2 = *b.get(2)? as i64;
    let b3 = *b.get(3)? as i64;
    let b4 = *b.get(4)? as i64;
    Some(((b0 >> 1) & 0x07) << 30 | b1 << 22 | (b2 >> 1) << 15 | b3 << 7 | b4 >> 1)
}

/// Whether a stream_id has no PES header extension (§2.4.3.7, Table 2-22:
/// program_stream_map, padding, private_stream_2, ECM, EMM, directory,
/// DSMCC, H.222.1 type E).
fn has_no_extension(id: u8) -> bool {
    matches!(id, 0xBC | 0xBE | 0xBF | 0xF0 | 0xF1 | 0xFF | 0xF2 | 0xF8)
}

/// Parses the PES header at the start of `b` (which holds at least the
/// first bytes of the packet). Returns `None` when `b` does not start with a
/// packet start code prefix or is too short for its header.
pub(crate) fn parse_pes_header(b: &[u8]) -> Option<PesHeader> {
    let (start, rest) = PesStart::ref_from_prefix(b).ok()?;
    if !start.is_start() {
        return None;
    }
    let stream_id = start.stream_id;
    let packet_length = start.packet_length.get();
    if has_no_extension(stream_id) {
        return Some(PesHeader {
            stream_id,
            packet_length,
            header_len: 6,
            pts: None,
            dts: None,
        });
    }
    let f = match PesFlags::ref_from_prefix(rest) {
        Ok((f, _)) if f.marker & 0xC0 == 0x80 => f,
        // MPEG-1 style header (program streams): stuffing, STD buffer, then
        // time stamps (ISO/IEC 11172-1 §2.4.3.3).
        _ if *rest.first()? & 0xC0 != 0x80 => return parse_mpeg1(b, stream_id, packet_length),
        // An MPEG-2 header cut before its length.
        _ => return None,
    };
    let hdl = f.header_data_length as usize;
    let mut pts = None;
    let mut dts = None;
    if f.flags & 0x80 != 0 {
        pts = timestamp(b.get(9..14)?);
        if f.flags & 0x40 != 0 {
            dts = timestamp(b.get(14..19)?);
        }
    }
    Some(PesHeader {
        stream_id,
        packet_length,
        header_len: 9 + hdl,
        pts,
        dts,
    })
}

/// The rest of an MPEG-1 packet header (ISO/IEC 11172-1 §2.4.3.3) after
/// the fixed start: stuffing, STD buffer size, then PTS or PTS and DTS.
fn parse_mpeg1(b: &[u8], stream_id: u8, packet_length: u16) -> Option<PesHeader> {
    let mut i = 6usize;
    let mut stuffing = 0;
    while *b.get(i)? == 0xFF && stuffing < MAX_MPEG1_STUFFING {
        i += 1;
        stuffing += 1;
    }
    if *b.get(i)? & 0xC0 == 0x40 {
        i += 2;
    }
    let c = *b.get(i)?;
    let (pts, dts, len) = match c & 0xF0 {
        0x20 => (timestamp(b.get(i..i + 5)?), None, 5),
        0x30 => (timestamp(b.get(i..i + 5)?), timestamp(b.get(i + 5..i + 10)?), 10),
        _ => (None, None, 1),
    };
    Some(PesHeader {
        stream_id,
        packet_length,
        header_len: i + len,
        pts,
        dts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "ts")]
    #[test]
    fn crc_of_a_pat() {
        // A PAT section from a real stream, CRC included: the CRC over the
        // whole section is 0.
        let pat = [
            0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01, 0xF0, 0x00, 0x2A, 0xB1, 0x04, 0xB2,
        ];
        assert_eq!(crc32_mpeg2(&pat), 0);
    }

    #[test]
    fn pes_with_pts_and_dts() {
        let b = [
            0, 0, 1, 0xE0, 0, 0, 0x80, 0xC0, 10, 0x31, 0x00, 0x07, 0xD8, 0x61, 0x11, 0x00, 0x07, 0xBB, 0x81,
        ];
        let h = parse_pes_header(&b).unwrap();
        assert_eq!(h.stream_id, 0xE0);
        assert_eq!(h.header_len, 19);
        assert_eq!(h.pts, Some(126_000));
        assert_eq!(h.dts, Some(122_304));
    }
}
