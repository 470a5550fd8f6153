//! Matroska and WebM (RFC 9559): the Info Title, the file-level Tags and
//! the cover attachment (`mkv_attach.rs`) rewritten where they are when
//! they fit, else the Tags and Attachments appended at the end of the
//! Segment; Clusters are never moved or read.
//!
//! Placement of a changed Info, Tags or Attachments (a removed one becomes
//! a `Void` and leaves the SeekHead):
//! 1. **In its region**: the element with the `Void`s right before and
//!    after it. The new element stays where the old one started when it
//!    fits there, else moves only as far forward as it must (the `Void`
//!    left before it stays free for a SeekHead that grows later); `Void`s
//!    take the rest (nothing, or at least 2 bytes: a `Void`'s smallest
//!    size). An element that moved is re-pointed in the SeekHead (a
//!    smaller SeekPosition keeps its width).
//! 2. **Appended** (Tags and Attachments; the second after the first):
//!    when the Segment ends the file and its size
//!    can be patched (unknown, or its size field wide enough), the new Tags
//!    goes at the end (over the old one when only Voids follow it), else
//!    the old one becomes a `Void`, the SeekHead entry is re-pointed or
//!    added (the SeekHead may grow into the `Void`s after it) and the
//!    Segment size is patched.
//! 3. Otherwise a copy that moves the Clusters (`mkv_shift`): the
//!    SeekHeads and Cues are rewritten for the new places.
//!
//! With an output file the same layout is written as a copy.

use super::ebml::{size_vint, void_header, Header, MIN_VOID, VOID};
use super::mkv_attach::edit_attachments;
use super::mkv_layout::{walk, Layout, ATTACHMENTS, INFO, SEEK_HEAD, TAGS};
use super::mkv_seek::{entries, repoint, unlist};
use super::mkv_tags::{edit_info, edit_tags};
use super::plan::{Piece, Plan};
use super::{malformed, read_at, Edits};
use std::fs::File;
use std::io;

/// Largest Info, Tags or SeekHead read into memory.
const MAX_META: u64 = 64 << 20;

/// A changed element: where the old one is (an index into the layout's
/// elements; `None` for a Tags made new) and its new bytes.
struct Change {
    old: Option<usize>,
    id: u64,
    new: Vec<u8>,
}

/// Positioned writes, and new bytes written at `at` to end the file.
#[derive(Default)]
struct Layout2 {
    writes: Vec<(u64, Vec<u8>)>,
    tail: Option<(u64, Vec<u8>)>,
}

fn read(file: &File, h: &Header, what: &str) -> io::Result<Vec<u8>> {
    if h.len() > MAX_META {
        return Err(malformed(format!("matroska {what}: over the editor's 64 MiB")));
    }
    read_at(file, h.start, h.len() as usize, what)
}

