// Shared by the elementary-stream fuzz targets: open the input as one
// format through a slice (with scratch) and through a reader, pull every
// packet, walk the tags, seek, and require identical packets.

use mediaslice::{crc::crc32, Demuxer, FormatKind, Limits, ReaderSource, SliceSource, Source};

struct Cursor<'a> {
    data: &'a [u8],
    pos: u64,
}

impl embedded_io::ErrorType for Cursor<'_> {
    type Error = core::convert::Infallible;
}

impl embedded_io::Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        let start = (self.pos as usize).min(self.data.len());
        let n = buf.len().min(self.data.len() - start).min(7);
        buf[..n].copy_from_slice(&self.data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl embedded_io::Seek for Cursor<'_> {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.pos = match pos {
            embedded_io::SeekFrom::Start(p) => p,
            embedded_io::SeekFrom::End(d) => (self.data.len() as i64 + d).max(0) as u64,
            embedded_io::SeekFrom::Current(d) => (self.pos as i64 + d).max(0) as u64,
        };
        Ok(self.pos)
    }
}

fn pull<S: Source>(src: S, kind: FormatKind) -> Vec<(usize, usize, u32)> {
    let limits = Limits {
        max_packet: 1 << 20,
        resync_bytes: 64 << 10,
        ..Limits::default()
    };
    let mut out = Vec::new();
    let Ok(mut d) = Demuxer::open_as(src, kind, limits) else { return out };
    while let Ok(Some(p)) = d.next_packet() {
        out.push((p.track, p.data.len(), crc32(p.data)));
        if out.len() > 100_000 {
            break;
        }
    }
    while let Ok(Some(_)) = d.next_tag() {}
    for t in 0..d.tracks().len() {
        let _ = d.seek(t, 1000);
        let _ = d.next_packet();
    }
    out
}

pub fn run(data: &[u8], kind: FormatKind) {
    let mut s1 = vec![0u8; 2 << 20];
    let a = pull(SliceSource::with_scratch(data, &mut s1), kind);
    let s2 = vec![0u8; 2 << 20];
    let r = ReaderSource::<_, _, 4>::with_known_len(Cursor { data, pos: 0 }, s2, data.len() as u64);
    let b = pull(r, kind);
    assert_eq!(a, b, "slice and reader disagree");
}
