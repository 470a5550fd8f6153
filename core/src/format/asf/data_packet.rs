//! Data packets (ASF Specification rev 1.20 §5.2): the packet header
//! (error correction data, payload parsing information) and payload
//! headers, read with ffmpeg's checks. The per-packet path: each function
//! here runs once per data packet or payload.

use super::layout::{PacketTimes, ReplicatedData};
use crate::bytes;
use crate::error::{Error, Result};
use crate::source::Source;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// ffmpeg's `FRAME_HEADER_SIZE`: fewer bytes left in a data packet than this
/// end the packet.
pub(super) const FRAME_HEADER_SIZE: i64 = 6;
/// Largest media object accepted (ffmpeg's limit, 16 MiB).
pub(super) const MAX_OBJECT_SIZE: u32 = 1 << 24;
/// Largest data packet accepted (ffmpeg's limit, 512 MiB).
pub(super) const MAX_PACKET_LENGTH: u32 = 1 << 29;

/// Reads little-endian fields from a short buffer without panicking; every
/// accessor returns `None` past its end.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rd<'a> {
    buf: &'a [u8],
    /// Bytes consumed so far.
    pub pos: usize,
}

impl<'a> Rd<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Rd { buf, pos: 0 }
    }
    pub fn u8(&mut self) -> Option<u8> {
        let v = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(v)
    }
    pub fn u16(&mut self) -> Option<u16> {
        let v = bytes::le16(self.buf, self.pos)?;
        self.pos += 2;
        Some(v)
    }
    pub fn u32(&mut self) -> Option<u32> {
        let v = bytes::le32(self.buf, self.pos)?;
        self.pos += 4;
        Some(v)
    }
    /// A fixed layout `T` at the current position.
    pub fn layout<T: FromBytes + KnownLayout + Immutable + Unaligned>(&mut self) -> Option<&'a T> {
        let (t, _) = T::ref_from_prefix(self.buf.get(self.pos..)?).ok()?;
        self.pos += core::mem::size_of::<T>();
        Some(t)
    }
    /// A field whose width is given by a 2-bit length type (§5.2.2): 0 = absent
    /// (0), 1 = BYTE, 2 = WORD, 3 = DWORD.
    pub fn var(&mut self, length_type: u8) -> Option<u32> {
        match length_type & 3 {
            0 => Some(0),
            1 => self.u8().map(u32::from),
            2 => self.u16().map(u32::from),
            _ => self.u32(),
        }
    }
}

/// Reads up to `N` bytes at `at`: the bytes and how many the input had.
pub(super) fn read_small<S: Source, const N: usize>(src: &mut S, at: u64) -> Result<([u8; N], usize)> {
    let mut b = [0u8; N];
    let n = src.read_at(at, &mut b)?;
    Ok((b, n))
}

/// The error for an input that ends inside a data packet or object.
pub(super) fn truncated(at: u64) -> Error {
    Error::truncated(
        at,
        &"asf data packet: input ends inside a data packet or media object (ASF 1.20 §5.2)",
    )
}

/// Where the data packets are, from the file properties and data object.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Layout {
    pub packet_size: u32,
    pub min_packet_size: u32,
    pub data_start: u64,
    pub data_end: u64,
    pub preroll: i64,
}

/// A compressed payload (§5.2.3.3) being split into its sub-payloads.
#[derive(Debug, Clone, Copy)]
pub(super) struct Multi {
    pub slot: usize,
    pub left: i64,
    pub time: i64,
    pub delta: u8,
    pub key: bool,
    /// Sub-payloads to pass over before delivering (after a seek).
    pub skip: u16,
}

/// Where the packet reader is: the current data packet and payload.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cursor {
    pub next_packet: u64,
    pub in_packet: bool,
    pub packet: u64,
    pub at: u64,
    pub size_left: i64,
    pub padsize: i64,
    pub segments: i32,
    pub multiple: bool,
    pub property: u8,
    pub segsizetype: u8,
    pub send_time: u32,
    pub payload: u16,
    pub multi: Option<Multi>,
    pub last_time: i64,
}

/// One payload header (§5.2.3).
#[derive(Debug, Clone, Copy)]
pub(super) struct Payload {
    pub stream: u8,
    pub key: bool,
    pub frag_off: u32,
    pub obj_size: Option<u32>,
    pub time: Option<u32>,
    pub compressed: Option<(u32, u8)>,
    pub data: u64,
    pub frag_size: u32,
}

