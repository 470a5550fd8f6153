//! WAV and RF64/BW64: the `LIST`/`INFO` chunk (Microsoft RIFF, "INFO
//! List Chunk") rewritten in place when it fits the old chunk plus the
//! `JUNK` chunks right after it (the rest a `JUNK` chunk); else, when the
//! chunks run to the end of the file, **appended** there (with a `JUNK`
//! chunk of [`COPY_PADDING`] bytes for later edits), the old list made a
//! `JUNK` chunk and the RIFF size (RF64: the `ds64` one) patched after the
//! new list is on the disk; else a copy with the new chunk in the old
//! one's place (before `data` when there was none), the padding after it,
//! and the RIFF size corrected. An edit of `date` or `comment` is refused
//! when a `bext` chunk also holds them.

use super::iff::{self, Chunk};
use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits};
use mediaslice::codec::riff_tags::info_name;
use std::fs::File;

/// Content of the `JUNK` chunk a copy writes after the list.
const COPY_PADDING: u64 = 1024;
/// Largest `LIST` chunk read into memory.
const MAX_LIST: u64 = 16 << 20;

fn is_junk(c: &Chunk) -> bool {
    matches!(&c.id, b"JUNK" | b"junk" | b"PAD ")
}

/// How many JUNK chunks follow chunk `i` (the list's padding).
fn junk_after(chunks: &[Chunk], i: usize) -> usize {
    chunks
        .get(i + 1..)
        .map_or(0, |a| a.iter().take_while(|c| is_junk(c)).count())
}

/// The INFO id a field is written as (ffmpeg's `ff_riff_info_conv`); a
/// four-character upper-case name as itself.
fn info_id(name: &str) -> Option<[u8; 4]> {
    Some(*match name.to_ascii_lowercase().as_str() {
        "title" => b"INAM",
        "artist" => b"IART",
        "album" => b"IPRD",
        "date" => b"ICRD",
        "genre" => b"IGNR",
        "comment" => b"ICMT",
        "track" => b"ITRK",
        _ => {
            let b: [u8; 4] = name.as_bytes().try_into().ok()?;
            return b
                .iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
                .then_some(b);
        }
    })
}

/// The chunks of a WAV file and where its RIFF size is.
struct Layout {
    /// The RIFF size (RF64: the `ds64` one).
    riff_size: u64,
    /// RF64/BW64: where the `ds64` chunk is (its body's first 8 bytes are
    /// the RIFF size; EBU Tech 3306 §3).
    ds64: Option<u64>,
    chunks: Vec<Chunk>,
}

/// The chunks after the 12-byte RIFF header. Errors: no RIFF or RF64
/// WAVE header, an RF64 file without a `ds64` chunk first, a chunk past
/// the end of the file.
fn walk(file: &File) -> std::io::Result<Layout> {
    let head = read_at(file, 0, 12, "wav: the RIFF header")?;
    let rf64 = head.get(..4) == Some(b"RF64") || head.get(..4) == Some(b"BW64");
    if !(rf64 || head.get(..4) == Some(b"RIFF")) || head.get(8..12) != Some(b"WAVE") {
        return Err(malformed("wav: no RIFF WAVE header"));
    }
    let file_len = file.metadata()?.len();
    let (riff_size, ds64, data_size) = if rf64 {
        let ds = read_at(file, 12, 36, "rf64: the ds64 chunk")?;
        if ds.get(..4) != Some(b"ds64") {
            return Err(malformed("rf64: no ds64 chunk first (EBU Tech 3306 3)"));
        }
        if ds.get(4..8).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes) < Some(28) {
            return Err(malformed(
                "rf64: a ds64 chunk shorter than its fields (EBU Tech 3306 3)",
            ));
        }
        let u64_at = |at: usize| {
            ds.get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
        };
        (u64_at(8).unwrap_or(0), Some(12), u64_at(16))
    } else {
        (
            u64::from(u32::from_le_bytes([head[4], head[5], head[6], head[7]])),
            None,
            None,
        )
    };
    let end = riff_size.saturating_add(8).min(file_len);
    let chunks = iff::walk_sized(
        file,
        (12, end, file_len),
        false,
        ("wav", "the end of the file"),
        data_size,
    )?;
    Ok(Layout {
        riff_size,
        ds64,
        chunks,
    })
}

