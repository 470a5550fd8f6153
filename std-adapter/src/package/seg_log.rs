//! [`SegmentLog`]: the segments a `package` run wrote, for the playlists
//! written at its end and for its report, without a record per segment
//! in memory. Each record (number, bytes, ticks, seconds: 32 bytes) goes
//! to a [`TempSpill`] beside the segments once [`HELD`] are waiting; in
//! memory stay the last few and the running figures the playlists need
//! before their first line (`#EXT-X-TARGETDURATION`, the bit rates). A
//! segment's file name is its number's (`seg_00001.m4s`), not stored.

use super::Segment;
use crate::spill::TempSpill;
use mediaslice::SpillStore;
use std::path::Path;

/// Bytes of one record.
const RECORD: usize = 32;
/// Records kept in memory before they go to the temporary file.
const HELD: usize = 256;

/// The segments written, in order (see the module).
#[derive(Debug)]
pub struct SegmentLog {
    ext: &'static str,
    /// Where the records beyond [`HELD`] go; none: all are held (a live
    /// window's few).
    spill: Option<TempSpill>,
    /// The records not in the file yet.
    tail: Vec<u8>,
    count: u64,
    bytes: u64,
    seconds: f64,
    /// The longest segment, whole seconds rounded up.
    target: u64,
    /// The highest segment bit rate.
    peak: u64,
}

impl Default for SegmentLog {
    fn default() -> Self {
        SegmentLog::held("m4s")
    }
}

/// A segment's bit rate, bits per second.
fn rate(s: &Segment) -> u64 {
    (s.bytes as f64 * 8.0 / s.seconds.max(0.001)).ceil() as u64
}

