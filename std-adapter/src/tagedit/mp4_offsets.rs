//! The chunk offset tables of a `moov` (`stco`, `co64`; ISO/IEC 14496-12
//! §8.7.5), read and written a block at a time: never held, whatever the
//! length of the recording. A table is scanned once (its entry count
//! checked against the box, its largest offset found); when the media
//! moves, it is copied with every offset at or past the moved region
//! shifted, as a `co64` when an `stco` entry would pass 4 GiB.

use super::malformed;
use super::mp4_box::box_header;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Entries read or written at a time.
const BLOCK: usize = 8192;

/// One `stco` or `co64` box of the input, scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Table {
    /// Where the box starts in the file, its length.
    pub pos: u64,
    pub len: u64,
    /// Its header length (8, or 16 with a 64-bit size).
    header: u64,
    /// 8-byte entries (`co64`) rather than 4 (`stco`).
    pub wide: bool,
    /// Entry count.
    pub count: u64,
    /// The largest offset (0 for an empty table).
    pub max: u64,
}

impl Table {
    /// Scans the `stco`/`co64` box of `len` bytes at `pos`. Errors: a box
    /// shorter than its fields, an entry count that runs past the box.
    pub fn read(file: &File, pos: u64, len: u64) -> io::Result<Table> {
        let short = || malformed("mp4 stco: shorter than its fields (ISO/IEC 14496-12 8.7.5)");
        let mut h = [0u8; 8];
        file.read_exact_at(&mut h, pos).map_err(|_| short())?;
        let header = if h.get(..4) == Some(&[0, 0, 0, 1]) { 16 } else { 8 };
        let wide = h.get(4..8) == Some(b"co64");
        let fields = pos + header;
        if len < header + 8 {
            return Err(short());
        }
        let mut c = [0u8; 4];
        file.read_exact_at(&mut c, fields + 4).map_err(|_| short())?;
        let count = u64::from(u32::from_be_bytes(c));
        let width = if wide { 8 } else { 4 };
        if count * width + header + 8 > len {
            return Err(malformed(
                "mp4 stco: the entry count runs past the box (ISO/IEC 14496-12 8.7.5)",
            ));
        }
        let mut t = Table {
            pos,
            len,
            header,
            wide,
            count,
            max: 0,
        };
        let mut max = 0;
        t.each_block(file, &mut |entries| {
            max = entries.fold(max, u64::max);
            Ok(())
        })?;
        t.max = max;
        Ok(t)
    }

    /// Where the first entry is.
    fn first(&self) -> u64 {
        self.pos + self.header + 8
    }

    fn width(&self) -> u64 {
        if self.wide {
            8
        } else {
            4
        }
    }

