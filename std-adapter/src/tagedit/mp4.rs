//! MP4, M4A, MOV: the item list in `moov` rewritten. The new `moov` goes
//! in place when it fits the old one plus the `free`/`skip` boxes beside
//! it (what is left becomes a `free` box); otherwise a copy puts it where
//! the old one was, followed by a `free` box of [`COPY_PADDING`] bytes for
//! later edits, and when media data follows it, every chunk offset past it
//! (`stco`/`co64`) is shifted by the growth (an `stco` that would pass 4
//! GiB becomes a `co64`). A `moov` that is the last box of the file and
//! has outgrown its place is written after it, in place, and the old one
//! made a `free` box once the new one is on the disk.
//!
//! The `moov` is held as a [`Skeleton`]: its large sample tables stay in
//! the file and are copied as ranges, so the memory of an edit does not
//! grow with the length of the recording.

use super::mp4_ilst::edit_moov;
use super::mp4_skeleton::{changed_writes, Skeleton};
use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits};
use std::fs::File;

/// Most top-level boxes walked.
const MAX_TOP: usize = 100_000;
/// Largest `moov` read into memory.
const MAX_MOOV: u64 = 256 << 20;
/// Content of the `free` box written after a `moov` that a copy moved or
/// grew.
pub(super) const COPY_PADDING: u64 = 1024;

/// A top-level box of the file.
#[derive(Debug, Clone, Copy)]
struct Top {
    pos: u64,
    len: u64,
    kind: [u8; 4],
    /// Its size field is 0: it runs to the end of the file.
    to_end: bool,
}

impl Top {
    fn end(&self) -> u64 {
        self.pos + self.len
    }
    fn is_free(&self) -> bool {
        &self.kind == b"free" || &self.kind == b"skip"
    }
}

/// The top-level boxes. Errors: a box past the end of the file (a
/// truncated file is refused: a copy would not be whole), too many boxes.
fn walk(file: &File) -> std::io::Result<Vec<Top>> {
    let file_len = file.metadata()?.len();
    let mut tops = Vec::new();
    let mut pos = 0u64;
    while pos < file_len {
        if tops.len() == MAX_TOP {
            return Err(malformed(format!("mp4: more than {MAX_TOP} top-level boxes")));
        }
        let h = read_at(file, pos, 8.min(file_len - pos) as usize, "mp4: a top-level box header")?;
        let h: [u8; 8] = h
            .try_into()
            .map_err(|_| malformed(format!("mp4: a box header cut at byte {pos}")))?;
        let size = u64::from(u32::from_be_bytes([h[0], h[1], h[2], h[3]]));
        let kind = [h[4], h[5], h[6], h[7]];
        let (len, header) = match size {
            0 => (file_len - pos, 8),
            1 => {
                let l = read_at(file, pos + 8, 8, "mp4: a 64-bit box size")?;
                (u64::from_be_bytes(l.try_into().unwrap_or_default()), 16)
            }
            n => (n, 8),
        };
        if len < header || pos.checked_add(len).is_none_or(|e| e > file_len) {
            return Err(malformed(format!(
                "mp4: top-level box '{}' at byte {pos} runs past the end of the file (ISO/IEC 14496-12 4.2)",
                String::from_utf8_lossy(&kind)
            )));
        }
        tops.push(Top {
            pos,
            len,
            kind,
            to_end: size == 0,
        });
        pos += len;
    }
    Ok(tops)
}

/// The header of a `free` box of `len` bytes in all (at least 8): 8
/// bytes, or 16 with a 64-bit size past 4 GiB.
fn free_header(len: u64) -> Vec<u8> {
    match u32::try_from(len) {
        Ok(n) => [&n.to_be_bytes()[..], b"free"].concat(),
        Err(_) => [&1u32.to_be_bytes()[..], b"free", &len.to_be_bytes()].concat(),
    }
}

