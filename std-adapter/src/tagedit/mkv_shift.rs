//! The Matroska copy that moves the Clusters, when the new Info, Tags or
//! Attachments fits nowhere in place: a new file made of the elements
//! before the first Cluster (their `Void`s dropped, Info, Tags and
//! Attachments replaced or removed, a Tags or Attachments that sat after
//! the Clusters brought here) and a `Void` of
//! [`COPY_PADDING`] bytes for later edits, then everything after,
//! unchanged but for the SeekHeads and Cues, whose positions (relative to
//! the Segment's data, RFC 9559 §5.1.1.1.2 and §5.1.5.1.2.2) are moved
//! with what they point at. A position that needs more bytes gets them,
//! which moves what follows: the layout is made again until it settles.
//!
//! Not patched: a Cluster's own Position element (RFC 9559 §5.1.3.2,
//! informational; Clusters are copied unchanged).

use super::ebml::{bytes_of, children, data_of, master_like, uint, uint_sized, void_header, Header, VOID};
use super::mkv_layout::{Layout, ATTACHMENTS, CUES, INFO, SEEK_HEAD, TAGS};
use super::mkv_seek::{entries, repoint, unlist};
use super::plan::{Piece, Plan};
use super::{malformed, read_at};
use std::fs::File;
use std::io;

/// Content of the `Void` left after the elements before the first Cluster.
pub(super) const COPY_PADDING: u64 = 1024;
/// Largest Cues or SeekHead rewritten in memory.
const MAX_INDEX: u64 = 64 << 20;
/// Rounds of layout before it must have settled (positions only widen).
const MAX_ROUNDS: usize = 8;

const CUE_POINT: u64 = 0xBB;
const CUE_TRACK_POSITIONS: u64 = 0xB7;
const CUE_CLUSTER_POSITION: u64 = 0xF1;
const CUE_CODEC_STATE: u64 = 0xEA;

/// What takes the place of one stretch of the old Segment.
enum Kind {
    /// Copied unchanged (Clusters, elements not edited).
    Keep,
    /// Left out (the `Void`s before the first Cluster, a moved Tags).
    Drop,
    /// New bytes (Info, the padding `Void`).
    Bytes(Vec<u8>),
    /// The new bytes of the changed element `extras[k]`.
    Extra(usize, Vec<u8>),
    /// A SeekHead or Cues (its ID, old bytes, bytes of this round),
    /// rebuilt each round from its old bytes.
    Index(u64, Vec<u8>, Vec<u8>),
}

struct Item {
    old_start: u64,
    old_len: u64,
    kind: Kind,
    /// Length in the new file (this round).
    len: u64,
    new_start: u64,
}

/// A changed Tags or Attachments: its ID, the index of the old one (if
/// any), its new bytes (empty: removed).
pub(super) type Extra = (u64, Option<usize>, Vec<u8>);

/// The plan for a copy that moves the Clusters; `info` and `extras` are
/// the new elements.
pub(super) fn plan(file: &File, lay: &Layout, info: (usize, Vec<u8>), extras: &[Extra]) -> io::Result<Plan> {
    let first_cluster = first_cluster(lay);
    let mut items: Vec<Item> = Vec::new();
    let mut cursor = lay.segment.data;
    // The extras placed so far (by index).
    let mut placed: Vec<usize> = Vec::new();
    let push = |items: &mut Vec<Item>, old_start: u64, old_len: u64, kind: Kind| {
        let len = match &kind {
            Kind::Keep | Kind::Index(..) => old_len,
            Kind::Drop => 0,
            Kind::Bytes(b) | Kind::Extra(_, b) => b.len() as u64,
        };
        items.push(Item {
            old_start,
            old_len,
            kind,
            len,
            new_start: 0,
        });
    };
    for (i, t) in lay.tops.iter().enumerate() {
        if t.start > cursor {
            push(&mut items, cursor, t.start - cursor, Kind::Keep);
        }
        let in_head = first_cluster.is_none_or(|c| t.start < c);
        let kind = match t.id {
            VOID if in_head => Kind::Drop,
            INFO if i == info.0 => Kind::Bytes(info.1.clone()),
            TAGS | ATTACHMENTS => match extras.iter().enumerate().find(|(_, e)| e.1 == Some(i)) {
                Some((k, (_, _, new))) if in_head && !new.is_empty() => {
                    placed.push(k);
                    Kind::Extra(k, new.clone())
                }
                Some(_) => Kind::Drop,
                None => Kind::Keep,
            },
            SEEK_HEAD | CUES => {
                if t.len() > MAX_INDEX {
                    return Err(malformed("matroska: a SeekHead or Cues over the editor's 64 MiB"));
                }
                let old = read_at(file, t.start, t.len() as usize, "matroska SeekHead/Cues")?;
                Kind::Index(t.id, old.clone(), old)
            }
            _ => Kind::Keep,
        };
        push(&mut items, t.start, t.len(), kind);
        cursor = t.end();
        let last_of_head =
            first_cluster.is_some_and(|c| cursor == c) || (first_cluster.is_none() && i + 1 == lay.tops.len());
        if last_of_head {
            end_of_head(&mut items, extras, &mut placed, cursor, &push);
        }
    }
    if first_cluster == Some(lay.segment.data) {
        // The Segment starts with a Cluster: the head is empty.
        let at = items
            .iter()
            .position(|it| it.old_start == lay.segment.data)
            .unwrap_or(0);
        let mut head = Vec::new();
        end_of_head(&mut head, extras, &mut placed, lay.segment.data, &push);
        items.splice(at..at, head);
    }
    if lay.segment_end > cursor {
        push(&mut items, cursor, lay.segment_end - cursor, Kind::Keep);
    }
    settle(&mut items, lay, extras)?;
    pieces(lay, &items)
}

