//! The program association and program map sections the muxer writes
//! (ISO/IEC 13818-1 §2.4.4.3 PAT, §2.4.4.8 PMT) and the DVB service
//! description section (ETSI EN 300 468 §5.2.3 SDT), each ending with its
//! CRC-32/MPEG-2 (ISO/IEC 13818-1 Annex A). One program, number 1, as
//! ffmpeg's muxer writes it; each fits one TS packet for
//! [`crate::limits::MAX_TRACKS`] streams (12 + 5 bytes a stream + 4 for the
//! PMT; 6 more a stream with a language, left out when they would not fit;
//! the SDT's service name is cut to fit).

use crate::error::{Error, Result};
use crate::format::mpeg::pes::crc32_mpeg2;

/// The PID of the PAT (§2.4.4.3, Table 2-3).
pub const PAT_PID: u16 = 0;
/// The PID of the one PMT: 0x1000, as ffmpeg's muxer.
pub const PMT_PID: u16 = 0x1000;
/// transport_stream_id and program_number: 1, as ffmpeg's muxer.
const TS_ID: u16 = 1;
const PROGRAM: u16 = 1;
/// The PID of the SDT (EN 300 468 §5.1.3, Table 1).
pub const SDT_PID: u16 = 0x11;
/// original_network_id: 0xFF01, as ffmpeg's muxer (ETSI TS 101 162 puts
/// 0xFF00..=0xFFFF aside for private, temporary use).
const NETWORK_ID: u16 = 0xFF01;
/// service_provider_name of the service descriptor when the input has no
/// `service_provider` tag.
pub const DEFAULT_PROVIDER: &str = "mediaslice";
/// Most bytes of a provider name: the rest of the section is the service
/// name's.
const MAX_PROVIDER: usize = 64;
/// service_name when the input has no title, as ffmpeg's muxer.
pub const DEFAULT_SERVICE_NAME: &str = "Service01";
/// service_type (EN 300 468 §6.2.33, Table 87): digital television
/// service, digital radio sound service.
const SERVICE_TV: u8 = 0x01;
const SERVICE_RADIO: u8 = 0x02;
/// Most bytes of a section built here: one TS packet's payload less the
/// pointer_field.
pub const MAX_SECTION: usize = 183;

/// One elementary stream of the PMT.
#[derive(Debug, Clone, Copy)]
pub struct PmtStream {
    /// stream_type (§2.4.4.10, Table 2-34).
    pub stream_type: u8,
    /// elementary_PID.
    pub pid: u16,
    /// An ISO 639 language code, written as an ISO_639_language_descriptor
    /// (§2.6.18, tag 0x0A; audio_type 0), as ffmpeg does for audio.
    pub language: Option<[u8; 3]>,
}

/// A section being built in a fixed buffer.
struct Section {
    buf: [u8; MAX_SECTION],
    len: usize,
    /// The high nibble of byte 1: section_syntax_indicator 1, then `0`
    /// (MPEG tables' fixed bit) or `1` (DVB's reserved_future_use), then
    /// the two reserved bits.
    flags: u8,
}

impl Section {
    /// table_id, then room for section_length, then the long-form header
    /// (table_id_extension, version 0, current_next_indicator 1, section
    /// numbers 0).
    fn new(table_id: u8, extension: u16) -> Self {
        let mut s = Section {
            buf: [0; MAX_SECTION],
            len: 0,
            flags: 0xB0,
        };
        let [e0, e1] = extension.to_be_bytes();
        s.put(&[table_id, 0, 0, e0, e1, 0xC1, 0, 0]);
        s
    }

    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(d) = self.buf.get_mut(self.len) {
                *d = b;
            }
            self.len += 1;
        }
    }

    /// Sets section_length (section_syntax_indicator 1, reserved bits
    /// set), appends the CRC; gives the section's bytes.
    fn close(&mut self) -> Result<&[u8]> {
        if self.len + 4 > MAX_SECTION {
            return Err(Error::capacity(0, &"ts muxer: a PSI section over one packet"));
        }
        let length = (self.len + 4 - 3) as u16;
        let [l0, l1] = length.to_be_bytes();
        if let Some(b) = self.buf.get_mut(1..3) {
            b.copy_from_slice(&[self.flags | (l0 & 0x0F), l1]);
        }
        let crc = crc32_mpeg2(self.buf.get(..self.len).unwrap_or(&[]));
        self.put(&crc.to_be_bytes());
        Ok(self.buf.get(..self.len).unwrap_or(&[]))
    }
}

/// Writes the PAT section into `out`; returns its length.
///
/// Errors: none in practice (the section is 16 bytes).
pub fn pat(out: &mut [u8; MAX_SECTION]) -> Result<usize> {
    let mut s = Section::new(0x00, TS_ID);
    let [p0, p1] = PROGRAM.to_be_bytes();
    let [m0, m1] = PMT_PID.to_be_bytes();
    s.put(&[p0, p1, 0xE0 | m0, m1]);
    let b = s.close()?;
    let n = b.len();
    out.get_mut(..n).unwrap_or(&mut []).copy_from_slice(b);
    Ok(n)
}