/// The plan for `edits` on the MP4 file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> std::io::Result<Plan> {
    let tops = walk(file)?;
    let mut moovs = tops.iter().enumerate().filter(|(_, t)| &t.kind == b"moov");
    let (i, moov) = moovs
        .next()
        .ok_or_else(|| malformed("mp4: no moov box (ISO/IEC 14496-12 8.2.1)"))?;
    if moovs.next().is_some() {
        return Err(malformed("mp4: more than one moov box (ISO/IEC 14496-12 8.2.1)"));
    }
    if moov.len > MAX_MOOV {
        return Err(malformed(format!(
            "mp4: a moov of {} bytes is over the editor's 256 MiB",
            moov.len
        )));
    }
    let old = Skeleton::read(file, moov.pos, moov.len)?;
    let file_len = file.metadata()?.len();
    // Every chunk inside the file: a truncated file is refused.
    old.check_offsets(file_len)?;
    let mut new = old.clone();
    new.bytes = edit_moov(&old.bytes, edits)?;
    // The region the new moov may take: moov and the free boxes beside it.
    let lo = tops
        .get(..i)
        .map_or(i, |b| i - b.iter().rev().take_while(|t| t.is_free()).count());
    let hi = i + tops
        .get(i + 1..)
        .map_or(0, |a| a.iter().take_while(|t| t.is_free()).count());
    let (new_pieces, new_len) = new.pieces()?;
    let fits_in = |room: u64| new_len == room || new_len + 8 <= room;
    let end = tops[hi].end();
    // Where the moov is, when it fits there with the free boxes after it
    // (its unchanged boxes are not written again); else from the first
    // free box before it.
    let here = fits_in(end - moov.pos);
    // The moov is last (only free boxes after it) and has outgrown its
    // place: the new one, with a free box for later edits, goes after the
    // end of the file, and the old one becomes a free box after that (a
    // cut between the two leaves the old moov in force and the new one as
    // trailing bytes). Preferred to moving it into the free boxes before
    // it, which would write it whole.
    let last = hi + 1 == tops.len() && !tops.iter().any(|t| t.to_end);
    if in_place_ok && last && !here {
        let mut tail = new_pieces;
        let header = free_header(8 + COPY_PADDING);
        tail.push(Piece::Zeros(8 + COPY_PADDING - header.len() as u64));
        tail.insert(tail.len() - 1, Piece::Bytes(header));
        return Ok(Plan::Append {
            writes: vec![(moov.pos + 4, b"free".to_vec())],
            at: file_len,
            tail,
        });
    }
    let start = if here { moov.pos } else { tops[lo].pos };
    let avail = end - start;
    let fits = fits_in(avail);
    if fits && in_place_ok {
        let (old_pieces, _) = old.pieces()?;
        let mut writes = changed_writes(file, &old_pieces, moov.pos, &new_pieces, start)?;
        if avail > new_len {
            let free_at = start + new_len;
            let header = free_header(avail - new_len);
            // Zeros where the old moov was, so old values do not linger.
            let zero_from = (free_at + header.len() as u64).max(moov.pos);
            writes.push((free_at, header));
            if moov.end() > zero_from {
                writes.push((zero_from, vec![0u8; (moov.end() - zero_from) as usize]));
            }
        }
        return Ok(Plan::InPlace(writes));
    }
    // What takes the region's place: the new moov and a free box (its
    // content zeros written from a fixed buffer).
    let (head, free_len) = if fits {
        (new_pieces, avail - new_len)
    } else {
        let media_after = tops.get(hi + 1..).unwrap_or(&[]).iter().any(|t| &t.kind == b"mdat");
        if media_after {
            if let Some(t) = tops
                .iter()
                .skip(hi + 1)
                .find(|t| matches!(&t.kind, b"moof" | b"mfra" | b"meta"))
            {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    format!(
                        "mp4: the moov grows and '{}' follows it (absolute offsets outside moov): not rewritten",
                        String::from_utf8_lossy(&t.kind)
                    ),
                ));
            }
            new.shift_media(end, avail, 8 + COPY_PADDING)?;
        }
        (new.pieces()?.0, 8 + COPY_PADDING)
    };
    let header = free_header(free_len);
    let zeros = free_len.saturating_sub(header.len() as u64);
    let mut pieces = vec![Piece::Range { start: 0, len: start }];
    pieces.extend(head);
    if free_len > 0 {
        pieces.push(Piece::Bytes(header));
        pieces.push(Piece::Zeros(zeros));
    }
    pieces.push(Piece::Range {
        start: end,
        len: file_len - end,
    });
    Ok(Plan::Copy(pieces))
}

/// The `moov` of the MP4 file `file` after `edits`, whole (for tests: the
/// skeleton's pieces read back).
#[cfg(test)]
pub(super) fn edited_moov(file: &File, edits: &Edits) -> std::io::Result<Vec<u8>> {
    let tops = walk(file)?;
    let moov = tops
        .iter()
        .find(|t| &t.kind == b"moov")
        .ok_or_else(|| malformed("mp4: no moov"))?;
    let mut s = Skeleton::read(file, moov.pos, moov.len)?;
    s.bytes = edit_moov(&s.bytes, edits)?;
    super::mp4_skeleton::materialise(file, &s.pieces()?.0)
}