/// Where the first Cluster starts: the first stretch of the Segment that
/// no top-level element covers.
fn first_cluster(lay: &Layout) -> Option<u64> {
    let mut at = lay.segment.data;
    for t in &lay.tops {
        if t.start > at {
            return Some(at);
        }
        at = t.end();
    }
    (lay.segment_end > at).then_some(at)
}

/// Ends the elements before the first Cluster: the new Tags and
/// Attachments that were not among them, then the padding `Void`.
fn end_of_head(
    items: &mut Vec<Item>,
    extras: &[Extra],
    placed: &mut Vec<usize>,
    at: u64,
    push: &impl Fn(&mut Vec<Item>, u64, u64, Kind),
) {
    for (k, (_, _, new)) in extras.iter().enumerate() {
        if !new.is_empty() && !placed.contains(&k) {
            push(items, at, 0, Kind::Extra(k, new.clone()));
            placed.push(k);
        }
    }
    let mut pad = void_header(COPY_PADDING);
    pad.resize(COPY_PADDING as usize, 0);
    push(items, at, 0, Kind::Bytes(pad));
}

/// Where the old position `p` (absolute) is in the new file.
fn new_pos(items: &[Item], p: u64) -> u64 {
    let i = items.partition_point(|it| it.old_start + it.old_len <= p || (it.old_len == 0 && it.old_start <= p));
    match items.get(i) {
        Some(it) if matches!(it.kind, Kind::Keep) && p >= it.old_start => it.new_start + (p - it.old_start),
        Some(it) => it.new_start,
        None => items.last().map_or(p, |it| it.new_start + it.len),
    }
}

/// Lays the items out, rebuilding the SeekHeads and Cues until their
/// lengths settle.
fn settle(items: &mut [Item], lay: &Layout, extras: &[Extra]) -> io::Result<()> {
    let seg = lay.segment.data;
    for _ in 0..MAX_ROUNDS {
        let mut at = seg;
        for it in items.iter_mut() {
            it.new_start = at;
            at += it.len;
        }
        // The new Info and extras: the items holding their new bytes.
        let info_at = items.iter().find_map(|it| match &it.kind {
            Kind::Bytes(b) if b.starts_with(&super::ebml::id_bytes(INFO)) => Some(it.new_start - seg),
            _ => None,
        });
        let extra_at = |k: usize| {
            items.iter().find_map(|it| match it.kind {
                Kind::Extra(j, _) if j == k => Some(it.new_start - seg),
                _ => None,
            })
        };
        // Each extra's old SeekHead entry (ID, position), if it had an
        // element: several Tags share an ID, so the position tells them apart.
        let was = |e: &Extra| e.1.and_then(|i| lay.tops.get(i)).map(|t| (e.0, lay.rel(t.start)));
        let removed: Vec<(u64, u64)> = extras.iter().filter(|e| e.2.is_empty()).filter_map(was).collect();
        let mut lens = Vec::new();
        for it in items.iter() {
            let Kind::Index(id, old, _) = &it.kind else { continue };
            let new = if *id == SEEK_HEAD {
                let mut moves = Vec::new();
                for (eid, pos) in entries(old)? {
                    let written = extras
                        .iter()
                        .position(|e| !e.2.is_empty() && was(e) == Some((eid, pos)));
                    let to = match (eid, written) {
                        (_, Some(k)) => extra_at(k).unwrap_or(pos),
                        (INFO, None) => info_at.unwrap_or(pos),
                        _ => new_pos(items, seg + pos) - seg,
                    };
                    moves.push((eid, pos, to));
                }
                let mut add: Vec<(u64, u64)> = Vec::new();
                if first_head(items, it) {
                    let listed = entries(old)?;
                    for (k, e) in extras.iter().enumerate() {
                        let unlisted = was(e).is_none_or(|w| !listed.contains(&w));
                        if let (true, false, Some(p)) = (unlisted, e.2.is_empty(), extra_at(k)) {
                            add.push((e.0, p));
                        }
                    }
                }
                repoint(&unlist(old, &removed)?, &moves, &add)?
            } else {
                cues(old, &|p| new_pos(items, seg + p) - seg)?
            };
            lens.push(new);
        }
        let mut same = true;
        let mut built = lens.into_iter();
        for it in items.iter_mut() {
            if let Kind::Index(_, _, b) = &mut it.kind {
                *b = built.next().unwrap_or_default();
                same &= b.len() as u64 == it.len;
                it.len = b.len() as u64;
            }
        }
        if same {
            return Ok(());
        }
    }
    Err(malformed("matroska: the moved layout does not settle"))
}

