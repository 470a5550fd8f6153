//! OpenDML past 4 GiB, generated at test time: a sparse 4.9 GiB AVI with a
//! first `RIFF AVI ` of about 1 GiB, four `RIFF AVIX` extensions, `indx`
//! super indexes and one `ix##` standard index per stream and RIFF. The
//! payloads are holes (zeros), so the file costs almost no disk and is
//! written in well under a second; reading it through a `ReaderSource` over
//! the file takes a few seconds, hence `#[ignore]`:
//!
//! ```text
//! cargo test -p mediaslice --release --test suite avi_opendml_big:: -- --ignored
//! ```
// Test code: a panic is the failure report.
#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(clippy::needless_range_loop)]

use mediaslice::crc::crc32;
use mediaslice::{Codec, Demuxer, ReaderSource};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

const VIDEO_CHUNK: u64 = 4 << 20;
const AUDIO_CHUNK: u64 = 4096;
/// Video frames per RIFF (about 1 GiB of video each).
const FRAMES_PER_RIFF: u64 = 250;
const RIFFS: u64 = 5;

struct FileIo(File);

impl embedded_io::ErrorType for FileIo {
    type Error = embedded_io::ErrorKind;
}
impl embedded_io::Read for FileIo {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Self::Error> {
        self.0.read(buf).map_err(|_| embedded_io::ErrorKind::Other)
    }
}
impl embedded_io::Seek for FileIo {
    fn seek(&mut self, pos: embedded_io::SeekFrom) -> Result<u64, Self::Error> {
        self.0
            .seek(match pos {
                embedded_io::SeekFrom::Start(p) => SeekFrom::Start(p),
                embedded_io::SeekFrom::End(p) => SeekFrom::End(p),
                embedded_io::SeekFrom::Current(p) => SeekFrom::Current(p),
            })
            .map_err(|_| embedded_io::ErrorKind::Other)
    }
}

fn put(f: &mut File, at: u64, b: &[u8]) {
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(b).unwrap();
}

fn header(id: &[u8; 4], size: u64) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(id);
    h[4..].copy_from_slice(&(size as u32).to_le_bytes());
    h
}

/// Writes the file; returns the offset of every chunk header, per stream,
/// with whether it is a keyframe.
fn write(path: &std::path::Path) -> [Vec<(u64, bool)>; 2] {
    let mut f = File::create(path).unwrap();
    // hdrl: avih, 2 x strl (strh, strf, indx with room for 8 entries).
    let chunk = |h: &mut Vec<u8>, id: &[u8; 4], body: &[u8]| {
        h.extend_from_slice(&header(id, body.len() as u64));
        h.extend_from_slice(body);
    };
    let mut avih = [0u8; 56];
    avih[0..4].copy_from_slice(&40000u32.to_le_bytes());
    avih[24..28].copy_from_slice(&2u32.to_le_bytes());
    let mut strls = Vec::new();
    let mut indx_at = [0u64; 2];
    for s in 0..2 {
        let mut l = Vec::new();
        l.extend_from_slice(b"strl");
        let mut strh = [0u8; 56];
        strh[0..4].copy_from_slice(if s == 0 { b"vids" } else { b"auds" });
        strh[20..24].copy_from_slice(&1u32.to_le_bytes());
        strh[24..28].copy_from_slice(&(if s == 0 { 25u32 } else { 8000 }).to_le_bytes());
        strh[44..48].copy_from_slice(&(if s == 0 { 0u32 } else { 4 }).to_le_bytes());
        chunk(&mut l, b"strh", &strh);
        if s == 0 {
            let mut bih = [0u8; 40];
            bih[0..4].copy_from_slice(&40u32.to_le_bytes());
            bih[16..20].copy_from_slice(b"MJPG");
            chunk(&mut l, b"strf", &bih);
        } else {
            let mut wf = [0u8; 16];
            wf[0..2].copy_from_slice(&1u16.to_le_bytes());
            wf[2..4].copy_from_slice(&2u16.to_le_bytes());
            wf[4..8].copy_from_slice(&8000u32.to_le_bytes());
            wf[12..14].copy_from_slice(&4u16.to_le_bytes());
            wf[14..16].copy_from_slice(&16u16.to_le_bytes());
            chunk(&mut l, b"strf", &wf);
        }
        indx_at[s] = l.len() as u64 + 8; // body offset within the strl list data
        chunk(&mut l, b"indx", &[0u8; 24 + 8 * 16]);
        strls.push(l);
    }
    let mut hdrl = Vec::new();
    hdrl.extend_from_slice(b"hdrl");
    chunk(&mut hdrl, b"avih", &avih);
    let mut strl_at = [0u64; 2];
    for (s, l) in strls.iter().enumerate() {
        strl_at[s] = 12 + 8 + hdrl.len() as u64 + 8; // file offset of the list data
        hdrl.extend_from_slice(&header(b"LIST", l.len() as u64));
        hdrl.extend_from_slice(l);
    }
    let mut head = Vec::new();
    head.extend_from_slice(b"RIFF\0\0\0\0AVI ");
    head.extend_from_slice(&header(b"LIST", hdrl.len() as u64));
    head.extend_from_slice(&hdrl);
    put(&mut f, 0, &head);
    let mut at = head.len() as u64;
    let mut chunks: [Vec<(u64, bool)>; 2] = [Vec::new(), Vec::new()];
    let mut supers: [Vec<(u64, u64, u32)>; 2] = [Vec::new(), Vec::new()];
    for r in 0..RIFFS {
        let riff_at = if r == 0 { 0 } else { at };
        if r > 0 {
            put(&mut f, at, b"RIFF\0\0\0\0AVIX");
            at += 12;
        }
        let movi_at = at;
        put(&mut f, at, b"LIST\0\0\0\0movi");
        at += 12;
        let mut mine: [Vec<(u64, u64, bool)>; 2] = [Vec::new(), Vec::new()];
        for i in 0..FRAMES_PER_RIFF {
            let key = i % 25 == 0;
            put(&mut f, at, &header(b"00dc", VIDEO_CHUNK));
            mine[0].push((at, VIDEO_CHUNK, key));
            chunks[0].push((at, key));
            at += 8 + VIDEO_CHUNK;
            if i % 5 == 0 {
                put(&mut f, at, &header(b"01wb", AUDIO_CHUNK));
                mine[1].push((at, AUDIO_CHUNK, true));
                chunks[1].push((at, true));
                at += 8 + AUDIO_CHUNK;
            }
        }
        let base = movi_at + 8;
        for s in 0..2 {
            let mut ix = Vec::new();
            ix.extend_from_slice(&2u16.to_le_bytes());
            ix.push(0);
            ix.push(1);
            ix.extend_from_slice(&(mine[s].len() as u32).to_le_bytes());
            ix.extend_from_slice(if s == 0 { b"00dc" } else { b"01wb" });
            ix.extend_from_slice(&base.to_le_bytes());
            ix.extend_from_slice(&[0; 4]);
            for &(pos, size, key) in &mine[s] {
                ix.extend_from_slice(&((pos + 8 - base) as u32).to_le_bytes());
                ix.extend_from_slice(&((size as u32) | if key { 0 } else { 0x8000_0000 }).to_le_bytes());
            }
            let id = if s == 0 { b"ix00" } else { b"ix01" };
            put(&mut f, at, &header(id, ix.len() as u64));
            put(&mut f, at + 8, &ix);
            supers[s].push((at, 8 + ix.len() as u64, mine[s].len() as u32));
            at += 8 + ix.len() as u64;
        }
        put(&mut f, movi_at, &header(b"LIST", at - movi_at - 8));
        put(&mut f, riff_at, &header(b"RIFF", at - riff_at - 8));
    }
    for s in 0..2 {
        let mut sx = Vec::new();
        sx.extend_from_slice(&4u16.to_le_bytes());
        sx.push(0);
        sx.push(0);
        sx.extend_from_slice(&(supers[s].len() as u32).to_le_bytes());
        sx.extend_from_slice(if s == 0 { b"00dc" } else { b"01wb" });
        sx.extend_from_slice(&[0; 12]);
        for &(off, size, n) in &supers[s] {
            sx.extend_from_slice(&off.to_le_bytes());
            sx.extend_from_slice(&(size as u32).to_le_bytes());
            sx.extend_from_slice(&n.to_le_bytes());
        }
        put(&mut f, strl_at[s] + indx_at[s], &sx);
    }
    f.set_len(at).unwrap();
    chunks
}

