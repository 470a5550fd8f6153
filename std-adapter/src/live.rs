//! Live inputs: a file that is still being written, or standard output
//! of an encoder piped in, read while it grows (`package --live`).
//!
//! Demuxers ask a [`Source`] for the input's length and read by offset.
//! A live input has no length yet, so [`LiveInput`] answers in three ways:
//!
//! * While a demuxer opens, [`Source::len`] is a **snapshot**: the first
//!   [`LiveOptions::probe`] bytes (or all of a shorter input that has already
//!   ended), the same for every open. A demuxer that looks at the end of
//!   the file for a duration (MPEG-TS, MPEG-PS) scans the end of the
//!   snapshot: it neither waits for the real end nor reads past the data.
//! * Once open ([`LiveSource::go_live`]), `len` waits until there are bytes
//!   past the furthest one this source has read, or the input has ended;
//!   it then answers [`LIVE_LEN`] (unknown, far away) or the final length.
//!   So a demuxer that checks the length before each unit (the MPEG-TS
//!   reading loop does, per packet) reads on while data comes and sees a
//!   clean end exactly where the input stops.
//! * A read past the data received waits for it: a pipe by a blocking
//!   read, a growing file by polling every `poll` until it grows; the input
//!   ends at end of file on a pipe, and on a file when it has not grown for
//!   `idle`.
//!
//! Memory is fixed: the bytes received are kept in a ring of `window`
//! bytes (the packet scratch of each source grows to the largest packet,
//! up to `Limits::max_packet`). A read behind the ring is served again
//! from a file (`pread`), and is an error on a pipe. Until
//! [`LiveInput::unpin`], the ring keeps the input's first bytes (the
//! passes that find the tracks and their first packets open the input
//! again at 0), and a read past [`LiveOptions::search`] bytes fails: those
//! passes are bounded.

use crate::scratch::Scratch;
use mediaslice::{Error, ErrorKind, IoStats, Limits, Result, Source};
use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The length a live source states while its input has not ended: far
/// beyond any real input, with room for a demuxer's sums.
pub const LIVE_LEN: u64 = 1 << 62;

/// The default snapshot length a demuxer sees while it opens (see the
/// module): 512 KiB, which holds the MPEG-TS tables (repeated every 100 to
/// 500 ms) at any rate up to about 8 Mbit/s even with the worst spacing. It
/// is also the start-up delay: no segment before this much has arrived.
pub const LIVE_PROBE: u64 = 512 << 10;

/// The default bound of the passes that find the tracks and their first
/// packets, before the writing pass (see [`LiveInput::unpin`]): 2 MiB. A
/// stream the PMT lists that carries nothing (an idle SCTE-35 or subtitle
/// PID) holds the start back until this much has arrived.
pub const LIVE_SEARCH: u64 = 2 << 20;

/// The default ring of received bytes: 8 MiB.
pub const DEFAULT_WINDOW: usize = 8 << 20;

/// Bytes read from the input per call.
const CHUNK: usize = 64 << 10;

/// How a live input is read.
#[derive(Debug, Clone, Copy)]
pub struct LiveOptions {
    /// Bytes of the ring of received bytes (at least `probe` and a few
    /// reads of 64 KiB).
    pub window: usize,
    /// The snapshot length while a demuxer opens ([`LIVE_PROBE`]).
    pub probe: u64,
    /// The most bytes the passes before [`LiveInput::unpin`] may read
    /// ([`LIVE_SEARCH`]; at most `window`).
    pub search: u64,
    /// A growing file ends when it has not grown for this long.
    pub idle: Duration,
    /// How often a growing file is looked at while the reader waits.
    pub poll: Duration,
}

impl Default for LiveOptions {
    fn default() -> Self {
        LiveOptions {
            window: DEFAULT_WINDOW,
            probe: LIVE_PROBE,
            search: LIVE_SEARCH,
            idle: Duration::from_secs(10),
            poll: Duration::from_millis(50),
        }
    }
}

struct Shared {
    reader: Box<dyn Read>,
    /// The same file for reads behind the ring; `None` for a pipe.
    file: Option<File>,
    /// A file that grows: end of file means wait, up to `idle`.
    follow: bool,
    opts: LiveOptions,
    ring: Vec<u8>,
    /// Offsets of the oldest byte in the ring and just past the newest.
    start: u64,
    end: u64,
    ended: bool,
    /// An I/O error that ended the input.
    failed: Option<std::io::ErrorKind>,
    /// Keep the input's first bytes (the probe passes).
    pinned: bool,
    snapshot: Option<u64>,
}

