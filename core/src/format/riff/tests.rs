//! Unit tests of the WAV reader: packet sizes and clamped data.

use crate::types::Codec;
use crate::{Demuxer, SliceSource};

fn wav(data_len: usize, block_align: u16) -> [u8; 8192 + 44] {
    let mut f = [0u8; 8192 + 44];
    f[..4].copy_from_slice(b"RIFF");
    f[4..8].copy_from_slice(&((36 + data_len) as u32).to_le_bytes());
    f[8..16].copy_from_slice(b"WAVEfmt ");
    f[16..20].copy_from_slice(&16u32.to_le_bytes());
    f[20..22].copy_from_slice(&1u16.to_le_bytes());
    f[22..24].copy_from_slice(&(block_align / 2).to_le_bytes());
    f[24..28].copy_from_slice(&8000u32.to_le_bytes());
    f[28..32].copy_from_slice(&(8000 * block_align as u32).to_le_bytes());
    f[32..34].copy_from_slice(&block_align.to_le_bytes());
    f[34..36].copy_from_slice(&16u16.to_le_bytes());
    f[36..40].copy_from_slice(b"data");
    f[40..44].copy_from_slice(&(data_len as u32).to_le_bytes());
    for (i, b) in f[44..].iter_mut().enumerate() {
        *b = i as u8;
    }
    f
}

#[test]
fn packets_follow_ffmpeg_sizes() {
    // 6-byte blocks: 4096 rounds down to 4092.
    let f = wav(8000, 6);
    let mut d = Demuxer::open(SliceSource::new(&f[..44 + 8000]), None).unwrap();
    assert_eq!(d.tracks()[0].codec, Codec::PcmS16Le);
    assert_eq!(d.tracks()[0].channels, 3);
    let mut sizes = [0usize; 4];
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        sizes[n] = p.data.len();
        n += 1;
    }
    assert_eq!(&sizes[..n], &[4092, 3908]);
}

#[test]
fn data_beyond_eof_is_clamped_and_reported() {
    let f = wav(8192, 2);
    let mut d = Demuxer::open(SliceSource::new(&f[..44 + 5000]), None).unwrap();
    let mut total = 0;
    while let Some(p) = d.next_packet().unwrap() {
        total += p.data.len();
    }
    assert_eq!(total, 5000);
    assert!(d.diagnostics().contains("wav.data-beyond-eof"));
}

/// A `data` size of 0, as a streaming writer leaves it: ffprobe 5.1 reads
/// the data to the end of the file (8000 bytes of 16-bit mono: packets of
/// 4096 and 3904 bytes).
#[test]
fn data_size_zero_runs_to_the_end() {
    let mut f = wav(0, 2);
    f[4..8].copy_from_slice(&0u32.to_le_bytes());
    let mut d = Demuxer::open(SliceSource::new(&f[..44 + 8000]), None).unwrap();
    let mut sizes = [0usize; 4];
    let mut n = 0;
    while let Some(p) = d.next_packet().unwrap() {
        sizes[n] = p.data.len();
        n += 1;
    }
    assert_eq!(&sizes[..n], &[4096, 3904]);
    assert!(!d.diagnostics().contains("wav.data-beyond-eof"));
}

/// An empty `LIST` chunk (no list type) before or after the data: ffprobe
/// 5.1 refuses the whole file ("too short LIST tag"); we skip the chunk and
/// read the audio (docs/formats/wav.md).
#[test]
fn empty_list_chunk_is_skipped() {
    let f = wav(8000, 2);
    let list0 = *b"LIST\0\0\0\0";
    let mut before = [0u8; 44 + 8 + 8000];
    before[..36].copy_from_slice(&f[..36]);
    before[36..44].copy_from_slice(&list0);
    before[44..].copy_from_slice(&f[36..44 + 8000]);
    let mut after = [0u8; 44 + 8000 + 8];
    after[..44 + 8000].copy_from_slice(&f[..44 + 8000]);
    after[44 + 8000..].copy_from_slice(&list0);
    for (file, first) in [(&before[..], 52), (&after[..], 44)] {
        let mut d = Demuxer::open(SliceSource::new(file), None).unwrap();
        let mut total = 0;
        let mut pos = None;
        while let Some(p) = d.next_packet().unwrap() {
            pos = pos.or(p.pos);
            total += p.data.len();
        }
        assert_eq!((pos, total), (Some(first), 8000));
    }
}
