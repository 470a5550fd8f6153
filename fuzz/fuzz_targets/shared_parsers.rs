#![no_main]
//! Fuzzes the shared tag and element parsers on their own, without a
//! container around them: the EBML element reader (Matroska/WebM), MPEG-TS
//! PSI sections (PMT, descriptors, CRC), FLV's AMF0 values, ID3v2
//! tags and their frames (MP3, ADTS, AIFF, WAV `id3 `), Vorbis comments (Ogg,
//! FLAC, Matroska) and the FLAC frame header, STREAMINFO and PICTURE
//! parsers. The first byte picks the offset where the parser starts, so a
//! corpus of whole files still reaches the structures inside them.
use libfuzzer_sys::fuzz_target;
use mediaslice::format::es::id3::{id3v2_at, FrameWalk};
use mediaslice::format::xiph::comment::{split_entry, CommentCursor};
use mediaslice::format::xiph::flac::{FrameHeader, Picture, StreamInfo};
use mediaslice::{SliceSource, Source};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    mediaslice::format::mkv::fuzz_ebml(rest);
    mediaslice::format::mpeg::ts::fuzz_psi(rest);
    mediaslice::format::flv::fuzz_amf0(rest);
    let at = u64::from(first) % (rest.len() as u64 + 1);
    let len = rest.len() as u64;

    // ID3v2: the header at `at`, every frame, every text frame as a tag.
    let mut src = SliceSource::new(rest);
    if let Ok(Some(tag)) = id3v2_at(&mut src, at) {
        assert!(tag.total >= 10, "{tag:?}");
        if let Ok(Some(mut walk)) = FrameWalk::new(&mut src, &tag) {
            let mut w2 = walk.clone();
            let mut n = 0u32;
            while let Ok(Some(f)) = walk.next_frame(&mut src) {
                assert!(f.body.saturating_add(f.size) <= len.max(f.body), "{f:?}");
                n += 1;
                assert!(n as u64 <= len, "frames without bytes");
            }
            let mut m = 0u32;
            while let Ok(Some(t)) = w2.next(&mut src, 1 << 20) {
                let _ = (t.key, t.name, t.value);
                m += 1;
                assert!(m <= n, "more text tags than frames");
            }
        }
    }

    // Vorbis comments: a block at `at` running to the end.
    let mut src = SliceSource::new(rest);
    if let Ok(Some(mut c)) = CommentCursor::begin(&mut src, at, len.saturating_sub(at)) {
        let mut n = 0u64;
        while let Ok(Some((off, l))) = c.next_entry(&mut src) {
            assert!(off.saturating_add(u64::from(l)) <= len, "entry past the block");
            if let Ok(e) = src.bytes(off, l as usize) {
                let _ = split_entry(e);
            }
            n += 1;
            assert!(n <= len / 4 + 1, "entries without bytes");
        }
    }

    // FLAC headers and a PICTURE block.
    let tail = rest.get(at as usize..).unwrap_or(&[]);
    let _ = FrameHeader::parse(tail);
    let _ = StreamInfo::parse(tail);
    let mut src = SliceSource::new(rest);
    let _ = Picture::read(&mut src, at, len.saturating_sub(at));
});