/// The plan for `edits` on the Matroska/WebM file `file`.
pub(super) fn plan(file: &File, edits: &Edits, in_place_ok: bool) -> io::Result<Plan> {
    let lay = walk(file)?;
    let of = |id: u64| -> Vec<usize> { (0..lay.tops.len()).filter(|&i| lay.tops[i].id == id).collect() };
    let infos = of(INFO);
    let &[info] = infos.as_slice() else {
        return Err(malformed(format!(
            "matroska: {} Info elements; a Segment has exactly one (RFC 9559 §5.1.2)",
            infos.len()
        )));
    };
    let tags = of(TAGS);
    let old_info = read(file, &lay.tops[info], "Info")?;
    let new_info = edit_info(&old_info, edits)?;
    let old_tags: Vec<Vec<u8>> = tags
        .iter()
        .map(|&i| read(file, &lay.tops[i], "Tags"))
        .collect::<io::Result<_>>()?;
    let olds: Vec<&[u8]> = old_tags.iter().map(Vec::as_slice).collect();
    let new_tags = edit_tags(&olds, edits)?;
    let mut changes = Vec::new();
    if new_info != old_info {
        changes.push(Change {
            old: Some(info),
            id: INFO,
            new: new_info,
        });
    }
    for (k, new) in new_tags.into_iter().enumerate() {
        if old_tags.get(k) != Some(&new) {
            changes.push(Change {
                old: tags.get(k).copied(),
                id: TAGS,
                new,
            });
        }
    }
    if edits.touches_pictures() {
        let atts = of(ATTACHMENTS);
        if atts.len() > 1 {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("matroska: {} Attachments elements: not edited (one is)", atts.len()),
            ));
        }
        if super::mkv_attach::is_webm(file)? {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "tag editing: WebM has no attachments, so no cover picture (Matroska has)",
            ));
        }
        let old = atts
            .first()
            .map(|&i| read(file, &lay.tops[i], "Attachments"))
            .transpose()?;
        if let Some(new) = edit_attachments(old.as_deref(), edits)? {
            if !(new.is_empty() && atts.is_empty()) {
                changes.push(Change {
                    old: atts.first().copied(),
                    id: ATTACHMENTS,
                    new,
                });
            }
        }
    }
    let out = match place(file, &lay, &changes) {
        Err(e) if e.kind() == io::ErrorKind::Unsupported => {
            // Nowhere in place: a copy that moves the Clusters.
            let info_bytes = changes
                .iter()
                .find(|c| c.id == INFO)
                .map_or(old_info, |c| c.new.clone());
            let extras: Vec<(u64, Option<usize>, Vec<u8>)> = changes
                .iter()
                .filter(|c| c.id != INFO)
                .map(|c| (c.id, c.old, c.new.clone()))
                .collect();
            return super::mkv_shift::plan(file, &lay, (info, info_bytes), &extras);
        }
        other => other?,
    };
    Ok(if in_place_ok {
        match out.tail {
            None => Plan::InPlace(out.writes),
            Some((at, tail)) => Plan::Append {
                writes: out.writes,
                at,
                tail: vec![Piece::Bytes(tail)],
            },
        }
    } else {
        as_copy(out, lay.file_len)
    })
}

/// The region an element may take: it and the `Void`s right around it,
/// not before `floor`.
fn region(lay: &Layout, i: usize, floor: u64) -> (u64, u64) {
    let t = &lay.tops;
    let mut lo = i;
    while lo > 0 && t[lo - 1].id == VOID && t[lo - 1].end() == t[lo].start && t[lo - 1].end() > floor {
        lo -= 1;
    }
    let mut hi = i;
    while hi + 1 < t.len() && t[hi + 1].id == VOID && t[hi].end() == t[hi + 1].start {
        hi += 1;
    }
    (t[lo].start.max(floor), t[hi].end())
}

/// Where `n` bytes go in the region `start..end` of an element now at
/// `old`: as late as the region allows but not after `old` (so a
/// SeekPosition only gets smaller and keeps its width, and the `Void` left
/// before it stays free for a SeekHead that grows later), else at the
/// region's start; `None` when no place leaves each gap empty or a whole
/// `Void` (at least [`MIN_VOID`] bytes).
fn position_in(start: u64, end: u64, old: u64, n: u64) -> Option<u64> {
    let last = end.checked_sub(n).filter(|&l| l >= start)?;
    let ok = |gap: u64| gap == 0 || gap >= MIN_VOID;
    [old.min(last).max(start), start]
        .into_iter()
        .find(|&at| ok(at - start) && ok(end - at - n))
}

/// Writes that put `new` at `at` in the region `start..end` and `Void`s
/// over the rest, zeroing what the element `old` held under them (so old
/// values do not linger).
fn fill(start: u64, end: u64, at: u64, new: &[u8], old: &Header) -> Vec<(u64, Vec<u8>)> {
    let mut w = Vec::new();
    let void = |from: u64, to: u64, w: &mut Vec<(u64, Vec<u8>)>| {
        if to <= from {
            return;
        }
        let h = void_header(to - from);
        let zero_from = (from + h.len() as u64).max(old.start);
        let zero_to = to.min(old.end());
        w.push((from, h));
        if zero_to > zero_from {
            w.push((zero_from, vec![0; (zero_to - zero_from) as usize]));
        }
    };
    void(start, at, &mut w);
    if !new.is_empty() {
        w.push((at, new.to_vec()));
    }
    void(at + new.len() as u64, end, &mut w);
    w
}

