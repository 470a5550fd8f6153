//! The Matroska fields the editor changes: the Info Title (RFC 9559
//! §5.1.2.9) and the SimpleTags of the file-level Tags (§5.1.8), under the
//! names ffmpeg's reader shows. Every other element is kept byte for byte.
//!
//! ffmpeg 5.1's demuxer shows Info/Title as `title`, and the SimpleTags of
//! a Tag without a TagTrackUID, TagEditionUID, TagChapterUID or
//! TagAttachmentUID (none, or zero) and without a TargetType string as
//! format tags under their TagName as written (`ARTIST`), except
//! `PART_NUMBER`, shown as `track`, and `LEAD_PERFORMER`; a TagLanguage
//! other than `und` adds `-lang` to the name. A global `TITLE` overrides
//! the Info Title there.

use super::ebml::{
    bytes_of, children, data_of, element, master, master_like, parse_header, uint, uint_element, Header,
};
use super::{malformed, Edits};
use std::io;

const INFO: u64 = super::mkv_layout::INFO;
const TAGS: u64 = super::mkv_layout::TAGS;
const TITLE: u64 = 0x7BA9;
const TAG: u64 = 0x7373;
const TARGETS: u64 = 0x63C0;
const TARGET_TYPE_VALUE: u64 = 0x68CA;
const TARGET_TYPE: u64 = 0x63CA;
const UIDS: [u64; 4] = [0x63C5, 0x63C9, 0x63C4, 0x63C6];
const SIMPLE_TAG: u64 = 0x67C8;
const TAG_NAME: u64 = 0x45A3;
const TAG_STRING: u64 = 0x4487;
const TAG_BINARY: u64 = 0x4485;
const TAG_LANGUAGE: u64 = 0x447A;
/// TargetTypeValue of a new Tag: 50, the album, movie or episode level
/// (RFC 9559 §5.1.8.1.1.1), where the Matroska tagging guidelines put a
/// file's own fields.
const TARGET_FILE_LEVEL: u64 = 50;

/// The TagName a field is written under: the common names as ffmpeg's
/// muxer writes them (upper case; `track` as `PART_NUMBER`), any other
/// name in upper case. Errors: an empty name or one with a control
/// character.
pub(super) fn tag_name(field: &str) -> io::Result<String> {
    if field.is_empty() || field.chars().any(char::is_control) {
        return Err(malformed(format!("matroska: {field:?} is not a tag name")));
    }
    Ok(match field.to_ascii_lowercase().as_str() {
        "track" => "PART_NUMBER".into(),
        _ => field.to_ascii_uppercase(),
    })
}

/// The Info element `info` with its Title set or removed as `edits` say
/// (the first Title keeps its place); unchanged when title is untouched.
pub(super) fn edit_info(info: &[u8], edits: &Edits) -> io::Result<Vec<u8>> {
    if !edits.touched().iter().any(|n| n.eq_ignore_ascii_case("title")) {
        return Ok(info.to_vec());
    }
    let kids = kids_of(info, "Info")?;
    let value = edits.value_of("title");
    let mut out = Vec::new();
    let mut placed = false;
    for k in &kids {
        if k.id != TITLE {
            out.push(bytes_of(info, k).to_vec());
        } else if let (false, Some(v)) = (placed, value) {
            out.push(element(TITLE, v.as_bytes()));
            placed = true;
        }
    }
    if let (false, Some(v)) = (placed, value) {
        out.push(element(TITLE, v.as_bytes()));
    }
    Ok(master_like(Some(info), INFO, &out))
}

/// The header and children of the element at the start of `b`.
fn kids_of(b: &[u8], what: &str) -> io::Result<Vec<Header>> {
    let h = parse_header(b, 0)?
        .filter(|h| h.end() == b.len() as u64)
        .ok_or_else(|| malformed(format!("matroska {what}: its size does not match its bytes")))?;
    children(b, h.data as usize, b.len(), what)
}

/// One child of Tags: kept as it was, or a Tag whose children may change.
enum Item {
    Raw(Vec<u8>),
    Tag {
        kids: Vec<Vec<u8>>,
        global: bool,
        changed: bool,
    },
}