/// The error of a read behind the ring on a pipe.
const BEHIND: &str = "live input: a read behind the window of recent bytes (a pipe keeps only --window bytes)";

impl Shared {
    fn cap(&self) -> u64 {
        self.ring.len() as u64
    }

    /// Reads more bytes into the ring, waiting for them; `Ok(false)` when
    /// the input has ended.
    fn fill(&mut self) -> Result<bool> {
        if self.ended {
            return Ok(false);
        }
        let cap = self.cap();
        let free = if self.pinned {
            self.opts
                .search
                .max(self.opts.probe)
                .min(cap)
                .saturating_sub(self.end - self.start)
        } else {
            cap
        };
        if free == 0 {
            return Err(Error::capacity(
                self.end,
                &"live input: finding the tracks and their first packets read past LiveOptions::search",
            ));
        }
        let at = (self.end % cap) as usize;
        let n = (cap as usize - at).min(free as usize).min(CHUNK);
        let mut idle_since: Option<Instant> = None;
        loop {
            let dst = self.ring.get_mut(at..at + n).unwrap_or(&mut []);
            match self.reader.read(dst) {
                Ok(0) if self.follow => {
                    let since = *idle_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= self.opts.idle {
                        self.ended = true;
                        return Ok(false);
                    }
                    std::thread::sleep(self.opts.poll);
                }
                Ok(0) => {
                    self.ended = true;
                    return Ok(false);
                }
                Ok(k) => {
                    self.end += k as u64;
                    self.start = self.start.max(self.end.saturating_sub(cap));
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.ended = true;
                    self.failed = Some(e.kind());
                    return Err(Error::new(
                        ErrorKind::Io(embedded_io::ErrorKind::Other),
                        self.end,
                        &"live input: reading failed",
                    ));
                }
            }
        }
    }

    /// Waits until `upto` bytes have been received or the input has ended.
    fn ensure(&mut self, upto: u64) -> Result<()> {
        while self.end < upto && self.fill()? {}
        Ok(())
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if offset < self.start {
            let file = self
                .file
                .as_ref()
                .ok_or(Error::new(ErrorKind::InvalidArgument, offset, &BEHIND))?;
            let want = buf.len().min(usize::try_from(self.end - offset).unwrap_or(usize::MAX));
            let dst = buf.get_mut(..want).unwrap_or(&mut []);
            file.read_exact_at(dst, offset).map_err(|_| {
                Error::new(
                    ErrorKind::Io(embedded_io::ErrorKind::Other),
                    offset,
                    &"live input: re-reading the file failed",
                )
            })?;
            return Ok(want);
        }
        self.ensure(offset.saturating_add(buf.len() as u64))?;
        if offset >= self.end {
            return Ok(0);
        }
        // The ring may have moved on while it filled.
        if offset < self.start {
            return self.read_at(offset, buf);
        }
        let want = buf.len().min(usize::try_from(self.end - offset).unwrap_or(usize::MAX));
        let cap = self.cap();
        let mut done = 0usize;
        while done < want {
            let at = ((offset + done as u64) % cap) as usize;
            let n = (want - done).min(cap as usize - at);
            if let (Some(d), Some(s)) = (buf.get_mut(done..done + n), self.ring.get(at..at + n)) {
                d.copy_from_slice(s);
            }
            done += n;
        }
        Ok(want)
    }
}

/// A live input shared by the sources that read it (one per open).
#[derive(Clone)]
pub struct LiveInput {
    shared: Rc<RefCell<Shared>>,
}

impl std::fmt::Debug for LiveInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.shared.borrow();
        f.debug_struct("LiveInput")
            .field("start", &s.start)
            .field("end", &s.end)
            .field("ended", &s.ended)
            .finish_non_exhaustive()
    }
}

impl LiveInput {
    fn new(reader: Box<dyn Read>, file: Option<File>, follow: bool, opts: LiveOptions) -> Self {
        let window = opts.window.max(
            usize::try_from(opts.probe)
                .unwrap_or(usize::MAX)
                .saturating_add(4 * CHUNK),
        );
        LiveInput {
            shared: Rc::new(RefCell::new(Shared {
                reader,
                file,
                follow,
                opts,
                ring: vec![0u8; window],
                start: 0,
                end: 0,
                ended: false,
                failed: None,
                pinned: true,
                snapshot: None,
            })),
        }
    }

