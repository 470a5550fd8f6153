//! `tags --picture FILE` / `--remove picture` (issue 20): for every corpus
//! and sample FLAC, MP3, MP4/M4A and Matroska file, a JPEG front cover is added, then
//! replaced by a PNG (into another file), then removed; after each step our
//! reader and ffprobe see the picture (an attached-picture stream, codec
//! mjpeg or png, its size) or none, and every audio/video packet is
//! unchanged (stream, times, size, CRC-32). The pictures are made by
//! ffmpeg; without ffmpeg/ffprobe the test says so and checks nothing.

use crate::tagedit_common;

use mediaslice::{Demuxer, Limits};
use mediaslice_std::tagedit::{edit, EditMode, Edits, Picture, PictureKind};
use mediaslice_std::MmapSource;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use tagedit_common::*;

/// Per file: the packets of the tracks that are not pictures, and the
/// pictures' packet bytes.
fn read(path: &Path) -> Option<(Vec<PacketKey>, Vec<Vec<u8>>)> {
    let src = MmapSource::open(path).ok()?;
    let ext = path.extension().and_then(|e| e.to_str());
    let mut d = Demuxer::open_with(src, ext, Limits::default()).ok()?;
    let pics: Vec<bool> = d.tracks().iter().map(|t| t.attached_picture).collect();
    let (mut media, mut pictures) = (Vec::new(), Vec::new());
    while let Ok(Some(p)) = d.next_packet() {
        if pics.get(p.track).copied().unwrap_or(false) {
            pictures.push(p.data.to_vec());
        } else {
            // Track numbers of media tracks, counted without pictures.
            let t = pics.iter().take(p.track).filter(|&&x| !x).count();
            media.push((t, p.pts, p.dts, p.data.len(), mediaslice::crc::crc32(p.data)));
        }
    }
    Some((media, pictures))
}

/// ffprobe's attached-picture streams: (codec, width, height); `None`
/// when ffprobe cannot read the file.
fn try_ffprobe_pictures(path: &Path) -> Option<Vec<(String, u64, u64)>> {
    Some(ffprobe_streams(&try_ffprobe_json(path)?))
}

/// ffprobe's `-show_streams` JSON; `None` when ffprobe cannot read the file.
fn try_ffprobe_json(path: &Path) -> Option<Value> {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_streams", "-of", "json"])
        .arg(path)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).unwrap())
}

/// ffprobe's attached-picture streams of a file it read before the edit.
fn ffprobe_pictures(path: &Path) -> Vec<(String, u64, u64)> {
    try_ffprobe_pictures(path).unwrap_or_else(|| panic!("{}: ffprobe no longer reads it", path.display()))
}