/// The Tags elements `tags` (in file order; a Segment may hold several,
/// RFC 9559 §5.1.8) with `edits` applied to the SimpleTags of their
/// file-level Tags, as one list: a set field replaces the value of its
/// first SimpleTag in any of them (its other children, nested SimpleTags
/// among them, kept) and every other SimpleTag of the field, in any of
/// them, goes; without one, a SimpleTag is added to the first file-level
/// Tag, or a new Tag (TargetTypeValue 50) is made in the first Tags. A
/// file-level Tag the edit leaves without a SimpleTag goes (a Tag holds at
/// least one, §5.1.8.1.2), and a Tags left without a Tag is empty
/// (removed). `title` lives in Info: here its SimpleTags are only
/// removed. Returns one entry per Tags, the old bytes where nothing
/// changed, plus a new Tags at the end when there was none and one is
/// needed.
pub(super) fn edit_tags(tags: &[&[u8]], edits: &Edits) -> io::Result<Vec<Vec<u8>>> {
    let mut groups: Vec<Vec<Item>> = tags.iter().map(|t| items_of(t)).collect::<io::Result<_>>()?;
    if groups.is_empty() {
        groups.push(Vec::new());
    }
    for field in edits.touched() {
        let name = tag_name(field)?;
        let value = edits.value_of(field).filter(|_| !field.eq_ignore_ascii_case("title"));
        let mut placed = false;
        for item in groups.iter_mut().flatten() {
            let Item::Tag {
                kids,
                global: true,
                changed,
            } = item
            else {
                continue;
            };
            let mut out = Vec::with_capacity(kids.len());
            for k in kids.drain(..) {
                if !simple_tag_is(&k, &name, field)? {
                    out.push(k);
                    continue;
                }
                *changed = true;
                if let (false, Some(v)) = (placed, value) {
                    out.push(with_value(&k, v)?);
                    placed = true;
                }
            }
            *kids = out;
        }
        if let (false, Some(v)) = (placed, value) {
            let simple = simple_tag(&name, v);
            match groups
                .iter_mut()
                .flatten()
                .find(|i| matches!(i, Item::Tag { global: true, .. }))
            {
                Some(Item::Tag { kids, changed, .. }) => {
                    kids.push(simple);
                    *changed = true;
                }
                _ => groups.first_mut().unwrap_or(&mut Vec::new()).push(Item::Tag {
                    kids: vec![
                        master(TARGETS, &[uint_element(TARGET_TYPE_VALUE, TARGET_FILE_LEVEL)]),
                        simple,
                    ],
                    global: true,
                    changed: true,
                }),
            }
        }
    }
    let mut out = Vec::with_capacity(groups.len());
    for (k, items) in groups.into_iter().enumerate() {
        let old = tags.get(k).copied();
        if !items.iter().any(|i| matches!(i, Item::Tag { changed: true, .. })) {
            if let Some(t) = old {
                out.push(t.to_vec());
            }
            continue;
        }
        let kids: Vec<Vec<u8>> = items
            .into_iter()
            .filter_map(|i| match i {
                Item::Raw(b) => Some(b),
                Item::Tag { kids, changed, .. } => {
                    let emptied = changed && !kids.iter().any(|k| is_simple_tag(k));
                    (!emptied).then(|| master(TAG, &kids))
                }
            })
            .collect();
        if !kids
            .iter()
            .any(|k| parse_header(k, 0).is_ok_and(|h| h.is_some_and(|h| h.id == TAG)))
        {
            // No Tag left: the Tags goes.
            out.push(Vec::new());
            continue;
        }
        // A Tag not changed is rebuilt from its own children: only its
        // size's width could differ, so keep the old bytes where they were.
        let kids = keep_unchanged(old, kids)?;
        out.push(master_like(old, TAGS, &kids));
    }
    Ok(out)
}

