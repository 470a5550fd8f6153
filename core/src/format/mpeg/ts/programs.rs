//! The program walk (`Demuxer::next_program`): program `k` of the PAT
//! (§2.4.4.3), its PMT (§2.4.4.8: PCR_PID and the elementary PIDs that are
//! tracks) and its DVB service descriptor (EN 300 468 §5.2.3 SDT, §6.2.33
//! service_descriptor), each section found again from the first packet
//! within `Limits::probe_bytes`. Sections whose CRC fails are passed over.
//! ffmpeg also makes programs of SDT services missing from the PAT; those
//! are not given.

use super::demuxer::TsDemuxer;
use super::packet::TS_PACKET;
use super::psi::{read_section, MAX_SECTION, TABLE_PAT, TABLE_PMT};
use crate::bytes::be16;
use crate::error::Result;
use crate::format::mpeg::pes::crc32_mpeg2;
use crate::format::traits::Context;
use crate::programs::{dvb_text, Program, ProgramCursor, MAX_NAME};
use crate::source::Source;

/// PID of the SDT (EN 300 468 §5.1.3).
const SDT_PID: u16 = 0x11;
/// table_id of the SDT of the actual transport stream (§5.1.3).
const TABLE_SDT: u8 = 0x42;
/// service_descriptor tag (§6.1).
const SERVICE_DESCRIPTOR: u8 = 0x48;

impl TsDemuxer {
    /// The number of programs of the PAT (program 0 left out).
    pub(super) fn count_programs<S: Source>(&self, src: &mut S, ctx: &Context) -> Result<usize> {
        let mut buf = [0u8; MAX_SECTION];
        Ok(match self.pat(src, ctx, &mut buf)? {
            Some(n) => programs_of(&buf, n).count(),
            None => 0,
        })
    }

    /// The first PAT section within `Limits::probe_bytes`, in `buf`.
    fn pat<S: Source>(&self, src: &mut S, ctx: &Context, buf: &mut [u8; MAX_SECTION]) -> Result<Option<usize>> {
        let limit = self.first.saturating_add(ctx.limits.probe_bytes).min(src.len());
        self.find_section(src, ctx, limit, buf, |pid, s| pid == 0 && s.first() == Some(&TABLE_PAT))
    }

    /// The next program (see the module documentation).
    pub(super) fn program<'c, S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        cur: &'c mut ProgramCursor,
    ) -> Result<Option<Program<'c>>> {
        let limit = self.first.saturating_add(ctx.limits.probe_bytes).min(src.len());
        let mut buf = [0u8; MAX_SECTION];
        let Some(n) = self.pat(src, ctx, &mut buf)? else {
            return Ok(None);
        };
        let Some((number, pmt_pid)) = programs_of(&buf, n).nth(cur.index) else {
            return Ok(None);
        };
        cur.index += 1;
        let is_pmt = |pid: u16, s: &[u8]| pid == pmt_pid && s.first() == Some(&TABLE_PMT) && be16(s, 3) == Some(number);
        let mut pcr_pid = None;
        let mut count = 0;
        if let Some(n) = self.find_section(src, ctx, limit, &mut buf, is_pmt)? {
            let sec = buf.get(..n.saturating_sub(4)).unwrap_or(&[]);
            pcr_pid = be16(sec, 8).map(|v| v & 0x1FFF);
            let mut i = 12 + usize::from(be16(sec, 10).unwrap_or(0) & 0x0FFF);
            while let (Some(pid), Some(eil)) = (be16(sec, i + 1), be16(sec, i + 3)) {
                i += 5 + usize::from(eil & 0x0FFF);
                let Some(e) = self.es.iter().find(|e| e.pid == pid & 0x1FFF) else {
                    continue;
                };
                if cur.tracks.get(..count).is_some_and(|t| !t.contains(&e.track)) {
                    if let Some(slot) = cur.tracks.get_mut(count) {
                        *slot = e.track;
                        count += 1;
                    }
                }
            }
        }
        let (provider, name) = match self.find_section(src, ctx, limit, &mut buf, |pid, s| {
            pid == SDT_PID && s.first() == Some(&TABLE_SDT)
        })? {
            Some(n) => service_names(buf.get(..n.saturating_sub(4)).unwrap_or(&[]), number, &mut cur.names),
            None => (None, None),
        };
        let (p, rest) = cur.names.split_at(MAX_NAME);
        Ok(Some(Program {
            number,
            pmt_pid,
            pcr_pid,
            tracks: cur.tracks.get(..count).unwrap_or(&[]),
            service_name: name.and_then(|l| rest.get(..l)).and_then(dvb_text),
            service_provider: provider.and_then(|l| p.get(..l)).and_then(dvb_text),
        }))
    }

    /// The first whole section from the first packet up to `limit`, its CRC
    /// correct, that `want` accepts (given the PID and the section); its
    /// length in `buf`. Resynchronises after junk as the open does.
    fn find_section<S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        limit: u64,
        buf: &mut [u8; MAX_SECTION],
        want: impl Fn(u16, &[u8]) -> bool,
    ) -> Result<Option<usize>> {
        let len = src.len();
        let mut at = self.first;
        while at + self.packet_size <= limit || (at < limit && at + TS_PACKET + self.prefix <= len) {
            let Some(tp) = self.read_packet(src, at)? else {
                match self.resync(src, at + 1, ctx.limits.resync_bytes)? {
                    Some(n) if self.confirmed(n, len) && n > at => {
                        at = n;
                        continue;
                    }
                    _ => return Ok(None),
                }
            };
            at += self.packet_size;
            if !(tp.pusi && tp.has_payload) {
                continue;
            }
            if let Some(n) = read_section(self, src, tp, at - self.packet_size, buf, limit)? {
                let sec = buf.get(..n).unwrap_or(&[]);
                if want(tp.pid, sec) && (cfg!(fuzzing) || crc32_mpeg2(sec) == 0) {
                    return Ok(Some(n));
                }
            }
        }
        Ok(None)
    }
}

