//! The MP4 muxer's box writer (ISO/IEC 14496-12 §4.2): boxes are opened
//! with a size placeholder and closed by patching it, which the muxer can
//! do because it needs a patchable sink anyway. Small writes go through a
//! 512-byte buffer, so a table of a million entries is a few thousand sink
//! writes, not a million.

use crate::error::{Error, Result};
use crate::sink::Sink;

/// Deepest box nesting written: `moov/trak/mdia/minf/stbl/stsd/avc1/avcC`
/// is 8; two to spare.
const MAX_DEPTH: usize = 10;

/// Bytes gathered before a sink write.
const BUF: usize = 512;

/// Writes boxes to a sink: nested, sizes patched on close.
pub struct BoxWriter<'k, K: Sink> {
    sink: &'k mut K,
    open: [u64; MAX_DEPTH],
    depth: usize,
    buf: [u8; BUF],
    buf_len: usize,
}

impl<'k, K: Sink> BoxWriter<'k, K> {
    /// A writer appending at the sink's position.
    pub fn new(sink: &'k mut K) -> Self {
        BoxWriter {
            sink,
            open: [0; MAX_DEPTH],
            depth: 0,
            buf: [0; BUF],
            buf_len: 0,
        }
    }

    /// Where the next byte goes.
    pub fn position(&self) -> u64 {
        self.sink.position().saturating_add(self.buf_len as u64)
    }

    /// Appends bytes.
    pub fn put(&mut self, data: &[u8]) -> Result<()> {
        if self.buf_len.saturating_add(data.len()) > BUF {
            self.flush()?;
        }
        if data.len() >= BUF {
            return self.sink.write_all(data);
        }
        let end = self.buf_len + data.len();
        if let Some(dst) = self.buf.get_mut(self.buf_len..end) {
            dst.copy_from_slice(data);
        }
        self.buf_len = end;
        Ok(())
    }

    /// Appends a big-endian `u32`.
    pub fn u32(&mut self, v: u32) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Appends a big-endian `u64`.
    pub fn u64(&mut self, v: u64) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Appends a big-endian `u16`.
    pub fn u16(&mut self, v: u16) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Writes what is buffered to the sink.
    pub fn flush(&mut self) -> Result<()> {
        let data = self.buf.get(..self.buf_len).unwrap_or(&[]);
        self.sink.write_all(data)?;
        self.buf_len = 0;
        Ok(())
    }

    /// Opens box `kind` (a size placeholder, then the type).
    pub fn open(&mut self, kind: &[u8; 4]) -> Result<()> {
        let at = self.position();
        let slot = self.open.get_mut(self.depth).ok_or(Error::capacity(
            at,
            &"mp4 muxer: boxes nested too deep (ISO/IEC 14496-12 4.2)",
        ))?;
        *slot = at;
        self.depth += 1;
        self.u32(0)?;
        self.put(kind)
    }

    /// Opens a full box (ISO/IEC 14496-12 §4.2): type, version, flags.
    pub fn open_full(&mut self, kind: &[u8; 4], version: u8, flags: u32) -> Result<()> {
        self.open(kind)?;
        self.u32(u32::from(version) << 24 | (flags & 0x00FF_FFFF))
    }

    /// Closes the innermost open box, patching its size.
    pub fn close(&mut self) -> Result<()> {
        let end = self.position();
        self.depth = self.depth.checked_sub(1).ok_or(Error::new(
            crate::error::ErrorKind::InvalidArgument,
            end,
            &"mp4 muxer: a box closed that was not open",
        ))?;
        let start = self.open.get(self.depth).copied().unwrap_or(end);
        let size = u32::try_from(end.saturating_sub(start))
            .map_err(|_| Error::unsupported(start, &"mp4 muxer: a box over 4 GiB in moov (ISO/IEC 14496-12 4.2)"))?;
        self.patch(start, &size.to_be_bytes())
    }

    /// Overwrites bytes at `pos`, before the writer's position.
    pub fn patch(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        self.flush()?;
        self.sink.patch_at(pos, data)
    }
}