/// The children of the Tags element `t`, each Tag split into its children.
fn items_of(t: &[u8]) -> io::Result<Vec<Item>> {
    let mut items = Vec::new();
    for k in kids_of(t, "Tags")? {
        let bytes = bytes_of(t, &k);
        if k.id != TAG {
            items.push(Item::Raw(bytes.to_vec()));
            continue;
        }
        let tag_kids = children(bytes, (k.data - k.start) as usize, bytes.len(), "Tag")?;
        let global = is_global(bytes, &tag_kids)?;
        items.push(Item::Tag {
            kids: tag_kids.iter().map(|c| bytes_of(bytes, c).to_vec()).collect(),
            global,
            changed: false,
        });
    }
    Ok(items)
}

/// Whether the element `k` is a SimpleTag.
fn is_simple_tag(k: &[u8]) -> bool {
    parse_header(k, 0).is_ok_and(|h| h.is_some_and(|h| h.id == SIMPLE_TAG))
}

/// `new` with every child that equals an old child of Tags in content
/// replaced by the old bytes (same size width as the input).
fn keep_unchanged(tags: Option<&[u8]>, new: Vec<Vec<u8>>) -> io::Result<Vec<Vec<u8>>> {
    let Some(t) = tags else { return Ok(new) };
    let old = kids_of(t, "Tags")?;
    Ok(new
        .into_iter()
        .map(|n| {
            old.iter()
                .map(|o| bytes_of(t, o))
                .find(|o| same_element(o, &n))
                .map_or(n, <[u8]>::to_vec)
        })
        .collect())
}

/// Two elements with the same ID and data (their size widths may differ).
fn same_element(a: &[u8], b: &[u8]) -> bool {
    match (parse_header(a, 0), parse_header(b, 0)) {
        (Ok(Some(x)), Ok(Some(y))) => x.id == y.id && data_of(a, &x) == data_of(b, &y),
        _ => false,
    }
}

