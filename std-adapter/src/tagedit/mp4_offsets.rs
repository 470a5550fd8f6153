//! The chunk offset tables of a `moov` (`stco`, `co64`; ISO/IEC 14496-12
//! §8.7.5): found with the boxes that hold them, checked against the
//! file, shifted when the media moves, and an `stco` rewritten as `co64`
//! when a shifted offset would pass 4 GiB.

use super::malformed;
use super::mp4_box::{box_at, children, make, splice, BoxAt};

/// One table and the boxes that hold it, `moov` first.
struct Table {
    at: BoxAt,
    ancestors: Vec<BoxAt>,
}

impl Table {
    fn width(&self) -> usize {
        if &self.at.kind == b"co64" {
            8
        } else {
            4
        }
    }

    /// Where the entries start and how many there are. Errors: a count
    /// that runs past the box.
    fn entries(&self, moov: &[u8]) -> std::io::Result<(usize, usize)> {
        let count_at = self.at.body() + 4;
        let count = moov
            .get(count_at..count_at + 4)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as usize)
            .ok_or_else(|| malformed("mp4 stco: shorter than its fields (ISO/IEC 14496-12 8.7.5)"))?;
        let first = count_at + 4;
        if count
            .checked_mul(self.width())
            .and_then(|n| n.checked_add(first))
            .is_none_or(|end| end > self.at.end)
        {
            return Err(malformed(
                "mp4 stco: the entry count runs past the box (ISO/IEC 14496-12 8.7.5)",
            ));
        }
        Ok((first, count))
    }

    /// The offsets, in order.
    fn offsets<'a>(&self, moov: &'a [u8]) -> std::io::Result<impl Iterator<Item = u64> + 'a> {
        let (first, count) = self.entries(moov)?;
        let width = self.width();
        let bytes = moov.get(first..first + count * width).unwrap_or(&[]);
        Ok(bytes
            .chunks_exact(width)
            .map(|e| e.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))))
    }
}

/// The `stco` and `co64` boxes of every track of `moov` (trak, mdia,
/// minf, stbl).
fn tables(moov: &[u8]) -> std::io::Result<Vec<Table>> {
    let top = box_at(moov, 0, moov.len())?;
    let mut out = Vec::new();
    let mut stack = vec![vec![top]];
    while let Some(chain) = stack.pop() {
        let Some(b) = chain.last().copied() else { continue };
        for c in children(moov, b.body(), b.end)? {
            match &c.kind {
                b"trak" | b"mdia" | b"minf" | b"stbl" => stack.push([chain.clone(), vec![c]].concat()),
                b"stco" | b"co64" => out.push(Table {
                    at: c,
                    ancestors: chain.clone(),
                }),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// Checks that every chunk offset of `moov` is inside a file of `len`
/// bytes. Errors: one that is not (a truncated file), a malformed table.
pub(super) fn check_offsets(moov: &[u8], len: u64) -> std::io::Result<()> {
    for t in tables(moov)? {
        if let Some(v) = t.offsets(moov)?.find(|&v| v >= len) {
            return Err(malformed(format!(
                "mp4 stco: chunk offset {v} is past the end of the file (ISO/IEC 14496-12 8.7.5)"
            )));
        }
    }
    Ok(())
}

/// Rewrites as `co64` the first `stco` of `moov` with an offset at or past
/// `from` that `delta` would take past 4 GiB; the holding boxes' sizes are
/// corrected. Returns whether one was rewritten.
pub(super) fn widen_one(moov: &mut Vec<u8>, from: u64, delta: u64) -> std::io::Result<bool> {
    for t in tables(moov)? {
        if t.width() == 8 || !t.offsets(moov)?.any(|v| v >= from && v + delta > u64::from(u32::MAX)) {
            continue;
        }
        let mut body = moov.get(t.at.body()..t.at.body() + 8).unwrap_or(&[]).to_vec();
        body.extend(t.offsets(moov)?.flat_map(u64::to_be_bytes));
        let co64 = make(b"co64", &body)?;
        splice(moov, &t.ancestors, t.at.start, t.at.end, &co64)?;
        return Ok(true);
    }
    Ok(false)
}

/// Adds `delta` to every chunk offset at or past `from` in the tables of
/// `moov`. Errors: a malformed table; an `stco` entry that would pass 4
/// GiB (call [`widen_one`] until it returns false first).
pub(super) fn shift_offsets(moov: &mut [u8], from: u64, delta: u64) -> std::io::Result<()> {
    for t in tables(moov)? {
        let (first, count) = t.entries(moov)?;
        let width = t.width();
        for i in 0..count {
            let at = first + i * width;
            let e = moov
                .get_mut(at..at + width)
                .ok_or_else(|| malformed("mp4 stco: entry past the box"))?;
            let v = e.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
            if v < from {
                continue;
            }
            let n = v + delta;
            if width == 4 {
                let n = u32::try_from(n).map_err(|_| malformed("mp4 stco: a shifted chunk offset passes 4 GiB"))?;
                e.copy_from_slice(&n.to_be_bytes());
            } else {
                e.copy_from_slice(&n.to_be_bytes());
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A moov with one track whose `stco` holds `offsets`.
    fn moov(offsets: &[u32]) -> Vec<u8> {
        let mut stco = vec![0u8; 4];
        stco.extend_from_slice(&(offsets.len() as u32).to_be_bytes());
        stco.extend(offsets.iter().flat_map(|o| o.to_be_bytes()));
        let stco = make(b"stco", &stco).unwrap();
        let stbl = make(b"stbl", &stco).unwrap();
        let minf = make(b"minf", &stbl).unwrap();
        let mdia = make(b"mdia", &minf).unwrap();
        let trak = make(b"trak", &mdia).unwrap();
        make(b"moov", &trak).unwrap()
    }

    fn all(moov: &[u8]) -> Vec<u64> {
        tables(moov)
            .unwrap()
            .iter()
            .flat_map(|t| t.offsets(moov).unwrap().collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn shifts_offsets_past_the_moved_region_only() {
        let mut m = moov(&[100, 5000, 9000]);
        shift_offsets(&mut m, 1000, 24).unwrap();
        assert_eq!(all(&m), [100, 5024, 9024]);
        check_offsets(&m, 9025).unwrap();
        assert!(check_offsets(&m, 9024).is_err());
    }

    #[test]
    fn an_stco_past_4_gib_becomes_co64() {
        let top = u32::MAX - 10;
        let mut m = moov(&[100, 5000, top]);
        assert!(shift_offsets(&mut m.clone(), 1000, 1024).is_err());
        assert!(widen_one(&mut m, 1000, 1024).unwrap());
        assert!(!widen_one(&mut m, 1000, 1024).unwrap());
        shift_offsets(&mut m, 1000, 1024).unwrap();
        assert_eq!(all(&m), [100, 6024, u64::from(top) + 1024]);
        // The sizes of every holding box were corrected: the walk from the
        // top still reaches the table, and the moov's size is its length.
        let t = tables(&m).unwrap();
        assert_eq!(&t[0].at.kind, b"co64");
        assert_eq!(u32::from_be_bytes(m[..4].try_into().unwrap()) as usize, m.len());
    }
}