/// Lays the changes out (see the module documentation). The SeekHead may
/// grow into its `Void`s, which then are not a moved element's: the
/// layout is made again until the SeekHeads' sizes settle.
fn place(file: &File, lay: &Layout, changes: &[Change]) -> io::Result<Layout2> {
    let heads: Vec<(usize, Vec<u8>)> = (0..lay.tops.len())
        .filter(|&i| lay.tops[i].id == SEEK_HEAD)
        .map(|i| read(file, &lay.tops[i], "SeekHead").map(|b| (i, b)))
        .collect::<io::Result<_>>()?;
    let mut grown: Vec<u64> = heads.iter().map(|(_, b)| b.len() as u64).collect();
    let mut last = Err(malformed("matroska: the SeekHead's size does not settle"));
    for _ in 0..3 {
        let (out, sizes) = attempt(lay, changes, &heads, &grown)?;
        if sizes == grown {
            return out;
        }
        last = out;
        grown = sizes;
    }
    last.and(Err(malformed("matroska: the SeekHead's size does not settle")))
}

/// One layout, the SeekHeads assumed to take `sizes` bytes. Returns it
/// (or why there is none) and the sizes the SeekHeads took; an error of
/// its own only for malformed input.
#[allow(clippy::type_complexity)]
fn attempt(
    lay: &Layout,
    changes: &[Change],
    heads: &[(usize, Vec<u8>)],
    sizes: &[u64],
) -> io::Result<(io::Result<Layout2>, Vec<u64>)> {
    let mut out = Layout2::default();
    let mut moves: Vec<(u64, u64, u64)> = Vec::new();
    let mut adds: Vec<(u64, u64)> = Vec::new();
    let mut taken: Vec<(u64, u64)> = heads
        .iter()
        .zip(sizes)
        .map(|((i, _), &n)| (lay.tops[*i].start, lay.tops[*i].start + n))
        .collect();
    let mut fail = None;
    // Removed elements, by (ID, position): a Segment may hold several
    // Tags, and only the one removed leaves the SeekHead.
    let mut drops: Vec<(u64, u64)> = Vec::new();
    for c in changes {
        let n = c.new.len() as u64;
        if let (Some(i), true) = (c.old, c.new.is_empty()) {
            // Removed: a Void over it, and no SeekHead entry.
            let old = lay.tops[i];
            out.writes.extend(fill(old.start, old.end(), old.start, &[], &old));
            drops.push((c.id, lay.rel(old.start)));
            continue;
        }
        if let Some(i) = c.old {
            let old = lay.tops[i];
            let floor = taken
                .iter()
                .filter(|(s, _)| *s < old.start)
                .map(|&(_, e)| e)
                .max()
                .unwrap_or(0);
            let (start, end) = region(lay, i, floor);
            if let Some(at) = position_in(start, end, old.start, n).filter(|_| start <= old.start) {
                out.writes.extend(fill(start, end, at, &c.new, &old));
                if at != old.start {
                    moves.push((c.id, lay.rel(old.start), lay.rel(at)));
                }
                taken.push((start, end));
                continue;
            }
        }
        let name = if c.id == TAGS { "Tags" } else { "Attachments" };
        if c.id == INFO {
            fail.get_or_insert(refused("the new Info does not fit its place and the Voids beside it"));
            continue;
        }
        if lay.segment_end != lay.file_len {
            fail.get_or_insert(refused(&format!(
                "the {name} must grow and the Segment does not end the file"
            )));
            continue;
        }
        // A second appended element follows the first one's bytes.
        let before = out.tail.take();
        // The old element is last when only Voids follow it to the end.
        let last = c.old.filter(|&i| {
            let after = lay.tops.get(i..).unwrap_or(&[]);
            before.is_none()
                && after.iter().skip(1).all(|t| t.id == VOID)
                && after.windows(2).all(|w| w[0].end() == w[1].start)
                && after.last().is_some_and(|t| t.end() == lay.segment_end)
        });
        let mut tail = c.new.clone();
        let mut at = match (c.old, last) {
            (_, Some(i)) => {
                // Over the old last element and the Voids after it; a new
                // one a byte shorter leaves no room for a Void, so the file
                // grows by one.
                let old = lay.tops[i];
                let short = (lay.segment_end - old.start).saturating_sub(n);
                if short > 0 {
                    let v = void_header(short.max(MIN_VOID));
                    let pad = short.max(MIN_VOID) - v.len() as u64;
                    tail.extend(v);
                    tail.resize(tail.len() + pad as usize, 0);
                }
                old.start
            }
            (Some(i), None) => {
                let old = lay.tops[i];
                out.writes.extend(fill(old.start, old.end(), old.start, &[], &old));
                lay.segment_end
            }
            (None, None) => lay.segment_end,
        };
        let mut tail_start = at;
        if let Some((first_at, mut first)) = before {
            at = first_at + first.len() as u64;
            first.extend(tail);
            tail = first;
            tail_start = first_at;
        }
        match c.old {
            Some(i) if last.is_none() => moves.push((c.id, lay.rel(lay.tops[i].start), lay.rel(at))),
            _ => {}
        }
        // Listed when an entry points at this very element (by ID and
        // position: the other Tags of the Segment have entries of their own).
        let was = c.old.map(|i| (c.id, lay.rel(lay.tops[i].start)));
        let listed = heads
            .iter()
            .map(|(_, b)| entries(b))
            .collect::<io::Result<Vec<_>>>()?
            .iter()
            .flatten()
            .any(|&e| Some(e) == was);
        if !listed {
            adds.push((c.id, lay.rel(at)));
        }
        out.tail = Some((tail_start, tail));
    }
    let growth = out
        .tail
        .as_ref()
        .map_or(0, |(at, t)| (at + t.len() as u64).saturating_sub(lay.segment_end));
    if let (Some(size), true) = (lay.segment.size, growth > 0) {
        let width = (lay.segment.data - lay.segment.start - 4) as usize;
        match size_vint(size + growth, width) {
            Some(v) => out.writes.push((lay.segment.start + 4, v)),
            None => {
                fail.get_or_insert(refused("the Segment's size field is too narrow for what is appended"));
            }
        }
    }
    if !adds.is_empty() && heads.is_empty() {
        let why = "the Tags or Attachments must move past the Clusters and there is no SeekHead to point at them";
        fail.get_or_insert(refused(why));
    }
    let mut new_sizes = Vec::new();
    for (k, (i, old)) in heads.iter().enumerate() {
        let new = repoint(&unlist(old, &drops)?, &moves, if k == 0 { &adds } else { &[] })?;
        new_sizes.push(new.len() as u64);
        if new == *old {
            continue;
        }
        let h = lay.tops[*i];
        let floor = taken.iter().filter(|(s, _)| *s > h.start).map(|&(s, _)| s).min();
        let (_, end) = region(lay, *i, h.start);
        let end = floor.map_or(end, |f| end.min(f));
        if position_in(h.start, end, h.start, new.len() as u64) != Some(h.start) {
            fail.get_or_insert(refused("the SeekHead must grow and the Voids after it are too small"));
            continue;
        }
        out.writes.extend(fill(h.start, end, h.start, &new, &h));
    }
    if let Some(e) = fail {
        return Ok((Err(e), new_sizes));
    }
    out.writes.sort_by_key(|(p, _)| *p);
    let overlap = out.writes.windows(2).any(|w| w[0].0 + w[0].1.len() as u64 > w[1].0);
    if overlap
        || out
            .tail
            .as_ref()
            .is_some_and(|(at, _)| out.writes.iter().any(|(p, b)| p + b.len() as u64 > *at))
    {
        return Err(malformed("matroska: the edit's writes overlap (an editor error)"));
    }
    Ok((Ok(out), new_sizes))
}

fn refused(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("matroska: {why}"))
}

/// The same layout written as a new file: the input's bytes between the
/// writes, then the tail.
fn as_copy(out: Layout2, file_len: u64) -> Plan {
    let mut pieces = Vec::new();
    let mut at = 0u64;
    for (pos, bytes) in out.writes {
        pieces.push(Piece::Range {
            start: at,
            len: pos - at,
        });
        at = pos + bytes.len() as u64;
        pieces.push(Piece::Bytes(bytes));
    }
    match out.tail {
        Some((tail_at, tail)) => {
            pieces.push(Piece::Range {
                start: at,
                len: tail_at - at,
            });
            pieces.push(Piece::Bytes(tail));
        }
        None => pieces.push(Piece::Range {
            start: at,
            len: file_len - at,
        }),
    }
    pieces.retain(|p| !matches!(p, Piece::Range { len: 0, .. }));
    Plan::Copy(pieces)
}
