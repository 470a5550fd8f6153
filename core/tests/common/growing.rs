//! A source that behaves as mediaslice-std's live source does: while the
//! demuxer opens, its length is a snapshot (the first bytes); afterwards it
//! is "far away" until a read has reached or passed the end of the data,
//! and then the real length. With the reading helpers of the live tests
//! (`mkv_live.rs`, `mp4_live.rs`).

use mediaslice::crc::crc32;
use mediaslice::{Demuxer, Error, FormatKind, IoStats, Limits, Result, SliceSource, Source};

/// A length no input reaches (as the live source's `LIVE_LEN`).
const FAR: u64 = 1 << 62;

/// A source over `data` whose length is `snapshot` until [`Growing::live`],
/// then [`FAR`] until the data has been read to its end.
pub struct Growing<'a> {
    inner: SliceSource<'a>,
    snapshot: Option<u64>,
    /// A read reached the end of the data: the input has "ended".
    ended: bool,
}

impl<'a> Growing<'a> {
    pub fn new(data: &'a [u8], scratch: &'a mut [u8], snapshot: u64) -> Self {
        Growing {
            inner: SliceSource::with_scratch(data, scratch),
            snapshot: Some(snapshot),
            ended: false,
        }
    }

    pub fn live(&mut self) {
        self.snapshot = None;
    }

    fn reached(&mut self, offset: u64, len: usize) {
        if offset.saturating_add(len as u64) >= self.inner.len() {
            self.ended = true;
        }
    }
}

impl Source for Growing<'_> {
    fn len(&self) -> u64 {
        match self.snapshot {
            Some(n) => n,
            None if self.ended => self.inner.len(),
            None => FAR,
        }
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let want = match self.snapshot {
            Some(n) => n.saturating_sub(offset).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        self.reached(offset, want);
        self.inner.read_at(offset, &mut buf[..want])
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.reached(offset, len);
        self.inner.bytes(offset, len)
    }

    fn scratch_len(&self) -> usize {
        self.inner.scratch_len()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        self.reached(offset, len);
        self.inner.gather(offset, len, at)
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.inner.put(at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.inner.joined(len)
    }

    fn is_slice(&self) -> bool {
        false
    }

    fn stats(&self) -> IoStats {
        self.inner.stats()
    }
}

/// What a test compares of a packet: track, size, CRC, pts, dts, flags.
pub type Seen = (usize, usize, u32, Option<i64>, Option<i64>, mediaslice::PacketFlags);

/// Every packet of `d` until its end, or its first error.
pub fn drain<S: Source>(d: &mut Demuxer<S>) -> Result<Vec<Seen>> {
    let mut out = Vec::new();
    while let Some(p) = d.next_packet()? {
        out.push((p.track, p.data.len(), crc32(p.data), p.pts, p.dts, p.flags));
    }
    Ok(out)
}

/// The packets of `data` read at once from a slice.
pub fn whole(data: &[u8]) -> Vec<Seen> {
    let mut scratch = vec![0u8; data.len() + 4096];
    drain(&mut Demuxer::open(SliceSource::with_scratch(data, &mut scratch), None).unwrap()).unwrap()
}

/// `data` opened as a live input of `kind` whose snapshot is its first
/// `snapshot` bytes, then read live (as package --live does, with the
/// delivery bound lifted).
pub fn open_live<'a>(data: &'a [u8], scratch: &'a mut [u8], kind: FormatKind, snapshot: u64) -> Demuxer<Growing<'a>> {
    let limits = Limits {
        max_delivery_ratio: u32::MAX,
        ..Limits::default()
    };
    let mut d = Demuxer::open_as(Growing::new(data, scratch, snapshot), kind, limits).unwrap();
    d.source_mut().live();
    d
}

/// Reads `d` to its first error: the packets before it and the error
/// (a clean end panics with `what`).
pub fn first_error<S: Source>(d: &mut Demuxer<S>, what: &str) -> (usize, Error) {
    let mut n = 0;
    loop {
        match d.next_packet() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("{what}: a clean end after {n} packets"),
            Err(e) => return (n, e),
        }
    }
}
