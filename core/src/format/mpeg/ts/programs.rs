//! The program walk (`Demuxer::next_program`): program `k` of the PAT
//! (§2.4.4.3), its PMT (§2.4.4.8: PCR_PID and the elementary PIDs that are
//! tracks) and its DVB service descriptor (EN 300 468 §5.2.3 SDT, §6.2.33
//! service_descriptor), each section found again from the first packet
//! within `Limits::probe_bytes`. Sections whose CRC fails are passed over.
//!
//! As ffmpeg's `pat_cb` and `sdt_cb` do (each makes a program of every
//! number it lists, `av_new_program`), a service of the SDT with a service
//! descriptor is a program even when the PAT does not list it: it has no
//! PMT, no tracks, and `in_pat` false. Programs come in the order ffmpeg
//! makes them: the programs of whichever of the first PAT and the first SDT
//! comes first in the stream, then the new ones of the other; a number is
//! given once.

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
    /// The number of programs [`TsDemuxer::program`] gives.
    pub(super) fn count_programs<S: Source>(&self, src: &mut S, ctx: &Context) -> Result<usize> {
        let t = self.tables(src, ctx)?;
        let mut n = 0;
        while t.nth(n).is_some() {
            n += 1;
        }
        Ok(n)
    }

    /// The first PAT and the first SDT section within
    /// `Limits::probe_bytes`.
    fn tables<S: Source>(&self, src: &mut S, ctx: &Context) -> Result<Tables> {
        let limit = self.first.saturating_add(ctx.limits.probe_bytes).min(src.len());
        let mut t = Tables {
            pat: [0; MAX_SECTION],
            sdt: [0; MAX_SECTION],
            pat_len: 0,
            sdt_len: 0,
            pat_first: true,
        };
        // One pass for both tables: each section found, the scan goes on
        // from the packet after it for the other.
        let (mut pat, mut sdt): (Option<u64>, Option<u64>) = (None, None);
        let mut from = self.first;
        let mut buf = [0u8; MAX_SECTION];
        while pat.is_none() || sdt.is_none() {
            let (need_pat, need_sdt) = (pat.is_none(), sdt.is_none());
            let want = |pid: u16, s: &[u8]| {
                (need_pat && pid == 0 && s.first() == Some(&TABLE_PAT))
                    || (need_sdt && pid == SDT_PID && s.first() == Some(&TABLE_SDT))
            };
            let Some((n, at)) = self.find_section(src, ctx, from, limit, &mut buf, want)? else {
                break;
            };
            let (dst, len, seen) = if buf.first() == Some(&TABLE_PAT) {
                (&mut t.pat, &mut t.pat_len, &mut pat)
            } else {
                (&mut t.sdt, &mut t.sdt_len, &mut sdt)
            };
            *dst = buf;
            *len = n;
            *seen = Some(at);
            from = at + self.packet_size;
        }
        t.pat_first = match (pat, sdt) {
            (Some(a), Some(b)) => a < b,
            (_, sdt) => sdt.is_none(),
        };
        Ok(t)
    }

    /// The next program (see the module documentation).
    pub(super) fn program<'c, S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        cur: &'c mut ProgramCursor,
    ) -> Result<Option<Program<'c>>> {
        let limit = self.first.saturating_add(ctx.limits.probe_bytes).min(src.len());
        let t = self.tables(src, ctx)?;
        let Some(number) = t.nth(cur.index) else {
            return Ok(None);
        };
        cur.index += 1;
        let pmt_pid = programs_of(t.pat_section()).find(|p| p.0 == number).map(|p| p.1);
        let (provider, name) = service_names(t.sdt_section(), number, &mut cur.names);
        let mut pcr_pid = None;
        let mut count = 0;
        let mut buf = [0u8; MAX_SECTION];
        let is_pmt =
            |pid: u16, s: &[u8]| Some(pid) == pmt_pid && s.first() == Some(&TABLE_PMT) && be16(s, 3) == Some(number);
        // A service of the SDT alone has no PMT to look for.
        let pmt = match pmt_pid {
            Some(_) => self.find_section(src, ctx, self.first, limit, &mut buf, is_pmt)?,
            None => None,
        };
        if let Some((n, _)) = pmt {
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
        let (p, rest) = cur.names.split_at(MAX_NAME);
        Ok(Some(Program {
            number,
            pmt_pid: pmt_pid.unwrap_or(0),
            pcr_pid,
            tracks: cur.tracks.get(..count).unwrap_or(&[]),
            service_name: name.and_then(|l| rest.get(..l)).and_then(dvb_text),
            service_provider: provider.and_then(|l| p.get(..l)).and_then(dvb_text),
            in_pat: pmt_pid.is_some(),
        }))
    }

    /// The first whole section from the packet at `from` up to `limit`, its
    /// CRC correct, that `want` accepts (given the PID and the section): its
    /// length in `buf` and the offset of its first packet. Resynchronises
    /// after junk as the open does.
    fn find_section<S: Source>(
        &self,
        src: &mut S,
        ctx: &Context,
        from: u64,
        limit: u64,
        buf: &mut [u8; MAX_SECTION],
        want: impl Fn(u16, &[u8]) -> bool,
    ) -> Result<Option<(usize, u64)>> {
        let len = src.len();
        let mut at = from;
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
                    return Ok(Some((n, at - self.packet_size)));
                }
            }
        }
        Ok(None)
    }
}

