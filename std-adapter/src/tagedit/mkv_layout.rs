//! The layout of a Matroska/WebM file for the tag editor: the Segment
//! (RFC 9559 §5.1) and its top-level elements, read header by header
//! from the file (Clusters are stepped over, never read).

use super::ebml::{parse_header, Header};
use super::{malformed, read_at};
use std::fs::File;
use std::io;

pub(super) const EBML: u64 = 0x1A45_DFA3;
pub(super) const SEGMENT: u64 = 0x1853_8067;
pub(super) const SEEK_HEAD: u64 = 0x114D_9B74;
pub(super) const INFO: u64 = 0x1549_A966;
pub(super) const TRACKS: u64 = 0x1654_AE6B;
pub(super) const CLUSTER: u64 = 0x1F43_B675;
pub(super) const CUES: u64 = 0x1C53_BB6B;
pub(super) const ATTACHMENTS: u64 = 0x1941_A469;
pub(super) const CHAPTERS: u64 = 0x1043_A770;
pub(super) const TAGS: u64 = 0x1254_C367;

/// Most top-level elements other than Clusters (and most children of an
/// unknown-size Cluster, per Cluster) walked before the file is refused.
const MAX_ELEMENTS: usize = 1 << 20;
/// Longest element header: a 4-byte ID and an 8-byte size.
const MAX_HEADER: u64 = 12;

/// The Segment and what it holds.
#[derive(Debug)]
pub(super) struct Layout {
    /// The Segment's header (its `size` `None`: unknown).
    pub segment: Header,
    /// Where the Segment's data ends: the file's end for an unknown size.
    pub segment_end: u64,
    /// The file's length.
    pub file_len: u64,
    /// Top-level elements other than Clusters, in file order (Voids
    /// included).
    pub tops: Vec<Header>,
}

impl Layout {
    /// Offset of `pos` from the Segment's data, as SeekPosition and
    /// CueClusterPosition count (RFC 9559 §5.1.1.1.2).
    pub fn rel(&self, pos: u64) -> u64 {
        pos - self.segment.data
    }
}

/// Reads the header at `pos` (before `limit`).
fn header_at(file: &File, pos: u64, limit: u64) -> io::Result<Header> {
    // An element may claim to end past the file: nothing is left to read.
    let n = MAX_HEADER.min(limit.saturating_sub(pos)) as usize;
    let b = read_at(file, pos, n, "matroska: an element header")?;
    parse_header(&b, pos)?.ok_or_else(|| malformed(format!("matroska: an element header at byte {pos} is cut")))
}

/// Walks the file. Errors: no EBML header or Segment, a Segment that runs
/// past the end of the file (a truncated file: its edit would not be
/// whole), an element past the Segment, an unknown size on anything but a
/// Cluster, too many elements.
pub(super) fn walk(file: &File) -> io::Result<Layout> {
    let file_len = file.metadata()?.len();
    let ebml = header_at(file, 0, file_len)?;
    if ebml.id != EBML || ebml.size.is_none() {
        return Err(malformed("matroska: no EBML header (RFC 8794 §11.2)"));
    }
    let segment = header_at(file, ebml.end(), file_len)?;
    if segment.id != SEGMENT {
        return Err(malformed("matroska: no Segment after the EBML header (RFC 9559 §5.1)"));
    }
    let segment_end = match segment.size {
        Some(_) if segment.end() > file_len => {
            return Err(malformed(format!(
                "matroska: the Segment ({} bytes) runs past the end of the file: a truncated file is not edited",
                segment.size.unwrap_or(0)
            )))
        }
        Some(_) => segment.end(),
        None => file_len,
    };
    let mut tops = Vec::new();
    let mut pos = segment.data;
    let mut steps = 0usize;
    // The known-size Cluster just walked: the bytes after it may change.
    let mut cluster: Option<Header> = None;
    while pos < segment_end {
        steps += 1;
        if tops.len() >= MAX_ELEMENTS || steps > MAX_ELEMENTS * 64 {
            return Err(malformed("matroska: too many top-level elements"));
        }
        let h = header_at(file, pos, segment_end)?;
        if h.id == CLUSTER {
            pos = match h.size {
                Some(_) if h.end() > segment_end => return Err(past(&h)),
                Some(_) => h.end(),
                None => unknown_cluster_end(file, h.data, segment_end)?,
            };
            cluster = h.size.is_some().then_some(h);
            continue;
        }
        if let Some(c) = cluster.take() {
            children_inside(file, &c)?;
        }
        if h.size.is_none() {
            return Err(malformed(format!(
                "matroska: element 0x{:X} at byte {pos} has an unknown size; only a Cluster may (RFC 9559 §6)",
                h.id
            )));
        }
        if h.end() > segment_end {
            return Err(past(&h));
        }
        pos = h.end();
        tops.push(h);
    }
    if let Some(c) = cluster {
        children_inside(file, &c)?;
    }
    Ok(Layout {
        segment,
        segment_end,
        file_len,
        tops,
    })
}

fn past(h: &Header) -> io::Error {
    malformed(format!(
        "matroska: element 0x{:X} at byte {} runs past the end of its Segment (RFC 8794 §6)",
        h.id, h.start
    ))
}

/// A BlockGroup (RFC 9559 §5.1.3.5), whose Block is checked too.
const BLOCK_GROUP: u64 = 0xA0;

/// Checks that the children of the known-size Cluster `c` (and of its
/// BlockGroups) lie inside it, for a Cluster the edit may put new bytes
/// after (one before a top-level element or the Segment's end): a child
/// that runs past the Cluster's end, cut by it or by the end of the file,
/// would read into those bytes and look whole to a reader
/// (`mkv-cut-last-block-reads-into-the-new-tags.mkv`, a fuzzing find). Such
/// a Cluster is damaged; the file is refused, as a truncated one is.
fn children_inside(file: &File, c: &Header) -> io::Result<()> {
    let mut stack = vec![(c.data, c.end())];
    let mut n = 0usize;
    while let Some((mut pos, end)) = stack.pop() {
        while pos < end {
            n += 1;
            if n > MAX_ELEMENTS * 64 {
                return Err(malformed("matroska: too many elements in a Cluster"));
            }
            let h = header_at(file, pos, end)?;
            if h.size.is_none() || h.end() > end {
                return Err(cut_cluster(c, pos));
            }
            if h.id == BLOCK_GROUP {
                stack.push((h.data, h.end()));
            }
            pos = h.end();
        }
    }
    Ok(())
}

fn cut_cluster(c: &Header, at: u64) -> io::Error {
    malformed(format!(
        "matroska: the element at byte {at} runs past the end of the Cluster at byte {} (a cut or damaged \
         Cluster, RFC 8794 §6): not edited, the edit would put bytes after it",
        c.start
    ))
}

/// Where an unknown-size Cluster ends: at the first top-level element
/// after its children, or the Segment's end (RFC 8794 §6.2).
fn unknown_cluster_end(file: &File, mut pos: u64, limit: u64) -> io::Result<u64> {
    let mut n = 0usize;
    while pos < limit {
        n += 1;
        if n > MAX_ELEMENTS * 64 {
            return Err(malformed("matroska: too many children in an unknown-size Cluster"));
        }
        let h = header_at(file, pos, limit)?;
        if matches!(
            h.id,
            CLUSTER | SEEK_HEAD | INFO | TRACKS | CUES | ATTACHMENTS | CHAPTERS | TAGS | EBML | SEGMENT
        ) {
            return Ok(pos);
        }
        match h.size {
            Some(_) if h.end() <= limit => pos = h.end(),
            _ => return Err(past(&h)),
        }
    }
    Ok(limit)
}
