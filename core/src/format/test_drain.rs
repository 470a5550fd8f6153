//! For the unit tests of the audio formats: open a demuxer on bytes and
//! drain its packets into owned facts, with the error that ended them.
#![allow(clippy::unwrap_used)]

extern crate std;

use std::vec;
use std::vec::Vec;

use crate::error::ErrorKind;
use crate::format::traits::{Context, FormatDemuxer};
use crate::source::SliceSource;

/// One packet's facts: pos, bytes, pts, duration, truncated.
pub(crate) type Drained = (u64, Vec<u8>, i64, u64, bool);

/// One packet's facts as the demuxer gives them: pos, bytes, pts,
/// duration, truncated.
pub(crate) type DrainedAny = (Option<u64>, Vec<u8>, Option<i64>, Option<u64>, bool);

/// Every packet of `D` over `b` (with 64 KiB of scratch), then the kind
/// of the error that ended them, `None` at a clean end. Opening must
/// succeed. Every packet must have a position, pts and duration.
pub(crate) fn drain<D: FormatDemuxer>(b: &[u8]) -> (Vec<Drained>, Option<ErrorKind>) {
    let (p, e) = drain_any::<D>(b);
    let p = p
        .into_iter()
        .map(|(pos, d, pts, dur, cut)| (pos.unwrap(), d, pts.unwrap(), dur.unwrap(), cut))
        .collect();
    (p, e)
}

/// As [`drain`], for packets that may lack a position, pts or duration.
pub(crate) fn drain_any<D: FormatDemuxer>(b: &[u8]) -> (Vec<DrainedAny>, Option<ErrorKind>) {
    let mut scratch = vec![0u8; 1 << 16];
    let mut src = SliceSource::with_scratch(b, &mut scratch);
    let mut ctx = Context::default();
    let mut d = D::open(&mut src, &mut ctx).unwrap();
    let mut out = Vec::new();
    loop {
        match d.next_packet(&mut src, &mut ctx) {
            Ok(Some(p)) => out.push((p.pos, p.data.to_vec(), p.pts, p.duration, p.flags.truncated)),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e.kind())),
        }
    }
}

/// Every text tag of `D` over `b`, as (name, value); opening and the tag
/// walk must succeed and every tag be text.
pub(crate) fn drain_tags<D: FormatDemuxer>(b: &[u8]) -> Vec<(std::string::String, std::string::String)> {
    use crate::tags::{TagCursor, TagValue};
    use std::string::ToString;
    let mut src = SliceSource::new(b);
    let mut ctx = Context::default();
    let mut d = D::open(&mut src, &mut ctx).unwrap();
    let mut cur = TagCursor::default();
    let mut out = Vec::new();
    while let Some(t) = d.next_tag(&mut src, &ctx, &mut cur).unwrap() {
        let (Some(name), TagValue::Text(v)) = (t.name, t.value) else {
            continue;
        };
        out.push((name.to_string(), v.to_string()));
    }
    out
}