#[cfg(test)]
mod tests {
    use super::super::mp4_box::make;
    use super::*;
    use std::io::Write;

    /// An MP4 of one track: `ftyp`, then `moov` and `mdat` in the order
    /// `moov_first` says; the `stsz` holds `samples` entries (past the
    /// skeleton's 64 KiB when large), the `stco` points at the `mdat`.
    fn file(samples: u32, moov_first: bool, dir: &std::path::Path) -> std::path::PathBuf {
        let mdat = make(b"mdat", &vec![7u8; 4096]).unwrap();
        let moov_for = |mdat_at: u32| {
            let mut stsz = vec![0u8; 8];
            stsz.extend_from_slice(&samples.to_be_bytes());
            stsz.extend((0..samples).flat_map(|i| (i % 3).to_be_bytes()));
            let mut stco = vec![0u8; 4];
            stco.extend_from_slice(&1u32.to_be_bytes());
            stco.extend_from_slice(&(mdat_at + 8).to_be_bytes());
            let stbl = make(
                b"stbl",
                &[make(b"stsz", &stsz).unwrap(), make(b"stco", &stco).unwrap()].concat(),
            )
            .unwrap();
            let minf = make(b"minf", &stbl).unwrap();
            let mdia = make(b"mdia", &minf).unwrap();
            let trak = make(b"trak", &mdia).unwrap();
            let mvhd = make(b"mvhd", &[0u8; 100]).unwrap();
            make(b"moov", &[mvhd, trak].concat()).unwrap()
        };
        let ftyp = make(b"ftyp", b"isomiso2").unwrap();
        let bytes = if moov_first {
            let len = moov_for(0).len() as u32;
            [ftyp.clone(), moov_for(ftyp.len() as u32 + len), mdat].concat()
        } else {
            [ftyp.clone(), mdat.clone(), moov_for(ftyp.len() as u32)].concat()
        };
        let path = dir.join(format!("s{samples}-{moov_first}.mp4"));
        std::fs::File::create(&path).unwrap().write_all(&bytes).unwrap();
        path
    }

    /// A fresh directory for one test, emptied first.
    struct Scratch(std::path::PathBuf);
    impl Scratch {
        fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    fn scratch(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("mediaslice-std-{}-mp4-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    fn edits() -> Edits {
        let mut e = Edits::default();
        e.push_set("title=A title long enough to grow the moov").unwrap();
        e.push_set("artist=Someone").unwrap();
        e
    }

    /// The skeleton (large `stsz` left in the file) gives the bytes that
    /// editing the whole `moov` in memory gives.
    #[test]
    fn skeleton_edit_equals_whole_moov_edit() {
        let dir = scratch("equal");
        for (samples, moov_first) in [(10, false), (50_000, false), (50_000, true)] {
            let path = file(samples, moov_first, dir.path());
            let f = File::open(&path).unwrap();
            let tops = walk(&f).unwrap();
            let moov = tops.iter().find(|t| &t.kind == b"moov").unwrap();
            let whole = read_at(&f, moov.pos, moov.len as usize, "moov").unwrap();
            let skeleton = Skeleton::read(&f, moov.pos, moov.len).unwrap();
            if samples > 20_000 {
                assert!(skeleton.bytes.len() < 4096, "stsz left in the file");
            }
            assert_eq!(
                super::super::mp4_skeleton::materialise(&f, &skeleton.pieces().unwrap().0).unwrap(),
                whole
            );
            assert_eq!(edited_moov(&f, &edits()).unwrap(), edit_moov(&whole, &edits()).unwrap());
        }
    }

    /// A last `moov` that grows is appended and the old one freed; the
    /// file then reads as before with the new title.
    #[test]
    fn a_last_moov_that_grows_is_appended() {
        let dir = scratch("append");
        let path = file(50_000, false, dir.path());
        let f = File::open(&path).unwrap();
        let len = f.metadata().unwrap().len();
        let Plan::Append { writes, at, tail } = plan(&f, &edits(), true).unwrap() else {
            panic!("not an append")
        };
        assert_eq!(at, len);
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].1, b"free");
        // The stsz stays a range of the file: the plan holds a few KiB.
        let held: usize = tail
            .iter()
            .map(|p| if let Piece::Bytes(b) = p { b.len() } else { 0 })
            .sum();
        assert!(held < 4096, "{held} bytes held");
        // With an output path, the same edit is a copy.
        assert!(matches!(plan(&f, &edits(), false).unwrap(), Plan::Copy(_)));
        // Carried out, the file reads with the new moov; a second edit
        // then fits the padding written after it and writes a few bytes.
        drop(f);
        let report = super::super::edit(&path, &edits(), None).unwrap();
        assert_eq!(report.mode, super::super::EditMode::Extended);
        let f = File::open(&path).unwrap();
        let tops = walk(&f).unwrap();
        let kinds: Vec<&[u8; 4]> = tops.iter().map(|t| &t.kind).collect();
        assert_eq!(kinds, [b"ftyp", b"mdat", b"free", b"moov", b"free"]);
        let mut again = Edits::default();
        again.push_set("title=Another title").unwrap();
        let Plan::InPlace(writes) = plan(&f, &again, true).unwrap() else {
            panic!("not in place")
        };
        let written: usize = writes.iter().map(|(_, b)| b.len()).sum();
        assert!(written < 1200, "{written} bytes written");
        assert!(writes.iter().all(|(at, _)| *at >= tops[3].pos));
    }