    /// Hands the entries to `f` a block at a time.
    fn each_block(
        &self,
        file: &File,
        f: &mut dyn FnMut(&mut dyn Iterator<Item = u64>) -> io::Result<()>,
    ) -> io::Result<()> {
        let width = self.width() as usize;
        let mut buf = vec![0u8; BLOCK * width];
        let mut done = 0u64;
        while done < self.count {
            let n = (self.count - done).min(BLOCK as u64) as usize;
            let block = buf.get_mut(..n * width).unwrap_or(&mut []);
            file.read_exact_at(block, self.first() + done * self.width())
                .map_err(|_| malformed("mp4 stco: cut short (ISO/IEC 14496-12 8.7.5)"))?;
            f(&mut block
                .chunks_exact(width)
                .map(|e| e.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))))?;
            done += n as u64;
        }
        Ok(())
    }

    /// Whether the table, its offsets at or past `from` moved by `delta`,
    /// must be written as a `co64`.
    pub fn widens(&self, from: u64, delta: u64) -> bool {
        self.wide || (self.count > 0 && self.max >= from && self.max + delta > u64::from(u32::MAX))
    }

    /// Whether moving the offsets at or past `from` changes the table.
    pub fn moves(&self, from: u64, delta: u64) -> bool {
        delta > 0 && self.count > 0 && self.max >= from
    }

    /// Its length once shifted (a `co64` of `count` entries when it
    /// widens; otherwise as it was, bytes after the entries dropped).
    pub fn shifted_len(&self, from: u64, delta: u64) -> u64 {
        let width = if self.widens(from, delta) { 8 } else { 4 };
        let content = 8 + self.count * width;
        content + box_header(b"co64", content, false).len() as u64
    }

    /// Writes the table with every offset at or past `from` moved by
    /// `delta` through `write`, a block at a time.
    pub fn copy_shifted(
        &self,
        file: &File,
        from: u64,
        delta: u64,
        write: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let wide = self.widens(from, delta);
        let kind: &[u8; 4] = if wide { b"co64" } else { b"stco" };
        let mut head = box_header(kind, 8 + self.count * if wide { 8 } else { 4 }, false);
        let mut fields = [0u8; 8];
        file.read_exact_at(&mut fields, self.pos + self.header)?;
        // Version and flags as they were, the count.
        head.extend_from_slice(&fields);
        write(&head)?;
        let mut out = Vec::with_capacity(BLOCK * 8);
        self.each_block(file, &mut |entries| {
            out.clear();
            for v in entries {
                let v = if v >= from { v + delta } else { v };
                if wide {
                    out.extend_from_slice(&v.to_be_bytes());
                } else {
                    let v = u32::try_from(v).map_err(|_| malformed("mp4 stco: a shifted chunk offset passes 4 GiB"))?;
                    out.extend_from_slice(&v.to_be_bytes());
                }
            }
            write(&out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file holding one `stco` (or `co64`) of `offsets` at byte 0.
    fn table(offsets: &[u64], wide: bool, name: &str) -> (File, std::path::PathBuf) {
        let width = if wide { 8 } else { 4 };
        let mut b = ((16 + offsets.len() * width) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(if wide { b"co64" } else { b"stco" });
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&(offsets.len() as u32).to_be_bytes());
        for &o in offsets {
            if wide {
                b.extend_from_slice(&o.to_be_bytes());
            } else {
                b.extend_from_slice(&(o as u32).to_be_bytes());
            }
        }
        let p = std::env::temp_dir().join(format!("mediaslice-std-{}-stco-{name}", std::process::id()));
        std::fs::File::create(&p).unwrap().write_all(&b).unwrap();
        (File::open(&p).unwrap(), p)
    }

    fn shifted(t: &Table, f: &File, from: u64, delta: u64) -> Vec<u8> {
        let mut out = Vec::new();
        t.copy_shifted(f, from, delta, &mut |b| {
            out.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(out.len() as u64, t.shifted_len(from, delta));
        out
    }

    #[test]
    fn shifts_offsets_past_the_moved_region_only() {
        let offsets: Vec<u64> = (0..20_000).map(|i| 100 + i * 1000).collect();
        let (f, p) = table(&offsets, false, "shift");
        let t = Table::read(&f, 0, f.metadata().unwrap().len()).unwrap();
        assert_eq!((t.count, t.max), (20_000, 100 + 19_999 * 1000));
        assert!(!t.widens(1000, 24) && t.moves(1000, 24) && !t.moves(u64::MAX, 24));
        let out = shifted(&t, &f, 1000, 24);
        let (g, q) = table(
            &offsets
                .iter()
                .map(|&o| if o >= 1000 { o + 24 } else { o })
                .collect::<Vec<_>>(),
            false,
            "shift-want",
        );
        assert_eq!(out, std::fs::read(&q).unwrap());
        drop((g, f));
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(q);
    }

    #[test]
    fn an_stco_past_4_gib_becomes_co64() {
        let top = u64::from(u32::MAX) - 10;
        let (f, p) = table(&[100, 5000, top], false, "widen");
        let t = Table::read(&f, 0, 28).unwrap();
        assert!(t.widens(1000, 1024) && !t.widens(1000, 5));
        let out = shifted(&t, &f, 1000, 1024);
        let (_, q) = table(&[100, 6024, top + 1024], true, "widen-want");
        assert_eq!(out, std::fs::read(&q).unwrap());
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(q);
    }

    #[test]
    fn a_count_past_the_box_is_refused() {
        let (f, p) = table(&[1, 2, 3], false, "count");
        assert!(Table::read(&f, 0, 24).is_err());
        assert!(Table::read(&f, 0, 12).is_err());
        let _ = std::fs::remove_file(p);
    }
}