/// The bytes that give the RIFF size `n`: for a WAV its 4-byte field at
/// byte 4 (None past 4 GiB), for RF64 the `ds64` field.
fn riff_size_write(ds64: Option<u64>, n: u64) -> Option<(u64, Vec<u8>)> {
    match ds64 {
        Some(at) => Some((at + 8, n.to_le_bytes().to_vec())),
        None => Some((4, u32::try_from(n).ok()?.to_le_bytes().to_vec())),
    }
}

/// The subchunks of an INFO list body (after `INFO`), each whole (header,
/// data, pad byte). Errors: one past the list.
fn subchunks(body: &[u8]) -> std::io::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 8 <= body.len() {
        let size = u32::from_le_bytes([body[at + 4], body[at + 5], body[at + 6], body[at + 7]]) as usize;
        let end = at.saturating_add(8).saturating_add(size);
        let padded = (end + (size & 1)).min(body.len());
        if end > body.len() {
            return Err(malformed(
                "wav INFO: a subchunk runs past its list (RIFF INFO List Chunk)",
            ));
        }
        let mut sub = body.get(at..padded).unwrap_or(&[]).to_vec();
        // A last subchunk whose pad byte is the list's own: pad it here.
        if sub.len() % 2 == 1 {
            sub.push(0);
        }
        out.push(sub);
        at = padded;
    }
    Ok(out)
}

fn matches(sub: &[u8], name: &str) -> bool {
    let Some(id) = sub.get(..4).and_then(|i| <[u8; 4]>::try_from(i).ok()) else {
        return false;
    };
    info_id(name) == Some(id) || info_name(&id).is_some_and(|n| n.eq_ignore_ascii_case(name))
}

