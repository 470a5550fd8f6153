//! [`TempSpill`]: a temporary file as the [`SpillStore`] of a muxer's
//! sample index (`mediaslice::Muxer::with_index_spill`), for a recording
//! whose index passes the memory the caller allows.

use mediaslice::{Error, ErrorKind, Result, SpillStore};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static SPILL_COUNTER: AtomicU32 = AtomicU32::new(0);

/// A temporary file in a folder (the output's, so that it is on the same
/// disk), made at the first append and named
/// `.<name>.<process id>.<n>.index.tmp`. Its name is removed as soon as it
/// is open: nothing is left behind by a finished run, a failed one, or a
/// killed process; the bytes go when the file is dropped.
#[derive(Debug)]
pub struct TempSpill {
    dir: PathBuf,
    name: String,
    file: Option<File>,
    len: u64,
}

fn io_error(e: &std::io::Error, pos: u64, what: mediaslice::error::Description) -> Error {
    Error::new(ErrorKind::Io(e.kind().into()), pos, what)
}

impl TempSpill {
    /// A store whose file will be made in `dir`, named after `name` (the
    /// output's file name). Touches nothing yet.
    pub fn new(dir: impl AsRef<Path>, name: &str) -> Self {
        TempSpill {
            dir: dir.as_ref().to_path_buf(),
            name: name.to_owned(),
            file: None,
            len: 0,
        }
    }

    /// A store beside `output` (in its folder).
    pub fn beside(output: &Path) -> Self {
        let dir = output
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = output
            .file_name()
            .map_or("out".into(), |n| n.to_string_lossy().into_owned());
        Self::new(dir, &name)
    }

    /// Bytes appended so far (0: no file was made).
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn open(&mut self) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            let file = loop {
                let n = SPILL_COUNTER.fetch_add(1, Ordering::Relaxed);
                let path = self
                    .dir
                    .join(format!(".{}.{}.{n}.index.tmp", self.name, std::process::id()));
                match OpenOptions::new().read(true).write(true).create_new(true).open(&path) {
                    Ok(f) => {
                        // Unnamed from now on: removed with the last handle.
                        std::fs::remove_file(&path)?;
                        break f;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            };
            self.file = Some(file);
        }
        self.file.as_mut().ok_or(std::io::Error::other("spill file not open"))
    }
}

impl SpillStore for TempSpill {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        let pos = self.len;
        let file = self
            .open()
            .map_err(|e| io_error(&e, pos, &"index spill: cannot make the temporary file"))?;
        file.write_all(data)
            .map_err(|e| io_error(&e, pos, &"index spill: writing the temporary file failed (disk full?)"))?;
        self.len = pos.saturating_add(data.len() as u64);
        Ok(())
    }

    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<()> {
        let end = pos.checked_add(buf.len() as u64).filter(|&e| e <= self.len);
        let (Some(file), Some(_)) = (self.file.as_ref(), end) else {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                pos,
                &"index spill: read past the bytes appended",
            ));
        };
        file.read_exact_at(buf, pos)
            .map_err(|e| io_error(&e, pos, &"index spill: reading the temporary file back failed"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_read_back_and_no_name_is_left() {
        let dir = std::env::temp_dir().join(format!("spill-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = TempSpill::new(&dir, "x.mp4");
        assert!(s.is_empty());
        s.append(b"hello ").unwrap();
        s.append(b"world").unwrap();
        let mut out = [0u8; 5];
        s.read_at(6, &mut out).unwrap();
        assert_eq!((&out, s.len()), (b"world", 11));
        assert_eq!(s.read_at(7, &mut out).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the file has no name");
        drop(s);
        std::fs::remove_dir(&dir).unwrap();
    }
}
