//! Transport stream packets (ISO/IEC 13818-1 §2.4.3.2, §2.4.3.4): the
//! 188-byte packet header, the adaptation field (random access indicator,
//! PCR, stuffing) and a PES packet cut into TS packets with no copy of its
//! payload.
//!
//! [`PesWriter`] is a [`Sink`] over the muxer's sink: every byte written
//! to it is a byte of one PES packet whose size was given up front, and it
//! puts a TS packet header before each 184 bytes of payload room. The size
//! known ahead lets the last TS packet of the PES take the adaptation-field
//! stuffing that fills it to 188 bytes (§2.4.3.5: stuffing in a packet
//! that carries PES data is only in the adaptation field). Each TS packet
//! goes to the sink as its header bytes and slices borrowed from what was
//! written to the writer, in order.

use crate::error::{Error, Result};
use crate::sink::{cannot_patch, Sink, SinkStats};

/// Bytes in a transport stream packet.
pub const TS_PACKET: usize = 188;
/// Payload room of a packet with no adaptation field.
const ROOM: usize = TS_PACKET - 4;
/// sync_byte (§2.4.3.3).
const SYNC: u8 = 0x47;
/// adaptation_field flags (§2.4.3.5, Table 2-6).
const RANDOM_ACCESS: u8 = 0x40;
const PCR_FLAG: u8 = 0x10;

/// What the first TS packet of a PES packet carries in its adaptation
/// field.
#[derive(Debug, Clone, Copy, Default)]
pub struct FirstPacket {
    /// program_clock_reference_base (90 kHz), extension 0, when this PID
    /// carries the program's PCR and one is due.
    pub pcr: Option<u64>,
    /// random_access_indicator: the PES starts a keyframe.
    pub random_access: bool,
}

/// The 6 bytes of a PCR field (§2.4.3.5): 33-bit base, 6 reserved bits,
/// 9-bit extension (0 here: the clock is written in 90 kHz steps).
pub fn pcr_bytes(base: u64) -> [u8; 6] {
    let b = base & ((1 << 33) - 1);
    [
        (b >> 25) as u8,
        (b >> 17) as u8,
        (b >> 9) as u8,
        (b >> 1) as u8,
        (((b & 1) as u8) << 7) | 0x7E,
        0,
    ]
}

/// The 4-byte packet header (§2.4.3.2): payload_unit_start_indicator,
/// PID, adaptation_field_control, continuity_counter.
fn header(pid: u16, start: bool, adaptation: bool, payload: bool, cc: u8) -> [u8; 4] {
    let [hi, lo] = pid.to_be_bytes();
    let afc = (u8::from(adaptation) << 1) | u8::from(payload);
    [SYNC, (u8::from(start) << 6) | (hi & 0x1F), lo, (afc << 4) | (cc & 0x0F)]
}

/// Writes a packet with only an adaptation field that carries `pcr`
/// (adaptation_field_control `10`; the continuity counter does not
/// advance, §2.4.3.3).
///
/// Errors: the sink's.
pub fn write_pcr_only<K: Sink + ?Sized>(sink: &mut K, pid: u16, cc: u8, pcr: u64) -> Result<()> {
    let mut p = [0xFFu8; TS_PACKET];
    let h = header(pid, false, true, false, cc.wrapping_sub(1));
    let af = [183, PCR_FLAG];
    for (d, s) in p.iter_mut().zip(h.iter().chain(&af).chain(&pcr_bytes(pcr))) {
        *d = *s;
    }
    sink.write_all(&p)
}

/// Writes one PSI section (`section`, at most 183 bytes) in one packet:
/// pointer_field 0, the section, then `0xFF` filler (§2.4.4.2: stuffing
/// bytes after a section). Advances `cc`.
///
/// Errors: `CapacityExceeded` for a section over 183 bytes; the sink's.
pub fn write_section<K: Sink + ?Sized>(sink: &mut K, pid: u16, cc: &mut u8, section: &[u8]) -> Result<()> {
    let fill = ROOM.checked_sub(1 + section.len()).ok_or(Error::capacity(
        sink.position(),
        &"ts muxer: a PSI section over one packet",
    ))?;
    let h = header(pid, true, false, true, *cc);
    *cc = cc.wrapping_add(1) & 0x0F;
    let ff = [0xFFu8; ROOM];
    sink.write_vectored(&[&h, &[0], section, ff.get(..fill).unwrap_or(&[])])
}

