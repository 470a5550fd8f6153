//! An `embedded_io` reader over a flash slice that behaves like a byte-stream
//! driver (UART, SPI SD card): it copies out at most `chunk` bytes per
//! `read` call, so every consumer must loop.

use embedded_io::{ErrorKind, ErrorType, Read, Seek, SeekFrom};

/// A chunked reader over `data`.
pub struct ChunkReader {
    data: &'static [u8],
    pos: u64,
    chunk: usize,
}

impl ChunkReader {
    /// Reads `data`, handing out at most `chunk` (> 0) bytes per call.
    pub fn new(data: &'static [u8], chunk: usize) -> Self {
        ChunkReader {
            data,
            pos: 0,
            chunk: chunk.max(1),
        }
    }
}

impl ErrorType for ChunkReader {
    type Error = ErrorKind;
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ErrorKind> {
        let len = self.data.len() as u64;
        if self.pos >= len {
            return Ok(0);
        }
        let start = self.pos as usize;
        let n = buf.len().min(self.chunk).min(self.data.len() - start);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ChunkReader {
    fn seek(&mut self, pos: SeekFrom) -> Result<u64, ErrorKind> {
        let to = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => (self.data.len() as u64).checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = to.ok_or(ErrorKind::InvalidInput)?;
        Ok(self.pos)
    }
}