    /// A file that is still being written: read as it grows, ended when it
    /// has not grown for `opts.idle`.
    ///
    /// Errors: opening the file.
    pub fn follow(path: &Path, opts: LiveOptions) -> std::io::Result<Self> {
        let file = File::open(path)?;
        let again = file.try_clone()?;
        Ok(Self::new(Box::new(file), Some(again), true, opts))
    }

    /// A stream (standard input, a pipe): ended at its end of file.
    pub fn stream(reader: Box<dyn Read>, opts: LiveOptions) -> Self {
        Self::new(reader, None, false, opts)
    }

    /// A new source over the input, for one `Demuxer::open`: its length is
    /// the snapshot until [`LiveSource::go_live`].
    ///
    /// Errors: reading the input (the first call waits for
    /// [`LiveOptions::probe`] bytes or the end).
    pub fn source(&self) -> Result<LiveSource> {
        let mut s = self.shared.borrow_mut();
        let snapshot = match s.snapshot {
            Some(n) => n,
            None => {
                let probe = s.opts.probe;
                s.ensure(probe)?;
                let n = s.end.min(probe);
                s.snapshot = Some(n);
                n
            }
        };
        Ok(LiveSource {
            shared: Rc::clone(&self.shared),
            scratch: Scratch::new(Limits::default().max_packet as usize),
            snapshot: Some(snapshot),
            hi: 0,
            stats: IoStats::default(),
        })
    }

    /// The first bytes of the input (at most `n`), for detection.
    ///
    /// Errors: reading the input.
    pub fn head(&self, n: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; n];
        let k = self.shared.borrow_mut().read_at(0, &mut buf)?;
        buf.truncate(k);
        Ok(buf)
    }

    /// Lets the ring drop the input's first bytes: call it before the
    /// writing pass opens the input.
    pub fn unpin(&self) {
        self.shared.borrow_mut().pinned = false;
    }

    /// Whether the input has ended, and the bytes received.
    pub fn progress(&self) -> (bool, u64) {
        let s = self.shared.borrow();
        (s.ended, s.end)
    }

    /// The I/O error that ended the input, if any.
    pub fn failure(&self) -> Option<std::io::ErrorKind> {
        self.shared.borrow().failed
    }
}

/// One reader of a [`LiveInput`]: a [`Source`] whose packets are copied
/// into its own scratch.
pub struct LiveSource {
    shared: Rc<RefCell<Shared>>,
    scratch: Scratch,
    snapshot: Option<u64>,
    /// Just past the furthest byte this source has read.
    hi: u64,
    stats: IoStats,
}

impl std::fmt::Debug for LiveSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveSource")
            .field("snapshot", &self.snapshot)
            .field("hi", &self.hi)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl LiveSource {
    /// Ends the snapshot: from now on [`Source::len`] waits for data (see
    /// the module). Call it once `Demuxer::open` has returned.
    pub fn go_live(&mut self) {
        self.snapshot = None;
    }

    fn fetch(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let n = self.shared.borrow_mut().read_at(offset, buf)?;
        self.hi = self.hi.max(offset + n as u64);
        self.stats.reads += 1;
        self.stats.bytes_read += n as u64;
        Ok(n)
    }

    fn fetch_exact(&mut self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let n = self.fetch(offset, buf)?;
        if n < buf.len() {
            return Err(Error::truncated(offset + n as u64, &"live input ended inside a packet"));
        }
        Ok(())
    }
}

impl Source for LiveSource {
    fn len(&self) -> u64 {
        if let Some(n) = self.snapshot {
            return n;
        }
        let mut s = self.shared.borrow_mut();
        loop {
            if s.ended {
                return s.end;
            }
            if s.end > self.hi {
                return LIVE_LEN;
            }
            match s.fill() {
                Ok(_) => {}
                // Pinned and full: the read that follows says why.
                Err(_) if !s.ended => return LIVE_LEN,
                Err(_) => return s.end,
            }
        }
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        if let Some(n) = self.snapshot {
            let want = n.saturating_sub(offset).min(buf.len() as u64) as usize;
            return self.fetch(offset, buf.get_mut(..want).unwrap_or(&mut []));
        }
        self.fetch(offset, buf)
    }

    fn bytes(&mut self, offset: u64, len: usize) -> Result<&[u8]> {
        self.gather(offset, len, 0)?;
        self.scratch.joined(len)
    }