/// The first PAT and SDT sections, and which came first.
struct Tables {
    pat: [u8; MAX_SECTION],
    sdt: [u8; MAX_SECTION],
    /// Section lengths (CRC included); 0 when not found.
    pat_len: usize,
    sdt_len: usize,
    /// Whether the PAT came before the SDT (or there is no SDT).
    pat_first: bool,
}

impl Tables {
    /// The PAT section without its CRC (empty when none was found).
    fn pat_section(&self) -> &[u8] {
        self.pat.get(..self.pat_len.saturating_sub(4)).unwrap_or(&[])
    }

    /// The SDT section without its CRC (empty when none was found).
    fn sdt_section(&self) -> &[u8] {
        self.sdt.get(..self.sdt_len.saturating_sub(4)).unwrap_or(&[])
    }

    /// Calls `f` with the program numbers in ffmpeg's order, each as often
    /// as a table lists it, until `f` returns `false`.
    fn each(&self, mut f: impl FnMut(u16) -> bool) {
        let pat = programs_of(self.pat_section()).map(|p| p.0);
        let sdt = services(self.sdt_section())
            .filter(|s| service_descriptor(s.1).is_some())
            .map(|s| s.0);
        if self.pat_first {
            for n in pat.chain(sdt) {
                if !f(n) {
                    return;
                }
            }
        } else {
            for n in sdt.chain(pat) {
                if !f(n) {
                    return;
                }
            }
        }
    }

    /// Program `k` (from 0) of [`Tables::each`], each number once.
    fn nth(&self, k: usize) -> Option<u16> {
        let (mut i, mut seen, mut out) = (0usize, 0usize, None);
        self.each(|n| {
            let mut j = 0;
            let mut dup = false;
            self.each(|m| {
                dup = j < i && m == n;
                j += 1;
                j < i && !dup
            });
            i += 1;
            if dup {
                return true;
            }
            if seen == k {
                out = Some(n);
                return false;
            }
            seen += 1;
            true
        });
        out
    }
}

/// The program_number and PMT PID pairs of a PAT section (CRC removed),
/// after its 8-byte header; program 0 (the network PID) left out.
fn programs_of(sec: &[u8]) -> impl Iterator<Item = (u16, u16)> + '_ {
    sec.get(8..)
        .unwrap_or(&[])
        .chunks_exact(4)
        .map(|e| (be16(e, 0).unwrap_or(0), be16(e, 2).unwrap_or(0) & 0x1FFF))
        .filter(|e| e.0 != 0)
}