#[test]
#[ignore = "reads a 4.9 GiB sparse file (a few seconds in release)"]
fn opendml_past_4_gib() {
    let dir = std::env::temp_dir().join(format!("mediaslice-odml-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big_opendml.avi");
    let chunks = write(&path);
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > (4 << 30) + (1 << 29), "{len}");
    let src = ReaderSource::<_, _, 8>::new(FileIo(File::open(&path).unwrap()), vec![0u8; 8 << 20]).unwrap();
    let mut d = Demuxer::open(src, None).unwrap();
    assert_eq!(d.tracks()[0].codec, Codec::Mjpeg);
    let zero_video = crc32(&vec![0u8; VIDEO_CHUNK as usize]);
    let zero_audio = crc32(&[0u8; AUDIO_CHUNK as usize]);
    let mut next = [0usize; 2];
    let mut last_pos = 0;
    while let Some(p) = d.next_packet().unwrap() {
        let s = p.track;
        let (pos, key) = chunks[s][next[s]];
        assert_eq!(p.pos, Some(pos + 8));
        assert!(pos > last_pos, "packets in file order");
        last_pos = pos;
        if s == 0 {
            assert_eq!(p.pts, Some(next[s] as i64));
            assert_eq!(p.flags.keyframe, key);
            assert_eq!(crc32(p.data), zero_video);
        } else {
            assert_eq!(p.pts, Some(next[s] as i64 * 1024));
            assert_eq!(crc32(p.data), zero_audio);
        }
        next[s] += 1;
    }
    assert_eq!(next, [chunks[0].len(), chunks[1].len()]);
    assert!(last_pos > 4 << 30, "the last packet lies past 4 GiB");
    assert!(
        d.diagnostics().iter().all(|(x, _)| !x.code.starts_with("avi.")),
        "{:?}",
        d.diagnostics().iter().collect::<Vec<_>>()
    );
    // Seek into the last RIFF through the indexes.
    let target = (RIFFS - 1) * FRAMES_PER_RIFF + 30;
    d.seek(0, target as i64).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.track, p.pts), (0, Some(target as i64 / 25 * 25)));
    drop(d);
    std::fs::remove_dir_all(&dir).unwrap();
}