/// The plan for `edits` on the WAV file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> std::io::Result<Plan> {
    let Layout {
        riff_size,
        ds64,
        chunks,
    } = walk(file)?;
    // bext (EBU Tech 3285) holds a date and a description that readers
    // show as `date` and `comment` too; its fixed fields are not edited yet.
    let bext = chunks.iter().any(|c| &c.id == b"bext");
    if let Some(n) = edits
        .touched()
        .into_iter()
        .find(|n| bext && ["date", "comment"].iter().any(|f| n.eq_ignore_ascii_case(f)))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!("wav: {n} is also in the bext chunk, which is not edited yet"),
        ));
    }
    let mut info = None;
    for (i, c) in chunks.iter().enumerate() {
        if &c.id == b"LIST" && c.size >= 4 && read_at(file, c.pos + 8, 4, "wav LIST")? == b"INFO" {
            info = Some(i);
            break;
        }
    }
    let mut subs = match info.and_then(|i| chunks.get(i)) {
        Some(c) if c.size > MAX_LIST => return Err(malformed("wav: an INFO list over 16 MiB")),
        Some(c) => subchunks(&read_at(file, c.pos + 12, (c.size - 4) as usize, "wav INFO")?)?,
        None => Vec::new(),
    };
    for name in edits.touched() {
        let first = subs.iter().position(|s| matches(s, name));
        subs.retain(|s| !matches(s, name));
        if let Some(value) = edits.value_of(name) {
            let id = info_id(name)
                .ok_or_else(|| malformed(format!("wav INFO: {name:?} has no chunk id (give a four-letter id)")))?;
            let mut data = value.as_bytes().to_vec();
            data.push(0);
            let mut sub = id.to_vec();
            sub.extend_from_slice(&(data.len() as u32).to_le_bytes());
            sub.extend_from_slice(&data);
            if data.len() % 2 == 1 {
                sub.push(0);
            }
            subs.insert(first.unwrap_or(subs.len()).min(subs.len()), sub);
        }
    }
    let body: Vec<u8> = [&b"INFO"[..], &subs.concat()].concat();
    let size = u32::try_from(body.len()).map_err(|_| malformed("wav: the new INFO list is over 4 GiB"))?;
    let list: Vec<u8> = [&b"LIST"[..], &size.to_le_bytes(), &body].concat();
    let new_len = list.len() as u64;
    if let (true, Some(i)) = (in_place_ok, info) {
        let junk = junk_after(&chunks, i);
        let (old, last) = (chunks[i], chunks[i + junk]);
        let avail = last.end() - old.pos;
        if new_len == avail || new_len + 8 <= avail {
            let mut writes = vec![(old.pos, list)];
            if avail > new_len {
                let junk_at = old.pos + new_len;
                let size = (avail - new_len - 8) as u32;
                writes.push((junk_at, [&b"JUNK"[..], &size.to_le_bytes()].concat()));
                // Zeros over the old list's bytes past the new one.
                if old.end() > junk_at + 8 {
                    writes.push((junk_at + 8, vec![0u8; (old.end() - junk_at - 8) as usize]));
                }
            }
            return Ok(Plan::InPlace(writes));
        }
    }
    // A JUNK chunk after the list, for later edits in place.
    let junk: Vec<u8> = [&b"JUNK"[..], &(COPY_PADDING as u32).to_le_bytes()].concat();
    let file_len = file.metadata()?.len();
    let last = chunks.last().map_or(12, |c| c.end());
    // Appended: the RIFF covers every chunk and they end the file (the
    // last one's pad byte may be missing).
    if in_place_ok && riff_size + 8 == last && (last == file_len || last == file_len + 1) {
        let new_riff = riff_size + new_len + 8 + COPY_PADDING;
        if let Some(size) = riff_size_write(ds64, new_riff) {
            let mut tail = Vec::new();
            if last > file_len {
                tail.push(Piece::Bytes(vec![0]));
            }
            tail.extend([Piece::Bytes(list), Piece::Bytes(junk), Piece::Zeros(COPY_PADDING)]);
            let mut writes = vec![size];
            if let Some(c) = info.and_then(|i| chunks.get(i)) {
                writes.push((c.pos, b"JUNK".to_vec()));
            }
            writes.sort();
            return Ok(Plan::Append {
                writes,
                at: file_len,
                tail,
            });
        }
    }
    let old_len = info
        .and_then(|i| Some(chunks.get(i + junk_after(&chunks, i))?.end() - chunks.get(i)?.pos))
        .unwrap_or(0);
    let new_len = new_len + 8 + COPY_PADDING;
    let new_riff = (riff_size + new_len)
        .checked_sub(old_len)
        .ok_or_else(|| malformed("wav: the RIFF size is shorter than its chunks"))?;
    let mut pieces = match ds64 {
        None => {
            let n =
                u32::try_from(new_riff).map_err(|_| malformed("wav: the new file would pass the RIFF 4 GiB size"))?;
            vec![Piece::Bytes([&b"RIFF"[..], &n.to_le_bytes(), b"WAVE"].concat())]
        }
        Some(at) => {
            // The header as it was, the ds64 chunk's RIFF size replaced.
            vec![
                Piece::Range { start: 0, len: at + 8 },
                Piece::Bytes(new_riff.to_le_bytes().to_vec()),
            ]
        }
    };
    // The JUNK right after the old list was its padding: the new JUNK
    // takes its place.
    let old_junk = info.map_or(0..0, |i| i + 1..i + 1 + junk_after(&chunks, i));
    let mut placed = false;
    for (i, c) in chunks.iter().enumerate() {
        if old_junk.contains(&i) {
            continue;
        }
        if ds64 == Some(c.pos) {
            // Its first 16 bytes are in the pieces already.
            pieces.push(Piece::Range {
                start: c.pos + 16,
                len: c.end() - c.pos - 16,
            });
            continue;
        }
        if Some(i) == info || (info.is_none() && !placed && &c.id == b"data") {
            pieces.push(Piece::Bytes(list.clone()));
            pieces.push(Piece::Bytes(junk.clone()));
            pieces.push(Piece::Zeros(COPY_PADDING));
            placed = true;
            if Some(i) == info {
                continue;
            }
        }
        pieces.push(Piece::Range {
            start: c.pos,
            len: c.end().min(file_len) - c.pos,
        });
    }
    if !placed {
        pieces.push(Piece::Bytes(list));
        pieces.push(Piece::Bytes(junk));
        pieces.push(Piece::Zeros(COPY_PADDING));
    }
    let tail = last;
    if file_len > tail {
        pieces.push(Piece::Range {
            start: tail,
            len: file_len - tail,
        });
    }
    Ok(Plan::Copy(pieces))
}
