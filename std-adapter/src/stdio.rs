//! [`StdIo`]: a std reader seen through `embedded_io`.
//!
//! Kept in place of `embedded_io_adapters::std::FromStd` (0.6), which is the
//! same wrapper but passes `ErrorKind::Interrupted` up (core's
//! `ReaderSource` would then fail on a signal during a read from a pipe)
//! and derives neither `Debug` nor `Default`; a wrapper around it to retry
//! would be as long as this file.

/// Wraps a [`std::io::Read`] + [`std::io::Seek`] (a [`std::fs::File`], a
/// [`std::io::Cursor`]) so that it implements [`embedded_io::Read`] and
/// [`embedded_io::Seek`], as [`mediaslice::ReaderSource`] needs.
///
/// Interrupted reads are retried; every other error is passed on as the
/// [`std::io::Error`] itself (`embedded-io` maps its kind).
#[derive(Debug, Default)]
pub struct StdIo<T>(pub T);

impl<T> StdIo<T> {
    /// Gives back the wrapped reader.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> embedded_io::ErrorType for StdIo<T> {
    type Error = std::io::Error;
}

impl<T: std::io::Read> embedded_io::Read for StdIo<T> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                r => return r,
            }
        }
    }
}

impl<T: std::io::Seek> embedded_io::Seek for StdIo<T> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.0.seek(pos.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use embedded_io::{Read, Seek, SeekFrom};

    #[test]
    fn reads_and_seeks_a_cursor() {
        let mut r = StdIo(std::io::Cursor::new(b"0123456789".to_vec()));
        assert_eq!(r.seek(SeekFrom::End(0)).unwrap(), 10);
        assert_eq!(r.seek(SeekFrom::Start(3)).unwrap(), 3);
        let mut b = [0u8; 4];
        assert_eq!(r.read(&mut b).unwrap(), 4);
        assert_eq!(&b, b"3456");
    }

    /// A reader whose first call is interrupted by a signal.
    struct InterruptedOnce(bool, std::io::Cursor<&'static [u8]>);

    impl std::io::Read for InterruptedOnce {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if !self.0 {
                self.0 = true;
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            self.1.read(buf)
        }
    }

    #[test]
    fn retries_an_interrupted_read() {
        let mut r = StdIo(InterruptedOnce(false, std::io::Cursor::new(b"abc")));
        let mut b = [0u8; 3];
        assert_eq!(r.read(&mut b).unwrap(), 3);
        assert_eq!(&b, b"abc");
    }
}