/// Whether `it` is the first SeekHead (the one that gets a new entry).
fn first_head(items: &[Item], it: &Item) -> bool {
    items
        .iter()
        .find(|x| matches!(x.kind, Kind::Index(SEEK_HEAD, ..)))
        .is_some_and(|x| std::ptr::eq(x, it))
}

/// Rebuilds one child of a Cues level.
type Rebuild<'a> = dyn Fn(&[u8], &Header) -> io::Result<Vec<u8>> + 'a;

/// The Cues `old` with every CueClusterPosition and CueCodecState moved
/// by `map` (widths kept where the new value fits).
fn cues(old: &[u8], map: &dyn Fn(u64) -> u64) -> io::Result<Vec<u8>> {
    let rebuild = |b: &[u8], h: &Header, f: &Rebuild| -> io::Result<Vec<u8>> {
        let kids = children(b, h.data as usize, h.end() as usize, "Cues")?;
        let new: Vec<Vec<u8>> = kids.iter().map(|k| f(b, k)).collect::<io::Result<_>>()?;
        Ok(master_like(Some(bytes_of(b, h)), h.id, &new))
    };
    let position = |b: &[u8], k: &Header| -> io::Result<Vec<u8>> {
        let d = data_of(b, k);
        Ok(match (k.id, uint(d)) {
            (CUE_CLUSTER_POSITION, Some(v)) | (CUE_CODEC_STATE, Some(v)) if v != 0 => uint_sized(k.id, map(v), d.len()),
            _ => bytes_of(b, k).to_vec(),
        })
    };
    let track = |b: &[u8], k: &Header| -> io::Result<Vec<u8>> {
        if k.id == CUE_TRACK_POSITIONS {
            rebuild(b, k, &position)
        } else {
            Ok(bytes_of(b, k).to_vec())
        }
    };
    let point = |b: &[u8], k: &Header| -> io::Result<Vec<u8>> {
        if k.id == CUE_POINT {
            rebuild(b, k, &track)
        } else {
            Ok(bytes_of(b, k).to_vec())
        }
    };
    let top = super::ebml::parse_header(old, 0)?
        .filter(|h| h.end() == old.len() as u64)
        .ok_or_else(|| malformed("matroska Cues: its size does not match its bytes"))?;
    rebuild(old, &top, &point)
}

/// The pieces of the new file.
fn pieces(lay: &Layout, items: &[Item]) -> io::Result<Plan> {
    let seg = lay.segment;
    let total: u64 = items.iter().map(|it| it.len).sum();
    let mut out = Vec::new();
    match seg.size {
        Some(_) => {
            let width = (seg.data - seg.start - 4) as usize;
            let size = super::ebml::size_vint(total, width).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    "matroska: the Segment's size field is too narrow for the new size",
                )
            })?;
            out.push(Piece::Range {
                start: 0,
                len: seg.start + 4,
            });
            out.push(Piece::Bytes(size));
        }
        None => out.push(Piece::Range {
            start: 0,
            len: seg.data,
        }),
    }
    for it in items {
        match &it.kind {
            Kind::Keep => out.push(Piece::Range {
                start: it.old_start,
                len: it.old_len,
            }),
            Kind::Drop => {}
            Kind::Bytes(b) | Kind::Extra(_, b) => out.push(Piece::Bytes(b.clone())),
            Kind::Index(_, _, b) => out.push(Piece::Bytes(b.clone())),
        }
    }
    if lay.file_len > lay.segment_end {
        out.push(Piece::Range {
            start: lay.segment_end,
            len: lay.file_len - lay.segment_end,
        });
    }
    Ok(Plan::Copy(out))
}