fn io(e: &mediaslice::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

impl SegmentLog {
    /// A log whose records go to a temporary file in `dir` (the output's
    /// folder) past the first few; segment files end in `.ext`.
    pub(crate) fn spilled(dir: &Path, ext: &'static str) -> Self {
        SegmentLog {
            spill: Some(TempSpill::new(dir, "segments")),
            ..SegmentLog::held(ext)
        }
    }

    /// A log held in memory alone (a live window, a test).
    pub fn held(ext: &'static str) -> Self {
        SegmentLog {
            ext,
            spill: None,
            tail: Vec::new(),
            count: 0,
            bytes: 0,
            seconds: 0.0,
            target: 0,
            peak: 0,
        }
    }

    /// Records segment `number` (its file name is that number's).
    ///
    /// Errors: writing the temporary file.
    pub fn push(&mut self, number: u64, s: &Segment) -> std::io::Result<()> {
        for v in [number, s.bytes, s.ticks, s.seconds.to_bits()] {
            self.tail.extend_from_slice(&v.to_le_bytes());
        }
        self.count += 1;
        self.bytes += s.bytes;
        self.seconds += s.seconds;
        self.target = self.target.max(s.seconds.ceil() as u64);
        self.peak = self.peak.max(rate(s));
        if let Some(spill) = self.spill.as_mut() {
            if self.tail.len() >= HELD * RECORD {
                spill.append(&self.tail).map_err(|e| io(&e))?;
                self.tail.clear();
            }
        }
        Ok(())
    }

    /// Segments recorded.
    pub fn len(&self) -> usize {
        usize::try_from(self.count).unwrap_or(usize::MAX)
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Records held in memory now (at most 256 when spilled).
    pub fn held_records(&self) -> usize {
        self.tail.len() / RECORD
    }

    /// The longest segment in whole seconds, rounded up, at least 1
    /// (`#EXT-X-TARGETDURATION`, RFC 8216 §4.3.3.1).
    pub fn target(&self) -> u64 {
        self.target.max(1)
    }

    /// Peak and average bit rates of the segments.
    pub fn bit_rates(&self) -> (u64, u64) {
        (
            self.peak,
            (self.bytes as f64 * 8.0 / self.seconds.max(0.001)).ceil() as u64,
        )
    }

    /// Calls `f` with each segment, in order, read back.
    ///
    /// Errors: reading the temporary file.
    pub fn each(&self, mut f: impl FnMut(&Segment)) -> std::io::Result<()> {
        self.each_numbered(|_, s| f(s))
    }

    /// [`SegmentLog::each`] with each segment's number.
    fn each_numbered(&self, mut f: impl FnMut(u64, &Segment)) -> std::io::Result<()> {
        let mut one = |rec: &[u8]| {
            let mut v = [0u64; 4];
            for (x, b) in v.iter_mut().zip(rec.chunks_exact(8)) {
                *x = b.iter().rev().fold(0, |a, &b| a << 8 | u64::from(b));
            }
            let [number, bytes, ticks, seconds] = v;
            let s = Segment {
                name: format!("seg_{number:05}.{}", self.ext),
                bytes,
                ticks,
                seconds: f64::from_bits(seconds),
            };
            f(number, &s);
        };
        if let Some(spill) = self.spill.as_ref() {
            let mut buf = vec![0u8; HELD * RECORD];
            let mut pos = 0;
            while pos < spill.len() {
                let n = usize::try_from(spill.len() - pos).unwrap_or(usize::MAX).min(buf.len());
                buf.resize(n, 0);
                spill.read_at(pos, &mut buf).map_err(|e| io(&e))?;
                buf.chunks_exact(RECORD).for_each(&mut one);
                pos += n as u64;
            }
        }
        self.tail.chunks_exact(RECORD).for_each(one);
        Ok(())
    }

    /// Records the segments of `other` after these.
    ///
    /// Errors: reading or writing a temporary file.
    pub(crate) fn extend_from(&mut self, other: &SegmentLog) -> std::io::Result<()> {
        let mut result = Ok(());
        other.each_numbered(|n, s| {
            if result.is_ok() {
                result = self.push(n, s);
            }
        })?;
        result
    }

    /// The segments, read back into a list (for a report's reader).
    ///
    /// Errors: reading the temporary file.
    pub fn to_vec(&self) -> std::io::Result<Vec<Segment>> {
        let mut v = Vec::with_capacity(self.len());
        self.each(|s| v.push(s.clone()))?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(bytes: u64, ticks: u64) -> Segment {
        Segment {
            name: String::new(),
            bytes,
            seconds: ticks as f64 / 90_000.0,
            ticks,
        }
    }

    #[test]
    fn many_segments_read_back_in_order_with_few_in_memory() {
        let dir = std::env::temp_dir().join(format!("seglog-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut log = SegmentLog::spilled(&dir, "ts");
        let n = 10 * HELD as u64 + 7;
        for i in 1..=n {
            log.push(i, &seg(1000 + i, 90_000 + i * 10)).unwrap();
            assert!(log.held_records() <= HELD, "{} held", log.held_records());
        }
        assert_eq!(log.len() as u64, n);
        let back = log.to_vec().unwrap();
        assert_eq!(back.len() as u64, n);
        for (k, s) in back.iter().enumerate() {
            let i = k as u64 + 1;
            assert_eq!(
                (s.name.as_str(), s.bytes, s.ticks),
                (format!("seg_{i:05}.ts").as_str(), 1000 + i, 90_000 + i * 10)
            );
            assert_eq!(s.seconds, (90_000 + i * 10) as f64 / 90_000.0);
        }
        let longest = back.iter().map(|s| s.seconds.ceil() as u64).max().unwrap();
        assert_eq!(log.target(), longest);
        let peak = back.iter().map(rate).max().unwrap();
        assert_eq!(log.bit_rates().0, peak);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "the spill file has no name"
        );
        drop(log);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_held_log_keeps_every_record_and_an_empty_one_targets_one_second() {
        let mut log = SegmentLog::held("m4s");
        assert_eq!((log.target(), log.bit_rates()), (1, (0, 0)));
        for i in 1..=3 * HELD as u64 {
            log.push(i, &seg(10, 9_000)).unwrap();
        }
        assert_eq!(log.held_records(), 3 * HELD);
    }
}