/// A sink that cuts the bytes of one PES packet, whose size is known
/// ahead, into transport stream packets (see the module notes).
pub struct PesWriter<'s, K: Sink + ?Sized> {
    sink: &'s mut K,
    pid: u16,
    cc: &'s mut u8,
    /// PES bytes not yet written.
    left: u64,
    /// Payload bytes the current TS packet still takes.
    room: usize,
    /// The first packet's extras; `None` once it is written.
    first: Option<FirstPacket>,
    /// The current packet's header and adaptation field, not yet written
    /// (`head_len` bytes of `head`).
    head: [u8; TS_PACKET],
    head_len: usize,
    /// PES bytes written.
    written: u64,
}

impl<'s, K: Sink + ?Sized> PesWriter<'s, K> {
    /// A writer of a PES packet of `size` bytes on `pid`, whose continuity
    /// counter is `cc`.
    pub fn new(sink: &'s mut K, pid: u16, cc: &'s mut u8, size: u64, first: FirstPacket) -> Self {
        PesWriter {
            sink,
            pid,
            cc,
            left: size,
            room: 0,
            first: Some(first),
            head: [0xFF; TS_PACKET],
            head_len: 0,
            written: 0,
        }
    }

    /// Builds the header of the next packet: its adaptation field holds
    /// the first packet's extras and, in the last packet, the stuffing.
    fn next_packet(&mut self) {
        let start = self.first.is_some();
        let first = self.first.take().unwrap_or_default();
        let mut fields = [0u8; 7];
        let mut n = 0;
        if first.random_access || first.pcr.is_some() {
            let mut flags = 0;
            if first.random_access {
                flags |= RANDOM_ACCESS;
            }
            n = 1;
            if let Some(pcr) = first.pcr {
                flags |= PCR_FLAG;
                for (d, s) in fields.iter_mut().skip(1).zip(pcr_bytes(pcr)) {
                    *d = s;
                }
                n = 7;
            }
            fields[0] = flags;
        }
        // Room with the adaptation field so far (its length byte and
        // fields), and the stuffing the last packet needs.
        let af = if n > 0 { 1 + n } else { 0 };
        let cap = ROOM - af;
        let stuff = usize::try_from(u64::try_from(cap).unwrap_or(0).saturating_sub(self.left)).unwrap_or(0);
        let af_total = af + stuff;
        let h = header(self.pid, start, af_total > 0, true, *self.cc);
        *self.cc = self.cc.wrapping_add(1) & 0x0F;
        self.head = [0xFF; TS_PACKET];
        for (d, s) in self.head.iter_mut().zip(h) {
            *d = s;
        }
        if af_total > 0 {
            // adaptation_field_length counts the bytes after it; a single
            // stuffing byte is the length byte 0 alone.
            if let Some(b) = self.head.get_mut(4) {
                *b = (af_total - 1) as u8;
            }
            let written = if n > 0 { n } else { usize::from(af_total > 1) };
            for (d, s) in self.head.iter_mut().skip(5).zip(fields.iter().take(written)) {
                *d = *s;
            }
        }
        self.head_len = 4 + af_total;
        self.room = cap - stuff;
    }

    /// Checks that exactly the announced bytes were written.
    ///
    /// Errors: `Malformed` (an internal mismatch: a payload whose size
    /// changed between sizing and writing).
    pub fn finish(self) -> Result<()> {
        if self.left != 0 || self.room != 0 {
            return Err(Error::malformed(
                self.sink.position(),
                &"ts muxer: a PES packet's bytes differ from its announced size",
            ));
        }
        Ok(())
    }
}