/// Whether a Tag (`b`, its children `kids`) is file level for ffmpeg: no
/// non-zero UID in its Targets and no TargetType string.
fn is_global(b: &[u8], kids: &[Header]) -> io::Result<bool> {
    for t in kids.iter().filter(|k| k.id == TARGETS) {
        for x in children(b, t.data as usize, t.end() as usize, "Targets")? {
            let v = data_of(b, &x);
            if x.id == TARGET_TYPE || (UIDS.contains(&x.id) && uint(v) != Some(0)) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// Whether the child `k` of a Tag is a SimpleTag of the field `field`
/// (TagName `name` or the field's own name, any case) in the default
/// language (no TagLanguage, or `und`).
fn simple_tag_is(k: &[u8], name: &str, field: &str) -> io::Result<bool> {
    if parse_header(k, 0)?.is_none_or(|h| h.id != SIMPLE_TAG) {
        return Ok(false);
    }
    let kids = kids_of(k, "SimpleTag")?;
    let named = kids.iter().any(|c| {
        c.id == TAG_NAME
            && std::str::from_utf8(data_of(k, c))
                .map(|s| s.trim_end_matches('\0'))
                .is_ok_and(|s| s.eq_ignore_ascii_case(name) || s.eq_ignore_ascii_case(field))
    });
    let default_language = kids
        .iter()
        .filter(|c| c.id == TAG_LANGUAGE)
        .all(|c| data_of(k, c).strip_suffix(&[0]).unwrap_or(data_of(k, c)) == b"und");
    Ok(named && default_language)
}

/// The SimpleTag `k` with `value` as its TagString in place of its first
/// TagString or TagBinary (others dropped; after TagName when it had
/// none); its other children kept.
fn with_value(k: &[u8], value: &str) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut placed = false;
    for c in kids_of(k, "SimpleTag")? {
        let is_value = c.id == TAG_STRING || c.id == TAG_BINARY;
        if !is_value {
            out.push(bytes_of(k, &c).to_vec());
        }
        if !placed && (is_value || c.id == TAG_NAME) && (is_value || !has_value(k)?) {
            out.push(element(TAG_STRING, value.as_bytes()));
            placed = true;
        }
    }
    Ok(master_like(Some(k), SIMPLE_TAG, &out))
}

fn has_value(k: &[u8]) -> io::Result<bool> {
    Ok(kids_of(k, "SimpleTag")?
        .iter()
        .any(|c| c.id == TAG_STRING || c.id == TAG_BINARY))
}

/// A SimpleTag of TagName `name` and TagString `value`.
fn simple_tag(name: &str, value: &str) -> Vec<u8> {
    master(
        SIMPLE_TAG,
        &[
            element(TAG_NAME, name.as_bytes()),
            element(TAG_STRING, value.as_bytes()),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Edits {
        Edits {
            set: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Edits::default()
        }
    }

    #[test]
    fn names_as_ffmpeg_writes_them() {
        assert_eq!(tag_name("track").unwrap(), "PART_NUMBER");
        assert_eq!(tag_name("album_artist").unwrap(), "ALBUM_ARTIST");
        assert_eq!(tag_name("My_Field").unwrap(), "MY_FIELD");
        assert!(tag_name("").is_err());
    }

    #[test]
    fn track_tags_kept_and_file_tags_edited() {
        let track_tag = master(
            TAG,
            &[
                master(TARGETS, &[uint_element(0x63C5, 7)]),
                simple_tag("ARTIST", "track artist"),
            ],
        );
        let file_tag = master(
            TAG,
            &[
                master(TARGETS, &[]),
                simple_tag("ARTIST", "old"),
                simple_tag("ARTIST", "dup"),
            ],
        );
        let tags = master(TAGS, &[track_tag.clone(), file_tag]);
        let new = edit_tags(&[&tags], &set(&[("artist", "new"), ("album", "A")])).unwrap();
        let want_file = master(
            TAG,
            &[
                master(TARGETS, &[]),
                simple_tag("ARTIST", "new"),
                simple_tag("ALBUM", "A"),
            ],
        );
        assert_eq!(new, [master(TAGS, &[track_tag, want_file])]);
        // Nothing touched: the same bytes; no Tags and nothing to add: none.
        assert_eq!(edit_tags(&[&tags], &Edits::default()).unwrap(), [tags]);
        assert!(edit_tags(&[], &set(&[("title", "t")])).unwrap().is_empty());
    }

    #[test]
    fn several_tags_edited_as_one_list() {
        let file_tag = |kids: &[(&str, &str)]| {
            let mut k = vec![master(TARGETS, &[])];
            k.extend(kids.iter().map(|(n, v)| simple_tag(n, v)));
            master(TAG, &k)
        };
        let first = master(TAGS, &[file_tag(&[("ENCODER", "enc")])]);
        let second = master(TAGS, &[file_tag(&[("ALBUM", "old"), ("LABEL", "kept")])]);
        let third = master(TAGS, &[file_tag(&[("COMMENT", "c")])]);
        let edits = Edits {
            remove: vec!["comment".into()],
            ..set(&[("album", "new"), ("artist", "A")])
        };
        let new = edit_tags(&[&first, &second, &third], &edits).unwrap();
        // The album where it was, the artist in the first file-level Tag,
        // the third Tags emptied by the removal: gone.
        assert_eq!(
            new,
            [
                master(TAGS, &[file_tag(&[("ENCODER", "enc"), ("ARTIST", "A")])]),
                master(TAGS, &[file_tag(&[("ALBUM", "new"), ("LABEL", "kept")])]),
                Vec::new(),
            ]
        );
        // A field in two Tags: the first keeps it, the other loses it.
        let dup = master(TAGS, &[file_tag(&[("ALBUM", "x"), ("LABEL", "kept")])]);
        let new = edit_tags(&[&second, &dup], &set(&[("album", "y")])).unwrap();
        assert_eq!(
            new,
            [
                master(TAGS, &[file_tag(&[("ALBUM", "y"), ("LABEL", "kept")])]),
                master(TAGS, &[file_tag(&[("LABEL", "kept")])]),
            ]
        );
        // Untouched Tags keep their bytes.
        assert_eq!(
            edit_tags(&[&first, &second], &set(&[("label", "l")])).unwrap()[0],
            first
        );
    }
}