/// Writes the PMT section of `streams`, with `pcr_pid`, into `out`;
/// returns its length. A stream's only descriptor is its language.
///
/// Errors: `CapacityExceeded` when the streams do not fit one section of
/// one packet.
pub fn pmt(out: &mut [u8; MAX_SECTION], pcr_pid: u16, streams: &[PmtStream]) -> Result<usize> {
    let mut s = Section::new(0x02, PROGRAM);
    let [c0, c1] = pcr_pid.to_be_bytes();
    // PCR_PID, program_info_length 0.
    s.put(&[0xE0 | c0, c1, 0xF0, 0]);
    for st in streams {
        let [p0, p1] = st.pid.to_be_bytes();
        match st.language {
            Some([a, b, c]) => s.put(&[st.stream_type, 0xE0 | p0, p1, 0xF0, 6, 0x0A, 4, a, b, c, 0]),
            None => s.put(&[st.stream_type, 0xE0 | p0, p1, 0xF0, 0]),
        }
    }
    let b = s.close()?;
    let n = b.len();
    out.get_mut(..n).unwrap_or(&mut []).copy_from_slice(b);
    Ok(n)
}

/// Writes the SDT section (EN 300 468 §5.2.3) of the one service into
/// `out`; returns its length. The service (service_id = program_number 1,
/// running_status 4 "running", not scrambled, no EIT) has one
/// service_descriptor (§6.2.33): `radio` gives service_type 0x02 (digital
/// radio sound), else 0x01 (digital television), then `provider` and
/// `name`. A text that is all ASCII and does not begin with a control
/// character is written as it is (Annex A.1: the default table), any other
/// is UTF-8 after the selector byte 0x15 (Annex A.2, Table A.3), as ffmpeg
/// writes it. The provider is cut to 64 bytes, the name to the room left
/// in the packet (148 bytes with the default provider), each at a
/// character boundary.
///
/// Errors: none in practice (the texts are cut to fit).
pub fn sdt(out: &mut [u8; MAX_SECTION], radio: bool, provider: &str, name: &str) -> Result<usize> {
    let mut s = Section::new(0x42, TS_ID);
    s.flags = 0xF0;
    let [n0, n1] = NETWORK_ID.to_be_bytes();
    // original_network_id, reserved_future_use.
    s.put(&[n0, n1, 0xFF]);
    let (pre_p, provider) = dvb_text(provider, MAX_PROVIDER);
    let provider_len = provider.len() + usize::from(pre_p);
    // Room for the name: the section less its 11 header bytes, the 5 of
    // the service, the descriptor's 4 (tag, length, type, the provider's
    // length) and the provider's, the name's length byte, the CRC's 4.
    let room = MAX_SECTION - 11 - 5 - 4 - provider_len - 1 - 4;
    let (pre_n, text) = dvb_text(name, room);
    let name_len = text.len() + usize::from(pre_n);
    let desc_len = 3 + provider_len + name_len;
    let [p0, p1] = PROGRAM.to_be_bytes();
    // service_id; reserved_future_use, EIT flags 0; running_status 4,
    // free_CA_mode 0, descriptors_loop_length.
    let [l0, l1] = (0x8000 | (2 + desc_len) as u16).to_be_bytes();
    s.put(&[p0, p1, 0xFC, l0, l1]);
    let kind = if radio { SERVICE_RADIO } else { SERVICE_TV };
    s.put(&[0x48, desc_len as u8, kind, provider_len as u8]);
    if pre_p {
        s.put(&[0x15]);
    }
    s.put(provider);
    s.put(&[name_len as u8]);
    if pre_n {
        s.put(&[0x15]);
    }
    s.put(text);
    let b = s.close()?;
    let n = b.len();
    out.get_mut(..n).unwrap_or(&mut []).copy_from_slice(b);
    Ok(n)
}

