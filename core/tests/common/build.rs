//! Builders of small synthetic inputs (ISO BMFF boxes, a movie with one
//! track, RIFF WAVE) for the tests of worst cases and index amplification.

pub fn bx(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut v = ((body.len() + 8) as u32).to_be_bytes().to_vec();
    v.extend_from_slice(kind);
    v.extend_from_slice(body);
    v
}

pub fn full_box(kind: &[u8; 4], version: u8, body: &[u8]) -> Vec<u8> {
    let mut b = vec![version, 0, 0, 0];
    b.extend_from_slice(body);
    bx(kind, &b)
}

pub fn be32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

pub fn ftyp() -> Vec<u8> {
    bx(b"ftyp", b"isom\0\0\x02\0isomiso2mp41")
}

/// A track with the given handler, sample entry and sample-table boxes.
pub fn trak(id: u32, handler: &[u8; 4], stsd_entry: Vec<u8>, tables: &[Vec<u8>]) -> Vec<u8> {
    let mut stbl = full_box(b"stsd", 0, &[be32s(&[1]), stsd_entry].concat());
    for t in tables {
        stbl.extend_from_slice(t);
    }
    let stbl = bx(b"stbl", &stbl);
    let minf = bx(b"minf", &stbl);
    let mdhd = full_box(b"mdhd", 0, &[be32s(&[0, 0, 1000, 0]), vec![0x55, 0xC4, 0, 0]].concat());
    let hdlr = full_box(b"hdlr", 0, &[be32s(&[0]), handler.to_vec(), vec![0; 13]].concat());
    let mdia = bx(b"mdia", &[mdhd, hdlr, minf].concat());
    let tkhd = full_box(b"tkhd", 0, &[be32s(&[0, 0, id, 0, 0]), vec![0; 60]].concat());
    bx(b"trak", &[tkhd, mdia].concat())
}

/// A movie box around `traks`, with an optional `mvex` and `udta` tags.
pub fn moov_of(traks: &[Vec<u8>], mvex: Option<Vec<u8>>, tags: bool) -> Vec<u8> {
    let mvhd = full_box(b"mvhd", 0, &[be32s(&[0, 0, 1000, 0]), vec![0; 80]].concat());
    let mut moov = mvhd;
    for t in traks {
        moov.extend_from_slice(t);
    }
    if let Some(m) = mvex {
        moov.extend_from_slice(&m);
    }
    if tags {
        let item = |k: &[u8; 4], v: &[u8]| bx(k, &bx(b"data", &[be32s(&[1, 0]), v.to_vec()].concat()));
        let ilst = bx(
            b"ilst",
            &[item(b"\xa9nam", b"a title"), item(b"\xa9ART", b"an artist")].concat(),
        );
        let hdlr = full_box(
            b"hdlr",
            0,
            &[be32s(&[0]), b"mdir".to_vec(), b"appl".to_vec(), vec![0; 9]].concat(),
        );
        let meta = full_box(b"meta", 0, &[hdlr, ilst].concat());
        moov.extend_from_slice(&bx(b"udta", &meta));
    }
    bx(b"moov", &moov)
}

/// A one-track movie around the given sample-table boxes.
pub fn movie(handler: &[u8; 4], stsd_entry: Vec<u8>, tables: &[Vec<u8>], mvex: Option<Vec<u8>>) -> Vec<u8> {
    moov_of(&[trak(1, handler, stsd_entry, tables)], mvex, false)
}

pub fn avc1() -> Vec<u8> {
    let mut e = vec![0u8; 78];
    e[7] = 1;
    e[24..26].copy_from_slice(&64u16.to_be_bytes());
    e[26..28].copy_from_slice(&48u16.to_be_bytes());
    bx(b"avc1", &e)
}

pub fn mp4a() -> Vec<u8> {
    let mut e = vec![0u8; 28];
    e[7] = 1;
    e[17] = 2; // channels
    e[19] = 16; // bits
    e[24..28].copy_from_slice(&(8000u32 << 16).to_be_bytes());
    bx(b"mp4a", &e)
}

pub fn sowt() -> Vec<u8> {
    let mut e = vec![0u8; 28];
    e[7] = 1;
    e[17] = 1;
    e[19] = 16;
    e[24..28].copy_from_slice(&(8000u32 << 16).to_be_bytes());
    bx(b"sowt", &e)
}

pub fn mdat(n: usize) -> Vec<u8> {
    bx(b"mdat", &vec![0xA5; n])
}

pub fn wav(form: &[u8; 4], riff_size: u32, data_size: u32, extra: &[u8], data_len: usize) -> Vec<u8> {
    let mut v = form.to_vec();
    v.extend_from_slice(&riff_size.to_le_bytes());
    v.extend_from_slice(b"WAVE");
    v.extend_from_slice(extra);
    v.extend_from_slice(b"fmt ");
    v.extend_from_slice(&16u32.to_le_bytes());
    v.extend_from_slice(&1u16.to_le_bytes()); // PCM
    v.extend_from_slice(&2u16.to_le_bytes()); // channels
    v.extend_from_slice(&8000u32.to_le_bytes());
    v.extend_from_slice(&32000u32.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&16u16.to_le_bytes());
    v.extend_from_slice(b"data");
    v.extend_from_slice(&data_size.to_le_bytes());
    v.extend(std::iter::repeat_n(0x5Au8, data_len));
    v
}