    /// The `moov` pieces of a copy plan (between the copied head and the
    /// padding box), read back.
    fn moov_of_copy(f: &File, plan: Plan) -> Vec<u8> {
        let Plan::Copy(pieces) = plan else { panic!("not a copy") };
        let n = pieces.len();
        super::super::mp4_skeleton::materialise(f, &pieces[1..n - 3]).unwrap()
    }

    /// The first entry of the first chunk offset table of `moov`, and
    /// whether it is a `co64`.
    fn first_offset(moov: &[u8]) -> (u64, bool) {
        let at = moov.windows(4).position(|w| w == b"stco" || w == b"co64").unwrap();
        let wide = &moov[at..at + 4] == b"co64";
        let e = &moov[at + 12..];
        let v = if wide {
            u64::from_be_bytes(e[..8].try_into().unwrap())
        } else {
            u64::from(u32::from_be_bytes(e[..4].try_into().unwrap()))
        };
        (v, wide)
    }

    /// A first `moov` that grows moves the media: the chunk offsets move
    /// with it, in a copy.
    #[test]
    fn a_first_moov_that_grows_shifts_the_offsets() {
        let dir = scratch("shift");
        let path = file(50_000, true, dir.path());
        let f = File::open(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mdat_before = before.windows(4).position(|w| w == b"mdat").unwrap() as u64 - 4;
        let moov = moov_of_copy(&f, plan(&f, &edits(), true).unwrap());
        let growth = moov.len() as u64 + 8 + COPY_PADDING - (mdat_before - 16);
        assert_eq!(first_offset(&moov), (mdat_before + 8 + growth, false));
        // The rest of the moov as the whole-moov edit gives it.
        let whole = read_at(&f, 16, (mdat_before - 16) as usize, "moov").unwrap();
        let want = edit_moov(&whole, &edits()).unwrap();
        assert_eq!(moov.len(), want.len());
    }

    /// An `stco` whose offsets a grown `moov` would push past 4 GiB
    /// becomes a `co64` (a sparse file of 4 GiB).
    #[test]
    fn an_stco_pushed_past_4_gib_becomes_co64() {
        let dir = scratch("widen");
        let path = dir.path().join("sparse.mp4");
        let target = u64::from(u32::MAX) - 100;
        let mut stco = vec![0u8; 4];
        stco.extend_from_slice(&1u32.to_be_bytes());
        stco.extend_from_slice(&(target as u32).to_be_bytes());
        let stbl = make(b"stbl", &make(b"stco", &stco).unwrap()).unwrap();
        let trak = make(b"trak", &make(b"mdia", &make(b"minf", &stbl).unwrap()).unwrap()).unwrap();
        let moov = make(b"moov", &trak).unwrap();
        let ftyp = make(b"ftyp", b"isomiso2").unwrap();
        let mdat_at = (ftyp.len() + moov.len()) as u64;
        let len = target + 1000;
        let mut head = [ftyp, moov].concat();
        head.extend_from_slice(&1u32.to_be_bytes());
        head.extend_from_slice(b"mdat");
        head.extend_from_slice(&(len - mdat_at).to_be_bytes());
        let mut w = std::fs::File::create(&path).unwrap();
        w.write_all(&head).unwrap();
        w.set_len(len).unwrap();
        drop(w);
        let f = File::open(&path).unwrap();
        let moov = moov_of_copy(&f, plan(&f, &edits(), false).unwrap());
        let growth = moov.len() as u64 + 8 + COPY_PADDING - (mdat_at - 16);
        assert_eq!(first_offset(&moov), (target + growth, true));
    }
}