/// Reads the data packet header at `cur.next_packet` (§5.2.1, §5.2.2) and
/// positions `cur` on its first payload. Returns `false` when the header is
/// invalid (the packet is then skipped).
///
/// Errors: `Truncated` when the header runs past the input.
pub(super) fn load_packet<S: Source>(src: &mut S, lay: &Layout, cur: &mut Cursor) -> Result<bool> {
    let p = cur.next_packet;
    let (b, n) = read_small::<S, 40>(src, p)?;
    let short = n < b.len();
    let mut r = Rd::new(b.get(..n).unwrap_or(&[]));
    let fixed = lay.packet_size.max(lay.min_packet_size).max(1) as u64;
    cur.next_packet = p.saturating_add(fixed);
    cur.in_packet = false;
    let parsed = (|| {
        let mut c = r.u8()?;
        if c & 0x80 != 0 {
            // Error correction data (§5.2.1): length in the low nibble.
            if c & 0x60 == 0 {
                r.pos += (c & 0x0F) as usize;
            }
            c = r.u8()?;
        }
        let d = r.u8()?;
        let len = match r.var(c >> 5)? {
            0 if c >> 5 & 3 == 0 => lay.packet_size,
            v => v,
        };
        r.var(c >> 1)?; // sequence
        let pad = r.var(c >> 3)?;
        let send = r.layout::<PacketTimes>()?.send_time.get();
        let (segments, segsize) = if c & 1 != 0 {
            let s = r.u8()?;
            ((s & 0x3F) as i32, s)
        } else {
            (1, 0x80)
        };
        Some((c, d, len, pad, send, segments, segsize))
    })();
    let Some((c, d, len, pad, send, segments, segsize)) = parsed else {
        if short {
            return Err(truncated(p));
        }
        return Ok(false);
    };
    let rsize = r.pos as i64;
    if len == 0 || len >= MAX_PACKET_LENGTH || pad >= len || rsize > (len - pad) as i64 {
        return Ok(false);
    }
    let mut padsize = pad as i64;
    if len < lay.min_packet_size {
        padsize += (lay.min_packet_size - len) as i64;
    }
    cur.next_packet = p.saturating_add((len.max(lay.min_packet_size)) as u64);
    cur.in_packet = true;
    cur.packet = p;
    cur.at = p + rsize as u64;
    cur.size_left = (len - pad) as i64 - rsize;
    cur.padsize = padsize;
    cur.segments = segments;
    cur.multiple = c & 1 != 0;
    cur.property = d;
    cur.segsizetype = segsize;
    cur.send_time = send;
    cur.payload = 0;
    cur.multi = None;
    Ok(true)
}

/// Reads the payload header at `cur.at` (§5.2.3.1–§5.2.3.3), following
/// ffmpeg's checks. Returns `None` when it is invalid (the rest of the data
/// packet is then skipped).
pub(super) fn read_payload<S: Source>(src: &mut S, cur: &mut Cursor) -> Result<Option<Payload>> {
    cur.segments -= 1;
    cur.payload = cur.payload.saturating_add(1);
    let at = cur.at;
    let (b, n) = read_small::<S, 24>(src, at)?;
    let short = n < b.len();
    let mut r = Rd::new(b.get(..n).unwrap_or(&[]));
    let prop = cur.property;
    let head = (|| {
        let num = r.u8()?;
        r.var(prop >> 4)?; // media object number
        let off = r.var(prop >> 2)?;
        let replic = r.var(prop)?;
        Some((num, off, replic))
    })();
    let Some((num, mut frag_off, replic)) = head else {
        return if short { Err(truncated(at)) } else { Ok(None) };
    };
    let mut rsize = r.pos as i64;
    if rsize + replic as i64 > cur.size_left {
        return Ok(None);
    }
    let mut obj_size = None;
    let mut time = None;
    let mut compressed = None;
    if replic >= 8 {
        let Some(rep) = r.layout::<ReplicatedData>() else {
            return if short { Err(truncated(at)) } else { Ok(None) };
        };
        let (size, t) = (rep.object_size.get(), rep.presentation_time.get());
        if size >= MAX_OBJECT_SIZE {
            return Ok(None);
        }
        obj_size = Some(size);
        time = Some(t);
        rsize += replic as i64;
    } else if replic == 1 {
        // Compressed payload (§5.2.3.3): the offset field is the
        // presentation time, then one byte of time delta.
        let Some(delta) = r.u8() else {
            return if short { Err(truncated(at)) } else { Ok(None) };
        };
        compressed = Some((frag_off, delta));
        frag_off = 0;
        rsize += 1;
    } else if replic != 0 {
        return Ok(None);
    }
    let frag_size: u32 = if cur.multiple {
        let lt = cur.segsizetype >> 6;
        let (fb, fnr) = read_small::<S, 4>(src, at.saturating_add(rsize as u64))?;
        let mut fr = Rd::new(fb.get(..fnr).unwrap_or(&[]));
        let Some(v) = fr.var(lt) else {
            return Err(truncated(at));
        };
        rsize += fr.pos as i64;
        if rsize > cur.size_left {
            return Ok(None);
        }
        let room = cur.size_left - rsize;
        if v as i64 > room {
            if v as i64 > room + cur.padsize {
                return Ok(None);
            }
            // The payload runs into the padding: ffmpeg lets it.
            let diff = v as i64 - room;
            cur.size_left += diff;
            cur.padsize -= diff;
        }
        v
    } else {
        (cur.size_left - rsize).max(0) as u32
    };
    if compressed.is_some() && frag_size as i64 > cur.size_left {
        return Ok(None);
    }
    cur.size_left -= rsize;
    let data = at.saturating_add(rsize as u64);
    cur.at = data;
    Ok(Some(Payload {
        stream: num & 0x7F,
        key: num & 0x80 != 0,
        frag_off,
        obj_size,
        time,
        compressed,
        data,
        frag_size,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn var_fields() {
        let b = [1u8, 2, 3, 4, 5, 6, 7];
        let mut r = Rd::new(&b);
        assert_eq!(r.var(0), Some(0));
        assert_eq!(r.var(1), Some(1));
        assert_eq!(r.var(2), Some(0x0302));
        assert_eq!(r.var(3), Some(0x0706_0504));
        assert_eq!(r.var(1), None);
    }
}
