//! CAF unit tests: files built in code (grouped PCM with an `info` tag, a
//! packet table walked in place and seeking in it, every cut of an IMA4
//! file).

use crate::tags::{TagKey, TagValue};
use crate::types::Codec;
use crate::{Demuxer, FormatKind, SliceSource};

struct W<'a> {
    b: &'a mut [u8],
    n: usize,
}
impl W<'_> {
    fn put(&mut self, d: &[u8]) {
        self.b[self.n..self.n + d.len()].copy_from_slice(d);
        self.n += d.len();
    }
    fn chunk(&mut self, id: &[u8; 4], size: i64) {
        self.put(id);
        self.put(&size.to_be_bytes());
    }
}

fn desc(w: &mut W, id: &[u8; 4], flags: u32, bpp: u32, fpp: u32, ch: u32, bits: u32) {
    w.put(b"caff\0\x01\0\0");
    w.chunk(b"desc", 32);
    w.put(&44100f64.to_be_bytes());
    for v in [u32::from_be_bytes(*id), flags, bpp, fpp, ch, bits] {
        w.put(&v.to_be_bytes());
    }
}

#[test]
fn lpcm_groups_to_4096() {
    let mut b = [0u8; 12000];
    let mut w = W { b: &mut b, n: 0 };
    desc(&mut w, b"lpcm", 2, 4, 1, 2, 16);
    w.chunk(b"info", 4 + 12);
    w.put(&1u32.to_be_bytes());
    w.put(b"title\0hello\0");
    w.chunk(b"data", -1);
    w.put(&[0; 4]);
    w.put(&[7; 5000]);
    let n = w.n;
    let mut d = Demuxer::open(SliceSource::new(&b[..n]), None).unwrap();
    assert_eq!(d.format(), FormatKind::Caf);
    assert_eq!(d.tracks()[0].codec, Codec::PcmS16Le);
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.data.len(), p.pts), (4096, Some(0)));
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.data.len(), p.pts), (904, Some(1024)));
    assert!(d.next_packet().unwrap().is_none());
    let t = d.next_tag().unwrap().unwrap();
    assert_eq!(t.key, TagKey::Text("title"));
    assert_eq!(t.value, TagValue::Text("hello"));
    assert!(d.next_tag().unwrap().is_none());
}

#[test]
fn pakt_is_walked_in_place() {
    let mut b = [0u8; 4096];
    let mut w = W { b: &mut b, n: 0 };
    desc(&mut w, b"aac ", 0, 0, 1024, 2, 0);
    w.chunk(b"kuki", 3);
    w.put(&[1, 2, 3]);
    // Three packets: 200, 300 (two-byte varint 0x82 0x2C), 5.
    w.chunk(b"pakt", 24 + 5);
    w.put(&3u64.to_be_bytes());
    w.put(&3072u64.to_be_bytes());
    w.put(&[0; 8]);
    w.put(&[0x81, 0x48, 0x82, 0x2C, 5]);
    w.chunk(b"data", 4 + 504);
    w.put(&[0; 4]);
    w.put(&[1; 504]);
    let n = w.n;
    // The data holds 504 bytes: the third packet (5 bytes) is cut.
    let mut d = Demuxer::open(SliceSource::new(&b[..n]), None).unwrap();
    assert_eq!(d.codec_config(0).unwrap(), &[1, 2, 3]);
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.data.len(), p.pts), (200, Some(0)));
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!((p.data.len(), p.pts), (300, Some(1024)));
    assert!(d.next_packet().is_err());
    d.seek(0, 1500).unwrap();
    let p = d.next_packet().unwrap().unwrap();
    assert_eq!(p.pts, Some(1024));
}

#[test]
fn cut_files_do_not_panic() {
    let mut b = [0u8; 2048];
    let mut w = W { b: &mut b, n: 0 };
    desc(&mut w, b"ima4", 0, 34, 64, 1, 0);
    w.chunk(b"data", 4 + 34 * 10);
    w.put(&[0; 4]);
    w.put(&[3; 340]);
    let n = w.n;
    for cut in 0..=n {
        if let Ok(mut d) = Demuxer::open(SliceSource::new(&b[..cut]), None) {
            let mut k = 0;
            loop {
                match d.next_packet() {
                    Ok(Some(p)) => {
                        // Whole blocks, or the cut last one flagged.
                        assert!(p.data.len() == 34 || (p.flags.truncated && p.data.len() < 34));
                        k += 1;
                    }
                    Ok(None) => break,
                    Err(e) => {
                        assert!(e.is_truncation());
                        break;
                    }
                }
            }
            assert!(k <= 10);
        }
    }
}
