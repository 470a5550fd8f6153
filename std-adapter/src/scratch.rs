//! An owned scratch buffer that grows on demand up to a fixed cap.

use mediaslice::{Error, ErrorKind, Result};

/// Scratch for joined packets and payload reads. It starts empty and grows
/// (never shrinks) to the largest size asked for, up to `cap` bytes; asking
/// for more is `ScratchTooSmall`. Once it has grown to the largest packet of
/// a file, the packet loop allocates nothing more.
#[derive(Debug)]
pub(crate) struct Scratch {
    buf: Vec<u8>,
    cap: usize,
}

impl Scratch {
    pub(crate) fn new(cap: usize) -> Self {
        Scratch { buf: Vec::new(), cap }
    }

    /// The most bytes the scratch may grow to.
    pub(crate) fn cap(&self) -> usize {
        self.cap
    }

    pub(crate) fn set_cap(&mut self, cap: usize) {
        self.cap = cap;
        if self.buf.len() > cap {
            self.buf.truncate(cap);
            self.buf.shrink_to_fit();
        }
    }

    /// Bytes currently allocated.
    pub(crate) fn allocated(&self) -> usize {
        self.buf.len()
    }

    /// Grows to at least `len` bytes (capped) and returns `at..at+len`.
    pub(crate) fn range_mut(&mut self, offset: u64, at: usize, len: usize) -> Result<&mut [u8]> {
        let too_small = Error::new(
            ErrorKind::ScratchTooSmall,
            offset,
            &"packet larger than the scratch limit",
        );
        let end = at.checked_add(len).ok_or(too_small)?;
        if end > self.cap {
            return Err(too_small);
        }
        if end > self.buf.len() {
            // Round up so a run of slowly growing packets does not reallocate
            // each time.
            let want = end.checked_next_power_of_two().unwrap_or(end).min(self.cap).max(end);
            self.buf.resize(want, 0);
        }
        self.buf.get_mut(at..end).ok_or(too_small)
    }

    pub(crate) fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.range_mut(0, at, data.len())?.copy_from_slice(data);
        Ok(())
    }

    pub(crate) fn joined(&self, len: usize) -> Result<&[u8]> {
        self.buf.get(..len).ok_or(Error::new(
            ErrorKind::ScratchTooSmall,
            0,
            &"joined length exceeds the bytes written to scratch",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_to_cap_and_no_further() {
        let mut s = Scratch::new(100);
        assert_eq!(s.allocated(), 0);
        s.put(10, b"abc").unwrap();
        assert!(s.allocated() >= 13);
        assert_eq!(&s.joined(13).unwrap()[10..], b"abc");
        assert!(s.range_mut(0, 90, 10).is_ok());
        let e = s.range_mut(0, 90, 11).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ScratchTooSmall);
        assert!(s.range_mut(0, usize::MAX, 2).is_err());
        assert!(s.allocated() <= 100);
    }
}