impl<K: Sink + ?Sized> Sink for PesWriter<'_, K> {
    /// PES bytes written so far.
    fn position(&self) -> u64 {
        self.written
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        let mut rest = data;
        while !rest.is_empty() {
            if self.left == 0 {
                return Err(Error::malformed(
                    self.sink.position(),
                    &"ts muxer: more PES bytes than announced",
                ));
            }
            if self.room == 0 {
                self.next_packet();
            }
            let n = self.room.min(rest.len());
            let (now, later) = rest.split_at(n);
            let head = self.head.get(..self.head_len).unwrap_or(&[]);
            self.sink.write_vectored(&[head, now])?;
            self.head_len = 0;
            self.room -= n;
            self.left = self.left.saturating_sub(n as u64);
            self.written += n as u64;
            rest = later;
        }
        Ok(())
    }

    fn can_patch(&self) -> bool {
        false
    }

    fn patch_at(&mut self, pos: u64, _data: &[u8]) -> Result<()> {
        Err(cannot_patch(pos))
    }

    fn flush(&mut self) -> Result<()> {
        self.sink.flush()
    }

    fn stats(&self) -> SinkStats {
        self.sink.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::SliceSink;

    #[test]
    fn pes_is_cut_into_packets_with_stuffing_in_the_last() {
        let payload = [7u8; 400];
        let mut buf = [0u8; 188 * 4];
        let mut k = SliceSink::new(&mut buf);
        let mut cc = 15;
        let first = FirstPacket {
            pcr: Some(0x1_2345_6789),
            random_access: true,
        };
        let mut w = PesWriter::new(&mut k, 0x100, &mut cc, 400, first);
        w.write_all(&payload[..10]).unwrap();
        w.write_all(&payload[10..]).unwrap();
        w.finish().unwrap();
        assert_eq!(cc, 2);
        let out = k.written();
        assert_eq!(out.len(), 188 * 3);
        // First: PUSI, adaptation field of 8 (flags, PCR), 176 bytes.
        assert_eq!(out[..6], [0x47, 0x41, 0x00, 0x3F, 7, 0x50]);
        assert_eq!(out[6..12], pcr_bytes(0x1_2345_6789));
        // Second: no adaptation field, counter 0.
        assert_eq!(out[188..192], [0x47, 0x01, 0x00, 0x10]);
        // Third: 400 - 176 - 184 = 40 bytes, 144 of adaptation field.
        assert_eq!(out[376..380], [0x47, 0x01, 0x00, 0x31]);
        assert_eq!((out[380], out[381], out[382]), (143, 0, 0xFF));
        assert!(out[376 + 4 + 144..].iter().all(|&b| b == 7));
    }

    #[test]
    fn one_byte_of_stuffing_is_the_length_byte_alone() {
        let mut buf = [0u8; 188];
        let mut k = SliceSink::new(&mut buf);
        let mut cc = 0;
        let mut w = PesWriter::new(&mut k, 0x101, &mut cc, 183, FirstPacket::default());
        w.write_all(&[1; 183]).unwrap();
        w.finish().unwrap();
        assert_eq!(k.written()[..6], [0x47, 0x41, 0x01, 0x30, 0, 1]);
        // Writing more than announced, or less, is an error.
        let mut buf = [0u8; 376];
        let mut k = SliceSink::new(&mut buf);
        let mut w = PesWriter::new(&mut k, 0x101, &mut cc, 2, FirstPacket::default());
        assert!(w.write_all(&[1; 3]).is_err());
        let w = PesWriter::new(&mut k, 0x101, &mut cc, 2, FirstPacket::default());
        assert!(w.finish().is_err());
    }

    #[test]
    fn pcr_field_layout() {
        // base 1: last bit of the fifth byte, reserved bits set.
        assert_eq!(pcr_bytes(1), [0, 0, 0, 0, 0xFE, 0]);
        assert_eq!(pcr_bytes(2), [0, 0, 0, 1, 0x7E, 0]);
        let mut buf = [0u8; 188];
        let mut k = SliceSink::new(&mut buf);
        write_pcr_only(&mut k, 0x100, 5, 2).unwrap();
        assert_eq!(
            k.written()[..12],
            [0x47, 0x01, 0x00, 0x24, 183, 0x10, 0, 0, 0, 1, 0x7E, 0]
        );
    }
}