fn ffprobe_streams(v: &Value) -> Vec<(String, u64, u64)> {
    v["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["disposition"]["attached_pic"] == 1)
        .map(|s| {
            (
                s["codec_name"].as_str().unwrap_or("").to_string(),
                s["width"].as_u64().unwrap_or(0),
                s["height"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// True (and says so) when ffmpeg or ffprobe is not installed: the test
/// then checks nothing.
fn ffmpeg_missing() -> bool {
    let missing = !have("ffmpeg") || !have("ffprobe");
    if missing {
        println!("ffmpeg/ffprobe not installed: nothing checked");
    }
    missing
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A `w`x`h` test picture made by ffmpeg.
fn make_picture(dir: &Path, name: &str, w: u32, h: u32) -> PathBuf {
    let p = dir.join(name);
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("testsrc2=s={w}x{h}"))
        .args(["-frames:v", "1", "-y"])
        .arg(&p)
        .status()
        .unwrap();
    assert!(st.success());
    p
}

fn with_picture(p: &Picture) -> Edits {
    Edits {
        picture: Some(p.clone()),
        ..Edits::default()
    }
}

#[test]
fn add_replace_remove_a_picture() {
    if ffmpeg_missing() {
        return;
    }
    let dir = scratch("picture");
    let jpeg = Picture::read(&make_picture(&dir, "cover.jpg", 64, 48)).unwrap();
    let png = Picture::read(&make_picture(&dir, "cover.png", 40, 30)).unwrap();
    assert_eq!(
        (jpeg.kind, jpeg.width, jpeg.height, jpeg.depth),
        (PictureKind::Jpeg, 64, 48, 24)
    );
    assert_eq!((png.kind, png.width, png.height), (PictureKind::Png, 40, 30));
    let (mut done, mut in_place) = (0, 0);
    for (family, exts) in [
        ("flac", &[".flac"][..]),
        ("mp3", &[".mp3"]),
        ("mp4", &[".mp4", ".m4a"]),
        ("matroska", &[".mkv", ".mka"]),
    ] {
        for (name, f) in named_files(family, exts) {
            let Some((media, _)) = read(&f) else {
                eprintln!("{name}: our reader does not open it; not edited");
                continue;
            };
            let orig = std::fs::read(&f).unwrap();
            // Files ffprobe cannot read (xHE-AAC in 5.1) are left to ours.
            let ffprobe = try_ffprobe_pictures(&f).is_some();
            if !ffprobe {
                eprintln!("{name}: ffprobe does not read it; checked by our reader only");
            }
            let work = dir.join(&name);
            std::fs::write(&work, &orig).unwrap();
            // Add: in place or by a copy over the input.
            let r = match edit(&work, &with_picture(&jpeg), None) {
                Ok(r) => r,
                Err(e) => {
                    assert_eq!(
                        std::fs::read(&work).unwrap(),
                        orig,
                        "{name}: a failed edit changed the file"
                    );
                    eprintln!("{name}: refused: {e}");
                    continue;
                }
            };
            // ffmpeg's FLAC files have 8 KiB of padding: the 2 kB JPEG fits.
            if f.starts_with(Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")) && name.ends_with(".flac") {
                assert_eq!(r.mode, EditMode::InPlace, "{name}");
                assert_eq!(std::fs::metadata(&work).unwrap().len(), orig.len() as u64, "{name}");
            }
            in_place += usize::from(r.mode == EditMode::InPlace);
            let (m, pics) = read(&work).unwrap();
            assert_eq!(m, media, "{name}: packets changed");
            assert!(pics.contains(&jpeg.data), "{name}: our reader does not see the JPEG");
            if ffprobe {
                let ff = ffprobe_pictures(&work);
                assert!(ff.contains(&("mjpeg".into(), 64, 48)), "{name}: ffprobe: {ff:?}");
            }
            // Replace, into another file: the JPEG is gone.
            let out = dir.join(format!("png-{name}"));
            edit(&work, &with_picture(&png), Some(&out)).unwrap();
            let (m, pics) = read(&out).unwrap();
            assert_eq!(m, media, "{name}: packets changed");
            assert!(
                pics.contains(&png.data) && !pics.contains(&jpeg.data),
                "{name}: not replaced"
            );
            if ffprobe {
                let ff = ffprobe_pictures(&out);
                assert!(
                    ff.contains(&("png".into(), 40, 30)) && !ff.contains(&("mjpeg".into(), 64, 48)),
                    "{name}: ffprobe: {ff:?}"
                );
            }
            // Remove: no picture left.
            let remove = Edits {
                remove_picture: true,
                ..Edits::default()
            };
            edit(&out, &remove, None).unwrap();
            // In place or not, the picture's bytes are gone from the file.
            let bytes = std::fs::read(&out).unwrap();
            assert!(
                !bytes.windows(png.data.len()).any(|w| w == png.data),
                "{name}: the PNG lingers"
            );
            // And in place from the first file (where the JPEG was added).
            edit(&work, &remove, None).unwrap();
            assert!(read(&work).unwrap().1.is_empty(), "{name}");
            let bytes = std::fs::read(&work).unwrap();
            assert!(
                !bytes.windows(jpeg.data.len()).any(|w| w == jpeg.data),
                "{name}: the JPEG lingers"
            );
            let (m, pics) = read(&out).unwrap();
            assert_eq!(m, media, "{name}: packets changed");
            assert!(pics.is_empty(), "{name}: {} pictures left", pics.len());
            if ffprobe {
                assert_eq!(ffprobe_pictures(&out), Vec::new(), "{name}");
            }
            done += 1;
        }
    }
    eprintln!("{done} files given a picture ({in_place} in place), replaced, removed");
    assert!(done >= 8, "{done} files");
    let _ = std::fs::remove_dir_all(&dir);
}

fn mediaslice(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mediaslice"))
        .args(args)
        .output()
        .unwrap()
}

/// `mediaslice tags INPUT --picture PICTURE -o OUT`.
fn add_cover(input: &Path, picture: &Path, out: &Path) -> std::process::Output {
    mediaslice(&[
        "tags".as_ref(),
        input.as_os_str(),
        "--picture".as_ref(),
        picture.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ])
}

#[test]
fn cli_picture_and_its_refusals() {
    if ffmpeg_missing() {
        return;
    }
    let dir = scratch("picture-cli");
    let cover = make_picture(&dir, "cover.jpg", 64, 48);
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/flac/s16_stereo.flac");
    let out = dir.join("out.flac");
    let o = add_cover(&input, &cover, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ffprobe_pictures(&out), vec![("mjpeg".to_string(), 64, 48)]);
    let o = mediaslice(&[
        "tags".as_ref(),
        out.as_os_str(),
        "--remove".as_ref(),
        "picture".as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(ffprobe_pictures(&out).is_empty());
    // Not a picture; too big; WAV, WebM, FLAC in Ogg: refused, nothing written.
    let text = dir.join("cover.txt");
    std::fs::write(&text, b"not a picture").unwrap();
    let big = dir.join("big.jpg");
    let mut b = std::fs::read(&cover).unwrap();
    b.resize((16 << 20) + 1, 0);
    std::fs::write(&big, &b).unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files");
    let wav = corpus.join("wav/pcm_s16le.wav");
    // Formats whose tags are edited but not their pictures: refused, never
    // a silent no-op.
    let webm = corpus.join("matroska/vp9_opus.webm");
    let ogg_flac = corpus.join("ogg/flac.oga");
    for (file, pic, msg) in [
        (&input, &text, "neither JPEG nor PNG"),
        (&input, &big, "over 16 MiB"),
        (&wav, &cover, "WAV has no picture"),
        (&webm, &cover, "WebM has no attachments"),
        (&ogg_flac, &cover, "only Vorbis and Opus"),
    ] {
        let out = dir.join("refused.out");
        let o = add_cover(file, pic, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(msg), "{err}");
        assert!(!out.exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ffprobe's stream `index` of `path` as JSON, without the fields that
/// depend on the file around it (its duration).
fn stream_json(path: &Path, index: usize) -> Value {
    let v = try_ffprobe_json(path).unwrap_or_default();
    let mut s = v["streams"][index].clone();
    if let Some(o) = s.as_object_mut() {
        o.remove("duration");
        o.remove("duration_ts");
    }
    s
}

/// A Matroska cover added by us is the stream ffprobe shows for the same
/// picture added by `mkvpropedit --add-attachment` (named `cover.jpg`).
#[test]
fn matroska_cover_as_mkvpropedit_adds_it() {
    if !have("ffmpeg") || !have("ffprobe") || !have_mkvtoolnix() {
        println!("ffmpeg, ffprobe or mkvpropedit not installed: nothing checked");
        return;
    }
    let dir = scratch("picture-mkv");
    let cover = make_picture(&dir, "cover.jpg", 64, 48);
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/files/matroska/h264_aac.mkv");
    let (ours, theirs) = (dir.join("ours.mkv"), dir.join("theirs.mkv"));
    std::fs::copy(&input, &ours).unwrap();
    std::fs::copy(&input, &theirs).unwrap();
    let jpeg = Picture::read(&cover).unwrap();
    edit(&ours, &with_picture(&jpeg), None).unwrap();
    let st = Command::new("mkvpropedit")
        .arg("-q")
        .arg(&theirs)
        .args(["--attachment-mime-type", "image/jpeg", "--add-attachment"])
        .arg(&cover)
        .status()
        .unwrap();
    assert!(st.success());
    let s = stream_json(&ours, 2);
    assert_eq!(s["disposition"]["attached_pic"], 1, "{s}");
    assert_eq!(s["tags"]["filename"], "cover.jpg", "{s}");
    assert_eq!(s, stream_json(&theirs, 2));
    let o = Command::new("mkvmerge").arg("--identify").arg(&ours).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && text.contains("file name 'cover.jpg'") && !text.contains("arning"),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn have_mkvtoolnix() -> bool {
    ["mkvpropedit", "mkvmerge"].iter().all(|t| {
        Command::new(t)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The picture streams' bytes as ffmpeg extracts them (`-c copy` of each
/// attached picture), in stream order.
fn ffmpeg_picture_bytes(path: &Path, dir: &Path) -> Vec<Vec<u8>> {
    let n = ffprobe_pictures(path).len();
    (0..n)
        .map(|i| {
            let out = dir.join(format!("extracted-{i}.bin"));
            let st = Command::new("ffmpeg")
                .args(["-v", "error", "-i"])
                .arg(path)
                .args(["-map", &format!("0:v:{i}"), "-c", "copy", "-f", "data", "-y"])
                .arg(&out)
                .status()
                .unwrap();
            assert!(st.success(), "{}: ffmpeg cannot extract picture {i}", path.display());
            std::fs::read(&out).unwrap()
        })
        .collect()
}

/// Our `probe --json`'s attached-picture streams, as [`ffprobe_streams`]
/// gives ffprobe's (the reader's `ogg-pictures` feature decodes each
/// `METADATA_BLOCK_PICTURE` comment into a picture track, as ffprobe does).
fn our_pictures(path: &Path) -> Vec<(String, u64, u64)> {
    let o = mediaslice(&["probe".as_ref(), "--json".as_ref(), path.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    ffprobe_streams(&serde_json::from_slice(&o.stdout).unwrap())
}

/// How many of ffprobe's attached pictures are front covers (type 3: an
/// added cover replaces them).
fn ffprobe_front_covers(path: &Path) -> usize {
    let v = try_ffprobe_json(path).unwrap_or_default();
    v["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["disposition"]["attached_pic"] == 1 && s["tags"]["comment"] == "Cover (front)")
        .count()
}

#[test]
fn ogg_vorbis_and_opus_metadata_block_picture() {
    if ffmpeg_missing() {
        return;
    }
    let dir = scratch("picture-ogg");
    let jpeg_path = make_picture(&dir, "cover.jpg", 64, 48);
    let jpeg = Picture::read(&jpeg_path).unwrap();
    let png = Picture::read(&make_picture(&dir, "cover.png", 40, 30)).unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let (mut done, mut refused) = (0, 0);
    for (name, f) in named_files("ogg", &[".ogg", ".opus", ".oga", ".ogv", ".spx"]) {
        let Some((media, _)) = read(&f) else {
            eprintln!("{name}: our reader does not open it; not edited");
            continue;
        };
        let Some(before) = try_ffprobe_pictures(&f) else {
            eprintln!("{name}: ffprobe does not read it; not edited");
            continue;
        };
        assert_eq!(our_pictures(&f), before, "{name}: our pictures before the edit");
        // An added front cover replaces the front covers there are.
        let after = before.len() + 1 - ffprobe_front_covers(&f);
        let orig = std::fs::read(&f).unwrap();
        let work = dir.join(&name);
        // Add, into another file: only Vorbis and Opus streams are taken.
        match edit(&f, &with_picture(&jpeg), Some(&work)) {
            Ok(r) => assert_eq!(r.mode, EditMode::Copy, "{name}"),
            Err(e) => {
                assert!(!work.exists(), "{name}: a refused edit left {}", work.display());
                eprintln!("{name}: refused: {e}");
                refused += 1;
                continue;
            }
        }
        assert_eq!(read(&work).unwrap().0, media, "{name}: packets changed");
        let ff = ffprobe_pictures(&work);
        assert_eq!(ff.len(), after, "{name}: ffprobe: {ff:?}");
        assert!(ff.contains(&("mjpeg".into(), 64, 48)), "{name}: ffprobe: {ff:?}");
        assert!(
            ffmpeg_picture_bytes(&work, &dir).contains(&jpeg.data),
            "{name}: ffmpeg extracts other bytes than the JPEG"
        );
        assert_eq!(our_pictures(&work), ff, "{name}: our pictures");
        assert!(
            read(&work).unwrap().1.contains(&jpeg.data),
            "{name}: our picture packets"
        );
        // The audio still decodes.
        let st = Command::new("ffmpeg")
            .args(["-v", "error", "-xerror", "-i"])
            .arg(&work)
            .args(["-map", "0:a", "-f", "null", "-"])
            .status()
            .unwrap();
        assert!(st.success(), "{name}: ffmpeg does not decode the audio any more");
        // Replace, in place of the input (a copy renamed over it).
        edit(&work, &with_picture(&png), None).unwrap();
        assert_eq!(read(&work).unwrap().0, media, "{name}: packets changed");
        let ff = ffprobe_pictures(&work);
        assert!(
            ff.contains(&("png".into(), 40, 30)) && !ff.contains(&("mjpeg".into(), 64, 48)),
            "{name}: ffprobe: {ff:?}"
        );
        assert_eq!(ff.len(), after, "{name}: ffprobe: {ff:?}");
        assert_eq!(our_pictures(&work), ff, "{name}: our pictures");
        // Remove: no picture left, and ffmpeg's files are as they were.
        let remove = Edits {
            remove_picture: true,
            ..Edits::default()
        };
        edit(&work, &remove, None).unwrap();
        assert_eq!(read(&work).unwrap().0, media, "{name}: packets changed");
        assert_eq!(ffprobe_pictures(&work), Vec::new(), "{name}");
        assert!(our_pictures(&work).is_empty(), "{name}");
        if f.starts_with(&corpus) && before.is_empty() {
            assert!(
                std::fs::read(&work).unwrap() == orig,
                "{name}: not restored byte for byte"
            );
        }
        done += 1;
    }
    // Through the command line too.
    let out = dir.join("cli.opus");
    let input = corpus.join("files/ogg/opus.opus");
    let o = add_cover(&input, &jpeg_path, &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(ffprobe_pictures(&out), vec![("mjpeg".to_string(), 64, 48)]);
    eprintln!("{done} Ogg files given a picture, replaced, removed; {refused} refused");
    assert!(done >= 2 && refused >= 1, "{done} done, {refused} refused");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bytes of the `ID3 ` chunks of an AIFF file (walked from the `FORM`).
fn aiff_id3_chunks(path: &Path) -> Vec<Vec<u8>> {
    let b = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut at = 12;
    while at + 8 <= b.len() {
        let size = u32::from_be_bytes(b[at + 4..at + 8].try_into().unwrap()) as usize;
        let end = (at + 8 + size).min(b.len());
        if &b[at..at + 4] == b"ID3 " {
            out.push(b[at + 8..end].to_vec());
        }
        at += 8 + size + (size & 1);
    }
    out
}

/// AIFF (issue 20): `tags --picture` puts the cover as an ID3v2 `APIC`
/// frame in the `ID3 ` chunk. Added with the command line to an AIFF made
/// by ffmpeg and to the corpus and sample AIFF and AIFF-C files ffprobe
/// reads, replaced by a PNG
/// into another file, then removed: after each step ffprobe shows the
/// picture as an attached-picture stream (codec and size) or none, the
/// `ID3 ` chunk holds the picture's bytes or not, and our reader's audio
/// packets are unchanged. (Our AIFF reader gives the `ID3 ` chunk as a
/// binary tag, not as a picture track: ffprobe is the reader checked.)
#[test]
fn aiff_cover_in_the_id3_chunk() {
    if ffmpeg_missing() {
        return;
    }
    let dir = scratch("picture-aiff");
    let cover = make_picture(&dir, "cover.jpg", 64, 48);
    let png = Picture::read(&make_picture(&dir, "cover.png", 40, 30)).unwrap();
    let jpeg = std::fs::read(&cover).unwrap();
    let made = dir.join("made.aiff");
    let st = Command::new("ffmpeg")
        .args(["-v", "error", "-f", "lavfi", "-i", "sine=r=22050", "-t", "0.5", "-y"])
        .arg(&made)
        .status()
        .unwrap();
    assert!(st.success());
    let mut inputs = vec![("made.aiff".to_string(), made)];
    inputs.extend(named_files("aiff", &[".aif", ".aiff", ".aifc"]));
    let mut done = 0;
    for (name, f) in inputs {
        let Some((media, _)) = read(&f) else {
            eprintln!("{name}: our reader does not open it; not edited");
            continue;
        };
        if try_ffprobe_pictures(&f).is_none() {
            eprintln!("{name}: ffprobe does not read it; not edited");
            continue;
        }
        let out = dir.join(format!("cover-{name}"));
        let o = add_cover(&f, &cover, &out);
        if !o.status.success() {
            eprintln!("{name}: refused: {}", String::from_utf8_lossy(&o.stderr));
            assert!(!out.exists(), "{name}: a refused edit left an output");
            continue;
        }
        assert_eq!(read(&out).unwrap().0, media, "{name}: packets changed");
        let id3 = aiff_id3_chunks(&out);
        assert_eq!(id3.len(), 1, "{name}: one ID3 chunk");
        assert!(
            id3[0].windows(4).any(|w| w == b"APIC") && id3[0].windows(jpeg.len()).any(|w| w == jpeg),
            "{name}: the JPEG is not an APIC frame of the ID3 chunk"
        );
        assert_eq!(ffprobe_pictures(&out), vec![("mjpeg".to_string(), 64, 48)], "{name}");
        // Replaced by a PNG, into another file.
        let png_out = dir.join(format!("png-{name}"));
        edit(&out, &with_picture(&png), Some(&png_out)).unwrap();
        assert_eq!(read(&png_out).unwrap().0, media, "{name}: packets changed");
        assert_eq!(ffprobe_pictures(&png_out), vec![("png".to_string(), 40, 30)], "{name}");
        // Removed: no picture, its bytes gone.
        let remove = Edits {
            remove_picture: true,
            ..Edits::default()
        };
        edit(&png_out, &remove, None).unwrap();
        assert!(ffprobe_pictures(&png_out).is_empty(), "{name}");
        let bytes = std::fs::read(&png_out).unwrap();
        assert!(
            !bytes.windows(png.data.len()).any(|w| w == png.data),
            "{name}: the PNG lingers"
        );
        assert_eq!(read(&png_out).unwrap().0, media, "{name}: packets changed");
        done += 1;
    }
    eprintln!("{done} AIFF files given a cover, replaced, removed");
    assert!(done >= 1, "no AIFF was edited");
    let _ = std::fs::remove_dir_all(&dir);
}