    fn scratch_len(&self) -> usize {
        self.scratch.cap()
    }

    fn gather(&mut self, offset: u64, len: usize, at: usize) -> Result<()> {
        let mut tmp = std::mem::replace(&mut self.scratch, Scratch::new(0));
        let r = tmp
            .range_mut(offset, at, len)
            .and_then(|dst| self.fetch_exact(offset, dst));
        self.scratch = tmp;
        r
    }

    fn put(&mut self, at: usize, data: &[u8]) -> Result<()> {
        self.scratch.put(at, data)
    }

    fn joined(&self, len: usize) -> Result<&[u8]> {
        self.scratch.joined(len)
    }

    fn is_slice(&self) -> bool {
        false
    }

    fn stats(&self) -> IoStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn opts(window: usize) -> LiveOptions {
        LiveOptions {
            window,
            probe: 1000,
            ..LiveOptions::default()
        }
    }

    #[test]
    fn a_pipe_keeps_a_window_and_says_when_a_read_is_behind_it() {
        let data: Vec<u8> = (0..2_000_000u32).map(|i| i as u8).collect();
        let input = LiveInput::stream(Box::new(std::io::Cursor::new(data)), opts(300_000));
        let mut s = input.source().unwrap();
        assert_eq!(s.len(), 1000, "the snapshot while opening");
        s.go_live();
        assert_eq!(s.len(), LIVE_LEN);
        // Pinned: the first bytes stay, a read that would push them out fails.
        let mut b = [0u8; 4];
        assert!(s.read_at(600_000, &mut b).is_err());
        input.unpin();
        assert_eq!(s.read_at(1_500_000, &mut b).unwrap(), 4);
        assert_eq!(b[0], 1_500_000u32 as u8);
        let e = s.read_at(0, &mut b).unwrap_err();
        assert!(e.to_string().contains("behind the window"), "{e}");
        // The end: short reads, then the exact length.
        assert_eq!(s.read_at(1_999_998, &mut b).unwrap(), 2);
        assert_eq!(s.len(), 2_000_000);
        assert!(input.progress().0);
        // The ring never grew past its size.
        assert_eq!(input.shared.borrow().ring.len(), 300_000);
    }

    #[test]
    fn the_passes_before_the_writing_pass_are_bounded() {
        let data = vec![0x47u8; 3 << 20];
        let o = LiveOptions {
            probe: 1000,
            ..LiveOptions::default()
        };
        let input = LiveInput::stream(Box::new(std::io::Cursor::new(data)), o);
        let mut s = input.source().unwrap();
        s.go_live();
        let mut b = [0u8; 4];
        assert_eq!(s.read_at((2 << 20) - 4, &mut b).unwrap(), 4);
        let e = s.read_at(5 << 19, &mut b).unwrap_err();
        assert!(e.to_string().contains("LiveOptions::search"), "{e}");
        input.unpin();
        assert_eq!(s.read_at(5 << 19, &mut b).unwrap(), 4);
        // The first bytes are still in the ring for the writing pass.
        assert_eq!(s.read_at(0, &mut b).unwrap(), 4);
    }

    #[test]
    fn a_growing_file_is_waited_for_and_ends_when_idle() {
        let p = std::env::temp_dir().join(format!("mediaslice-live-unit-{}", std::process::id()));
        std::fs::write(&p, [7u8; 100]).unwrap();
        let o = LiveOptions {
            idle: Duration::from_millis(300),
            poll: Duration::from_millis(5),
            probe: 100,
            ..opts(0)
        };
        let input = LiveInput::follow(&p, o).unwrap();
        let q = p.clone();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let mut f = std::fs::OpenOptions::new().append(true).open(&q).unwrap();
            std::io::Write::write_all(&mut f, &[8u8; 100]).unwrap();
        });
        let mut s = input.source().unwrap();
        s.go_live();
        let mut b = [0u8; 50];
        let t = Instant::now();
        // Past the 100 bytes there: waits for the writer.
        assert_eq!(s.read_at(120, &mut b).unwrap(), 50);
        assert_eq!(b, [8u8; 50]);
        writer.join().unwrap();
        // Past the 200 bytes: the file stops growing, the input ends.
        assert_eq!(s.read_at(190, &mut b).unwrap(), 10);
        assert_eq!(s.len(), 200);
        assert!(t.elapsed() >= Duration::from_millis(300));
        let _ = std::fs::remove_file(&p);
    }
}