/// A text as the SDT carries it in at most `room` bytes: whether it needs
/// the UTF-8 selector 0x15 (not all ASCII, or beginning with a control
/// character, which the default table would read as a selector), and its
/// bytes cut at a character boundary to fit with the selector.
fn dvb_text(text: &str, room: usize) -> (bool, &[u8]) {
    let utf8 = !text.is_ascii() || text.as_bytes().first().is_some_and(|&b| b < 0x20);
    let mut cut = text.len().min(room.saturating_sub(usize::from(utf8)));
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (utf8, text.as_bytes().get(..cut).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pat_as_ffmpeg_writes_it() {
        let mut b = [0u8; MAX_SECTION];
        let n = pat(&mut b).unwrap();
        // ffmpeg 5.1's PAT for one program on PID 0x1000.
        assert_eq!(
            b[..n],
            [0x00, 0xB0, 0x0D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0x00, 0x01, 0xF0, 0x00, 0x2A, 0xB1, 0x04, 0xB2]
        );
    }

    #[test]
    fn pmt_lists_streams_and_checks_its_crc() {
        let mut b = [0u8; MAX_SECTION];
        let streams = [
            PmtStream {
                stream_type: 0x1B,
                pid: 0x100,
                language: None,
            },
            PmtStream {
                stream_type: 0x0F,
                pid: 0x101,
                language: Some(*b"eng"),
            },
        ];
        let n = pmt(&mut b, 0x100, &streams).unwrap();
        assert_eq!(n, 12 + 16 + 4);
        // ffmpeg 5.1's stream loop for AAC with language "eng".
        assert_eq!(
            b[17..28],
            [0x0F, 0xE1, 0x01, 0xF0, 0x06, 0x0A, 0x04, b'e', b'n', b'g', 0]
        );
        // Byte for byte ffmpeg 5.1's PMT for H.264 + AAC (language eng),
        // CRC included.
        let ffmpeg = [
            0x00, 0x02, 0xB0, 0x1D, 0x00, 0x01, 0xC1, 0x00, 0x00, 0xE1, 0x00, 0xF0, 0x00, 0x1B, 0xE1, 0x00, 0xF0, 0x00,
            0x0F, 0xE1, 0x01, 0xF0, 0x06, 0x0A, 0x04, b'e', b'n', b'g', 0x00, 0x8D, 0x82, 0x9A, 0x07,
        ];
        // ffmpeg's packet has the pointer_field first.
        assert_eq!(b[..n], ffmpeg[1..]);
        // The CRC over the whole section, itself included, is 0.
        assert_eq!(crc32_mpeg2(&b[..n]), 0);
        let many = [streams[0]; 40];
        assert!(pmt(&mut b, 0x100, &many).is_err());
    }

    #[test]
    fn sdt_as_ffmpeg_writes_it() {
        let mut b = [0u8; MAX_SECTION];
        // ffmpeg 5.1, `-metadata service_provider=mediaslice -f mpegts`
        // of a video: its SDT packet after the pointer_field, CRC included.
        let tv = [
            0x42, 0xF0, 0x29, 0x00, 0x01, 0xC1, 0x00, 0x00, 0xFF, 0x01, 0xFF, 0x00, 0x01, 0xFC, 0x80, 0x18, 0x48, 0x16,
            0x01, 0x0A, b'm', b'e', b'd', b'i', b'a', b's', b'l', b'i', b'c', b'e', 0x09, b'S', b'e', b'r', b'v', b'i',
            b'c', b'e', b'0', b'1', 0xC3, 0x6D, 0x51, 0x6C,
        ];
        let n = sdt(&mut b, false, DEFAULT_PROVIDER, DEFAULT_SERVICE_NAME).unwrap();
        assert_eq!(b[..n], tv);
        // The same with `-metadata service_name=Café -mpegts_service_type
        // digital_radio`: a UTF-8 name after the selector 0x15.
        let radio = [
            0x42, 0xF0, 0x26, 0x00, 0x01, 0xC1, 0x00, 0x00, 0xFF, 0x01, 0xFF, 0x00, 0x01, 0xFC, 0x80, 0x15, 0x48, 0x13,
            0x02, 0x0A, b'm', b'e', b'd', b'i', b'a', b's', b'l', b'i', b'c', b'e', 0x06, 0x15, b'C', b'a', b'f', 0xC3,
            0xA9, 0x15, 0xE4, 0x12, 0x5A,
        ];
        let n = sdt(&mut b, true, DEFAULT_PROVIDER, "Café").unwrap();
        assert_eq!(b[..n], radio);
        assert_eq!(crc32_mpeg2(&b[..n]), 0);
        // A long name is cut to the packet, at a character boundary.
        let long = "é".repeat(200);
        let n = sdt(&mut b, false, DEFAULT_PROVIDER, &long).unwrap();
        assert_eq!(n, MAX_SECTION - 1);
        assert_eq!(b[30], 147);
        assert_eq!(b[31], 0x15);
        assert!(core::str::from_utf8(&b[32..n - 4]).is_ok());
        assert_eq!(crc32_mpeg2(&b[..n]), 0);
        let n = sdt(&mut b, false, DEFAULT_PROVIDER, &"x".repeat(300)).unwrap();
        assert_eq!((n, b[30]), (MAX_SECTION, 148));
        // Both texts from the input's tags: a UTF-8 provider after its
        // selector, the name in the room left; a long provider is cut to
        // 64 bytes and the name still fits the packet.
        let n = sdt(&mut b, false, "Télé", "News").unwrap();
        assert_eq!(
            b[18..32],
            [0x01, 7, 0x15, b'T', 0xC3, 0xA9, b'l', 0xC3, 0xA9, 4, b'N', b'e', b'w', b's']
        );
        assert_eq!(crc32_mpeg2(&b[..n]), 0);
        let n = sdt(&mut b, false, &"p".repeat(100), &"n".repeat(300)).unwrap();
        assert_eq!((n, b[19], b[20 + 64]), (MAX_SECTION, 64, 94));
        assert_eq!(crc32_mpeg2(&b[..n]), 0);
    }
}