/// The services of an SDT section (CRC removed): service_id and its
/// descriptors, until one's descriptor loop runs past the section (where
/// ffmpeg's `sdt_cb` stops).
fn services(sec: &[u8]) -> impl Iterator<Item = (u16, &[u8])> + '_ {
    // 11-byte header, then per service: service_id (2), flags (1),
    // running_status / free_CA_mode / descriptors_loop_length (2).
    let mut i = 11;
    core::iter::from_fn(move || {
        let (id, dl) = (be16(sec, i)?, be16(sec, i + 3)?);
        let dl = usize::from(dl & 0x0FFF);
        let descs = sec.get(i + 5..i + 5 + dl)?;
        i += 5 + dl;
        Some((id, descs))
    })
}

/// The provider and service names of the first service descriptor (§6.2.33)
/// among `descs`; `None` without one whose names fit in it (ffmpeg makes
/// no program then).
fn service_descriptor(descs: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut d = descs;
    while let Some(&[tag, len]) = d.get(..2) {
        let body = d.get(2..2 + usize::from(len))?;
        d = d.get(2 + usize::from(len)..).unwrap_or(&[]);
        if tag != SERVICE_DESCRIPTOR {
            continue;
        }
        // service_type, provider length and name, name length and name.
        let pl = usize::from(*body.get(1)?);
        let provider = body.get(2..2 + pl)?;
        let nl = usize::from(*body.get(2 + pl)?);
        let name = body.get(3 + pl..3 + pl + nl)?;
        return Some((provider, name));
    }
    None
}

/// The provider and service name lengths of the service `number` in an SDT
/// section (CRC removed), copied into `names` (provider first, then name,
/// `MAX_NAME` bytes each).
fn service_names(sec: &[u8], number: u16, names: &mut [u8; 2 * MAX_NAME]) -> (Option<usize>, Option<usize>) {
    let Some((provider, name)) = services(sec)
        .find(|s| s.0 == number)
        .and_then(|s| service_descriptor(s.1))
    else {
        return (None, None);
    };
    let (p, n) = names.split_at_mut(MAX_NAME);
    let copy = |src: &[u8], dst: &mut [u8]| {
        dst.get_mut(..src.len())?.copy_from_slice(src);
        Some(src.len())
    };
    (copy(provider, p), copy(name, n))
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
        assert_eq!(service_names(&sdt(&[(2, &bad)]), 2, &mut names), (None, None));
        let mut cut = sdt(&[(2, &d)]);
        cut.truncate(cut.len() - 6);
        let _ = service_names(&cut, 2, &mut names);
        assert_eq!(service_names(&[0x42, 0], 2, &mut names), (None, None));
    }

    /// ffmpeg's order: the first table's programs, then the other's new
    /// ones; a number once; an SDT service without a service descriptor is
    /// no program.
    #[test]
    fn program_order() {
        let d = [0x48, 5, 1, 1, b'P', 1, b'N'];
        let sdt_sec = sdt(&[(9, &d), (2, &d), (7, &[0x0A, 0]), (9, &d)]);
        let mut pat_sec = std::vec![0, 0xB0, 0, 0, 1, 0xC1, 0, 0];
        for (n, pid) in [(0u16, 0x10u16), (1, 0x100), (2, 0x101), (1, 0x102)] {
            pat_sec.extend_from_slice(&n.to_be_bytes());
            pat_sec.extend_from_slice(&(0xE000 | pid).to_be_bytes());
        }
        let mut t = Tables {
            pat: [0; MAX_SECTION],
            sdt: [0; MAX_SECTION],
            pat_len: pat_sec.len() + 4,
            sdt_len: sdt_sec.len() + 4,
            pat_first: true,
        };
        t.pat[..pat_sec.len()].copy_from_slice(&pat_sec);
        t.sdt[..sdt_sec.len()].copy_from_slice(&sdt_sec);
        let all = |t: &Tables| (0..).map_while(|k| t.nth(k)).collect::<std::vec::Vec<_>>();
        assert_eq!(all(&t), [1, 2, 9]);
        t.pat_first = false;
        assert_eq!(all(&t), [9, 2, 1]);
        t.sdt_len = 0;
        assert_eq!(all(&t), [1, 2]);
        t.pat_len = 0;
        assert!(all(&t).is_empty());
    }
}