/// The program_number and PMT PID pairs of a PAT section of `n` bytes in
/// `buf`, after its 8-byte header and before its CRC; program 0 (the
/// network PID) left out.
fn programs_of(buf: &[u8], n: usize) -> impl Iterator<Item = (u16, u16)> + '_ {
    buf.get(8..n.saturating_sub(4))
        .unwrap_or(&[])
        .chunks_exact(4)
        .map(|e| (be16(e, 0).unwrap_or(0), be16(e, 2).unwrap_or(0) & 0x1FFF))
        .filter(|e| e.0 != 0)
}

/// The provider and service name lengths of the service `number` in an SDT
/// section (CRC removed), copied into `names` (provider first, then name,
/// `MAX_NAME` bytes each).
fn service_names(sec: &[u8], number: u16, names: &mut [u8; 2 * MAX_NAME]) -> (Option<usize>, Option<usize>) {
    // 11-byte header, then per service: service_id (2), flags (1),
    // running_status / free_CA_mode / descriptors_loop_length (2).
    let mut i = 11;
    while let (Some(id), Some(dl)) = (be16(sec, i), be16(sec, i + 3)) {
        let dl = usize::from(dl & 0x0FFF);
        let descs = sec.get(i + 5..(i + 5 + dl).min(sec.len())).unwrap_or(&[]);
        i += 5 + dl;
        if id != number {
            continue;
        }
        let mut d = descs;
        while let Some(&[tag, len]) = d.get(..2) {
            let body = d.get(2..2 + usize::from(len)).unwrap_or(&[]);
            d = d.get(2 + usize::from(len)..).unwrap_or(&[]);
            if tag != SERVICE_DESCRIPTOR {
                continue;
            }
            // service_type, provider length and name, name length and name.
            let pl = usize::from(*body.get(1).unwrap_or(&0));
            let provider = body.get(2..2 + pl);
            let nl = body.get(2 + pl).map(|&l| usize::from(l));
            let name = nl.and_then(|l| body.get(3 + pl..3 + pl + l));
            let (p, n) = names.split_at_mut(MAX_NAME);
            let copy = |src: Option<&[u8]>, dst: &mut [u8]| {
                let s = src?;
                dst.get_mut(..s.len())?.copy_from_slice(s);
                Some(s.len())
            };
            return (copy(provider, p), copy(name, n));
        }
        return (None, None);
    }
    (None, None)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn sdt(services: &[(u16, &[u8])]) -> std::vec::Vec<u8> {
        let mut v = std::vec![0x42, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0xFF];
        for (id, descs) in services {
            v.extend_from_slice(&id.to_be_bytes());
            v.push(0xFC);
            v.extend_from_slice(&(0x8000u16 | descs.len() as u16).to_be_bytes());
            v.extend_from_slice(descs);
        }
        v
    }

    #[test]
    fn service_descriptor() {
        let mut names = [0u8; 2 * MAX_NAME];
        let d = [0x48, 11, 1, 3, b'P', b'r', b'v', 5, b'N', b'a', b'm', b'e', b'1'];
        let s = sdt(&[(1, &[0x0A, 0]), (2, &d)]);
        assert_eq!(service_names(&s, 2, &mut names), (Some(3), Some(5)));
        assert_eq!(&names[..3], b"Prv");
        assert_eq!(&names[MAX_NAME..MAX_NAME + 5], b"Name1");
        assert_eq!(service_names(&s, 1, &mut names), (None, None));
        assert_eq!(service_names(&s, 7, &mut names), (None, None));
        // A name length past the descriptor, a loop length past the
        // section: no name, no panic.
        let bad = [0x48, 4, 1, 1, b'P', 200];
        assert_eq!(service_names(&sdt(&[(2, &bad)]), 2, &mut names), (Some(1), None));
        let mut cut = sdt(&[(2, &d)]);
        cut.truncate(cut.len() - 6);
        let _ = service_names(&cut, 2, &mut names);
        assert_eq!(service_names(&[0x42, 0], 2, &mut names), (None, None));
    }
}
