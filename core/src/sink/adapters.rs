//! Two sinks over no output or another sink: [`NullSink`], which keeps
//! nothing and counts (a muxer's dry run: how large its index will be), and
//! [`PatchAt`], which turns appends into patches of bytes already written
//! (an index written into space reserved before the media).

use super::{check_patch, Sink, SinkStats};
use crate::error::Result;

/// A sink that keeps nothing: it counts the bytes, says it can patch, and
/// accepts every patch of a range it has taken. A muxer's first pass over
/// the packets (MP4 `faststart`: the size of `moov` before the media is
/// written) runs into it.
#[derive(Debug, Clone, Default)]
pub struct NullSink {
    pos: u64,
    stats: SinkStats,
}

impl NullSink {
    /// An empty sink at position 0.
    pub fn new() -> Self {
        NullSink::default()
    }
}

impl Sink for NullSink {
    fn position(&self) -> u64 {
        self.pos
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.pos = self.pos.saturating_add(data.len() as u64);
        self.stats.bytes_written = self.stats.bytes_written.saturating_add(data.len() as u64);
        self.stats.writes += 1;
        Ok(())
    }

    fn can_patch(&self) -> bool {
        true
    }

    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        check_patch(pos, data.len(), self.pos)?;
        self.stats.bytes_written = self.stats.bytes_written.saturating_add(data.len() as u64);
        self.stats.patches += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn stats(&self) -> SinkStats {
        self.stats
    }
}

/// Appends to this sink are patches of `inner` from position `at` on: a
/// box written into space reserved earlier (MP4 `moov` ahead of `mdat`).
/// The caller makes sure the space is there; a patch past what `inner`
/// holds is its error.
#[cfg(feature = "mp4")]
pub(crate) struct PatchAt<'a, K: Sink> {
    inner: &'a mut K,
    pos: u64,
}

#[cfg(feature = "mp4")]
impl<'a, K: Sink> PatchAt<'a, K> {
    /// Writes from `at` of `inner` on.
    pub(crate) fn new(inner: &'a mut K, at: u64) -> Self {
        PatchAt { inner, pos: at }
    }
}

#[cfg(feature = "mp4")]
impl<K: Sink> Sink for PatchAt<'_, K> {
    fn position(&self) -> u64 {
        self.pos
    }

    fn write_all(&mut self, data: &[u8]) -> Result<()> {
        self.inner.patch_at(self.pos, data)?;
        self.pos = self.pos.saturating_add(data.len() as u64);
        Ok(())
    }

    fn can_patch(&self) -> bool {
        true
    }

    fn patch_at(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        self.inner.patch_at(pos, data)
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }

    fn stats(&self) -> SinkStats {
        self.inner.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "mp4")]
    use crate::sink::SliceSink;

    #[test]
    fn null_sink_counts_and_checks_patches() {
        let mut n = NullSink::new();
        n.write_all(b"abcd").unwrap();
        n.write_vectored(&[b"ef", b"g"]).unwrap();
        assert_eq!(n.position(), 7);
        n.patch_at(3, b"xyzw").unwrap();
        assert!(n.patch_at(4, b"xyzw").is_err(), "past the end");
        assert_eq!(n.position(), 7);
    }

    #[test]
    #[cfg(feature = "mp4")]
    fn patch_at_writes_into_reserved_space() {
        let mut buf = [0u8; 16];
        let mut s = SliceSink::new(&mut buf);
        s.write_all(b"....____....").unwrap();
        {
            let mut p = PatchAt::new(&mut s, 4);
            p.write_all(b"AB").unwrap();
            p.write_vectored(&[b"C", b"D"]).unwrap();
            assert_eq!(p.position(), 8);
            assert!(p.write_all(b"too long").is_err());
        }
        assert_eq!(s.written(), b"....ABCD....");
    }
}
